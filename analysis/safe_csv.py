"""The one CSV guard: every CSV the project writes passes its cells through :func:`safe_cell`.

A text cell that a spreadsheet reads as a formula (``=HYPERLINK(...)``, ``+cmd|...``, ``@SUM``) runs
when a researcher opens the file (OWASP, "CSV Injection"). Participants type questions, clues and
recruiter IDs, so any text cell may be hostile. The guard puts an apostrophe in front of such a
cell, which every spreadsheet shows as text.

Decisions:
- A cell is a formula when its first character is ``= + - @``, tab or carriage return, also after
  leading whitespace (some spreadsheets trim cells on import).
- Numbers stay numbers: int, float and Decimal values pass unchanged, and so does text that is
  exactly a plain decimal number (``"-3.5"``, ``"+1"``, ``"-2e3"``): a spreadsheet reads it as a
  number and nothing runs. ``"-2+3"`` or ``"-1)*cmd"`` are guarded.
- The guard is reversible, so exported frames read back exactly (:func:`restore_cell`): a text
  cell that already starts with apostrophes in front of a formula gets one more.

>>> [safe_cell(v) for v in ["=1+1", " =1", "-3.5", "-cmd", "'=x", "p1", 3]]
["'=1+1", "' =1", '-3.5', "'-cmd", "''=x", 'p1', 3]

Whole frames (pandas) are guarded by :mod:`analysis.safe_frames`, apart so that a process writing
plain rows (the admin's CSV exports, loaded by every process Django starts) never imports pandas.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@")
CONTROL_STARTS = ("\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def runs_as_formula(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula (see the module's decisions)."""
    if text.startswith(CONTROL_STARTS):
        return True
    trimmed = text.strip()
    return trimmed.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.fullmatch(trimmed)


def safe_cell(value: Any) -> Any:
    """``value`` with an apostrophe in front when it is text a spreadsheet would run; else as is.

    >>> safe_cell("@SUM(A1)"), safe_cell("a=b"), safe_cell(None)
    ("'@SUM(A1)", 'a=b', None)
    """
    if isinstance(value, str) and runs_as_formula(value.lstrip("'")):
        return "'" + value
    return value


def restore_cell(value: Any) -> Any:
    """The inverse of :func:`safe_cell`: ``restore_cell(safe_cell(v)) == v`` for every ``v``.

    >>> restore_cell("'=1"), restore_cell("''=x"), restore_cell("'quoted")
    ('=1', "'=x", "'quoted")
    """
    if isinstance(value, str) and value.startswith("'") and runs_as_formula(value.lstrip("'")):
        return value[1:]
    return value


class SafeWriter:
    """A ``csv.writer`` whose rows pass through :func:`safe_cell`, cell by cell."""

    def __init__(self, handle: Any, **kwargs: Any) -> None:
        self._writer = csv.writer(handle, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([safe_cell(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(handle: Any, **kwargs: Any) -> SafeWriter:
    """Like ``csv.writer(handle, **kwargs)``, with every cell guarded."""
    return SafeWriter(handle, **kwargs)

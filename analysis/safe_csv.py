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
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

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


def map_text(column: pd.Series, cell: Callable[[Any], Any]) -> pd.Series:
    """``cell`` applied to every text value of ``column``, keeping its dtype; other columns
    (numbers, booleans, times) are returned as they are."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return column.cat.rename_categories(cell)  # both guards are one-to-one
    if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype):
        return column.map(cell, na_action="ignore").astype(dtype)
    return column


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns are guarded, for ``frame.to_csv``; numbers untouched.

    Column names are guarded too: they come from our code today, but a pivot over participants'
    text would put their words in the header. :func:`safe_cell` is called only on the cells a
    vectorised filter (:data:`RISKY`) flags, so a million cells cost a pass of pyarrow, not a
    million Python calls.
    """
    guarded = frame.copy()
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if isinstance(values.dtype, pd.CategoricalDtype):
            guarded.isetitem(position, map_text(values, safe_cell))
            continue
        if not (
            pd.api.types.is_object_dtype(values.dtype) or isinstance(values.dtype, pd.StringDtype)
        ):
            continue
        risky = _risky(values)
        if risky.any():
            changed = values.copy()
            changed[risky] = values[risky].map(safe_cell)
            guarded.isetitem(position, changed)
    guarded.columns = [safe_cell(c) for c in guarded.columns]
    return guarded


# Cells that could need the guard: apostrophes and any whitespace Python's str.strip() removes,
# then a formula start. RE2's \s is ASCII only, hence the other spaces by hand (a superset of what
# safe_cell guards; it decides for each flagged cell).
RISKY = r"^['\s\x0b\x1c-\x1f\x85\pZ]*[=+\-@\t\r]"


def _risky(column: pd.Series) -> Any:
    """Which cells of a text column :data:`RISKY` flags, as a boolean array (pyarrow, RE2)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(column.dtype, pd.StringDtype):
        column = column.map(str, na_action="ignore")
    text = pa.array(column, type=pa.large_string(), from_pandas=True)
    flagged = pc.match_substring_regex(text, RISKY).fill_null(False)
    return np.asarray(flagged.to_numpy(zero_copy_only=False), dtype=bool)


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The inverse of :func:`safe_frame`, for reading back a CSV that it wrote."""
    restored = frame.copy()
    for column in restored.columns:
        restored[column] = map_text(restored[column], restore_cell)
    restored.columns = [restore_cell(c) for c in restored.columns]
    return restored

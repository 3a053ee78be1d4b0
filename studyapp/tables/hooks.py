"""Where the tables need an answer from whoever runs studies on them. The tables app knows nothing
of studies: it asks one object, named in settings (``TABLES_HOOKS``, a dotted path to a subclass
of :class:`TablesHooks`; the participants app provides ``studyapp.participants.hooks``), and each
method's default here is the answer for a site with no study behind its tables.

Pure announcements, where the tables need no answer (a game over, a lobby place given back, a
lobby released), stay Django signals (``studyapp.tables.signals``): any number may listen.
"""

from __future__ import annotations

import functools
import logging
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from django.http import HttpRequest

    from studyapp.tables.models import Table

log = logging.getLogger(__name__)


class TablesHooks:
    """The questions the tables ask. Subclass it and override what your app answers."""

    def form_group(self, table_id: int) -> str:
        """A study's group lobby is full, or its wait has run out: form the group (draw its
        condition, seat its people at tables of that condition). Returns what happened
        ("formed", "full", "empty", "not a lobby"), which the tables report."""
        return "nobody forms groups"

    def seat_idle(self, table_id: int, seat: int, reason: str = "") -> bool:
        """A person has kept a table waiting past its idle policy at ``seat`` (the index): turns
        missed in a row, or its idle limit; ``reason`` says which. True when the person was taken
        out here (a study marks them dropped, which applies the table's dropout policy to the
        seat); False and the table applies its policy itself."""
        return False

    def swept(self, now: datetime) -> dict[str, int]:
        """The periodic sweep has gone over the tables: run your own periodic checks (a study
        drops people idle between rounds). Returns ``{what: how many}`` for the sweep's
        report."""
        return {}

    def table_page(self, table: Table, request: HttpRequest) -> dict[str, str]:
        """A table's whole page is being rendered for a browser (not the board alone): the parts
        to add, ``title`` (text shown in place of the site's name) and ``bar`` (HTML above the
        board, marked safe as ``render_to_string`` or ``format_html`` give it; a study: the
        game's number, the running total and a way out), or {}."""
        return {}

    def final_board(self, table: Table, seat: int) -> str:
        """A board is being rendered for ``seat`` (the index) of a table whose game is over, to
        be pushed to that seat's socket: HTML to push along with it (a study's table: its bar's
        running total, swapped into the page by id), or "" (any other table)."""
        return ""


@functools.cache
def _load(path: str) -> TablesHooks:
    hooks = import_string(path)()
    if not isinstance(hooks, TablesHooks):
        raise TypeError(f"TABLES_HOOKS names {path}, which is not a TablesHooks")
    return hooks


def hooks() -> TablesHooks:
    """The hooks named by ``settings.TABLES_HOOKS`` (the defaults when it is empty)."""
    path = getattr(settings, "TABLES_HOOKS", "") or "studyapp.tables.hooks.TablesHooks"
    return _load(path)


def swept(now: datetime) -> dict[str, int]:
    """:meth:`TablesHooks.swept`, where the sweep is already under way: a failure is logged with
    its traceback and the sweep's report goes on without it."""
    try:
        return hooks().swept(now) or {}
    except Exception:
        log.exception("the tables hooks' swept failed")
        return {}

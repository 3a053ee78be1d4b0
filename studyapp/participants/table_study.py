"""A table's study part: which study, condition, round and group a table belongs to, read and
queried here only, so the participants app and the dashboard name the JSON keys of a table's
options (``Table.options``) in one place.

The tables app keeps these fields in its :class:`~studyapp.tables.options.TableOptions` for now;
a study's table is written by :func:`studyapp.participants.study_tables.table_options`. When the
study's fields leave the tables app, only this module changes for its readers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from studyapp.tables.options import TableOptions

# The keys of a study's table in Table.options.
STUDY = "study"  # the study's slug
CONDITION = "condition"
ROUND = "round"  # 1-based
GROUP = "group"  # the number of the group seated here (a group design)
LOBBY_KIND = "lobby_kind"  # which joiners share a lobby
GROUP_LOBBY = "group_lobby"  # a group design's first lobby, where groups form
GROUP_FORMED = "group_formed"  # on a closed group lobby: the group's number, or "full"
# Seats the design's stand-in took because the model budget was reached: seat index (or
# "replacement", the lobby's) -> the model it stood in for (studyapp.participants.budget).
BUDGET_STAND_IN = "budget_stand_in"


@dataclass(frozen=True)
class StudyTable:
    """What a table says of the study it belongs to (``study`` is "" outside any study)."""

    study: str = ""
    condition: str = ""
    round: int | None = None
    group: int | None = None

    @property
    def is_study(self) -> bool:
        return bool(self.study)


def of(table: Any) -> StudyTable:
    """The study part of ``table`` (a ``Table``), read through its options."""
    opts = table.opts
    return StudyTable(opts.study, opts.condition or "", opts.round, opts.group)


def of_options(options: dict[str, Any]) -> StudyTable:
    """The study part of a table's raw options (a row read with ``values_list``)."""
    opts = TableOptions.from_json(options)
    return StudyTable(opts.study, opts.condition or "", opts.round, opts.group)


def in_study(slug: str) -> Q:
    """Tables of the study ``slug``."""
    return Q(**{f"options__{STUDY}": slug})


def in_any_study() -> Q:
    """Tables that belong to some study."""
    return Q(**{"options__has_key": STUDY})


def in_lobby(kind: str) -> Q:
    """Tables whose lobby gathers the joiners of ``kind``."""
    return Q(**{f"options__{LOBBY_KIND}": kind})


def study_slugs(tables: QuerySet) -> list[str]:
    """The studies ``tables`` belong to, sorted."""
    rows: Iterable[dict] = tables.filter(in_any_study()).values_list("options", flat=True)
    return sorted({of_options(options).study for options in rows})

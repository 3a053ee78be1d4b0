"""A table's study part: which study, condition, round and group a table belongs to and how its
seats were drawn (:class:`~studyapp.participants.models.StudyTable`, a row of this app beside the
tables app's table), written, read and queried here only.

The tables app knows none of it: a study's table is opened with the table's own options
(:func:`studyapp.participants.study_tables.table_options`) and its study part is split off them
here (:func:`split`) and kept with the study (:func:`record`). The lobby keys below are table
options (a lobby gathers the joiners of one kind) that only the participants app writes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Q, QuerySet

from studyapp.participants.models import StudyTable

# The study part's fields, as a study's table options name them when it is opened.
STUDY = "study"  # the study's slug
CONDITION = "condition"
ROUND = "round"  # 1-based
GROUP = "group"  # the number of the group seated here (a group design)
PART = (
    STUDY,
    CONDITION,
    ROUND,
    GROUP,
    "seat_order",
    "seat_order_seed",
    "seat_slots",
    "shown_policy",
)
# Table options of a study's lobby.
LOBBY_KIND = "lobby_kind"  # which joiners share a lobby
GROUP_LOBBY = "group_lobby"  # a group design's first lobby, where groups form
GROUP_FORMED = "group_formed"  # on a closed group lobby: the group's number, or "full"
# Seats the design's stand-in took because the model budget was reached: seat index (or
# "replacement", the lobby's) -> the model it stood in for (studyapp.participants.budget).
BUDGET_STAND_IN = "budget_stand_in"


def split(options: dict[str, Any]) -> dict[str, Any]:
    """Take the study part out of a study table's ``options`` (left with the table's own) and
    return it."""
    return {key: options.pop(key) for key in PART if key in options}


def record(table: Any, part: Mapping[str, Any]) -> StudyTable:
    """Keep the study part of ``table`` (a new ``Table``) that :func:`split` took."""
    found = StudyTable.objects.create(table=table, **part)
    table.study_part = found
    return found


def of(table: Any) -> StudyTable:
    """The study part of ``table`` (a ``Table``); an empty one (``study`` "") outside any study."""
    try:
        return table.study_part
    except ObjectDoesNotExist:
        return StudyTable()


def of_tables(ids: Iterable[int]) -> dict[int, StudyTable]:
    """The study parts of the tables ``ids`` that have one, by table id (one query)."""
    return {part.table_id: part for part in StudyTable.objects.filter(table_id__in=list(ids))}


def in_study(slug: str) -> Q:
    """Tables of the study ``slug``."""
    return Q(study_part__study=slug)


def in_any_study() -> Q:
    """Tables that belong to some study."""
    return Q(study_part__isnull=False)


def in_lobby(kind: str) -> Q:
    """Tables whose lobby gathers the joiners of ``kind``."""
    return Q(**{f"options__{LOBBY_KIND}": kind})


def study_slugs(tables: QuerySet) -> list[str]:
    """The studies ``tables`` belong to, sorted."""
    found = StudyTable.objects.filter(table__in=tables.values("pk"))
    return sorted(set(found.values_list("study", flat=True)))

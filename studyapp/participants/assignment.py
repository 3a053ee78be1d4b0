"""Which condition a newcomer joins: blocked randomisation over arrivals, with a quota per arm.

Arrivals are numbered in the order people pass the comprehension checks (the moment they enter
the study proper). Arrival ``n`` falls in block ``n // k`` at position ``n % k``, where ``k`` is
the number of conditions; each block is its own seeded shuffle of the conditions, so after every
complete block the arms are exactly balanced and nobody can predict the next assignment from the
last one. A condition whose quota is met is skipped (the next position of the walk is used), and
when every condition is full the newcomer is turned away with the "full" page.

Pilot participants (``manage.py pilot``) are numbered and counted apart from real ones, so a pilot
run neither uses up real places nor shifts real people's blocks.

What was drawn is written to ``Participant.assignment`` (block, position, seed, arrival, the
block's order), so an assignment can be checked afterwards.

In a group design (several people at one table, :func:`design.is_group_design`) the unit is the
group, not the person: people pass the checks without a condition, meet in one lobby per study
and round, and the group that forms there is drawn a condition by :func:`assign_group`, the same
blocked walk over groups instead of arrivals (:mod:`studyapp.participants.groups`).
"""

from __future__ import annotations

import random
from typing import Any

from django.db import transaction

from studyapp.participants import budget
from studyapp.participants.models import Condition, Participant, Study

# Who holds (or has held) a place in a condition: people who drop out keep theirs, since their
# games are part of the data; people turned away or who never played do not.
COUNTED = (
    Participant.Status.CONSENTED,
    Participant.Status.PLAYING,
    Participant.Status.FINISHED,
    Participant.Status.DROPPED,
    Participant.Status.LOBBY_TIMEOUT,
)


class StudyFull(Exception):
    """Every condition of the study has met its quota."""


def block_order(seed: int, block: int, names: list[str]) -> list[str]:
    order = list(names)
    random.Random(f"{seed}:block:{block}").shuffle(order)
    return order


def filled(study: Study, *, pilot: bool) -> dict[str, int]:
    """How many places of each condition are taken (real people and pilots apart)."""
    counts = {c.name: 0 for c in study.conditions.all()}
    rows = study.participants.filter(is_pilot=pilot, status__in=COUNTED).exclude(condition="")
    for name in rows.values_list("condition", flat=True):
        if name in counts:
            counts[name] += 1
    return counts


def groups_formed(study: Study, *, pilot: bool) -> dict[str, int]:
    """How many groups each condition has taken (real people and pilots apart)."""
    counts = {c.name: 0 for c in study.conditions.all()}
    for name in study.groups.filter(is_pilot=pilot).values_list("condition", flat=True):
        if name in counts:
            counts[name] += 1
    return counts


def open_conditions(study: Study, *, pilot: bool = False, people: int = 1) -> list[Condition]:
    """The conditions that can still take ``people`` more people (one group of them in a group
    design): the people quota has room for all of them and the group quota for one more group."""
    counts = filled(study, pilot=pilot)
    groups = groups_formed(study, pilot=pilot)
    return [
        c
        for c in study.conditions.all()
        if (not c.quota or counts[c.name] + people <= c.quota)
        and (not c.group_quota or groups[c.name] < c.group_quota)
    ]


# A participant's end_reason when the study closed to newcomers for its model budget.
CLOSED_FOR_NOW = "the study was closed to new participants for now when the checks were passed"


def closed_for_now(study: Study) -> bool:
    """True when the study takes nobody new because of its model budget rather than its quotas
    (its pages then say it is closed for now, never that every place was taken)."""
    return budget.closed(study)


def is_full(study: Study, *, pilot: bool = False) -> bool:
    """True when the study has conditions and none of them takes anyone more, or its model
    budget is reached and it is to show as full then (studyapp.participants.budget)."""
    if budget.closed(study):
        return True
    return study.conditions.exists() and not open_conditions(study, pilot=pilot)


def walk(seed: int, names: list[str], open_names: set[str], slot: int) -> dict[str, Any]:
    """From unit ``slot`` (an arrival or a group) forward to the first open condition."""
    k = len(names)
    for step in range(k * 2):
        block, position = divmod(slot + step, k)
        order = block_order(seed, block, names)
        if order[position] in open_names:
            break
    return {
        "condition": order[position],
        "block": block,
        "position": position,
        "seed": seed,
        "order": order,
        "skipped": step,
    }


def assign_group(study: Study, size: int, *, pilot: bool) -> dict[str, Any]:
    """Draw the condition of a group of ``size`` people; raises :class:`StudyFull` when no
    condition can take the whole group. Call with the study row locked (the caller numbers the
    group in the same transaction). Returns the draw, ``condition`` and ``group_index`` (the
    group's place among the study's groups, pilots apart) included."""
    conditions = list(study.conditions.all())
    if not conditions:
        return {"condition": "", "unit": "group", "size": size}
    names = [c.name for c in conditions]
    open_names = {c.name for c in open_conditions(study, pilot=pilot, people=size)}
    if not open_names:
        raise StudyFull
    index = study.groups.filter(is_pilot=pilot).count()
    draw = walk(study.assignment_seed, names, open_names, index)
    return {**draw, "unit": "group", "group_index": index, "size": size}


def assign(participant: Participant) -> dict[str, Any]:
    """Draw ``participant``'s condition and store it; raises :class:`StudyFull`.

    The study row is locked while drawing, so two arrivals at the same moment get consecutive
    arrival numbers (on SQLite the database takes one writer at a time anyway)."""
    if budget.closed(participant.study):
        raise StudyFull
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=participant.study_id)
        conditions = list(study.conditions.all())
        if not conditions:
            participant.condition = ""
            participant.assignment = {}
            return participant.assignment
        names = [c.name for c in conditions]
        open_names = {c.name for c in open_conditions(study, pilot=participant.is_pilot)}
        if not open_names:
            raise StudyFull
        arrival = (
            study.participants.filter(is_pilot=participant.is_pilot)
            .exclude(assignment={})
            .exclude(pk=participant.pk)
            .count()
        )
        # Walk forward from this arrival's slot to the first condition with a place left.
        draw = walk(study.assignment_seed, names, open_names, arrival)
        participant.condition = draw.pop("condition")
        participant.assignment = {"arrival": arrival, **draw, "unit": "person"}
        participant.save(update_fields=["condition", "assignment"])
    return participant.assignment

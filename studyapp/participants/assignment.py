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
"""

from __future__ import annotations

import random
from typing import Any

from django.db import transaction

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


def open_conditions(study: Study, *, pilot: bool = False) -> list[Condition]:
    counts = filled(study, pilot=pilot)
    return [c for c in study.conditions.all() if not c.quota or counts[c.name] < c.quota]


def is_full(study: Study, *, pilot: bool = False) -> bool:
    """True when the study has conditions and none of them takes anyone more."""
    return study.conditions.exists() and not open_conditions(study, pilot=pilot)


def assign(participant: Participant) -> dict[str, Any]:
    """Draw ``participant``'s condition and store it; raises :class:`StudyFull`.

    The study row is locked while drawing, so two arrivals at the same moment get consecutive
    arrival numbers (on SQLite the database takes one writer at a time anyway)."""
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
        k = len(names)
        # Walk forward from this arrival's slot to the first condition with a place left.
        for step in range(k * 2):
            slot = arrival + step
            block, position = divmod(slot, k)
            order = block_order(study.assignment_seed, block, names)
            if order[position] in open_names:
                break
        participant.condition = order[position]
        participant.assignment = {
            "arrival": arrival,
            "block": block,
            "position": position,
            "seed": study.assignment_seed,
            "order": order,
            "skipped": step,
        }
        participant.save(update_fields=["condition", "assignment"])
    return participant.assignment

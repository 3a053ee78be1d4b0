"""The seat plan of a study's model arm, per condition (:mod:`games.experiment.seating`): the
condition's design with the model in the people's slots and the design's agents in theirs, the
study's language and seat order, and the Undercover role each person drawn into the condition
held in each of their rounds, so the arm's track *i* is person *i*'s twin (docs/analysis.md).

The people followed are those the study's figure counts: not pilots, and not screened out or
withdrawn; each in the order they joined.
"""

from __future__ import annotations

from typing import Any

from games.experiment.seating import MODEL
from studyapp.participants import design as designs
from studyapp.participants.models import Participant, Round, Study

NOT_FOLLOWED = (Participant.Status.SCREENED, Participant.Status.WITHDRAWN)


def arm_conditions(study: Study) -> list[str]:
    """The conditions a model arm plays, one job each: the study's, or "" without any."""
    return [name for name, _ in designs.arm_designs(study)] or [""]


def seat_plan(study: Study, condition: str = "") -> dict[str, Any]:
    """The plan of ``condition`` as an experiment job's parameters take it (a JSON object), or
    :class:`designs.DesignError` when the condition's design cannot be played."""
    design = designs.effective(study, condition)["design"]
    slots = [MODEL if seat["kind"] == designs.PERSON else seat["spec"] for seat in design["seats"]]
    if study.game == "twenty-questions":
        slots = [MODEL, designs.effective(study, condition)["oracle_spec"]]
    return {
        "seats": slots,
        "language": study.language,
        "roles": people_roles(study, condition) if study.game == "undercover" else [],
        "seat_order": design.get("seat_order", designs.FIXED),
        "condition": condition,
    }


def people_roles(study: Study, condition: str) -> list[list[str]]:
    """Per person followed in ``condition`` (in the order they joined), the role they held in
    rounds 1 to ``study.rounds``: ``difference`` when their seat held the different word,
    ``normal`` otherwise, ``""`` for a round they did not play. People with no round are left
    out."""
    people = (
        study.participants.filter(is_pilot=False, condition=condition)
        .exclude(status__in=NOT_FOLLOWED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    rounds = Round.objects.filter(participant__in=list(people)).values_list(
        "participant_id", "number", "seat", "table__config"
    )
    held: dict[int, list[str]] = {}
    for person, number, seat, config in rounds:
        if not 1 <= number <= study.rounds or seat is None or not config:
            continue
        row = held.setdefault(person, [""] * study.rounds)
        row[number - 1] = "difference" if seat == config.get("difference_seat") else "normal"
    return [held[person] for person in people if person in held]

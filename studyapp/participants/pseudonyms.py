"""The door between participant records and everything that analyses or exports them.

Analysis, dashboards and exports name a person by the random public id only; the recruiter's IDs
(Prolific's PROLIFIC_PID, STUDY_ID, SESSION_ID, a generic pid) stay on the participant record, where
the payment sheet reads them. Going through these helpers, rather than reading fields directly, is
what keeps that promise as new exports are added.
"""

from __future__ import annotations

from typing import Any

from studyapp.participants.models import Participant, Round

# The fields that may leave the participants app; recruiter IDs are deliberately absent.
PUBLIC_FIELDS = (
    "public_id",
    "status",
    "consent_version",
    "rounds_finished",
    "total_reward",
    "policy",
)


def public_record(participant: Participant) -> dict[str, Any]:
    """One participant as analysis may see them."""
    record = {name: getattr(participant, name) for name in PUBLIC_FIELDS}
    record["study"] = participant.study.slug
    spent = participant.time_spent
    record["time_spent_s"] = spent.total_seconds() if spent else None
    return record


def public_id_for_table(table_id: int) -> str | None:
    """Who played a table, as a pseudonym (None for a table no participant played)."""
    round_ = Round.objects.select_related("participant").filter(table_id=table_id).first()
    return round_.participant.public_id if round_ else None


def public_ids_by_seat(table_ids: list[int]) -> dict[tuple[int, int], str]:
    """Who sits where at these tables, as pseudonyms: ``(table id, seat index) -> public id``
    for every seat a study participant played (the live monitor's seat column)."""
    rows = Round.objects.filter(table_id__in=table_ids).values_list(
        "table_id", "seat", "participant__public_id"
    )
    return {(table_id, seat): public_id for table_id, seat, public_id in rows}


def public_rounds(participant: Participant) -> list[dict[str, Any]]:
    """A participant's rounds in the shape of the experiment JSONL rows (``round`` 0-based)."""
    return [
        {
            "participant": participant.public_id,
            "round": r.number - 1,
            "table": r.table_id,
            "reward": r.reward,
            "finished_at": r.finished_at.isoformat() if r.finished_at else None,
        }
        for r in participant.round_set.all()
    ]


def finished_policies(study: Any) -> list[tuple[str, str]]:
    """``(public id, written policy)`` of the study's finished participants who wrote one (no
    pilots), in the order they finished: the human policies a model arm may be given."""
    found = (
        Participant.objects.filter(study=study, status=Participant.Status.FINISHED, is_pilot=False)
        .exclude(policy="")
        .order_by("finished_at", "pk")
        .values_list("public_id", "policy")
    )
    return [(public_id, text) for public_id, text in found if text.strip()]

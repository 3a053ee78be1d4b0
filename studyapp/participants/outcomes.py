"""How a participant's study ended, in words: the export's ``reason`` column and the admin's.

The cause is recorded when the status changes (``Participant.end_reason``: stopped, idle at a
table, an agent took over, screened by which attention check, ...); a record from before that
field existed gets the status's general reason. The counts of games are added, so a reader of
``participants.csv`` sees at once how far each person came.
"""

from __future__ import annotations

from studyapp.participants.models import Participant
from studyapp.participants.questionnaire import ATTENTION_FAILED, attention_failed_text

GENERAL = {
    Participant.Status.CONSENTED: "still taking part when exported (before the first game)",
    Participant.Status.PLAYING: "still taking part when exported",
    Participant.Status.FINISHED: "finished every game",
    Participant.Status.DROPPED: "stopped before the end",
    Participant.Status.SCREENED: ATTENTION_FAILED,
    Participant.Status.DECLINED: "declined consent",
    Participant.Status.WITHDRAWN: "withdrew and asked for their data to be deleted",
    Participant.Status.FAILED_CHECKS: "comprehension checks not passed",
    Participant.Status.LOBBY_TIMEOUT: "no table formed before the lobby's wait ran out",
    Participant.Status.FULL: "the study was full when the checks were passed",
    Participant.Status.VISITED: "visited without consenting",
}


def reason(participant: Participant) -> str:
    """Why this person's study ended as it did (or that it has not), with the games played."""
    said = participant.end_reason or GENERAL.get(participant.status, participant.status)
    if participant.status == Participant.Status.SCREENED and participant.attention_failed:
        said = attention_failed_text(participant.attention_failed)
        said += f"; paid under screened_pay = {participant.study.screened_pay}"
    elif participant.status == Participant.Status.FINISHED and participant.attention_failed:
        said += "; " + attention_failed_text(participant.attention_failed, flagged=True)
    if participant.late_answers:
        late = ", ".join(
            dict.fromkeys(entry.get("step", "?") for entry in participant.late_answers)
        )
        said += f"; answered after being dropped as idle, kept and flagged: {late}"
    if participant.status in (
        Participant.Status.PLAYING,
        Participant.Status.DROPPED,
        Participant.Status.LOBBY_TIMEOUT,
    ):
        said += f" ({participant.rounds_finished} of {participant.study.rounds} games played)"
    return said

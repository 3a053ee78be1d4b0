"""A small human study written straight into the database: finished Twenty Questions tables with
known rewards, so exports and analysis pages can be checked against literal numbers."""

from __future__ import annotations

import math

from django.utils import timezone

from studyapp.participants.models import Participant, Round, Study
from studyapp.tables.models import Seat, Table, Turn

PROLIFIC_PID = "5f0c0ffee0c0ffee0c0ffee0"


def events_found_at(k: int, answer: str = "Apple") -> list[dict]:
    """A log that names ``answer`` at question ``k`` (reward 1/log2(k+1))."""
    events = []
    for _ in range(k - 1):
        events += [
            {"type": "question", "seat": 0, "text": "Is it alive?"},
            {"type": "answer", "seat": 1, "answer": "No"},
        ]
    return events + [{"type": "question", "seat": 0, "text": f"Is it an {answer.lower()}?"}]


def finished_table(events: list[dict], seats: list[dict], **options) -> Table:
    now = timezone.now()
    table = Table.objects.create(
        game="twenty-questions",
        config={"answer": "Apple", "max_questions": 20},
        status=Table.Status.FINISHED,
        options=options,
        started_at=now,
        finished_at=now,
    )
    for index, seat in enumerate(seats):
        Seat.objects.create(table=table, index=index, **seat)
    for seq, event in enumerate(events):
        Turn.objects.create(table=table, seq=seq, seat=event.get("seat"), event=event)
    return table


def play_rounds(participant: Participant, found_at: list[int]) -> None:
    participant.rounds_finished = len(found_at)
    participant.total_reward = sum(1 / math.log2(k + 1) for k in found_at)
    participant.save()
    for number, k in enumerate(found_at, start=1):
        table = finished_table(
            events_found_at(k),
            [
                {"kind": "human", "session_key": f"s-{participant.pk}"},
                {"kind": "agent", "agent_spec": "offline:kb"},
            ],
        )
        # booked as the site books a round played to its end (participants.rounds.sync_round)
        Round.objects.create(
            participant=participant,
            number=number,
            table=table,
            reward=1 / math.log2(k + 1),
            finished_at=table.finished_at,
        )


def make_study() -> Study:
    """Two participants: one found the word at questions 1, 3, 7; the other at 3, 3, 3. A third
    withdrew after one round and must appear nowhere."""
    study = Study.objects.create(slug="tq-study", title="TQ study", rounds=3, consent_text="ok")
    first = Participant.objects.create(
        study=study, status=Participant.Status.FINISHED, prolific_pid=PROLIFIC_PID
    )
    play_rounds(first, [1, 3, 7])
    second = Participant.objects.create(study=study, status=Participant.Status.FINISHED)
    play_rounds(second, [3, 3, 3])
    gone = Participant.objects.create(study=study, status=Participant.Status.WITHDRAWN)
    play_rounds(gone, [1])
    return study

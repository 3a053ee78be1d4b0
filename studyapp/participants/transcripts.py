"""A participant as staff read them afterwards: every round's game in order, each turn as a line
of text with who made it and when, the reward, and the questionnaire. Read-only: built from the
log (``tables.Turn``) and the participant's record; nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from games.twenty_questions.names import question_text
from studyapp.participants import table_study
from studyapp.participants.models import Participant, Round
from studyapp.tables.models import PERSON_ACTOR, SKIP_SPEC, TABLE_EVENTS, Seat, Turn


@dataclass
class Line:
    seq: int
    at: datetime
    after_s: float | None  # seconds since the turn before (the time this move took)
    who: str
    text: str
    error: str = ""


@dataclass
class GameTranscript:
    round: Round
    seats: list[str]
    setup: dict[str, Any]
    status: str
    lines: list[Line] = field(default_factory=list)

    @property
    def duration_s(self) -> float | None:
        if not self.lines:
            return None
        return (self.lines[-1].at - self.lines[0].at).total_seconds()


def describe(event: dict[str, Any]) -> str:
    """One event of either game as a line of a transcript."""
    kind = event.get("type")
    if kind == "question":
        return f"asks: {question_text(event)}"
    if kind == "answer":
        return f"answers: {event.get('answer')}"
    if kind == "clue":
        text = event.get("text")
        return f"clue: {text}" if text is not None else "passes (no clue)"
    if kind == "vote":
        target = event.get("target")
        return f"votes for seat {target}" if target is not None else "abstains"
    if kind == "void":
        return f"the question is withdrawn ({event.get('reason', '')})"
    if kind == "takeover":
        return f"seat {event.get('seat')} changes hands ({event.get('reason', 'taken over')})"
    if kind == "abort":
        return f"the game is stopped ({event.get('reason', '')})"
    return str(event)


def seat_name(index: int, slots: list[int]) -> str:
    """``seat 2 (design slot 0)``: a seat of a study table with the design slot drawn to it."""
    if 0 <= index < len(slots):
        return f"seat {index} (design slot {slots[index]})"
    return f"seat {index}"


def seat_label(seat: Seat, participant: Participant, round_: Round, slots: list[int] = ()) -> str:
    name = seat_name(seat.index, list(slots))
    if seat.index == round_.seat:
        label = f"{name}: {participant.public_id} (this participant)"
        if seat.kind == Seat.Kind.AGENT:
            label += f", taken over by agent {seat.agent_spec}"
        return label
    if seat.kind == Seat.Kind.AGENT:
        return f"{name}: agent {seat.agent_spec}"
    return f"{name}: another person"


def mover_label(
    turn: Turn, labels: dict[int, str], participant: Participant, round_: Round, slots: list[int]
) -> str:
    """Who made ``turn``: its actor (``Turn.actor``) where the turn records one, so an agent's
    moves after a takeover are the agent's, never the person's who left; a move an offline
    stand-in made for a failed model (``usage["stand_in"]``) is the stand-in's."""
    if turn.seat is None or turn.event.get("type") in TABLE_EVENTS:
        return "table"  # the table's own event (describe() says which seat changed hands)
    stand_in = (turn.usage or {}).get("stand_in")
    if stand_in:  # the model failed and an offline agent's move stood in (agent_turns)
        return f"{seat_name(turn.seat, slots)}: stand-in {stand_in} for the failed {turn.actor}"
    if turn.actor and turn.actor not in (PERSON_ACTOR, SKIP_SPEC):
        taken = " (took over this participant's seat)" if turn.seat == round_.seat else ""
        return f"{seat_name(turn.seat, slots)}: agent {turn.actor}{taken}"
    if turn.actor == SKIP_SPEC and turn.event.get("missed"):
        who = "this participant" if turn.seat == round_.seat else "the person"
        return (
            f"{seat_name(turn.seat, slots)}: played for the seat by the table "
            f"({who} missed the turn deadline and kept the seat)"
        )
    if turn.actor == SKIP_SPEC:
        return f"{seat_name(turn.seat, slots)}: played for the seat by the table (skip)"
    if turn.actor == PERSON_ACTOR and turn.seat == round_.seat:
        return f"{seat_name(turn.seat, slots)}: {participant.public_id} (this participant)"
    if turn.actor == PERSON_ACTOR:
        return f"{seat_name(turn.seat, slots)}: another person"
    return labels.get(turn.seat, f"seat {turn.seat}")


def transcript(participant: Participant) -> list[GameTranscript]:
    """Every round of ``participant``, in order, with its game's turns."""
    found = Round.objects.filter(participant=participant)
    rounds = list(found.select_related("table", "table__study_part"))
    table_ids = [r.table_id for r in rounds]
    seats: dict[int, list[Seat]] = {}
    for seat in Seat.objects.filter(table_id__in=table_ids).order_by("table_id", "index"):
        seats.setdefault(seat.table_id, []).append(seat)
    turns: dict[int, list[Turn]] = {}
    for turn in Turn.objects.filter(table_id__in=table_ids).order_by("table_id", "seq"):
        turns.setdefault(turn.table_id, []).append(turn)
    games = []
    for round_ in rounds:
        table = round_.table
        table_seats = seats.get(table.pk, [])
        slots = table_study.of(table).slots(len(table_seats))
        labels = {s.index: seat_label(s, participant, round_, slots) for s in table_seats}
        game = GameTranscript(
            round=round_,
            seats=[labels[i] for i in sorted(labels)],
            setup=table.config,
            status=table.status,
        )
        previous: datetime | None = None
        for turn in turns.get(table.pk, []):
            who = mover_label(turn, labels, participant, round_, slots)
            after = (turn.created_at - previous).total_seconds() if previous else None
            error = (turn.usage or {}).get("error", "") if isinstance(turn.usage, dict) else ""
            game.lines.append(
                Line(turn.seq, turn.created_at, after, who, describe(turn.event), str(error or ""))
            )
            previous = turn.created_at
        games.append(game)
    return games


def answers(participant: Participant) -> list[tuple[str, str, Any]]:
    """The questionnaire as asked, with this participant's answers: (id, question, answer)."""
    given = participant.questionnaire_answers or {}
    rows = []
    for item in participant.study.questionnaire or []:
        answer = given.get(item["id"], "")
        if isinstance(answer, list):
            answer = "; ".join(answer)
        rows.append((item["id"], item["question"], answer))
    return rows

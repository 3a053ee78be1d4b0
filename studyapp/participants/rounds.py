"""A participant's rounds: the table of each round, booking its game when it ends, and
stopping early (dropping out, withdrawing, idling between rounds, a lobby that timed out, staff
deleting a person). Tables are created and read through :mod:`studyapp.tables.services` and
:mod:`studyapp.participants.study_tables`; which step comes next is
:func:`studyapp.participants.steps.next_step`'s to say.
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, OuterRef
from django.urls import reverse
from django.utils import timezone

from studyapp.participants import design, study_tables
from studyapp.participants.models import Participant, Round
from studyapp.participants.steps import IDLE_BETWEEN_GAMES, finish, next_step, require_step
from studyapp.tables import driver, services, timing
from studyapp.tables.models import Seat, Table, Turn

# --- the rounds -----------------------------------------------------------------------------


def current_round(participant: Participant) -> Round | None:
    number = participant.rounds_finished + 1
    return participant.round_set.filter(number=number).first()


def play_state(participant: Participant) -> dict[str, Any]:
    """What the rounds page shows: where the person is and how they have done so far."""
    sync_round(participant)
    return {
        "number": participant.rounds_finished + 1,
        "of": participant.study.rounds,
        "round": current_round(participant),
        "finished": list(participant.round_set.filter(finished_at__isnull=False)),
        "total_reward": participant.total_reward,
    }


def shown_policy(participant: Participant) -> str:
    """The strategy text this participant's condition shows them ('' for none)."""
    try:
        return design.effective(participant.study, participant.condition)["shown_policy"]
    except design.DesignError:
        return participant.study.shown_policy


def begin_round(session: SessionBase, participant: Participant) -> Round:
    """Create the table for the next round (or return the one already there: a double click or a
    second tab must not create two tables for one round). The human seat is held by this
    browser's session, which is what lets the table pages admit this participant and nobody else.
    """
    require_step(participant, "play")
    if session.session_key is None:
        session.save()
    existing = current_round(participant)
    if existing is not None:
        take_seat(session, existing)
        return existing
    number = participant.rounds_finished + 1
    # The study's design makes the table (study_tables); an Undercover seat may wait in a lobby.
    try:
        round_ = study_tables.create_round(participant, number, session.session_key)
    except IntegrityError:  # a double click or a second tab made this round a moment ago
        existing = current_round(participant)
        take_seat(session, existing)
        return existing
    participant.current_round = number
    participant.save(update_fields=["current_round"])
    round_.refresh_from_db()  # a group that formed as this person came sits at its own table
    return round_


def seated_round(participant: Participant) -> Round | None:
    """The round this participant sits at an open table for right now, if any: one in play, or
    one still waiting to start (a blinded group's table holds its drawn while, as a lobby)."""
    if next_step(participant) != "play":
        return None
    round_ = current_round(participant)
    if round_ is None or round_.finished_at is not None:
        return None
    open_ = (Table.Status.PLAYING, Table.Status.LOBBY)
    return round_ if round_.table.status in open_ else None


def take_seat(session: SessionBase, round_: Round) -> None:
    """Give the round's human seat to this browser: a returning participant may continue a round
    they began in another browser. Only a browser that owns the participant gets here."""
    Seat.objects.filter(table_id=round_.table_id, index=round_.seat, kind=Seat.Kind.HUMAN).exclude(
        session_key=session.session_key
    ).update(session_key=session.session_key)


def table_url(round_: Round) -> str:
    return reverse("tables:table", args=[round_.table_id])


def sync_round(participant: Participant, snap: Any = None) -> None:
    """Read the current round's table (``snap``, the table as its log has it, when the caller
    has it: a game that just ended); when its game is over, book the reward and move on."""
    round_ = current_round(participant)
    if round_ is None or round_.finished_at is not None:
        return
    if snap is None or snap.table.pk != round_.table_id:
        snap = services.table_state(round_.table_id)
    if snap.table.exit_code and not snap.events:
        lobby_timed_out(participant)  # the lobby closed before enough people came
        return
    if not snap.is_over:
        return
    reward = float(snap.engine.outcome(snap.state)[round_.seat]["reward"])
    # An agent took the seat over (the person left, or was past the study's idle policy: turns
    # missed in a row or the idle limit; one missed deadline only misses a turn): the round is not
    # theirs. What the agent won never reaches their total or bonus, the round is not counted as
    # one they played (the export flags the game ``taken_over``), and someone still taking part
    # has dropped out: paid for the rounds they played, with the study's code for that, never
    # the finished code.
    taken_over = snap.seat(round_.seat).kind != "human"
    if taken_over:
        reward = 0.0
    with transaction.atomic():
        updated = Round.objects.filter(pk=round_.pk, finished_at__isnull=True).update(
            reward=reward, finished_at=timezone.now()
        )
        if not updated:
            return
        if not taken_over:
            participant.rounds_finished += 1
            participant.total_reward += reward
            participant.save(update_fields=["rounds_finished", "total_reward"])
    if taken_over:
        mark_dropped(participant, "an agent took over their seat (they left the table)")
    elif next_step(participant) == "done":
        finish(participant)


def book_table(table_id: int, snap: Any = None) -> None:
    """A study table's game has just ended: book each person's round at once (their reward in
    the running total, the study finished after the last round), so the end screen and the study
    bar show the total with this game in it, not only after Continue. ``snap``: the finished
    table, read once for everyone (else each person's round reads it)."""
    rounds = Round.objects.filter(
        table_id=table_id, finished_at__isnull=True, participant__status__in=Participant.ACTIVE
    )
    for round_ in rounds.select_related("participant__study"):
        sync_round(round_.participant, snap)  # someone who stopped is settled as they stopped


# --- stopping early -------------------------------------------------------------------------


def lobby_timed_out(participant: Participant) -> None:
    """No table formed in time: the person leaves with the study's lobby-timeout code and is
    paid for the rounds played, like someone who stopped early."""
    if participant.status not in Participant.ACTIVE:
        return
    participant.status = Participant.Status.LOBBY_TIMEOUT
    participant.end_reason = "no table formed before the lobby's wait ran out"
    participant.finished_at = timezone.now()
    participant.settle_payment()
    participant.save()


def mark_dropped(participant: Participant, reason: str = "marked dropped out by staff") -> None:
    """Close someone who left mid-study (staff, an idle limit, a seat taken over); they are owed
    for the rounds they played. Their time ends at the last thing they did: a page or a move."""
    if participant.status not in Participant.ACTIVE:
        return
    participant.status = Participant.Status.DROPPED
    participant.end_reason = reason
    participant.finished_at = last_activity(participant) or timezone.now()
    participant.settle_payment()
    participant.save()
    leave_open_rounds(participant)


def last_activity(participant: Participant) -> Any:
    """When the person last did something: a page of the study (``last_seen_at``, which play at
    a table does not move) or a move of their own at one of their tables."""
    times = [participant.last_seen_at]
    for table_id, seat in participant.round_set.values_list("table_id", "seat"):
        moved = Turn.objects.filter(table_id=table_id, seat=seat).aggregate(last=Max("created_at"))
        times.append(moved["last"])
    known = [t for t in times if t is not None]
    return max(known) if known else None


def leave_open_rounds(participant: Participant) -> None:
    """Someone who stops taking part leaves the table of their open round by its dropout policy
    (replaced, skipped or ended): the seat is no longer theirs and the table is not left waiting."""
    for round_ in participant.round_set.filter(finished_at__isnull=True):
        driver.drop_out(round_.table_id, round_.seat)


def drop_idle_between_rounds(now: Any = None) -> int:
    """People who stopped coming back between rounds (on the rounds page, at a policy question,
    or after a round an agent finished for them) are not waited for forever: once idle past
    their study's ``idle_limit_seconds`` since their last page or the end of their last game,
    with no round being played, their last round is booked if its game ended, and whoever is
    still taking part is dropped (paid for the rounds played). Someone at a table is left to the
    table's own idle limit. Run by the periodic sweep; returns how many were dropped."""
    now = now or timezone.now()
    at_a_table = Round.objects.filter(
        participant=OuterRef("pk"),
        finished_at__isnull=True,
        table__status__in=[Table.Status.LOBBY, Table.Status.PLAYING, Table.Status.PAUSED],
    )
    quiet = (
        Participant.objects.filter(
            status=Participant.Status.PLAYING,
            study__idle_limit_seconds__gt=0,
            last_seen_at__isnull=False,
        )
        .exclude(Exists(at_a_table))
        .annotate(last_game=Max("round_set__table__finished_at"))
        .select_related("study")
    )
    dropped = 0
    for participant in quiet:
        # the last sign of life: a page (an answer page's heartbeat too) or the end of a game;
        # the site's own outages since are not the person's (studyapp.tables.timing)
        active = max(participant.last_seen_at, participant.last_game or participant.last_seen_at)
        if (now - active).total_seconds() < participant.study.idle_limit_seconds:
            continue
        if timing.idle_seconds(active, now) < participant.study.idle_limit_seconds:
            continue
        sync_round(participant)  # a game that ended while they were away is booked first
        participant.refresh_from_db()
        if participant.status == Participant.Status.PLAYING:
            mark_dropped(participant, IDLE_BETWEEN_GAMES)
            dropped += 1
    return dropped


def withdraw(participant: Participant, *, delete_data: bool) -> str:
    """Stop now. Returns the dropped-out code, which pays for the time already given.

    Without ``delete_data`` the person has dropped out and their games stay in the study. With it
    their games (tables, turns, rounds), rewards, written policy and questionnaire answers are
    deleted and they are
    marked withdrawn; only what paying them needs is kept (recruiter IDs, consent, rounds and time
    counted, the amount owed), so the payment sheet still lists them. A table other people also
    played at is their game too: it stays (see :func:`delete_tables`), and an open one is left by
    its dropout policy.
    """
    shared_open: list[tuple[int, int]] = []
    with transaction.atomic():
        participant.finished_at = timezone.now()
        participant.status = Participant.Status.DROPPED
        participant.end_reason = "stopped taking part (Stop taking part)"
        participant.settle_payment()
        if delete_data:
            shared_open = _delete_rounds(participant)
            participant.status = Participant.Status.WITHDRAWN
            participant.end_reason = "stopped and asked for their games and answers to be deleted"
            participant.total_reward = 0.0
            participant.policy = ""
            participant.questionnaire_answers = {}
            participant.attention_failed = []
        participant.save()
    if not delete_data:
        leave_open_rounds(participant)
    _leave_shared_tables(shared_open)
    return participant.study.code_dropped


def delete_participant(participant: Participant) -> None:
    """Erase a person entirely (staff, on request): the record, its rounds, the tables and turns
    (a table other people also played at stays, see :func:`delete_tables`).
    A personal invite stays used (its ``claimed_at`` is kept), so nobody else can take the seat."""
    with transaction.atomic():
        shared_open = _delete_rounds(participant, and_participant=True)
    _leave_shared_tables(shared_open)


def _delete_rounds(participant: Participant, *, and_participant: bool = False) -> list[tuple]:
    """Delete the person's rounds (or the whole person) and the tables only they played at;
    returns ``(table, seat)`` of their open rounds at tables that stay."""
    rounds = list(participant.round_set.values_list("table_id", "seat", "finished_at"))
    if and_participant:
        participant.delete()  # its rounds go with it
    else:
        participant.round_set.all().delete()
    kept = delete_tables([table_id for table_id, _, _ in rounds])
    return [(table_id, seat) for table_id, seat, done in rounds if table_id in kept and not done]


def _leave_shared_tables(seats: list[tuple[int, int]]) -> None:
    for table_id, seat in seats:
        driver.drop_out(table_id, seat)


def delete_tables(table_ids: list[int]) -> set[int]:
    """Delete tables, and with them their seats and turns, except those another participant's
    round still points at (people who shared an Undercover table): their game is not ours to
    delete. Returns the ids of the tables kept."""
    kept = set(Round.objects.filter(table_id__in=table_ids).values_list("table_id", flat=True))
    Table.objects.filter(pk__in=table_ids).exclude(pk__in=kept).delete()
    return kept

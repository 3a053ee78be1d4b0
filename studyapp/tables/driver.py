"""The table's own rules for what happens without a move: a deadline missed, a person who left,
a lobby's wait limit, a pause that lasts too long, an idle person, and the periodic catch-up
(:func:`sweep`, :func:`tick`). Each decision is made on the table as its log has it and recorded
on the move path (:func:`studyapp.tables.services.record`); the jobs that call these rules at the
right time are scheduled by :mod:`studyapp.tables.scheduling` and run by
:mod:`studyapp.tables.tasks`. A study that stands behind a table is asked through the hook
(:mod:`studyapp.tables.hooks`: a seat idle too long, the sweep's tick) and told through
:mod:`studyapp.tables.signals` (a lobby released); the tables app knows nothing of studies.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from studyapp.tables import dues, hooks, outages, reasons, signals, timing
from studyapp.tables.broadcast import broadcast
from studyapp.tables.models import SKIP_SPEC, Seat, Table, Turn, new_exit_code
from studyapp.tables.options import TableOptions
from studyapp.tables.scheduling import advance, schedule
from studyapp.tables.services import record, start
from studyapp.tables.store import TableState, caught_up, is_followed, table_state

log = logging.getLogger(__name__)

# Offline agents are built per role; the site default may not play every role.
OFFLINE_ROLE_AGENTS = {("twenty-questions", "questioner"): "offline:infogain"}


def resume(table_id: int) -> bool:
    """Staff resume a paused table (the answering model works again). A ``resume`` turn records
    when: it restarts the count of failures in a row, and the person whose turn it is gets a whole
    turn from now, not from before the pause."""
    if not Table.objects.filter(pk=table_id, status=Table.Status.PAUSED).update(
        status=Table.Status.PLAYING
    ):
        return False
    snap = table_state(table_id)
    event = {"type": "resume", "by": "staff"}
    try:
        record(snap, event, snap.engine.apply(snap.state, event))
    except IntegrityError:  # another writer moved first; the table is playing either way
        advance(table_state(table_id))
    return True


def replacement_spec(snap: TableState, index: int) -> str:
    """The agent that takes over a seat: the table's choice, else the site default that fits."""
    if snap.table.opts.stored("replacement_spec"):
        return snap.table.opts.replacement_spec
    role = snap.engine.seats(snap.table.config)[index]
    spec = settings.DEFAULT_AGENT_SPEC
    if spec.startswith("offline:"):
        return OFFLINE_ROLE_AGENTS.get((snap.table.game, role), spec)
    return spec


def check_deadline(table_id: int, seq: int) -> str:
    """The turn's due time (:func:`studyapp.tables.dues.deadline_due`, the site's outages and
    a seat's own cut-off socket added) has come: each person the table still waits for past it
    has missed this turn (:func:`miss_turn`). Early: checked again at the due time."""
    snap = table_state(table_id)
    if snap.next_seq != seq:
        return "stale"
    humans = dues.waiting_people(snap)
    if not humans:
        return "no human to wait for"
    if snap.turn_deadline() is None:
        return "no deadline"
    now = timezone.now()
    late = [i for i in humans if (due := dues.seat_due(snap, i, now)) is None or due <= now]
    # A seat the server cut off (a daphne restart) is judged once its page is back, when the
    # gap counts as its outage, or after CUT_OFF_WAIT_SECONDS (outages.py).
    away = [
        i for i in late if 0 < outages.cut_off_now(snap.seat(i), now) < outages.CUT_OFF_WAIT_SECONDS
    ]
    late = [i for i in late if i not in away]
    if away and not late:
        delay = float(settings.HEARTBEAT_SECONDS)
        schedule("check_deadline", (table_id, seq), delay, table=snap.table, again=True)
        return "cut off"
    if not late:
        due = dues.deadline_due(snap, now) or now
        delay = (due - timezone.now()).total_seconds()
        schedule("check_deadline", (table_id, seq), delay, table=snap.table, again=True)
        return "early"
    result = "stale"
    for n, index in enumerate(late):  # a vote's ballots: each person past it misses theirs
        if n:
            snap = table_state(table_id)  # the ballot before this one is committed
        if index not in dues.waiting_people(snap):
            continue
        result = miss_turn(snap, index, now)
    return result


def idle_since(snap: TableState, index: int) -> Any:
    """Since when the table has waited on the person at ``index`` without a sign of life: the
    start of the turn of theirs that began their run of missed turns (:func:`studyapp.tables.timing.missed_in_a_row`),
    else the start of the turn it waits on now (the last commit)."""
    missed = timing.missed_in_a_row(snap.events, index)
    if not missed:
        return snap.last_at
    own = [n for n, event in enumerate(snap.events) if event.get("seat") == index]
    first = own[-missed]
    if first == 0:
        return snap.table.started_at or snap.last_at
    found = (
        Turn.objects.filter(table_id=snap.table.pk, seq=first - 1)
        .values_list("created_at", flat=True)
        .first()
    )
    return found or snap.last_at


def miss_turn(snap: TableState, index: int, now: Any = None) -> str:
    """The person at ``index`` let the turn deadline pass. A missed turn is not a departure: the
    table plays the seat's do-nothing move for this turn (a passed clue, an abstained vote, the
    Invalid question or answer), marked ``"missed": true`` and credited to the table
    (``Turn.actor`` "skip", its reason in the turn's usage), and the person keeps their seat. Only
    the table's idle policy takes them out: ``missed_turns_limit`` turns missed in a row (this one
    included), or ``idle_limit_seconds`` without a move (:func:`idle_since`, the site's outages
    not counted); then the study is asked (``seat_idle``: it marks the person dropped) and the
    table's dropout policy applies to the seat (:func:`apply_dropout`)."""
    now = now or timezone.now()
    opts = snap.table.opts
    missed = timing.missed_in_a_row(snap.events, index) + 1
    limit = timing.missed_turns_limit(opts)
    idle = timing.idle_limit(opts)
    waited = timing.idle_seconds(idle_since(snap, index), now, table=snap.table, seat=index)
    if limit and missed >= limit:
        # a limit of 1 is a plain table's rule: the deadline applies the dropout policy at once
        why = f"missed {missed} turn deadline{'s' if missed > 1 else ''} in a row"
        return take_out(snap, index, why, dropped=limit > 1)
    if idle is not None and waited >= idle:
        why = f"idle at a table for {waited:.0f} s (the study's limit is {idle:g} s)"
        return take_out(snap, index, why, dropped=True)
    deadline = snap.turn_deadline() or 0
    event = {**snap.engine.fallback(snap.state, index), "missed": True}
    usage = {
        "missed": f"the person did not move within the turn deadline ({deadline:g} s): the "
        f"table played this turn for them ({missed} missed in a row); they keep their seat"
    }
    try:
        record(snap, event, snap.engine.apply(snap.state, event), actor=SKIP_SPEC, usage=usage)
    except IntegrityError:
        return "stale"
    return "missed"


def take_out(snap: TableState, index: int, why: str, *, dropped: bool) -> str:
    """A person at ``index`` is past the table's idle policy (``why``): the study is asked to
    drop them (``seat_idle``, which applies the table's dropout policy through
    :func:`drop_out`); a table with no study behind it applies the policy itself (``dropped``:
    for the rest of the game, else for this turn under the "skip" policy)."""
    log.info("table %s seat %s: %s", snap.table.pk, index, why)
    if hooks.hooks().seat_idle(snap.table.pk, index, reason=why):
        return "dropped"
    return apply_dropout(snap, index, dropped=dropped)


def apply_dropout(snap: TableState, index: int, *, dropped: bool = False) -> str:
    """The table's dropout policy for a person who missed the deadline (``dropped``: who left
    the study): ``end`` aborts the table, ``replace`` hands the seat to the replacement agent,
    ``skip`` plays the seat's do-nothing move for this turn, and for a person who left, for every
    turn of theirs from now on (the seat passes to :data:`SKIP_SPEC`)."""
    policy = snap.table.opts.dropout
    try:
        if policy == "end":
            why = reasons.PLAYER_LEFT if dropped else reasons.MISSED_DEADLINE
            event = {"type": "abort", "reason": why}
            record(snap, event, snap.engine.apply(snap.state, event))
            return "ended"
        if policy == "skip" and not dropped:
            event = snap.engine.fallback(snap.state, index)
            # the table's do-nothing move, not the person's
            record(snap, event, snap.engine.apply(snap.state, event), actor=SKIP_SPEC)
            return "skipped"
        spec = SKIP_SPEC if policy == "skip" else replacement_spec(snap, index)
        event = {"type": "takeover", "seat": index, "by": spec}
        record(
            snap,
            event,
            snap.engine.apply(snap.state, event),
            kind=Seat.Kind.AGENT,
            agent_spec=spec,
        )
    except IntegrityError:
        return "stale"
    return "skipping" if spec == SKIP_SPEC else "replaced"


def drop_out(table_id: int, index: int) -> str:
    """A person left the study (they withdrew, or were idle past the study's limit): apply the
    table's dropout policy to their seat now instead of at the deadline. Their seat is no longer
    theirs afterwards, so moves they still send are refused."""
    for _ in range(3):  # another move may land first; judge again on the new log
        snap = table_state(table_id)
        if snap.table.status not in (Table.Status.LOBBY, Table.Status.PLAYING) or snap.is_over:
            return "over"
        if snap.table.status == Table.Status.LOBBY:
            return "lobby"
        if snap.seat(index).kind != Seat.Kind.HUMAN:
            return "not a person's seat"
        result = apply_dropout(snap, index, dropped=True)
        if result != "stale":
            return result
    return "stale"


def check_lobby(table_id: int) -> str:
    """At a lobby's wait limit: fill the empty seats with agents, or release the humans with a
    paid exit code, as the table is configured."""
    table = Table.objects.get(pk=table_id)
    if table.status != Table.Status.LOBBY:
        return "not a lobby"
    now = timezone.now()
    due = timing.lobby_deadline(table)
    hold = timing.start_hold(table)
    if hold is not None and hold <= now and not any(s.is_vacant for s in table.seats.all()):
        start(table)  # a blinded lobby, full, whose hold has ended
        return "started"
    if now < due:
        soon = hold if hold is not None and now < hold < due else due
        schedule("check_lobby", (table_id,), (soon - now).total_seconds(), table=table, again=True)
        return "early"
    if table.opts.group_lobby:  # a study's group forms with whoever came
        from studyapp.tables.lobby import form_group

        return f"group {form_group(table_id)}"
    vacant = [seat for seat in table.seats.all() if seat.is_vacant]
    seated = len(vacant) < table.seats.count()
    if seated and table.opts.lobby_timeout == "fill":
        spec = table.opts.replacement_spec  # Undercover seats are all "player"
        Seat.objects.filter(pk__in=[seat.pk for seat in vacant]).update(
            kind=Seat.Kind.AGENT, agent_spec=spec
        )
        start(table)
        return "filled"
    updated = Table.objects.filter(pk=table_id, status=Table.Status.LOBBY).update(
        status=Table.Status.ABORTED,
        exit_code=table.opts.exit_code or new_exit_code(),  # a study's fixed code
        finished_at=timezone.now(),
    )
    if updated:
        snap = table_state(table_id)
        signals.announce(signals.lobby_released, table=snap.table)
        broadcast(snap)
    return "released"


def tick(table_id: int) -> TableState | None:
    """Catch up on anything overdue (called on connect and heartbeat), the same with and without
    Celery: a lobby past its wait limit starts, and a table being played has its next step
    scheduled unless it already is (a timer lost with a process, a task lost with a worker).
    It never judges a deadline itself: only a job that finds the deadline passed does.
    Returns the table as its log has it when it is being played (this process's fold caught up
    with the log), so a socket's heartbeat can compare it with its board without reading the log
    again. A table this process has seen being played is read once (its status comes with the
    turns since, :func:`caught_up`); any other table's row is read first."""
    if is_followed(table_id):
        snap = caught_up(table_id)
        if snap.table.status == Table.Status.PLAYING:
            advance(snap)
            return snap
        return None  # it was being played: no lobby now, and nothing to schedule
    table = Table.objects.get(pk=table_id)
    if table.status == Table.Status.LOBBY:
        due = timing.lobby_check_due(table)  # a held lobby's when its hold ends (check_lobby)
        if due <= timezone.now():
            check_lobby(table_id)
        else:
            delay = (due - timezone.now()).total_seconds()
            schedule("check_lobby", (table_id,), delay, table=table)
    elif table.status == Table.Status.PLAYING:
        snap = caught_up(table_id)
        advance(snap)
        return snap
    return None


def resume_unfinished() -> list[int]:
    """Schedule the next step of every table left open (worker start, ``resume_tables``)."""
    resumed = []
    for table in Table.objects.filter(status__in=[Table.Status.LOBBY, Table.Status.PLAYING]):
        if table.status == Table.Status.LOBBY:
            schedule("check_lobby", (table.pk,), 0, table=table)
        else:
            advance(table_state(table))
        resumed.append(table.pk)
    return resumed


def sweep() -> dict[str, int]:
    """The periodic catch-up (Celery beat, or a timer on the embedded server's loop): lobbies
    past their wait limit, and every table that has been quiet for a while has its next step
    scheduled again unless a live job holds it (an agent turn whose worker died, a deadline that
    is due), and a study participant idle past the study's limit is dropped. Returns counts."""
    now = timezone.now()
    outages.note_sweep(now.timestamp())
    done: Counter[str] = Counter()
    for table in Table.objects.filter(status=Table.Status.LOBBY):
        due = timing.lobby_deadline(table)
        hold = timing.start_hold(table)  # a blinded lobby may start, full, when its hold ends
        if due <= now or (hold is not None and hold <= now):
            done[f"lobby {check_lobby(table.pk)}"] += 1
    quiet_since = now - timedelta(seconds=settings.TABLE_SWEEP_SECONDS)
    quiet = list(
        Table.objects.filter(status=Table.Status.PLAYING)
        .annotate(
            last=Coalesce(Max("turns__created_at"), "started_at", "created_at"),
            turn_count=Count("turns"),
        )
        .filter(last__lte=quiet_since)
        .values_list("pk", "created_at", "turn_count", "last")
    )
    settled = cache.get_many([settled_key(*row) for row in quiet])
    for table_id, *facts in quiet:
        if settled_key(table_id, *facts) in settled:
            continue
        snap = table_state(table_id)
        steps = drop_idle(snap, now) or advance(snap)
        for name in steps:
            done[name] += 1
        if not steps:
            settle(snap, now)
    for table_id in paused_too_long(now):
        done[f"paused table {end_paused(table_id)}"] += 1
    for name, count in hooks.swept(now).items():
        done[name] += count
    return dict(done)


def paused_too_long(now: Any) -> list[int]:
    """Paused tables whose pause (the turn that paused them) is older than their limit."""
    rows = (
        Table.objects.filter(status=Table.Status.PAUSED)
        .annotate(paused_at=Coalesce(Max("turns__created_at"), "started_at", "created_at"))
        .values_list("pk", "options", "paused_at")
    )
    due = []
    for table_id, options, paused_at in rows:
        limit = timing.paused_limit(TableOptions.from_json(options))
        if limit is not None and (now - paused_at).total_seconds() >= limit:
            due.append(table_id)
    return due


def end_paused(table_id: int) -> str:
    """End a table paused past its limit with an ``abort`` turn, so nobody waits without end for
    staff: the game is over (no winner), and the commit announces it (``signals.game_over``), so
    a study books the round as it books any ended round and lets the person go on, even if they
    never return. The table row is locked, so a staff resume at the same moment either comes
    first (the table plays on) or finds it ended."""
    with transaction.atomic():
        locked = Table.objects.select_for_update().filter(pk=table_id).first()
        if locked is None or locked.status != Table.Status.PAUSED:
            return "resumed"
        snap = table_state(table_id)
        event = {"type": "abort", "reason": reasons.PAUSED_ENDED, "paused": True}
        try:
            record(snap, event, snap.engine.apply(snap.state, event))
        except IntegrityError:
            return "stale"
    log.error("table %s ended: paused longer than its limit", table_id)
    return "ended"


def settled_key(table_id: int, created_at: Any, turns: int, last: Any) -> str:
    """What the sweep's judgement rested on: the table (its creation time too, as in a job's
    lease key, so an id used again is new), its number of turns and when it last moved."""
    born, moved = (int(at.timestamp() * 1_000_000) for at in (created_at, last))
    return f"tables:settled:{table_id}:{born}:{turns}:{moved}"


def settle(snap: TableState, now: Any) -> None:
    """A quiet table the sweep found nothing to do for, waiting only on people, is not rebuilt
    again at this turn until something could fall due: the idle limit, or its turn deadline
    coming within TABLE_SCHEDULE_HORIZON_SECONDS (when its job is sent); with neither, nothing
    can fall due without a new turn, which is a new key. A visitor's table left open would
    otherwise be rebuilt every few seconds, forever. A table waiting on an agent is never
    settled: its lease may belong to a worker that died."""
    if any(snap.seat(i).kind != Seat.Kind.HUMAN for i in snap.waiting_for()):
        return
    since = snap.last_at or now
    due = []
    if (limit := timing.idle_limit(snap.table.opts)) is not None:
        idle = [idle_since(snap, i) or since for i in dues.waiting_people(snap)] or [since]
        due.append(min(idle) + timedelta(seconds=limit))
    if (deadline := snap.turn_deadline()) is not None:
        horizon = settings.TABLE_SCHEDULE_HORIZON_SECONDS
        due.append(since + timedelta(seconds=deadline - horizon))
    seconds = min((at - now).total_seconds() for at in due) if due else SETTLED_SECONDS
    if seconds >= 1:
        key = settled_key(snap.table.pk, snap.table.created_at, snap.next_seq, since)
        cache.set(key, True, math.floor(seconds))


# How long the sweep leaves alone a quiet table that waits on people with no time limit.
SETTLED_SECONDS = 3600


def drop_idle(snap: TableState, now: Any) -> list[str]:
    """Drop the people this table has waited on longer than its idle limit: the hooks are asked
    (``seat_idle``), so a study marks its participant dropped (which applies the table's dropout
    policy to the seat); a table with no study behind it applies the policy alone."""
    limit = timing.idle_limit(snap.table.opts)
    if limit is None:
        return []
    dropped = []
    for index in dues.waiting_people(snap):
        since = idle_since(snap, index)  # the run of their missed turns counts too
        if since is None or (now - since).total_seconds() < limit:
            continue
        # the site's outages, and the seat's own cut-off socket, are not theirs
        waited = timing.idle_seconds(since, now, table=snap.table, seat=index)
        if waited < limit:
            continue
        why = f"idle at a table for {waited:.0f} s (the study's limit is {limit:g} s)"
        if not hooks.hooks().seat_idle(snap.table.pk, index, reason=why):
            drop_out(snap.table.pk, index)
        dropped.append("idle person dropped")
    return dropped

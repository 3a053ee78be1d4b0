"""What the production tests do and read inside the site's database (``Topology.call`` runs
these in a process with the site's settings). Each returns plain JSON."""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone

from studyapp.tables import services
from studyapp.tables.models import Table, Turn


def new_session() -> str:
    session = SessionStore()
    session.create()
    return session.session_key


def study_round(slug: str) -> dict[str, Any]:
    """A study participant who has consented and passed the checks begins round 1, as the
    rounds page's button does (``rounds.begin_round``)."""
    from studyapp.participants.models import Participant, Study
    from studyapp.participants.rounds import begin_round

    study = Study.objects.get(slug=slug)
    session = SessionStore()
    session.create()
    now = timezone.now()
    participant = Participant.objects.create(
        study=study,
        status=Participant.Status.PLAYING,
        practice_passed=True,
        consent_version=study.consent_version,
        consented_at=now,
        started_at=now,
    )
    round_ = begin_round(session, participant)
    return {
        "participant": participant.pk,
        "table": round_.table_id,
        "session": session.session_key,
        "answer": round_.table.config["answer"],
    }


def round_result(participant_id: int) -> dict[str, Any]:
    """The participant's first round as the study books it."""
    from studyapp.participants.models import Participant
    from studyapp.participants.rounds import sync_round

    participant = Participant.objects.get(pk=participant_id)
    sync_round(participant)
    round_ = participant.round_set.get(number=1)
    snap = services.table_state(round_.table_id)
    return {
        "events": snap.events,
        "reward": round_.reward,
        "outcome": snap.engine.outcome(snap.state)[round_.seat]["reward"] if snap.is_over else None,
        "total_reward": participant.total_reward,
    }


def mixed_undercover(people: int, agents: int) -> dict[str, Any]:
    """An Undercover table where ``people`` browsers sit with offline agents."""
    keys = [new_session() for _ in range(people)]
    seats = [{"kind": "human", "session_key": key} for key in keys]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * agents
    config = services.get_engine("undercover").new_config(7, players=people + agents)
    table = services.create_table(
        "undercover", config, seats, seed=7, turn_deadline_seconds=0, dropout="replace"
    )
    return {"table": table.pk, "sessions": keys}


def agent_tables(count: int) -> list[int]:
    """Agent-only tables, half Twenty Questions and half Who is Undercover."""
    ids = []
    for i in range(count):
        if i % 2:
            seats = [{"kind": "agent", "agent_spec": "offline:kb"}] * 5
            ids.append(services.create_table("undercover", None, seats, seed=i).pk)
        else:
            seats = [
                {"kind": "agent", "agent_spec": "offline:infogain"},
                {"kind": "agent", "agent_spec": "offline:kb"},
            ]
            ids.append(services.create_table("twenty-questions", None, seats, seed=i).pk)
    return ids


def tables_report(table_ids: list[int]) -> dict[str, Any]:
    """Every table's state and log: open, finished, missing turns (gaps in ``seq``), logs that do
    not replay under the rules (a turn played twice), and the longest wait between two turns."""
    report = {"open": 0, "finished": 0, "missing": 0, "unreplayable": 0, "turns": 0, "gap_s": 0.0}
    for table_id in table_ids:
        table = Table.objects.get(pk=table_id)
        turns = list(Turn.objects.filter(table_id=table_id).order_by("seq"))
        seqs = [turn.seq for turn in turns]
        report["turns"] += len(turns)
        report["missing"] += len(seqs) and (max(seqs) + 1 - len(seqs))
        report["open"] += table.is_open
        report["finished"] += table.status == Table.Status.FINISHED
        try:
            services.table_state(table_id)
        except Exception:
            report["unreplayable"] += 1
        for before, after in zip(turns, turns[1:], strict=False):
            gap = (after.created_at - before.created_at).total_seconds()
            report["gap_s"] = max(report["gap_s"], round(gap, 1))
    return report


def people_tables(
    count: int, oracle: str = "offline:kb", options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``count`` Twenty Questions tables, each a person (a fresh browser session) asking and
    ``oracle`` answering, with the site's default deadline and dropout policy unless ``options``
    say otherwise."""
    keys, ids = [], []
    for i in range(count):
        key = new_session()
        seats = [{"kind": "human", "session_key": key}, {"kind": "agent", "agent_spec": oracle}]
        table = services.create_table("twenty-questions", None, seats, seed=i, **(options or {}))
        ids.append(table.pk)
        keys.append(key)
    return {"tables": ids, "sessions": keys}


def table_logs(table_ids: list[int]) -> list[dict[str, Any]]:
    """Each table's status, number of turns, and each turn's event type and commit time (Unix
    seconds), in order."""
    rows = []
    for table_id in table_ids:
        table = Table.objects.get(pk=table_id)
        turns = list(
            Turn.objects.filter(table_id=table_id).order_by("seq").values("event", "created_at")
        )
        rows.append(
            {
                "status": table.status,
                "turns": len(turns),
                "types": [turn["event"]["type"] for turn in turns],
                "committed_at": [turn["created_at"].timestamp() for turn in turns],
            }
        )
    return rows


def study_with_oracle(slug: str, oracle_spec: str) -> dict[str, Any]:
    """A one-round Twenty Questions study whose oracle is ``oracle_spec``, and a participant who
    has begun its round (:func:`study_round`)."""
    from studyapp.participants.models import Study

    Study.objects.create(
        slug=slug,
        title=slug,
        rounds=1,
        oracle_spec=oracle_spec,
        consent_text="Recorded.",
        completion_url="https://app.prolific.com/submissions/complete",
        code_finished="FIN123",
        code_dropped="DROP456",
    )
    return study_round(slug)


def participant_state(participant_id: int) -> dict[str, Any]:
    """Where a participant stands, as the site has booked it (nothing is synced here)."""
    from studyapp.participants.models import Participant
    from studyapp.participants.steps import next_step

    person = Participant.objects.get(pk=participant_id)
    round_ = person.round_set.get(number=1)
    return {
        "status": person.status,
        "rounds_finished": person.rounds_finished,
        "next_step": next_step(person),
        "round_booked": round_.finished_at is not None,
        "round_reward": round_.reward,
        "code": person.study.code_finished if person.status == "finished" else "",
    }


def longest_waits(table_ids: list[int]) -> list[dict[str, Any]]:
    """For each table, its longest wait between two turns and when that wait ended (Unix time),
    to tell a wait that a fault caused from one that came before it."""
    waits = []
    for table_id in table_ids:
        times = list(
            Turn.objects.filter(table_id=table_id)
            .order_by("seq")
            .values_list("created_at", flat=True)
        )
        best = (
            max(
                ((after - before).total_seconds(), after.timestamp())
                for before, after in zip(times, times[1:], strict=False)
            )
            if len(times) > 1
            else (0.0, 0.0)
        )
        waits.append({"table": table_id, "wait_s": round(best[0], 1), "ended_at": best[1]})
    return waits


def payable_people(slug: str, prolific_study: str, count: int) -> list[str]:
    """A study and ``count`` participants who finished it from Prolific, each owed a 2.00 bonus
    (their PROLIFIC_PIDs, in order)."""
    from decimal import Decimal

    from studyapp.participants.models import Participant, Study

    study = Study.objects.create(
        slug=slug,
        title=f"Payments {slug}",
        rounds=1,
        consent_text="Your games are recorded for research.",
        completion_url="https://app.prolific.com/submissions/complete",
        code_finished="FIN",
        code_dropped="DROP",
        code_screened="SCR",
        payment_amount=Decimal("5.00"),
        bonus_per_reward=Decimal("1.00"),
    )
    pids = []
    for n in range(count):
        pid = f"{slug[:8]:0>8}{n:016x}"
        Participant.objects.create(
            study=study,
            status=Participant.Status.FINISHED,
            prolific_pid=pid,
            prolific_study_id=prolific_study,
            prolific_session_id=f"sub-{pid}",
            payment_amount=Decimal("5.00"),
            bonus=Decimal("2.00"),
        )
        pids.append(pid)
    return pids


def bonuses_paid(slug: str) -> dict[str, Any]:
    """The study's participants' bonus records and its bonus batches."""
    from studyapp.participants.models import Study

    study = Study.objects.get(slug=slug)
    return {
        "paid": sorted(
            p.prolific_pid for p in study.participants.filter(bonus_paid_at__isnull=False)
        ),
        "batches": [(b.state, b.prolific_id) for b in study.bonus_batches.order_by("pk")],
    }


def model_tables(count: int, spec: str) -> list[int]:
    """Agent-only Who is Undercover tables of five model agents (``spec``)."""
    seats = [{"kind": "agent", "agent_spec": spec}] * 5
    return [services.create_table("undercover", None, seats, seed=i).pk for i in range(count)]


def model_calls(table_ids: list[int]) -> int:
    """The model calls the committed turns of these tables made (their usage)."""
    turns = Turn.objects.filter(table_id__in=table_ids)
    return sum(
        int((usage or {}).get("calls", 0)) for usage in turns.values_list("usage", flat=True)
    )

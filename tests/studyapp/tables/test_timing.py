"""A table's rules on time in one module (studyapp.tables.timing): the lobby's wait and hold,
turn deadlines, an agent's pause or think time, the monitor's stuck threshold and the limits."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from studyapp.tables import services, timing
from studyapp.tables.models import Table, Turn
from studyapp.tables.options import TableOptions

OPENED = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
APPLE = {"answer": "Apple", "max_questions": 20}
HUMAN, AGENT = "human", "agent"


def table(**options) -> Table:
    return Table(created_at=OPENED, options=options)


def test_the_lobby_waits_and_holds(settings) -> None:
    settings.LOBBY_WAIT_SECONDS = 90
    plain = table()
    assert timing.lobby_deadline(plain) == OPENED + timedelta(seconds=90)
    assert timing.start_hold(plain) is None
    assert timing.lobby_check_due(plain) == timing.lobby_deadline(plain)
    held = table(wait_seconds=60, start_after_seconds=12.5)
    assert timing.start_hold(held) == OPENED + timedelta(seconds=12.5)
    assert timing.lobby_check_seconds(held.opts) == 12.5
    assert timing.lobby_check_due(held) == timing.start_hold(held)
    group = table(wait_seconds=60, start_after_seconds=12.5, group_lobby=True)
    assert timing.start_hold(group) is None and timing.lobby_check_seconds(group.opts) == 60
    late = table(wait_seconds=10, start_after_seconds=30)
    assert timing.lobby_check_seconds(late.opts) == 10


def test_turn_deadlines(settings) -> None:
    settings.TURN_DEADLINE_SECONDS = 120
    assert timing.table_turn_deadline(TableOptions()) == 120
    for none in (0, -5, None, "", "soon"):
        opts = TableOptions.from_json({"turn_deadline_seconds": none})
        assert timing.table_turn_deadline(opts) is None
    between = TableOptions.from_json({"turn_deadline_seconds": 30, "deadline_between_people": True})
    assert timing.turn_deadline(between, [HUMAN, AGENT, HUMAN]) == 30
    assert timing.turn_deadline(between, [HUMAN, AGENT, AGENT]) is None  # alone with agents
    shared = TableOptions.from_json({"turn_deadline_seconds": 30})
    assert timing.turn_deadline(shared, [HUMAN, AGENT]) == 30
    assert timing.turn_due(OPENED, 30, 5) == OPENED + timedelta(seconds=35)


def test_the_agent_budget_is_the_pause_or_the_blinded_think_time(settings) -> None:
    settings.AGENT_DELAY_SECONDS = 1.5
    assert timing.agent_budget(TableOptions(), True) == (1.5, 1.5)
    think = {"clue": [5, 40], "vote": [3, 20], "question": [5, 40], "answer": [2, 15]}
    blinded = TableOptions.from_json({"agents_disclosed": False, "agent_think_seconds": think})
    assert timing.agent_budget(blinded, True, "vote") == (3, 20)
    assert timing.agent_budget(blinded, True, "") == (5, 40)  # a clue's
    assert timing.agent_budget(blinded, False, "vote") == (1.5, 1.5)  # no people: no think time
    disclosed = TableOptions.from_json({"agents_disclosed": True, "agent_think_seconds": think})
    assert timing.blinded_think(disclosed, True) is None


def test_the_stuck_threshold_counts_the_think_time(settings) -> None:
    settings.STUCK_AGENT_TURN_SECONDS = 60
    settings.AGENT_DELAY_SECONDS = 1.5
    kinds = [HUMAN, AGENT]
    assert timing.stuck_after(TableOptions(), kinds, AGENT) == 61.5
    blinded = TableOptions.from_json({"agents_disclosed": False, "agent_think_seconds": [4, 45]})
    assert timing.stuck_after(blinded, kinds, AGENT, "answer") == 105
    deadline = TableOptions.from_json({"turn_deadline_seconds": 90})
    assert timing.stuck_after(deadline, kinds, HUMAN) == 150
    assert (
        timing.stuck_after(TableOptions.from_json({"turn_deadline_seconds": 0}), kinds, HUMAN)
        is None
    )


def test_paused_and_idle_limits(settings) -> None:
    settings.PAUSED_TABLE_LIMIT_SECONDS = 3600
    assert timing.paused_limit(TableOptions()) == 3600
    assert timing.paused_limit(TableOptions.from_json({"paused_limit_seconds": 0})) is None
    assert timing.idle_limit(TableOptions()) is None
    assert timing.idle_limit(TableOptions.from_json({"idle_limit_seconds": 300})) == 300


@pytest.mark.django_db(transaction=True)
def test_a_blinded_agent_thinking_within_its_bounds_is_not_stuck(settings) -> None:
    """The monitor used to give every agent the site's short pause plus a grace, so a blinded
    table's agent, taking a person's think time as it should, was flagged stuck."""
    settings.STUCK_AGENT_TURN_SECONDS = 30
    settings.AGENT_DELAY_SECONDS = 1.5
    staff = Client()
    staff.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))

    def blinded(ago: int) -> Table:
        made = services.create_table(
            "twenty-questions",
            APPLE,
            [
                {"kind": "human", "session_key": f"key-{ago}"},
                {"kind": "agent", "agent_spec": "openai:gpt-4o"},
            ],
            study="blind",
            turn_deadline_seconds=0,
            agents_disclosed=False,
            agent_think_seconds=[5, 40],
        )
        Turn.objects.create(
            table=made,
            seq=0,
            seat=0,
            event={"type": "question", "seat": 0, "text": "Is it alive?"},
            created_at=timezone.now() - timedelta(seconds=ago),
        )
        return made

    thinking, gone = blinded(35), blinded(600)  # 35 s: past the pause, within the think time
    page = staff.get("/dashboard/tables/").content.decode()

    def row(of: Table) -> str:
        found = re.search(rf'<tr id="table-{of.pk}"[^>]*>.*?</tr>', page, re.S)
        assert found
        return found.group(0)

    assert "waiting for seat 1" in row(thinking) and 'class="stuck"' not in row(thinking)
    assert 'class="stuck"' in row(gone)


def imported_by(module: str) -> set[str]:
    """Every module ``module`` imports, at its top or inside a function."""
    import ast
    import importlib.util

    origin = importlib.util.find_spec(module).origin
    tree = ast.parse(Path(origin).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_the_boards_and_the_times_import_no_scheduler_and_no_agent_turn() -> None:
    """One place for a table's times: the board reads them from timing, never from the
    scheduler or the agent turn (which would close the circle agent_turns → services →
    broadcast → rendering → agent_turns)."""
    banned = {"studyapp.tables.agent_turns", "studyapp.tables.scheduling", "studyapp.tables.driver"}
    for module in (
        "studyapp.tables.rendering",
        "studyapp.tables.timing",
        "studyapp.tables.think",
        "studyapp.tables.pace",
        "studyapp.tables.dues",
    ):
        assert not imported_by(module) & banned, module
    assert "studyapp.tables.timing" in imported_by("studyapp.tables.rendering")


@pytest.mark.django_db
def test_a_blinded_agent_lets_deadlines_pass_as_often_as_the_pilots_people() -> None:
    """Issue 42: people at a blinded table sometimes let a turn deadline pass (the turn is passed
    and marked missed); the agents do too, at the share the study's pilot gives
    (``agent_think_seconds["timed_out"]``), with the same move and mark, credited to the agent with
    the reason in the turn's usage, and without asking a model. A table with no deadline never."""
    from studyapp.tables import scheduling, think

    seats = [{"kind": "agent", "agent_spec": "offline:kb"}] * 4
    seats += [{"kind": "human", "session_key": "person"}]
    bounds = {"clue": [5, 40], "timed_out": 0.5}
    assert think.bounds_problem(bounds) == ""
    assert think.bounds_problem({"timed_out": 0.9}) != ""
    assert think.bounds_problem({"timed_out": True}) != ""
    assert think.resolved(bounds)["timed_out"] == 0.5
    clues = []
    for seed in range(12):
        table = services.create_table(
            "undercover",
            None,
            seats,
            seed=seed,
            agents_disclosed=False,
            turn_deadline_seconds=60,
            agent_think_seconds=bounds,
            think_seed=seed,
        )
        scheduling.advance(services.table_state(table.pk))  # the agents' clues, played here
        clues += list(Turn.objects.filter(table=table, seat__lt=4, event__type="clue"))
    missed = [t for t in clues if t.event.get("missed")]
    assert len(clues) == 48
    assert 0.25 <= len(missed) / len(clues) <= 0.75, len(missed)
    for turn in missed:
        assert turn.event["text"] is None  # passed, as a person's missed clue is
        assert turn.actor == "offline:kb"  # credited to the agent, not to the table's skip
        assert "let the turn deadline pass" in turn.usage["timed_out"]
    assert all("timed_out" not in t.usage for t in clues if not t.event.get("missed"))
    table = services.create_table(
        "undercover",
        None,
        seats,
        seed=1,
        agents_disclosed=False,
        turn_deadline_seconds=0,
        agent_think_seconds=bounds,
    )
    scheduling.advance(services.table_state(table.pk))
    assert Turn.objects.filter(table=table).count() == 4
    assert not Turn.objects.filter(table=table, event__missed=True).exists()


@pytest.mark.django_db
def test_a_blinded_agent_without_a_fitted_share_lets_deadlines_pass_at_the_default() -> None:
    """Issue 48: a person's missed clue shows as a pass; at a blinded study without a pilot's
    fitted ``timed_out`` the agents never did, so a pass gave a person away. Bounds that do not
    say ``timed_out`` take the default share (think.DEFAULT_TIMED_OUT), a table records it, and a
    study that says ``timed_out = 0`` on purpose has none."""
    from studyapp.tables import scheduling, think

    assert think.timed_out_share([5, 40]) == think.DEFAULT_TIMED_OUT
    assert think.timed_out_share({"clue": [5, 40]}) == think.DEFAULT_TIMED_OUT
    assert think.timed_out_share({"timed_out": 0}) == 0
    assert think.resolved([5, 40])["timed_out"] == think.DEFAULT_TIMED_OUT
    seats = [{"kind": "agent", "agent_spec": "offline:kb"}] * 4
    seats += [{"kind": "human", "session_key": "person"}]

    def missed_share(bounds) -> tuple[int, int]:
        clues = []
        for seed in range(40):
            table = services.create_table(
                "undercover",
                None,
                seats,
                seed=seed,
                agents_disclosed=False,
                turn_deadline_seconds=60,
                agent_think_seconds=bounds,
                think_seed=seed,
            )
            scheduling.advance(services.table_state(table.pk))  # the agents' clues, played here
            clues += list(Turn.objects.filter(table=table, seat__lt=4, event__type="clue"))
        return sum(bool(t.event.get("missed")) for t in clues), len(clues)

    missed, clues = missed_share([0, 0])
    assert clues == 160 and 1 <= missed <= 16, missed  # about 3 in a hundred
    assert missed_share({"clue": [0, 0], "timed_out": 0})[0] == 0

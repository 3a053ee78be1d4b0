"""Issue 42: a move an offline stand-in made because a model failed is credited to the stand-in,
everywhere it is read: turns (actor_kind offline, the stand-in's spec as player, the failed model
in stood_in_for), games (stand_in_moves on the model seat's row), the transcript's line and the
live monitor's stand-in count. The model is the loopback fake server, failing every call."""

from __future__ import annotations

import types
from collections.abc import Iterator

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from games.undercover.agents import DescriptorAgent
from studyapp.dashboard.records import agent_frames
from studyapp.dashboard.views.tables import build_rows
from studyapp.participants.transcripts import mover_label
from studyapp.tables import driver, services
from studyapp.tables.agent_turns import STAND_IN_SPEC, agent_seed
from studyapp.tables.models import Seat, Table, Turn
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.django_db(transaction=True)
MODEL = "openai-compatible:down"


@pytest.fixture(autouse=True)
def close_model_clients() -> Iterator[None]:
    """Agent turns run inline on this thread's loop: their SDK clients are closed on it."""
    from games.llm.providers import close_clients
    from studyapp.background import run_async

    yield
    run_async(close_clients())


def play_person(table: Table) -> None:
    """The person at the table plays as the offline agent would, until the game ends."""
    for _ in range(300):
        snap = services.table_state(table.pk)
        if snap.is_over:
            return
        humans = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.HUMAN]
        if not humans:
            driver.tick(table.pk)
            continue
        seat = humans[0]
        agent = DescriptorAgent(
            seed=agent_seed(snap.table.seed, seat, snap.next_seq), sentences=True
        )
        observation = snap.engine.observe(snap.state, seat)
        observation["legal_actions"] = snap.engine.legal_actions(snap.state, seat)
        event = (
            agent.vote(observation) if observation["phase"] == "vote" else agent.clue(observation)
        )
        event = {k: ("none" if v is None and k == "target" else v) for k, v in event.items()}
        services.submit(table.pk, seat, event)
    raise AssertionError("the table did not finish")


def test_a_stand_ins_moves_are_credited_to_the_stand_in(settings, llm_server: FakeLLMServer):
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_COMPATIBLE_API_KEY = "site-compatible-key"
    llm_server.server_error_share = 1.0
    seats = [{"kind": "agent", "agent_spec": MODEL}]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 3
    seats += [{"kind": "human", "session_key": "person"}]
    table = services.create_table("undercover", None, seats, seed=3, agents_disclosed=False)
    play_person(table)
    logged = list(Turn.objects.filter(table=table).order_by("seq"))
    standing = [t for t in logged if (t.usage or {}).get("stand_in")]
    assert standing and all(t.seat == 0 and t.event["type"] == "clue" for t in standing)
    assert all(t.usage["stand_in"] == STAND_IN_SPEC and t.actor == MODEL for t in standing)
    # a failed vote is the model's own abstention, not a stand-in's move
    votes = [t for t in logged if t.seat == 0 and t.event["type"] == "vote"]
    assert all("stand_in" not in (t.usage or {}) for t in votes)

    frames = agent_frames()
    turns = frames["turns"][frames["turns"]["table"] == str(table.pk)]
    by_seq = turns.set_index("seq")
    for turn in standing:
        row = by_seq.loc[turn.seq]
        assert row["actor_kind"] == "offline" and row["player"] == STAND_IN_SPEC
        assert row["stood_in_for"] == MODEL and "stood in" in row["usage_error"]
    others = turns[~turns["seq"].isin([t.seq for t in standing])]
    assert others["stood_in_for"].isna().all()
    assert (others[others["seat"] == 0]["actor_kind"].dropna() == "model").all()

    games = frames["games"][frames["games"]["table"] == str(table.pk)].set_index("seat")
    assert games.loc[0, "player"] == MODEL and games.loc[0, "stand_in_moves"] == len(standing)
    assert (games.drop(index=0)["stand_in_moves"] == 0).all()

    someone = types.SimpleNamespace(public_id="p-1")
    line = mover_label(standing[0], {}, someone, types.SimpleNamespace(seat=4), [])
    assert line == f"seat 0: stand-in {STAND_IN_SPEC} for the failed {MODEL}"

    [row] = build_rows([Table.objects.get(pk=table.pk)], timezone.now())
    abstentions = sum(t.event["type"] == "vote" and t.event.get("target") is None for t in logged)
    # the monitor's stand-in column counts the stand-in's moves only; passes and abstentions
    # (which people make too) have their own
    assert row.stand_ins == len(standing)
    passes = sum(t.event["type"] == "clue" and t.event.get("text") is None for t in logged)
    assert row.passes == abstentions + passes
    page = render_to_string("dashboard/_table_rows.html", {"rows": [], "recent": [row]})
    assert '<th scope="col">Passes and abstentions</th>' in page

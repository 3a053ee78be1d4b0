"""The live monitor: per table its study, condition and round, who sits where (pseudonyms and
model specs, never session keys), last activity, failed model calls and stand-in moves, filters
by study and status, and stuck or paused tables visible at a glance."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from games.twenty_questions.engine import TwentyQuestionsEngine
from studyapp.participants import table_study
from studyapp.participants.models import Participant, Round, Study
from studyapp.tables import services
from studyapp.tables.models import Seat, Table, Turn

pytestmark = pytest.mark.django_db(transaction=True)

APPLE = {"answer": "Apple", "max_questions": 20}


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


def row(page: str, table: Table) -> str:
    match = re.search(rf'<tr id="table-{table.pk}"[^>]*>.*?</tr>', page, re.S)
    assert match, f"no row for table {table.pk}"
    return match.group(0)


def study_table(slug: str, condition: str, round_: int, session_key: str) -> Table:
    """A table as a study makes it: a person asks, a model answers, the study in its study part."""
    seats = [
        {"kind": "human", "session_key": session_key},
        {"kind": "agent", "agent_spec": "openai:gpt-4o"},
    ]
    # A human questioner moves first, so no agent turn runs while the test sets things up.
    table = services.create_table("twenty-questions", APPLE, seats, turn_deadline_seconds=0)
    table_study.record(table, {"study": slug, "condition": condition, "round": round_})
    return table


def add_turn(table: Table, seq: int, event: dict, usage: dict | None = None, ago: int = 0) -> None:
    Turn.objects.create(
        table=table,
        seq=seq,
        seat=event.get("seat"),
        event=event,
        usage=usage or {},
        created_at=timezone.now() - timedelta(seconds=ago),
    )


def test_it_lists_study_condition_round_seats_and_counts(staff: Client) -> None:
    study = Study.objects.create(slug="pilot-a", title="Pilot A")
    person = Participant.objects.create(study=study)
    table = study_table("pilot-a", "with-policy", 3, "secret-session-key-123")
    Round.objects.create(participant=person, number=3, table=table, seat=0)
    add_turn(table, 0, {"type": "question", "seat": 0, "text": "Is it alive?"})
    add_turn(
        table,
        1,
        {"type": "void", "seat": 1, "reason": "the model call failed"},
        {"calls": 1, "error": "the model call failed: 500"},
    )
    add_turn(table, 2, {"type": "question", "seat": 0, "text": "(no question)"})
    page = staff.get("/dashboard/tables/").content.decode()
    line = row(page, table)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", line, re.S)
    assert cells[1:4] == ["pilot-a", "with-policy", "3"]
    assert person.public_id in line and "<code>openai:gpt-4o</code>" in line
    assert "secret-session-key-123" not in page
    # one failed model call; no stand-in move (the void and the withdrawn question are a pass
    # each, counted in their own column)
    assert re.sub(r"\s", "", cells[7]) == "1" and re.sub(r"\s", "", cells[8]) == "0"
    assert re.sub(r"\s", "", cells[9]) == "2"


def test_a_table_waiting_on_an_agent_too_long_is_marked_stuck(staff: Client, settings) -> None:
    settings.STUCK_AGENT_TURN_SECONDS = 30
    table = study_table("pilot-b", "", 1, "key-b")
    add_turn(table, 0, {"type": "question", "seat": 0, "text": "Is it alive?"}, ago=600)
    fresh = study_table("pilot-b", "", 2, "key-c")
    add_turn(fresh, 0, {"type": "question", "seat": 0, "text": "Is it alive?"}, ago=1)
    page = staff.get("/dashboard/tables/").content.decode()
    assert 'class="stuck"' in row(page, table) and "waiting for seat 1" in row(page, table)
    assert 'class="stuck"' not in row(page, fresh)
    assert "1 stuck" in page


def test_a_person_without_a_deadline_is_never_stuck(staff: Client) -> None:
    table = study_table("pilot-c", "", 1, "key-d")
    Table.objects.filter(pk=table.pk).update(started_at=timezone.now() - timedelta(hours=2))
    page = staff.get("/dashboard/tables/").content.decode()
    assert "waiting for seat 0" in row(page, table) and 'class="stuck"' not in row(page, table)


def test_it_filters_by_study_and_by_status(staff: Client) -> None:
    one = study_table("alpha", "", 1, "key-1")
    two = study_table("beta", "", 1, "key-2")
    done = study_table("alpha", "", 2, "key-3")
    Table.objects.filter(pk=done.pk).update(status=Table.Status.FINISHED)
    page = staff.get("/dashboard/tables/?study=alpha").content.decode()
    assert f'id="table-{one.pk}"' in page and f'id="table-{two.pk}"' not in page
    assert f'id="table-{done.pk}"' in page  # under "Recent"
    assert '<option value="alpha" selected>' in page and '<option value="beta">' in page
    page = staff.get("/dashboard/tables/?status=finished").content.decode()
    assert f'id="table-{done.pk}"' in page and f'id="table-{one.pk}"' not in page
    page = staff.get("/dashboard/tables/?status=paused").content.decode()
    assert "No open tables." in page


def test_the_refresh_gets_only_the_rows_and_keeps_the_filters(staff: Client) -> None:
    study_table("alpha", "", 1, "key-1")
    page = staff.get("/dashboard/tables/?study=alpha&status=playing").content.decode()
    assert 'hx-get="/dashboard/tables/?study=alpha&amp;status=playing"' in page
    partial = staff.get("/dashboard/tables/?study=alpha", HTTP_HX_REQUEST="true").content
    assert b"<html" not in partial and b'id="open-tables"' in partial


def test_people_who_are_not_staff_cannot_see_it(client: Client) -> None:
    response = client.get("/dashboard/tables/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_an_empty_lobby_seat_and_a_staff_player_are_labelled(staff: Client) -> None:
    table = services.create_table(
        "undercover",
        None,
        [{"kind": "human"}] * 2 + [{"kind": "agent", "agent_spec": "offline:kb"}] * 3,
        lobby=True,
    )
    Seat.objects.filter(table=table, index=1).update(user=User.objects.get(username="researcher"))
    line = row(staff.get("/dashboard/tables/").content.decode(), table)
    assert (
        "0: empty" in line and "1: staff researcher" in line and "<code>offline:kb</code>" in line
    )


def test_the_refresh_reads_recent_state_without_replaying_logs(
    staff: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each refresh moves the tables' folds on by the turns committed since; a table is rebuilt
    from its whole log only where this process holds no fold of it, and then once."""
    held = study_table("pilot-d", "", 1, "key-e")  # started here: this process holds its fold
    other = study_table("pilot-d", "", 2, "key-f")
    services.forget(other.pk)  # as if it were played on another server
    replays: list[int] = []
    replay = TwentyQuestionsEngine.replay

    def counted(engine, config, events):
        replays.append(len(events))
        return replay(engine, config, events)

    monkeypatch.setattr(TwentyQuestionsEngine, "replay", counted)
    add_turn(held, 0, {"type": "question", "seat": 0, "text": "Is it alive?"})
    add_turn(other, 0, {"type": "question", "seat": 0, "text": "Is it alive?"})
    page = staff.get("/dashboard/tables/").content.decode()
    assert "waiting for seat 1" in row(page, held) and "waiting for seat 1" in row(page, other)
    assert len(replays) == 1  # the table without a fold, once
    add_turn(held, 1, {"type": "answer", "seat": 1, "answer": "Yes"}, usage={"calls": 1})
    add_turn(other, 1, {"type": "answer", "seat": 1, "answer": "Yes"}, usage={"calls": 1})
    page = staff.get("/dashboard/tables/").content.decode()
    assert "waiting for seat 0" in row(page, held) and "waiting for seat 0" in row(page, other)
    assert len(replays) == 1

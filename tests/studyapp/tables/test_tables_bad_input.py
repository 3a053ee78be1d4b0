"""Bad input is refused at the door with a reason, the same on SQLite and PostgreSQL: text that
cannot be stored or shown, wrong-typed fields, unreadable socket frames. A refused move leaves the
table as it was, and no turn already in the log can break a page."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from games.base import IllegalMove
from studyapp.tables import services, store
from studyapp.tables.models import Table, Turn
from studyapp.tables.moves import MAX_TEXT_CHARS, clean_action
from tests.studyapp.tables.conftest import new_session_key, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}
UNDERCOVER = {
    "players": 4,
    "normal_word": "apple",
    "difference_word": "pear",
    "difference_seat": 3,
    "max_vote_rounds": 3,
}

BAD_TEXT = [
    ("lone surrogate", "Is it \ud800 alive?", "broken character (U+D800"),
    ("low surrogate", "\udfff", "broken character (U+DFFF"),
    ("NUL", "Is it\x00 alive?", "control character (U+0000)"),
    ("bell", "Is it \x07 alive?", "control character (U+0007)"),
    ("escape", "\x1b[31mred", "control character (U+001B)"),
    ("DEL", "a\x7fb", "control character (U+007F)"),
    ("C1", "a\x85b", "control character (U+0085)"),
    ("over-long", "a" * (MAX_TEXT_CHARS + 1), f"the limit is {MAX_TEXT_CHARS}"),
    # storable, but shown reversed or hiding text from whoever reads the log
    ("right-to-left override", "Is it \u202eevila\u202c alive?", "formatting character (U+202E)"),
    ("right-to-left isolate", "a \u2067b", "formatting character (U+2067)"),
    ("zero-width space", "Is it\u200b alive?", "formatting character (U+200B)"),
    ("byte-order mark", "\ufeffIs it alive?", "formatting character (U+FEFF)"),
    ("replacement character", "Is it \ufffd\ufffd alive?", "could not be read (U+FFFD)"),
]
# Text of other scripts and emoji is welcome, joiners included.
GOOD_TEXT = [
    "Est-ce vivant ?",
    "Ist es größer als ein Brot?",
    "هل هو حي؟",
    "👩‍🍳 cooks?",
    "می‌خورید",
]
WRONG_TYPES = [
    (123, "a number"),
    (1.5, "a number"),
    (True, "true or false"),
    (["Is it alive?"], "a list"),
    ({"text": "Is it alive?"}, "an object"),
    (None, "empty"),
]


def tq_table(session_key: str) -> Table:
    seats = [{"kind": "human", "session_key": session_key}, ORACLE]
    return services.create_table("twenty-questions", {"answer": "Apple"}, seats)


def undercover_table() -> Table:
    seats = [{"kind": "human", "session_key": f"k{i}"} for i in range(4)]
    return services.create_table("undercover", UNDERCOVER, seats)


def log(table: Table) -> list[dict]:
    return [t.event for t in Turn.objects.filter(table=table).order_by("seq")]


def vote_phase(table: Table) -> None:
    clues = iter(
        [
            "grows",
            "sweet",
            "fruit",
            "trees",
            "red",
            "round",
            "crisp",
            "juicy",
            "pie",
            "cider",
            "seeds",
            "core",
        ]
    )
    while services.table_state(table.pk).state.phase == "speak":
        speaker = services.table_state(table.pk).waiting_for()[0]
        services.submit(table, speaker, {"type": "clue", "text": next(clues)})


@pytest.mark.parametrize(("name", "text", "reason"), BAD_TEXT)
def test_a_question_with_text_that_cannot_be_stored_is_refused(session_key, name, text, reason):
    table = tq_table(session_key)
    with pytest.raises(IllegalMove, match="The text cannot be accepted") as err:
        services.submit(table, 0, {"type": "question", "text": text})
    assert reason in err.value.reason
    assert log(table) == []
    services.submit(table, 0, {"type": "question", "text": "Is it a fruit?"})
    assert [e["type"] for e in log(table)] == ["question", "answer"]


@pytest.mark.parametrize(("name", "text", "reason"), BAD_TEXT)
def test_a_clue_with_text_that_cannot_be_stored_is_refused(name, text, reason):
    table = undercover_table()
    with pytest.raises(IllegalMove) as err:
        services.submit(table, 0, {"type": "clue", "text": text})
    assert reason in err.value.reason
    assert log(table) == []
    assert services.table_state(table.pk).waiting_for() == [0]


@pytest.mark.parametrize("text", GOOD_TEXT)
def test_a_question_in_another_script_or_with_emoji_is_taken_as_typed(session_key, text):
    table = tq_table(session_key)
    services.submit(table, 0, {"type": "question", "text": text})
    assert log(table)[0]["text"] == text


@pytest.mark.parametrize(("value", "kind"), WRONG_TYPES)
def test_a_question_that_is_not_text_is_refused_not_stored_as_a_string(session_key, value, kind):
    table = tq_table(session_key)
    with pytest.raises(IllegalMove, match=f"The text must be text, not {kind}"):
        services.submit(table, 0, {"type": "question", "text": value})
    assert log(table) == []


@pytest.mark.parametrize(("value", "kind"), [v for v in WRONG_TYPES if v[0] is not None])
def test_a_clue_that_is_not_text_is_refused(value, kind):
    table = undercover_table()
    with pytest.raises(IllegalMove, match=f"not {kind}"):
        services.submit(table, 0, {"type": "clue", "text": value})
    assert log(table) == []


def test_a_null_clue_passes():
    table = undercover_table()
    services.submit(table, 0, {"type": "clue", "text": None})
    assert log(table) == [{"type": "clue", "text": None, "seat": 0}]


@pytest.mark.parametrize(
    "target", [True, False, "true", "1.0", 1.5, [1], {"seat": 1}, "1; drop", "x" * 50, "٣"]
)
def test_a_vote_for_something_that_is_not_a_seat_is_refused(target):
    table = undercover_table()
    vote_phase(table)
    before = log(table)
    with pytest.raises(IllegalMove, match="Choose a player to vote for"):
        services.submit(table, 0, {"type": "vote", "target": target})
    assert log(table) == before


@pytest.mark.parametrize(("target", "stored"), [(3, 3), ("3", 3), (" 3 ", 3), ("none", None)])
def test_a_vote_from_a_form_or_a_socket_is_stored_as_a_seat(target, stored):
    table = undercover_table()
    vote_phase(table)
    services.submit(table, 0, {"type": "vote", "target": target})
    assert log(table)[-1] == {"type": "vote", "target": stored, "seat": 0}


def test_an_answer_that_is_not_text_is_refused():
    for value in (1, True, ["Yes"]):
        with pytest.raises(IllegalMove, match="The answer must be text"):
            clean_action({"type": "answer", "answer": value})


def test_keys_a_move_type_does_not_have_are_dropped(session_key):
    table = tq_table(session_key)
    turn = services.submit(
        table,
        0,
        {
            "type": "question",
            "text": "Is it red?",
            "answer": "Yes",
            "target": 1,
            "seat": 1,
            "reason": "x",
            "HEADERS": {"HX-Request": "true"},
        },
    )
    assert turn.event == {"type": "question", "text": "Is it red?", "seat": 0}


@pytest.mark.parametrize("kind", [None, 5, ["question"], "abort", "takeover", "void", "bogus"])
def test_a_move_of_no_known_type_is_refused(session_key, kind):
    table = tq_table(session_key)
    with pytest.raises(IllegalMove, match="Players cannot send that"):
        services.submit(table, 0, {"type": kind, "text": "Is it red?"})
    assert log(table) == []


def test_a_model_text_that_cannot_be_stored_is_stored_cleaned(session_key):
    """A model's move skips the door (it is not typed by a person) but must still be storable."""
    table = tq_table(session_key)
    snap = services.table_state(table.pk)
    event = {"type": "question", "seat": 0, "text": "Is it\x00 a \ud83d fruit?"}
    store.commit(snap, event, snap.engine.apply(snap.state, event), usage={"reply": "a\x00"})
    turn = Turn.objects.get(table=table, seq=0)
    assert turn.event["text"] == "Is it\ufffd a \ufffd fruit?"
    assert turn.usage == {"reply": "a\ufffd"}


def test_the_no_javascript_form_refuses_bad_text_with_a_400():
    key = new_session_key()
    table = tq_table(key)
    client = Client()
    client.cookies["sessionid"] = key
    response = client.post(
        reverse("tables:move", args=[table.pk]), {"type": "question", "text": "Is it\x00 red?"}
    )
    assert response.status_code == 400
    assert b"control character (U+0000)" in response.content
    assert log(table) == []


def test_the_no_javascript_form_refuses_bytes_that_are_not_utf8():
    """Django decodes a form with replacement: bytes that were not UTF-8 (a lone surrogate's, a
    Latin-1 byte) arrive as U+FFFD, and are refused as the socket refuses the same text."""
    key = new_session_key()
    table = tq_table(key)
    client = Client()
    client.cookies["sessionid"] = key
    url = reverse("tables:move", args=[table.pk])
    for body in (b"type=question&text=Is+it+%ED%A0%80+big%3F", b"type=question&text=caf%E9%3F"):
        response = client.post(url, body, content_type="application/x-www-form-urlencoded")
        assert response.status_code == 400
        assert b"could not be read (U+FFFD)" in response.content
    assert log(table) == []


def test_a_turn_committed_before_the_door_cannot_break_the_pages(session_key):
    """SQLite stored an unpaired surrogate before the door existed: every page still renders."""
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL refuses to store such a turn at all")
    table = tq_table(session_key)
    Turn.objects.create(
        table=table, seq=0, seat=0, event={"type": "question", "seat": 0, "text": "Is it \ud800?"}
    )
    Turn.objects.create(
        table=table, seq=1, seat=1, event={"type": "answer", "seat": 1, "answer": "No"}
    )
    store._recent.clear()
    client = Client()
    client.cookies["sessionid"] = session_key
    page = client.get(reverse("tables:table", args=[table.pk]))
    assert page.status_code == 200
    assert "Is it \ufffd?" in page.content.decode()
    services.submit(table, 0, {"type": "question", "text": "Is it an apple?"})
    assert services.table_state(table.pk).is_over
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("staff", password="x", is_staff=True))
    assert staff.get(reverse("tables:table", args=[table.pk])).status_code == 200
    assert staff.get(reverse("dashboard:analysis_tables")).status_code == 200
    download = staff.get(reverse("dashboard:analysis_tables_download", args=["csv"]))
    turns = zipfile.ZipFile(io.BytesIO(download.getvalue())).read("turns.csv").decode()
    assert "Is it \ufffd?" in turns


# ---- over a real socket ----------------------------------------------------------------------


async def connected(table_id: int, key: str):
    communicator = socket(table_id, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    return communicator


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        ('{"type": "question", "text": "Is it \\ud800?"}', "broken character (U+D800"),
        ('{"type": "question", "text": "Is it\\u0000?"}', "control character (U+0000)"),
        ('{"type": "question", "text": 123}', "must be text, not a number"),
        ('{"type": "question", "text": {"a": [1, 2]}}', "must be text, not an object"),
        ('{"type": "question", "text": true}', "must be text, not true or false"),
        # Nested past Python's recursion limit, within the frame size a socket reads (64 KiB;
        # larger frames are refused before they are parsed, test_tables_consumers.py).
        ("[" * 30_000 + "]" * 30_000, "could not be read"),
        ('{"type": "question", "text": ' + "[" * 60_000, "could not be read"),
        ('{"type": "question", "text": ' + "[" * 500 + "]" * 500 + "}", "not a list"),
        ("not json", "could not be read"),
        ("[1, 2]", "could not be read"),
        ('{"text": "Is it red?"}', "could not be read"),
        ('"question"', "could not be read"),
    ],
)
async def test_the_socket_answers_bad_frames_with_a_reason_and_stays_open(frame, reason):
    key = await database_sync_to_async(new_session_key)()
    table = await database_sync_to_async(tq_table)(key)
    communicator = await connected(table.pk, key)
    await communicator.send_to(text_data=frame)
    answer = await communicator.receive_from(timeout=5)
    assert 'role="alert"' in answer and reason in answer
    assert await database_sync_to_async(log)(table) == []
    await communicator.send_to(text_data=json.dumps({"type": "question", "text": "Is it red?"}))
    frames = [await communicator.receive_from(timeout=5) for _ in range(2)]
    assert "Is it red?" in frames[-1]
    await communicator.disconnect()

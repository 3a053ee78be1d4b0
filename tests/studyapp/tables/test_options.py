"""A table's options, typed (studyapp.tables.options): every key read one way, defaults from the
site's settings at read time, old rows read without loss, and a new table's options checked."""

from __future__ import annotations

import pytest

from studyapp.tables import services
from studyapp.tables.models import Table
from studyapp.tables.options import FIELDS, TableOptions

APPLE = {"answer": "Apple", "max_questions": 20}

# What a blinded Who is Undercover study table of an earlier release stored of its own (its study
# part is the participants app's: tests/studyapp/participants/test_study_table_migration.py), plus
# keys this release does not know, a number written as text, a limit nobody can read and a null.
OLD_ROW = {
    "turn_deadline_seconds": 60,
    "dropout": "replace",
    "idle_limit_seconds": 300,
    "person_seats": [1, 3],
    "return_url": "/study/uc-blind/continue/",
    "language": "de",
    "agents_disclosed": False,
    "agent_think_seconds": {"clue": [5, 40], "vote": [3, 20]},
    "think_seed": 12345,
    "wait_seconds": 120,
    "lobby_timeout": "fill",
    "replacement_spec": "openai:gpt-4o-mini",
    "lobby_kind": "study:3:policy:2:people",
    "start_after_seconds": 17.5,
    "exit_code": "C0DE",
    "a_key_from_the_future": {"kept": True},
    "paused_limit_seconds": "abc",
    "agent_delay_seconds": "2.5",
    "experiment": None,
}


def test_an_old_row_round_trips_and_reads_typed() -> None:
    opts = TableOptions.from_json(OLD_ROW)
    assert opts.to_json() == OLD_ROW
    assert TableOptions.from_json(opts.to_json()).to_json() == OLD_ROW
    assert opts.other == {
        "a_key_from_the_future": {"kept": True},
        "paused_limit_seconds": "abc",
        "agent_delay_seconds": "2.5",
    }
    assert (opts.language, opts.person_seats, opts.think_seed) == ("de", [1, 3], 12345)
    assert opts.blinded and not opts.disclosed
    assert opts.agent_delay_seconds == 2.5  # a number written as text still counts
    assert opts.paused_limit_seconds == 0  # a limit nobody can read is none


def test_a_study_key_is_no_field_of_a_table_and_is_kept_as_it_is() -> None:
    study_part = {"study": "s", "condition": "c", "round": 2, "group": 1, "seat_slots": [1, 0]}
    assert set(FIELDS).isdisjoint(study_part)
    opts = TableOptions.from_json({**study_part, "dropout": "end"})
    assert opts.other == study_part and opts.dropout == "end"
    assert opts.to_json() == {"dropout": "end", **study_part}


def test_every_field_round_trips_alone() -> None:
    for name in FIELDS:
        stored = {name: None}
        assert TableOptions.from_json(stored).to_json() == stored
    assert TableOptions.from_json({}).to_json() == {}
    assert TableOptions.from_json(None).to_json() == {}
    assert TableOptions(language="de", think_seed=1).to_json() == {
        "language": "de",
        "think_seed": 1,
    }


def test_defaults_come_from_settings_when_read(settings) -> None:
    opts = TableOptions.from_json({"dropout": "skip"})
    settings.LOBBY_WAIT_SECONDS = 42
    settings.AGENT_DELAY_SECONDS = 0.25
    settings.DEFAULT_AGENT_SPEC = "offline:kb"
    assert (opts.wait_seconds, opts.agent_delay_seconds) == (42, 0.25)
    assert opts.replacement_spec == "offline:kb" and opts.stored("replacement_spec") is None
    assert TableOptions.from_json({"replacement_spec": ""}).replacement_spec == "offline:kb"
    settings.LOBBY_WAIT_SECONDS = 7
    assert opts.wait_seconds == 7
    assert opts.to_json() == {"dropout": "skip"}  # a default is never written into the row
    assert (opts.lobby_timeout, opts.language, opts.person_seats) == ("fill", "en", [])
    assert opts.agents_disclosed is None and not opts.blinded and not opts.disclosed


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"dropout": "leave"}, "dropout must be replace, skip or end"),
        ({"lobby_timeout": "wait"}, "lobby_timeout must be fill or exit"),
        ({"wait_seconds": "soon"}, "wait_seconds"),
        ({"agents_disclosed": "no"}, "agents_disclosed"),
        ({"person_seats": [0, "1"]}, "person_seats"),
        ({"agent_think_seconds": [40, 5]}, "agent_think_seconds"),
    ],
)
def test_a_new_tables_options_are_checked(options: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        TableOptions.checked(options)


def test_checked_keeps_what_it_does_not_know() -> None:
    opts = TableOptions.checked({"dropout": "end", "lobby_kind": "k", "custom": 1})
    assert opts.to_json() == {"dropout": "end", "lobby_kind": "k", "custom": 1}


@pytest.mark.django_db
def test_create_table_refuses_bad_options_and_stores_the_given_ones() -> None:
    seats = [{"kind": "human", "session_key": "k"}, {"kind": "agent", "agent_spec": "offline:kb"}]
    with pytest.raises(ValueError, match="lobby_timeout"):
        services.create_table("twenty-questions", APPLE, seats, lobby_timeout="never")
    table = services.create_table(
        "twenty-questions", APPLE, seats, dropout="end", turn_deadline_seconds=0, think_seed=3
    )
    stored = Table.objects.get(pk=table.pk)
    assert stored.options == {"dropout": "end", "turn_deadline_seconds": 0, "think_seed": 3}
    assert stored.opts.think_seed == 3 and stored.turn_deadline() is None
    assert stored.language == "en"


def test_table_opts_follow_a_new_options_dict() -> None:
    table = Table(options={"language": "de"})
    assert table.opts is table.opts and table.language == "de"
    table.options = {**table.options, "group_formed": 2}
    assert table.opts.group_formed == 2 and table.language == "de"
    assert Table(options={"language": None}).language == "en"

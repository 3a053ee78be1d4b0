"""A German study plays in German: its rounds' words are the German words of the same case, and
an offline agent (English only) is refused with the reason when the study is validated or
applied, and when a table in German is created."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from games.languages import candidate_names, undercover_pairs
from studyapp.participants.models import Study
from studyapp.participants.study_tables import round_config
from studyapp.tables import services

pytestmark = pytest.mark.django_db

SEATS = [{"kind": "person"}] + [{"kind": "agent", "spec": "openai:gpt-4o-mini"}] * 4


def undercover(language: str, seats=SEATS) -> Study:
    return Study(
        slug=f"uc-{language}",
        title="UC",
        game="undercover",
        language=language,
        rounds=3,
        seed=4,
        consent_text="ok",
        design={"seats": seats, "replacement_spec": "openai:gpt-4o-mini"},
        active=False,
    )


def test_a_german_studys_rounds_play_german_words_of_the_same_case():
    german, english = undercover("de"), undercover("en")
    for number in (1, 2, 3):
        de = round_config(german, number, 5)
        en = round_config(english, number, 5)
        assert de["difference_seat"] == en["difference_seat"]
        assert {de["normal_word"], de["difference_word"]} in [
            set(p) for p in undercover_pairs("de")
        ]
        assert de["normal_word"] != en["normal_word"]
    tq = Study(slug="tq-de", title="TQ", language="de", seed=4, consent_text="ok")
    config = round_config(tq, 1, 2)
    assert config["language"] == "de" and config["answer"] in candidate_names("de")


def test_offline_agents_are_refused_for_a_german_study_with_the_reason(settings, tmp_path):
    settings.OPENAI_API_KEY = "test-key"
    undercover("de").full_clean()  # model agents: fine
    offline = [{"kind": "person"}] + [{"kind": "agent", "spec": "offline:kb"}] * 4
    with pytest.raises(ValidationError, match="offline:kb plays in English only"):
        undercover("de", offline).full_clean()
    undercover("en", offline).full_clean()  # in English they play
    text = (
        'slug = "uc-de-file"\ntitle = "UC"\ngame = "undercover"\nlanguage = "de"\n'
        'consent_text = "ok"\n[design]\nseats = [{ kind = "person" }'
        + ', { kind = "agent", spec = "offline:kb" }' * 4
        + "]\n"
    )
    path = tmp_path / "uc-de-file.toml"
    path.write_text(text)
    with pytest.raises(CommandError, match="language: study: offline:kb plays in English only"):
        call_command("study", "apply", str(path), stdout=io.StringIO())
    assert not Study.objects.filter(slug="uc-de-file").exists()


def test_a_table_in_german_refuses_an_offline_agent_at_creation():
    seats = [{"kind": "human", "session_key": "k"}] + [
        {"kind": "agent", "agent_spec": "offline:kb"}
    ] * 4
    config = round_config(undercover("de"), 1, 5)
    with pytest.raises(ValueError, match="offline:kb plays in English only"):
        services.create_table("undercover", config, seats, language="de")
    with pytest.raises(ValueError, match="offline:kb plays in English only"):
        services.create_table(
            "undercover",
            config,
            [seats[0]] + [{"kind": "agent", "agent_spec": "openai:gpt-4o-mini"}] * 4,
            language="de",
            replacement_spec="offline:kb",
        )

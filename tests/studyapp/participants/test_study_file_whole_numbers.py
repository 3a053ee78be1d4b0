"""Every whole-number field of a study file refuses infinity, a number too large to read
(``1e400`` reads as infinity), NaN and a fraction, naming the field and the reason, with no
traceback and nothing applied; a blinded study refuses a zero turn deadline."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from studyapp.participants.models import Study

BASE = 'slug = "nums"\ntitle = "Numbers"\nconsent_text = "You play."\n'
UNDERCOVER = (
    'game = "undercover"\n'
    "[design]\n"
    'seats = [{ kind = "person" }, { kind = "agent", spec = "offline:kb" }, '
    '{ kind = "agent", spec = "offline:kb" }, { kind = "agent", spec = "offline:kb" }]\n'
)
STUDY_FIELDS = [
    "rounds",
    "seed",
    "turn_deadline_seconds",
    "missed_turns_limit",
    "idle_limit_seconds",
    "check_attempts",
    "assignment_seed",
    "estimated_minutes",
]
BAD = {
    "inf": "not infinity",
    "-inf": "not infinity",
    "1e400": "not infinity",
    "nan": "not nan",
    "2.7": "not 2.7 (it has a fraction)",
}


def apply_text(text: str, tmp_path: Path) -> str:
    path = tmp_path / "study.toml"
    path.write_text(text)
    out = io.StringIO()
    call_command("study", "apply", str(path), stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("field", STUDY_FIELDS)
@pytest.mark.parametrize("value", list(BAD))
def test_it_refuses_a_study_field_that_is_not_a_whole_number(db, tmp_path, field, value):
    with pytest.raises(CommandError, match=re.escape(f"{field} must be a whole number, ")) as err:
        apply_text(f"{field} = {value}\n" + BASE, tmp_path)
    assert BAD[value] in str(err.value)
    assert not Study.objects.filter(slug="nums").exists()


@pytest.mark.parametrize("field", ["quota", "group_quota", "position"])
@pytest.mark.parametrize("value", list(BAD))
def test_it_refuses_a_condition_field_that_is_not_a_whole_number(db, tmp_path, field, value):
    text = BASE + f'[[conditions]]\nname = "arm"\n{field} = {value}\n'
    with pytest.raises(CommandError, match=re.escape(f"condition arm: {field} must be a whole")):
        apply_text(text, tmp_path)
    assert not Study.objects.filter(slug="nums").exists()


@pytest.mark.parametrize("key", ["players", "wait_seconds"])
@pytest.mark.parametrize("value", list(BAD))
def test_it_refuses_a_design_number_that_is_not_a_whole_number(db, tmp_path, key, value):
    with pytest.raises(CommandError, match=re.escape(f"{key} must be a whole number, ")) as err:
        apply_text(BASE + UNDERCOVER + f"{key} = {value}\n", tmp_path)
    assert BAD[value] in str(err.value)
    assert not Study.objects.filter(slug="nums").exists()


def test_it_refuses_a_number_beyond_its_fields_range(db, tmp_path):
    with pytest.raises(CommandError, match="rounds must be at most 2147483647, not 1000000000000"):
        apply_text("rounds = 1e12\n" + BASE, tmp_path)
    with pytest.raises(CommandError, match="missed_turns_limit must be at most 32767"):
        apply_text("missed_turns_limit = 99999\n" + BASE, tmp_path)
    with pytest.raises(CommandError, match="rounds must be at least 0, not -1"):
        apply_text("rounds = -1\n" + BASE, tmp_path)
    assert not Study.objects.filter(slug="nums").exists()


def test_a_whole_number_written_as_a_float_is_that_number(db, tmp_path):
    apply_text("rounds = 3.0\n" + BASE, tmp_path)
    assert Study.objects.get(slug="nums").rounds == 3


def test_a_blinded_study_refuses_a_zero_turn_deadline(db, tmp_path):
    blinded = "agents_disclosed = false\n" + BASE + UNDERCOVER
    with pytest.raises(CommandError, match="turn_deadline_seconds: a blinded study"):
        apply_text("turn_deadline_seconds = 0\n" + blinded, tmp_path)
    assert not Study.objects.filter(slug="nums").exists()
    assert "created" in apply_text("turn_deadline_seconds = 60\n" + blinded, tmp_path)
    disclosed = "turn_deadline_seconds = 0\n" + BASE.replace('"nums"', '"open"')
    assert "created" in apply_text(disclosed, tmp_path)  # disclosed: 0 is no deadline

"""Study files: export and apply, the examples of docs/studies.md, refusals once data exists."""

from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path

import pytest
import tomli_w
from django.core.management import call_command
from django.core.management.base import CommandError

from studyapp.participants import studyfile
from studyapp.participants.models import Participant, Study

DOC = Path(__file__).resolve().parents[3] / "docs" / "studies.md"


def examples() -> list[str]:
    return re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)


def apply_text(text: str, *args: str) -> str:
    path = Path(f"/tmp/study-{abs(hash(text))}.toml")
    path.write_text(text)
    out = io.StringIO()
    call_command("study", "apply", str(path), *args, stdout=out)
    return out.getvalue()


def test_the_documented_examples_apply(db, settings):
    settings.OPENAI_API_KEY = "test-key"
    twenty, undercover = examples()
    assert "tq-2026: created (active)" in apply_text(twenty)
    assert "uc-mixed: created (active)" in apply_text(undercover)
    study = Study.objects.get(slug="uc-mixed")
    assert [c.name for c in study.conditions.all()] == ["two-people", "one-person"]
    assert study.conditions.get(name="two-people").overrides["design"]["seats"][1] == {
        "kind": "person"
    }
    tq = Study.objects.get(slug="tq-2026")
    assert tq.design == {"person": "questioner"} and tq.rounds == 20
    assert tq.conditions.get(name="human-policy").overrides["shown_policy"].startswith("Split")


def test_a_provider_without_its_key_is_refused_with_the_reason(db, settings):
    settings.OPENAI_API_KEY = ""
    with pytest.raises(CommandError, match="OPENAI_API_KEY is not set"):
        apply_text(examples()[0])
    assert not Study.objects.filter(slug="tq-2026").exists()


def test_a_mistyped_spec_in_a_file_is_refused(db):
    text = examples()[1].replace('replacement_spec = "offline:kb"', 'replacement_spec = "gpt4o"')
    with pytest.raises(CommandError, match="provider:model"):
        apply_text(text)


def test_export_then_apply_gives_the_same_study(db):
    apply_text(examples()[1])
    out = io.StringIO()
    call_command("study", "export", "uc-mixed", stdout=out)
    exported = out.getvalue()
    before = studyfile.study_dict(Study.objects.get(slug="uc-mixed"))
    assert "uc-mixed: updated" in apply_text(exported)
    assert studyfile.study_dict(Study.objects.get(slug="uc-mixed")) == before


def test_changes_that_would_invalidate_data_need_a_new_version(db):
    apply_text(examples()[1])
    study = Study.objects.get(slug="uc-mixed")
    Participant.objects.create(study=study, status="playing", condition="one-person")
    changed = examples()[1].replace("seed = 7", "seed = 8")
    with pytest.raises(CommandError, match="changing seed would make their data incomparable"):
        apply_text(changed)
    harmless = examples()[1].replace('payment_amount = "6.00"', 'payment_amount = "7.00"')
    assert "updated" in apply_text(harmless)
    assert "created as a new version of uc-mixed" in apply_text(changed, "--new-version")
    new = Study.objects.get(slug="uc-mixed-v2")
    assert (new.seed, new.version, new.previous_id) == (8, 2, study.pk)
    assert new.active and not Study.objects.get(slug="uc-mixed").active
    assert new.conditions.count() == 2


def test_a_broken_file_names_what_is_wrong(db):
    with pytest.raises(CommandError, match="unknown keys: colour"):
        apply_text('slug = "x"\ntitle = "X"\nconsent_text = "c"\ncolour = "red"\n')
    with pytest.raises(CommandError, match="not valid TOML"):
        apply_text('slug = "x\n')
    with pytest.raises(CommandError, match="4 to 8 seats"):
        apply_text(
            'slug = "x"\ntitle = "X"\nconsent_text = "c"\ngame = "undercover"\n'
            '[design]\nseats = [{ kind = "person" }]\n'
        )


# --- the file is the whole study ------------------------------------------------------------

FULL = """
slug = "decl"
title = "Declarative"
consent_text = "You play Twenty Questions."
rounds = 2
debrief_text = "Thank you. Some players were agents."
policy_question = "What would you advise?"
completion_url = "https://app.prolific.com/submissions/complete"
code_finished = "FIN1"
code_dropped = "DRP1"
code_screened = "SCR1"

[[questionnaire]]
id = "hard"
question = "It was hard."
kind = "likert"

[[checks]]
question = "Which answers can the oracle give?"
options = ["Any sentence", "Yes, No or Invalid"]
answer = "Yes, No or Invalid"

[[conditions]]
name = "a"

[[conditions]]
name = "b"
[conditions.overrides]
shown_policy = "Halve the candidates."
"""


def without(text: str, *keys: str) -> str:
    """The file with top-level keys (and [[key]] tables) taken out."""
    data = tomllib.loads(text)
    return tomli_w.dumps({k: v for k, v in data.items() if k not in keys})


def test_a_key_left_out_of_the_file_returns_to_its_default_and_is_reported(db):
    apply_text(FULL)
    study = Study.objects.get(slug="decl")
    assert study.questionnaire and study.debrief_text and study.conditions.count() == 2
    shorter = without(FULL, "questionnaire", "conditions", "debrief_text", "code_screened")
    assert "[[questionnaire]]" not in shorter and "debrief_text" not in shorter
    out = apply_text(shorter)
    study.refresh_from_db()
    assert study.questionnaire == [] and study.debrief_text == "" and study.code_screened == ""
    assert study.conditions.count() == 0
    assert "decl: updated (active)" in out
    for key in ("questionnaire", "conditions", "debrief_text", "code_screened"):
        assert re.search(rf"^  {key}: .+ -> ", out, re.M), (key, out)
    again = apply_text(shorter)
    assert "updated, nothing changed" in again and " -> " not in again
    # The file now equals the study: exporting it and applying that changes nothing.
    exported = io.StringIO()
    call_command("study", "export", "decl", stdout=exported)
    assert "[[questionnaire]]" not in exported.getvalue()
    assert 'debrief_text = ""' in exported.getvalue()


def test_what_people_already_read_cannot_be_taken_away_from_under_them(db):
    apply_text(FULL)
    study = Study.objects.get(slug="decl")
    Participant.objects.create(study=study, status="playing", condition="a")
    with pytest.raises(CommandError, match="changing .*questionnaire.* what they read"):
        apply_text(without(FULL, "questionnaire"))
    with pytest.raises(CommandError, match="payment_amount \\(lowered\\)"):
        apply_text('payment_amount = "5.00"\n' + FULL)
    study.refresh_from_db()
    assert study.questionnaire and str(study.payment_amount) == "10.00"
    # A higher pay, a new title or codes may change; so may anything with --new-version.
    assert "updated" in apply_text(FULL.replace('title = "Declarative"', 'title = "Decl 2"'))
    out = apply_text(without(FULL, "questionnaire"), "--new-version")
    assert "created as a new version of decl" in out
    assert Study.objects.get(slug="decl-v2").questionnaire == []


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        ('payment_amount = "-4.50"', "payment_amount: An amount cannot be below zero"),
        ('bonus_per_reward = "-0.10"', "bonus_per_reward: An amount cannot be below zero"),
        ('payment_amount = "ten"', "payment_amount must be an amount"),
        ('code_finished = "<script>alert(1)</script>"', "code_finished: A code may hold only"),
        ('code_dropped = ""', "code_dropped: An active Prolific study needs this code"),
    ],
)
def test_pay_and_codes_that_could_not_run_a_paid_study_are_refused(db, line, refusal):
    key = line.split(" =")[0]
    text = line + "\n" + without(FULL, key)
    with pytest.raises(CommandError, match=re.escape(refusal)):
        apply_text(text)
    assert not Study.objects.filter(slug="decl").exists()


def test_an_undercover_study_without_a_design_or_seats_for_its_quota_is_refused(db):
    base = 'game = "undercover"\n' + without(FULL, "checks", "conditions")
    with pytest.raises(CommandError, match="Who is Undercover needs a design"):
        apply_text(base)
    seats = (
        '\n[design]\nseats = [{ kind = "person" }, { kind = "person" }, '
        '{ kind = "agent", spec = "offline:kb" }, { kind = "agent", spec = "offline:kb" }]\n'
        '\n[[conditions]]\nname = "pairs"\nquota = 1\n'
    )
    with pytest.raises(CommandError, match="quota of 1 people cannot fill a table of 2 person"):
        apply_text(base + seats)
    assert "created (active)" in apply_text(base + seats.replace("quota = 1", "quota = 4"))

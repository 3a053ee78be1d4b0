"""Study files: export and apply, the examples of docs/studies.md, refusals once data exists."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
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

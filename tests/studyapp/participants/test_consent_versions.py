"""Consent versions are enforced: a consent text changed after people agreed to its version is
always saved as a new version (study file, admin, or any save), and every version's text is kept
and exported."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse
from participant_helpers import arrive, consent, page
from test_study_designs import admin_post

from analysis.export import read_frames
from studyapp.dashboard.exporting import export_study
from studyapp.participants.models import ConsentVersion, Participant, Study, next_consent_version
from tests.exports import assert_export_agrees

FILE = """
slug = "cv"
title = "Consent versions"
consent_version = "1"
consent_text = "TEXT"
rounds = 1
"""


def apply(text: str, folder) -> str:
    path = folder / "study.toml"
    path.write_text(text)
    out = io.StringIO()
    call_command("study", "apply", str(path), stdout=out)
    return out.getvalue()


def agreed(client, study: Study) -> Participant:
    participant = arrive(client, study)
    consent(client, participant)
    participant.refresh_from_db()
    assert participant.consented_at is not None
    return participant


def test_study_apply_never_keeps_the_old_version_for_a_changed_text(client_factory, tmp_path):
    apply(FILE.replace("TEXT", "First text."), tmp_path)
    study = Study.objects.get(slug="cv")
    # Before anyone agreed, version 1 is a draft: its text may change under the same number.
    assert "updated" in apply(FILE.replace("TEXT", "First text, corrected."), tmp_path)
    study.refresh_from_db()
    assert study.consent_version == "1"
    first = agreed(client_factory(), study)
    assert first.consent_version == "1"
    out = apply(FILE.replace("TEXT", "Second text."), tmp_path)
    study.refresh_from_db()
    assert study.consent_version == "2" and "consent version 2" in out
    second = agreed(client_factory(), study)
    assert second.consent_version == "2"
    texts = dict(study.consent_versions.values_list("version", "text"))
    assert texts == {"1": "First text, corrected.", "2": "Second text."}
    # Applying the same file again keeps version 2 (the text is the same); undoing the change
    # goes back to the version that text was agreed to as.
    apply(FILE.replace("TEXT", "Second text."), tmp_path)
    study.refresh_from_db()
    assert study.consent_version == "2"
    apply(FILE.replace("TEXT", "First text, corrected."), tmp_path)
    study.refresh_from_db()
    assert study.consent_version == "1"
    assert ConsentVersion.objects.filter(study=study).count() == 2


def test_the_admin_saves_a_changed_text_as_a_new_version_and_says_so(staff, client_factory):
    study = Study.objects.create(slug="cv-admin", title="CV", consent_text="Old.", rounds=1)
    person = agreed(client_factory(), study)
    url = reverse("admin:participants_study_change", args=[study.pk])
    response = staff.post(url, admin_post(study, consent_text="New."), follow=True)
    assert response.status_code == 200
    study.refresh_from_db()
    assert (study.consent_version, study.consent_text) == ("2", "New.")
    assert "saved as consent version 2" in response.content.decode()
    page_ = staff.get(url).content.decode()
    assert 'id="consent-versions"' in page_ and "Old." in page_ and "New." in page_
    person.refresh_from_db()
    assert person.consent_version == "1"


def test_any_save_keeps_the_rule_and_a_stale_consent_page_is_refused(client_factory):
    study = Study.objects.create(slug="cv-orm", title="CV", consent_text="A.", rounds=1)
    agreed(client_factory(), study)
    client = client_factory()
    waiting = arrive(client, study)  # reads the consent page of version 1
    study.consent_text = "B."
    study.consent_version = "1"
    study.save()
    assert study.consent_version == "2"
    client.post(page(waiting, "consent"), {"version": "1", "agree": "on"})
    waiting.refresh_from_db()
    assert waiting.consented_at is None  # agreed to a text that is no longer asked
    consent(client, waiting)
    waiting.refresh_from_db()
    assert waiting.consent_version == "2"


def test_next_versions():
    assert next_consent_version("1", {"1", "2"}) == "3"
    assert next_consent_version("v1", {"v1"}) == "v1-2"
    assert len(next_consent_version("x" * 32, set())) <= 32


@pytest.mark.django_db
def test_the_export_carries_every_versions_text(client_factory, tmp_path):
    study = Study.objects.create(slug="cv-export", title="CV", consent_text="=cmd|' /C calc'!A0")
    agreed(client_factory(), study)
    study.consent_text = "Second."
    study.save()
    agreed(client_factory(), study)
    export_study(study, tmp_path, formats=("csv",))
    assert_export_agrees(tmp_path)
    frame = read_frames(tmp_path)["consent_versions"]
    assert list(frame["version"]) == ["1", "2"]
    assert list(frame["participants"]) == [1, 1]
    assert frame["text"][1] == "Second."
    raw = (tmp_path / "consent_versions.csv").read_text()
    assert "'=cmd" in raw  # the formula guard holds for consent texts too

"""The game has one name in front of players: every page of a participant's path in an Undercover
study says "Who is the Difference" and never "Undercover" (docs/studies.md says why)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from participant_helpers import arrive, consent, page

from studyapp.participants.models import Study

pytestmark = pytest.mark.django_db


def test_no_page_a_participant_sees_names_the_game_undercover(alice):
    call_command("seed_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    study = Study.objects.get(slug="demo-undercover")
    link = alice.get(f"/s/{study.slug}/").content.decode()
    assert "Who is the Difference" in link
    participant = arrive(alice, study)
    pages = [link, alice.get(page(participant, "consent")).content.decode()]
    consent(alice, participant)
    pages.append(alice.get(page(participant, "instructions")).content.decode())
    for shown in pages:
        assert "undercover" not in shown.lower().replace("demo-undercover", ""), shown[:200]

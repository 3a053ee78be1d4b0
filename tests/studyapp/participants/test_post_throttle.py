"""A participant's form posts are throttled per person (PARTICIPANT_POSTS_PER_MINUTE): a script
posting a form in a loop gets a 429 page that says why and when to try again; another person is
counted apart, and a person's GETs are never refused."""

from __future__ import annotations

import pytest
from participant_helpers import arrive, page

from studyapp.participants.models import Participant

pytestmark = pytest.mark.django_db


def test_a_form_posted_in_a_loop_is_refused_with_a_reason(settings, study, alice, bob) -> None:
    settings.PARTICIPANT_POSTS_PER_MINUTE = 3
    person = arrive(alice, study)
    codes = [alice.post(page(person, "consent"), {}).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]  # three invalid consents shown again, then refused
    refused = alice.post(page(person, "consent"), {})
    text = refused.content.decode()
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    assert 'id="error-reason"' in text and "sent 3 times or more within a" in text
    assert f'href="{page(person, "consent")}"' in text
    assert alice.get(page(person, "consent")).status_code == 200  # reading is never refused
    Participant.objects.get(pk=person.pk)  # nothing of theirs changed or lost
    other = arrive(bob, study)
    assert bob.post(page(other, "consent"), {}).status_code == 200  # counted apart


def test_no_limit_when_set_to_zero(settings, study, alice) -> None:
    settings.PARTICIPANT_POSTS_PER_MINUTE = 0
    person = arrive(alice, study)
    assert {alice.post(page(person, "consent"), {}).status_code for _ in range(8)} == {200}

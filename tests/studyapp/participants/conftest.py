"""Named people for the participant tests: two participants in their own browsers (alice, bob), a
staff member, and a logged-in user who should have no access to staff pages (mallory); the study,
and the study screening people out by the module's questionnaire (screening)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from studyapp.participants.models import Study


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    """Each test starts with an empty cache: with Redis the cache outlives a test, and the study
    link's rate limit counts every arrival from 127.0.0.1."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def study(db) -> Study:
    return Study.objects.create(
        slug="tq-pilot",
        title="Twenty Questions pilot",
        rounds=2,
        consent_text="Your games are recorded for research.",
        consent_version="2",
        policy_question="What strategy would you give a newcomer?",
        completion_url="https://app.prolific.com/submissions/complete",
        code_finished="FIN123",
        code_dropped="DROP456",
        code_screened="SCR789",
        payment_amount="10.00",
        bonus_per_reward="1.00",
    )


@pytest.fixture
def screening(study, request) -> Study:
    """The study with the test module's questionnaire (its ``ITEMS``), under which a failed
    attention check screens the person out."""
    study.questionnaire = request.module.ITEMS
    study.attention_failure = "screen"
    study.full_clean()
    study.save()
    return study


@pytest.fixture
def alice(db) -> Client:
    return Client()


@pytest.fixture
def bob(db) -> Client:
    return Client()


@pytest.fixture
def client_factory(db):
    """A new browser per call, for studies with many participants."""
    return Client


@pytest.fixture
def staff(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("staff", "staff@example.org", "pw"))
    return client


@pytest.fixture
def mallory(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_user("mallory", "m@example.org", "pw"))
    return client

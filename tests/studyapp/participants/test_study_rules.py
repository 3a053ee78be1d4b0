"""A study's rules come from its game package (games/<game>/rules.py): the instructions page shows
the package's rules text and the default check asks the package's rule; a study with its own
instructions must bring checks that match them."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from participant_helpers import arrive, consent, page

from games import rules_for_people
from games.twenty_questions import rules as tq_rules
from studyapp.participants.steps import study_checks

pytestmark = pytest.mark.django_db

OWN_CHECKS = [
    {"question": "How many questions may you ask?", "options": ["5", "20"], "answer": "5"}
]


def test_the_instructions_page_shows_the_game_packages_rules_and_check(study, alice):
    participant = arrive(alice, study)
    consent(alice, participant)
    html = alice.get(page(participant, "instructions")).content.decode()
    assert rules_for_people("twenty-questions").replace('"', "&quot;") in html
    (check,) = tq_rules.DEFAULT_CHECKS["questioner"]
    assert check["question"] in html and tq_rules.ANSWERS_TEXT in html
    assert study_checks(study) == tq_rules.DEFAULT_CHECKS["questioner"]


def test_custom_instructions_without_checks_are_refused_with_the_reason(study):
    study.instructions = "Ask at most five questions; the oracle answers only Yes or No."
    study.checks = []
    with pytest.raises(ValidationError, match="needs its own comprehension checks"):
        study.full_clean()


def test_custom_instructions_with_their_own_checks_are_accepted_and_asked(study, alice):
    study.instructions = "Ask at most five questions; the oracle answers only Yes or No."
    study.checks = OWN_CHECKS
    study.full_clean()
    study.save()
    participant = arrive(alice, study)
    consent(alice, participant)
    html = alice.get(page(participant, "instructions")).content.decode()
    assert "Ask at most five questions" in html and "How many questions may you ask?" in html
    assert rules_for_people("twenty-questions") not in html

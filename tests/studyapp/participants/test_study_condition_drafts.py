"""A study with conditions may be saved as an inactive draft that names a provider whose key is
not set yet, as a study without conditions may (docs/studies.md, "Models are checked"); an active
one is refused, and the reason names the study's spec."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from studyapp.participants import studyfile
from studyapp.participants.models import Condition, Study

pytestmark = pytest.mark.django_db

FILE = """
slug = "tq-draft"
title = "Draft"
game = "twenty-questions"
active = {active}
rounds = 2
seed = 0
oracle_spec = "openai:gpt-4o"
consent_version = "1"
consent_text = "Recorded for research."
completion_url = "https://app.prolific.com/submissions/complete"
code_finished = "FIN"

[design]
person = "questioner"

[[conditions]]
name = "a"

[[conditions]]
name = "b"
[conditions.overrides]
shown_policy = "Split the candidates in half."
"""


def test_an_inactive_study_file_with_conditions_may_name_an_unconfigured_provider(settings):
    settings.OPENAI_API_KEY = ""
    study, action = studyfile.apply(studyfile.loads(FILE.format(active="false")))
    assert action == "created" and not study.active
    assert sorted(study.conditions.values_list("name", flat=True)) == ["a", "b"]
    assert study.oracle_spec == "openai:gpt-4o"


def test_an_active_study_file_with_conditions_is_refused_naming_the_spec(settings):
    settings.OPENAI_API_KEY = ""
    with pytest.raises(studyfile.StudyFileError, match="OPENAI_API_KEY is not set"):
        studyfile.apply(studyfile.loads(FILE.format(active="true")))
    assert not Study.objects.filter(slug="tq-draft").exists()


def test_a_condition_of_an_active_study_still_needs_usable_specs(settings):
    settings.OPENAI_API_KEY = ""
    study, _ = studyfile.apply(studyfile.loads(FILE.format(active="false")))
    condition = Condition(study=study, name="c", overrides={})
    condition.full_clean(exclude=["study"])  # the draft may name it
    study.active = True
    with pytest.raises(ValidationError, match="OPENAI_API_KEY is not set"):
        condition.full_clean(exclude=["study"])

"""The stages after the rounds: the policy question, the questionnaire (items from the study file
or the admin, attention checks with the study's consequence), the debrief, then the code; the
answers in the export's questionnaire.csv; the pilot bots answer it from the page."""

from __future__ import annotations

import html

import pandas as pd
import pytest
from participant_helpers import get_ready, page, win_round

from studyapp.participants import questionnaire, studyfile
from studyapp.participants.models import Participant
from studyapp.participants.pilot_pages import questionnaire_answers
from tests.exports import export_checked

pytestmark = pytest.mark.django_db

ITEMS = [
    {"id": "age", "question": "How old are you?", "kind": "number", "min": 18, "max": 99},
    {
        "id": "strategy",
        "question": "Which did you do?",
        "kind": "multi",
        "options": ["Asked about categories", "Guessed early", "Counted candidates"],
    },
    {"id": "hard", "question": "The game was hard.", "kind": "likert"},
    {
        "id": "attention",
        "question": "To show you read this, choose 'Blue'.",
        "kind": "choice",
        "options": ["Red", "Blue", "Green"],
        "expected": "Blue",
    },
    {"id": "feedback", "question": "Anything to tell us?", "kind": "text", "required": False},
]
GOOD = {
    "q_age": ["34"],
    "q_strategy": ["Asked about categories", "Guessed early"],
    "q_hard": ["Agree"],
    "q_attention": ["Blue"],
    "q_feedback": ["It was fun."],
}


@pytest.fixture
def surveyed(study):
    study.questionnaire = ITEMS
    study.debrief_text = "This study compared people with language models.\nThank you."
    study.full_clean()
    study.save()
    return study


def through_rounds(client, study) -> Participant:
    participant = get_ready(client, study)
    win_round(client, participant)
    win_round(client, participant)
    client.post(page(participant, "policy"), {"policy": "Ask about living things first."})
    participant.refresh_from_db()
    return participant


def test_the_questionnaire_then_the_debrief_then_the_code(surveyed, alice):
    participant = through_rounds(alice, surveyed)
    response = alice.get(page(participant, "play"), follow=True)
    assert response.redirect_chain[-1][0] == page(participant, "questionnaire")
    text = html.unescape(response.content.decode())
    for item in ITEMS:
        assert item["question"] in text
    assert "Strongly disagree" in text  # the default agreement scale
    assert "expected" not in text and 'value="Blue" checked' not in text

    response = alice.post(page(participant, "questionnaire"), GOOD, follow=True)
    assert response.redirect_chain[-1][0] == page(participant, "debrief")
    assert "compared people with language models" in response.content.decode()
    participant.refresh_from_db()
    assert participant.status == "playing"  # not finished before the debrief
    assert participant.questionnaire_answers == {
        "age": 34,
        "strategy": ["Asked about categories", "Guessed early"],
        "hard": "Agree",
        "attention": "Blue",
        "feedback": "It was fun.",
    }
    assert participant.attention_failed == []

    response = alice.post(page(participant, "debrief"), follow=True)
    assert response.redirect_chain[-1][0] == page(participant, "done")
    participant.refresh_from_db()
    assert participant.status == "finished" and participant.completion_code == "FIN123"


@pytest.mark.parametrize(
    "change, item",
    [
        ({"q_age": [""]}, "age"),
        ({"q_age": ["twelve"]}, "age"),
        ({"q_age": ["12"]}, "age"),
        ({"q_strategy": ["Asked about categories", "Cheated"]}, "strategy"),
        ({"q_hard": ["Agree", "Disagree"]}, "hard"),
        ({"q_attention": ["Purple"]}, "attention"),
        ({"q_feedback": ["a\u202eb"]}, "feedback"),
    ],
)
def test_a_bad_answer_is_refused_with_its_reason_and_nothing_is_kept(surveyed, alice, change, item):
    participant = through_rounds(alice, surveyed)
    response = alice.post(page(participant, "questionnaire"), {**GOOD, **change})
    assert response.status_code == 400
    assert f'id="error-{item}"' in response.content.decode()
    participant.refresh_from_db()
    assert participant.questionnaire_answers == {} and not participant.questionnaire_done
    # What was typed is shown again, so nothing has to be retyped.
    assert 'value="Asked about categories" checked' in response.content.decode()


def test_a_failed_attention_check_flags_and_goes_on_by_default(surveyed, alice):
    participant = through_rounds(alice, surveyed)
    alice.post(page(participant, "questionnaire"), {**GOOD, "q_attention": ["Red"]})
    alice.post(page(participant, "debrief"))
    participant.refresh_from_db()
    assert participant.attention_failed == ["attention"]
    assert participant.status == "finished"


def test_a_failed_attention_check_screens_out_when_the_study_says_so(surveyed, alice):
    surveyed.attention_failure = "screen"
    surveyed.save()
    participant = through_rounds(alice, surveyed)
    response = alice.post(
        page(participant, "questionnaire"), {**GOOD, "q_attention": ["Red"]}, follow=True
    )
    assert response.redirect_chain[-1][0] == page(participant, "done")
    participant.refresh_from_db()
    assert participant.status == "screened" and participant.completion_code == "SCR789"


def test_a_later_step_cannot_be_posted_early(surveyed, alice):
    participant = get_ready(alice, surveyed)
    response = alice.post(page(participant, "questionnaire"), GOOD)
    assert response.status_code in (400, 403)
    participant.refresh_from_db()
    assert participant.questionnaire_answers == {}


@pytest.mark.parametrize(
    "items, problem",
    [
        ([{"id": "a b", "question": "Q", "kind": "text"}], "'id' must be"),
        ([{"id": "a", "question": "Q", "kind": "slider"}], "'kind' must be one of"),
        ([{"id": "a", "question": "Q", "kind": "choice", "options": ["x"]}], "two options"),
        (
            [
                {
                    "id": "a",
                    "question": "Q",
                    "kind": "choice",
                    "options": ["x", "y"],
                    "expected": "z",
                }
            ],
            "'expected' is not a possible answer",
        ),
        (
            [
                {"id": "a", "question": "Q", "kind": "text"},
                {"id": "a", "question": "R", "kind": "text"},
            ],
            "used twice",
        ),
        ([{"id": "policy", "question": "Q", "kind": "text"}], "policy question's own id"),
        ([{"id": "a", "question": "Q", "kind": "text", "colour": "red"}], "unknown keys colour"),
        ([{"id": "a", "question": "Q", "kind": "number", "min": 5, "max": 1}], "'min' is above"),
    ],
)
def test_items_that_cannot_be_asked_are_refused_with_the_reason(items, problem):
    with pytest.raises(questionnaire.QuestionnaireError, match=problem):
        questionnaire.validate(items)


def test_a_study_file_carries_the_questionnaire_and_refuses_a_broken_one(surveyed, tmp_path):
    text = studyfile.dumps(surveyed)
    assert "[[questionnaire]]" in text and 'expected = "Blue"' in text
    data = studyfile.loads(text.replace('kind = "likert"', 'kind = "slider"'))
    with pytest.raises(Exception, match="'kind' must be one of"):
        studyfile.apply(data)


def test_the_export_carries_every_answer_and_the_policy(surveyed, alice, bob, tmp_path):
    first = through_rounds(alice, surveyed)
    alice.post(page(first, "questionnaire"), GOOD)
    alice.post(page(first, "debrief"))
    second = through_rounds(bob, surveyed)
    bob.post(page(second, "questionnaire"), {**GOOD, "q_attention": ["Green"], "q_feedback": [""]})
    export_checked(surveyed.slug, str(tmp_path), "--format", "csv")
    frame = pd.read_csv(tmp_path / "questionnaire.csv", keep_default_na=False)
    assert list(frame.columns) == ["player", "item", "answer", "attention_check", "passed"]
    rows = {(r.player, r.item): r.answer for r in frame.itertuples()}
    assert rows[(first.public_id, "policy")] == "Ask about living things first."
    assert rows[(first.public_id, "strategy")] == "Asked about categories; Guessed early"
    assert rows[(first.public_id, "age")] == "34"
    assert rows[(second.public_id, "attention")] == "Green"
    assert (second.public_id, "feedback") not in rows
    people = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False)
    flags = dict(zip(people.player, people.attention_failed, strict=True))
    assert flags == {first.public_id: "", second.public_id: "attention"}
    import json

    package = json.loads((tmp_path / "datapackage.json").read_text())
    assert "questionnaire.csv" in [r["path"] for r in package["resources"]]


def test_a_pilot_answers_every_item_from_the_page(surveyed, alice):
    participant = through_rounds(alice, surveyed)
    shown = alice.get(page(participant, "questionnaire")).content.decode()
    answers = questionnaire_answers(shown, index=1)
    assert set(answers) == {f"q_{item['id']}" for item in ITEMS}
    posted = {key: value if isinstance(value, list) else [value] for key, value in answers.items()}
    response = alice.post(page(participant, "questionnaire"), posted)
    assert response.status_code == 302
    participant.refresh_from_db()
    assert participant.questionnaire_done and participant.questionnaire_answers["age"] == 18


def test_withdrawing_with_deletion_deletes_the_questionnaire_answers(surveyed, alice):
    participant = through_rounds(alice, surveyed)
    alice.post(page(participant, "questionnaire"), {**GOOD, "q_attention": ["Red"]})
    alice.post(page(participant, "withdraw"), {"delete_data": "on"})
    participant.refresh_from_db()
    assert participant.status == "withdrawn"
    assert participant.questionnaire_answers == {} and participant.attention_failed == []

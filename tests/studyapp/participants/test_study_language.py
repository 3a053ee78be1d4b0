"""A study in another language: every participant page, the table's board and the flow's
messages in the study's language (German is shipped), from the link to the code; English stays
the default, and the offline oracle, which reads English only, is refused for such a study."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from participant_helpers import arrive, consent, page

from games.languages import candidate_names
from studyapp.participants.rounds import current_round
from studyapp.tables import services
from studyapp.tables.rendering import render_board
from studyapp.tables.services import table_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def german(study):
    study.language = "de"
    study.questionnaire = [{"id": "hard", "question": "War es schwer?", "kind": "likert"}]
    study.save()
    return study


@pytest.fixture
def german_model(german):
    """The German study with a model oracle: the offline oracle, which knows English only, is
    refused at the table (and at validation), and so is a dropout's seat handed to the site's
    offline agent (dropout = replace): its dropout ends the table."""
    german.oracle_spec = "openai:gpt-4o-mini"
    german.dropout = "end"
    german.save()
    return german


def win_in_german(client, participant) -> None:
    """Start the next game and ask for the secret word by its German name: the engine reads the
    guess in the table's language (games.languages) and settles it itself."""
    client.post(page(participant, "play"))
    round_ = current_round(participant)
    answer = round_.table.config["answer"]
    name = candidate_names("de")[answer]
    services.submit(round_.table_id, 0, {"type": "question", "text": f"Ist es ein {name}?"})
    client.get(page(participant, "play"))
    participant.refresh_from_db()


def text(response) -> str:
    return " ".join(response.content.decode().split())


def test_a_german_study_speaks_german_from_the_link_to_the_code(german_model, alice):
    german = german_model
    link = reverse("participants:study_link", args=[german.slug])
    welcome = text(alice.get(link))
    assert 'lang="de"' in welcome and "Willkommen" in welcome and "Beginnen" in welcome
    assert "etwa 11 Minuten" in welcome
    participant = arrive(alice, german)
    consent(alice, participant)
    rules = text(alice.get(page(participant, "instructions")))
    assert "So wird gespielt" in rules and "Der Computer denkt sich ein Wort" in rules
    assert "Welche Antworten kann das Orakel" in rules  # the default check, in German
    alice.post(page(participant, "instructions"), {"check_0": "Ja, Nein oder Ungültig"})
    participant.refresh_from_db()
    assert participant.practice_passed
    assert "Spiel 1 von 2" in text(alice.get(page(participant, "play")))

    alice.post(page(participant, "play"))
    round_ = current_round(participant)
    table = text(alice.get(reverse("tables:table", args=[round_.table_id])))
    assert "Zwanzig Fragen" in table and "Ihre Frage" in table and "Raten" in table
    board = render_board(table_state(round_.table_id), round_.seat)
    assert "Noch keine Fragen." in board
    # The candidates are shown by their German names; the answer stays the canonical word.
    answer = round_.table.config["answer"]
    assert candidate_names("de")[answer] in board and round_.table.config["language"] == "de"

    win_in_german(alice, participant)
    ended = render_board(table_state(round_.table_id), round_.seat)
    assert f'id="revealed-word">{candidate_names("de")[answer]}<' in ended
    win_in_german(alice, participant)
    assert participant.rounds_finished == 2 and participant.total_reward == 2.0
    policy = text(alice.get(page(participant, "policy")))
    assert "Eine letzte Frage" in policy
    alice.post(page(participant, "policy"), {"policy": "Erst nach Lebewesen fragen."})
    questionnaire = text(alice.get(page(participant, "questionnaire")))
    assert (
        "Einige Fragen zur Studie" in questionnaire and "Stimme voll und ganz zu" in questionnaire
    )
    refused = text(alice.post(page(participant, "questionnaire"), {}))
    assert "Bitte beantworten Sie diese Frage." in refused
    # The page shows the German label; the value sent and stored is the canonical one, so a
    # German and an English study's answers are the same values in the export.
    assert 'value="Agree"> Stimme zu' in questionnaire
    alice.post(page(participant, "questionnaire"), {"q_hard": ["Agree"]})
    participant.refresh_from_db()
    assert participant.questionnaire_answers == {"hard": "Agree"}
    done = text(alice.get(page(participant, "done")))
    assert "Vielen Dank, Sie sind fertig" in done and "Ihr Abschlusscode" in done
    assert "Sie erhalten" in done


def test_the_flows_refusals_are_in_the_studys_language(german, alice, bob):
    participant = arrive(alice, german)
    consent(alice, participant)
    response = bob.get(page(participant, "play"))
    assert "Diese Seite gehört nicht zu diesem Browser." not in text(response)  # no study known
    response = alice.post(page(participant, "policy"), {"policy": "x"})
    assert "Dieser Schritt steht Ihnen jetzt nicht offen." in text(response)


def test_an_english_study_stays_english(study, alice):
    link = reverse("participants:study_link", args=[study.slug])
    welcome = text(alice.get(link))
    assert 'lang="en"' in welcome and "Welcome" in welcome and "Willkommen" not in welcome


def test_the_offline_oracle_is_refused_for_a_study_in_another_language(german):
    with pytest.raises(ValidationError, match="offline oracle reads English questions only"):
        german.full_clean()
    german.oracle_spec = "openai:gpt-4o-mini"
    german.active = False
    # A dropout's seat would go to the site's offline agent, which knows English only.
    with pytest.raises(ValidationError, match="dropout = replace would give a person's seat"):
        german.full_clean()
    german.dropout = "end"
    german.full_clean()


def test_the_start_limits_page_is_in_the_studys_language(german, alice, settings):
    settings.PARTICIPANT_RATE_BURST = 0  # the first start from this address is one too many
    link = reverse("participants:study_link", args=[german.slug])
    alice.get(link)
    response = alice.post(link)
    assert response.status_code == 429 and response["Retry-After"] == "60"
    refused = text(response)
    assert 'lang="de"' in refused and "Zu viele neue Starts aus Ihrem Netzwerk" in refused
    assert "Bitte warten Sie eine Minute" in refused and "Too many" not in refused


def test_the_german_debrief_names_the_stand_in_that_played_not_the_model_that_failed(german, alice):
    from django.template.loader import render_to_string
    from django.utils.translation import override

    from games import get_engine
    from studyapp.participants.models import Round
    from studyapp.participants.steps import debrief_agents
    from studyapp.tables.models import Seat, Table, Turn

    participant = arrive(alice, german)
    config = get_engine("undercover").new_config(1, players=4)
    table = Table.objects.create(game="undercover", status="finished", config=config)
    Seat.objects.create(table=table, index=0, kind="human", session_key="k")
    for index in (1, 2, 3):
        Seat.objects.create(table=table, index=index, kind="agent", agent_spec="openai:broken-llm")
        Turn.objects.create(  # the model failed every call: the offline agent's clue stood in
            table=table,
            seq=index,
            seat=index,
            event={"type": "clue", "seat": index, "text": "Etwas, das man kennt."},
            actor="openai:broken-llm",
            usage={"error": "APIStatusError: 500", "stand_in": "offline:kb"},
        )
    Round.objects.create(participant=participant, number=1, table=table)
    block = debrief_agents(participant)
    assert block["offline"] is True and block["models"] == []
    with override("de"):
        html = " ".join(
            render_to_string("participants/_debrief_agents.html", {"debrief_agents": block}).split()
        )
    assert "broken-llm" not in html and "das KI-Sprachmodell" not in html
    assert "Regel" in html  # the rule-based programs, in German

"""Steps of the participant flow driven through Django's test client, shared by the tests here."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from studyapp.participants.models import Participant, Study


def arrive(client: Client, study: Study, query: str = "") -> Participant:
    """Open the study link and press Start, as a new browser would."""
    url = reverse("participants:study_link", args=[study.slug]) + query
    client.get(url)
    client.post(url)
    pk = client.session["participants"][str(study.pk)]
    return Participant.objects.get(pk=pk)


def page(participant: Participant, step: str) -> str:
    return reverse(f"participants:{step}", args=[participant.public_id])


def consent(client: Client, participant: Participant) -> None:
    client.post(
        page(participant, "consent"), {"version": participant.study.consent_version, "agree": "on"}
    )


def get_ready(client: Client, study: Study, query: str = "") -> Participant:
    """Arrive, consent and pass the practice question: the state just before round 1."""
    participant = arrive(client, study, query)
    consent(client, participant)
    client.post(page(participant, "instructions"), {"check_0": "Yes, No or Invalid"})
    participant.refresh_from_db()
    return participant


def win_round(client: Client, participant: Participant) -> None:
    """Start the next round and name the answer word at once (reward 1.0; the engine settles a
    right guess itself, so no agent turn is needed)."""
    from studyapp.participants.rounds import current_round
    from studyapp.tables import services

    client.post(page(participant, "play"))
    round_ = current_round(participant)
    answer = round_.table.config["answer"]
    services.submit(round_.table_id, 0, {"type": "question", "text": f"Is it a {answer}?"})
    client.get(page(participant, "play"))
    participant.refresh_from_db()

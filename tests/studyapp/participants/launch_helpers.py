"""A Who is Undercover study of one person among four model agents, for the launch tests (the
spend plan, the model budget, the Prolific draft)."""

from __future__ import annotations

from studyapp.participants.models import Study

MODEL = "openai-compatible:loopback"


def undercover_study(slug: str = "uc-launch", **fields) -> Study:
    agent = {"kind": "agent", "spec": MODEL}
    values = {
        "slug": slug,
        "title": "Words among players",
        "game": "undercover",
        "rounds": 2,
        "design": {
            "seats": [{"kind": "person"}, agent, agent, agent, agent],
            "wait_seconds": 0,
        },
        "consent_text": "Your games are recorded for research.",
        "completion_url": "https://app.prolific.com/submissions/complete",
        "code_finished": "FIN123",
        "code_dropped": "DROP456",
        "code_lobby_timeout": "LOBBY789",
        "payment_amount": "4.50",
        "currency": "USD",
        "estimated_minutes": 25,
    }
    values.update(fields)
    return Study.objects.create(**values)

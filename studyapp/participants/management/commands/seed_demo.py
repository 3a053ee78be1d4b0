"""Demo content for `make run`: a staff login (printed once), a Twenty Questions demo study and
a Who is Undercover demo study where people and agents share tables, with their links.

Safe to run again: nothing is duplicated and an existing password is never reset or shown.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.urls import reverse

from studyapp.participants.models import Condition, Study
from studyapp.participants.steps import DEFAULT_CHECKS

STAFF_USERNAME = "researcher"
DEMO_SLUG = "demo"
DEMO_CONSENT = (
    "This is a demonstration study. You will play rounds of Twenty Questions against an agent. "
    "Your questions and answers are recorded for research. You may stop at any time."
)
# The end of the study, so the demo shows the policy question and a code. With no real recruiter,
# finishing returns to a page of this site that shows the code it received (the completion URL,
# added in handle() once the URLconf is loaded).
DEMO_END = {
    "policy_question": "What strategy would you give a newcomer to this game?",
    "code_finished": "DEMOFIN",
    "code_dropped": "DEMODROP",
    "code_screened": "DEMONO",
}

UNDERCOVER_SLUG = "demo-undercover"
UNDERCOVER_CONSENT = (
    "This is a demonstration study. You will play rounds of Who is the Difference with other people "
    "and computer agents. Your clues and votes are recorded for research. You may stop at any time."
)
PERSON = {"kind": "person"}
AGENT = {"kind": "agent", "spec": "offline:kb", "setting": "none", "policy": None}
# Two arms of five seats: two people and three agents, or one person and four agents.
UNDERCOVER_CONDITIONS = [
    ("two-people", [PERSON, PERSON, AGENT, AGENT, AGENT]),
    ("one-person", [PERSON, AGENT, AGENT, AGENT, AGENT]),
]
UNDERCOVER_QUOTA = 6
UNDERCOVER_STUDY = {
    "title": "Demo: Who is the Difference with people and agents",
    "game": "undercover",
    "rounds": 3,
    "seed": 7,
    "consent_text": UNDERCOVER_CONSENT,
    "design": {
        "seats": [PERSON, AGENT, AGENT, AGENT, AGENT],
        "wait_seconds": 60,
        "lobby_timeout": "fill",
        "replacement_spec": "offline:kb",
    },
    "code_finished": "DEMOUCFIN",
    "code_dropped": "DEMOUCDROP",
    "code_screened": "DEMOUCNO",
    "code_lobby_timeout": "DEMOUCWAIT",
    "payment_amount": "6.00",
    # After the rounds: a short exit questionnaire with one attention check (a wrong answer is
    # flagged in the export, the person goes on), then a debrief; its built-in "About the other
    # players" block says which seats were agents (marked on the board) and what they were.
    "questionnaire": [
        {
            "id": "age",
            "question": "How old are you?",
            "kind": "number",
            "min": 18,
            "max": 120,
            "required": False,
        },
        {
            "id": "difficulty",
            "question": "Finding the player with the different word was hard.",
            "kind": "likert",
        },
        {
            "id": "attention",
            "question": "To show that you read each question, please choose 'Often' here.",
            "kind": "choice",
            "options": ["Never", "Sometimes", "Often"],
            "expected": "Often",
        },
        {
            "id": "strategy",
            "question": "How did you decide whom to vote for?",
            "kind": "text",
            "required": False,
        },
    ],
    "debrief_text": (
        "Thank you for taking part. This demonstration study compares how people and computer "
        "agents give clues and vote in Who is the Difference. Your clues, votes and answers are "
        "kept under a pseudonym."
    ),
    "checks": [
        *DEFAULT_CHECKS["undercover"],
        {
            "question": "Who wins when the player with the different word is voted out?",
            "options": ["The player with the different word", "The players with the common word"],
            "answer": "The players with the common word",
        },
    ],
}


def seed_undercover_demo() -> tuple[Study, bool]:
    """The mixed-table demo study (idempotent: an existing one is left as staff edited it)."""
    study, created = Study.objects.get_or_create(
        slug=UNDERCOVER_SLUG,
        defaults={
            **UNDERCOVER_STUDY,
            "completion_url": reverse("participants:recruiter_return", args=[UNDERCOVER_SLUG]),
        },
    )
    for position, (name, seats) in enumerate(UNDERCOVER_CONDITIONS):
        Condition.objects.get_or_create(
            study=study,
            name=name,
            defaults={
                "quota": UNDERCOVER_QUOTA,
                "position": position,
                "overrides": {"design": {"seats": seats}},
            },
        )
    return study, created


class Command(BaseCommand):
    help = "Create a staff login and a demo study (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password-file",
            help="write a new staff password to this file (readable by its owner only) instead "
            "of printing it: for `make production`, whose output goes to logs",
        )

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        if not users.objects.filter(username=STAFF_USERNAME).exists():
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(STAFF_USERNAME, password=password)
            if options.get("password_file"):
                path = Path(str(options["password_file"]))
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as out:
                    out.write(f"{STAFF_USERNAME} {password}\n")
                self.stdout.write(
                    f"Staff login {STAFF_USERNAME!r} created; its password is in {path} "
                    "(readable only by you)"
                )
            else:
                self.stdout.write(f"Staff login (shown once): {STAFF_USERNAME} / {password}")
        else:
            self.stdout.write(f"Staff login {STAFF_USERNAME!r} exists (password unchanged).")
        end = {
            **DEMO_END,
            "completion_url": reverse("participants:recruiter_return", args=[DEMO_SLUG]),
        }
        study, created = Study.objects.get_or_create(
            slug=DEMO_SLUG,
            defaults={
                "title": "Demo: Twenty Questions",
                "rounds": 3,
                "consent_text": DEMO_CONSENT,
                **end,
            },
        )
        # A demo study from an older seed gets the end-of-study fields it lacks; staff edits stay.
        missing = [field for field in end if not getattr(study, field)]
        for field in missing:
            setattr(study, field, end[field])
        if missing:
            study.save(update_fields=missing)
        verb = "Created" if created else "Demo study exists:"
        self.stdout.write(f"{verb} study link /s/{study.slug}/ ; play now at / ")
        study, created = seed_undercover_demo()
        verb = "Created" if created else "Demo study exists:"
        self.stdout.write(f"{verb} study link /s/{study.slug}/ (Who is Undercover, 2 conditions)")

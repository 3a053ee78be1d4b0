"""Demo content for `make run`: a staff login (printed once) and a demo study with its link.

Safe to run again: nothing is duplicated and an existing password is never reset or shown.
"""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.urls import reverse

from studyapp.participants.models import Study

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


class Command(BaseCommand):
    help = "Create a staff login and a demo study (idempotent)."

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        if not users.objects.filter(username=STAFF_USERNAME).exists():
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(STAFF_USERNAME, password=password)
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

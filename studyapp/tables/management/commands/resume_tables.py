"""Resume every unfinished table from its log (after a crash or a deploy)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from studyapp.tables.driver import resume_unfinished


class Command(BaseCommand):
    help = "Schedule the next step of every table that is still open."

    def handle(self, *args: object, **options: object) -> None:
        resumed = resume_unfinished()
        self.stdout.write(f"resumed {len(resumed)} table(s)")

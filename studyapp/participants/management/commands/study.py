"""``manage.py study export SLUG > study.toml`` and ``manage.py study apply study.toml``."""

from __future__ import annotations

import argparse
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from studyapp.participants import payrules, studyfile
from studyapp.participants.models import Study


class Command(BaseCommand):
    help = "Write a study as a TOML file, or create/update a study from one (docs/studies.md)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        export = sub.add_parser("export", help="print the study's file")
        export.add_argument("slug")
        apply = sub.add_parser("apply", help="create or update the study a file describes")
        apply.add_argument("file", help="a study file, or - for standard input")
        apply.add_argument(
            "--new-version",
            action="store_true",
            help="save a change that would invalidate collected data as a new study version",
        )

    def handle(self, *args: object, **options: object) -> None:
        if options["action"] == "export":
            study = Study.objects.filter(slug=options["slug"]).first()
            if study is None:
                raise CommandError(f"no study {options['slug']!r}")
            self.stdout.write(studyfile.dumps(study), ending="")
            return
        name = str(options["file"])
        try:
            text = self.stdin_text() if name == "-" else Path(name).read_text(encoding="utf-8")
        except OSError as err:
            raise CommandError(f"cannot read {name}: {err}") from None
        try:
            study, action = studyfile.apply(
                studyfile.loads(text), new_version=bool(options["new_version"])
            )
        except studyfile.StudyFileError as err:
            raise CommandError(str(err)) from None
        state = "active" if study.active else "inactive"
        first, *changes = action.split("\n")
        self.stdout.write(f"{study.slug}: {first} ({state}); study link /s/{study.slug}/")
        for line in changes:
            self.stdout.write(line)
        if study.recruiter_name == "Prolific":
            # What to set for each code on Prolific: the action decides how the base is paid.
            self.stdout.write("codes to set on Prolific (ending: code, action, pay):")
            for row in payrules.table(study):
                if row["code"]:
                    self.stdout.write(
                        f"  {row['ending']}: {row['code']}, {row['action_words']}; paid "
                        f"{row['rule_words']}"
                    )

    def stdin_text(self) -> str:
        import sys

        return sys.stdin.read()

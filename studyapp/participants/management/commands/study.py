"""``manage.py study export SLUG > study.toml``, ``manage.py study apply study.toml`` and
``manage.py study spend SLUG [--json]`` (the spend so far, beside the budget and the plan for
the study's places: studyapp.participants.budget, spend_plan.shown_plan) and ``manage.py study plan SLUG --places N [--json]`` (the spend plan:
studyapp.participants.spend_plan; Prolific's cost calculator is asked when PROLIFIC_API_TOKEN is
set)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from studyapp.participants import budget, payrules, spend_plan, studyfile
from studyapp.participants.models import Study
from studyapp.participants.prolific import launch
from studyapp.participants.prolific.client import ProlificClient, ProlificError


class Command(BaseCommand):
    help = "Write a study as a TOML file, or create/update a study from one (docs/studies.md)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        export = sub.add_parser("export", help="print the study's file")
        export.add_argument("slug")
        plan = sub.add_parser("plan", help="what the study's places will cost, before launch")
        plan.add_argument("slug")
        plan.add_argument("--places", type=int, required=True)
        plan.add_argument("--json", action="store_true", help="print one JSON object")
        spent = sub.add_parser("spend", help="what the study's models have spent so far")
        spent.add_argument("slug")
        spent.add_argument("--json", action="store_true", help="print one JSON object")
        apply = sub.add_parser("apply", help="create or update the study a file describes")
        apply.add_argument("file", help="a study file, or - for standard input")
        apply.add_argument(
            "--new-version",
            action="store_true",
            help="save a change that would invalidate collected data as a new study version",
        )

    def handle(self, *args: object, **options: object) -> None:
        if options["action"] == "plan":
            self.plan(str(options["slug"]), options["places"], bool(options["json"]))
            return
        if options["action"] == "spend":
            self.spend(str(options["slug"]), bool(options["json"]))
            return
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
            data = studyfile.loads(text)
            before = Study.objects.filter(slug=data.get("slug")).first()
            study, action = studyfile.apply(data, new_version=bool(options["new_version"]))
        except studyfile.StudyFileError as err:
            raise CommandError(str(err)) from None
        state = "active" if study.active else "inactive"
        first, *changes = action.split("\n")
        self.stdout.write(f"{study.slug}: {first} ({state}); study link /s/{study.slug}/")
        for line in changes:
            self.stdout.write(line)
        if before is not None and before.pk == study.pk:
            self.after_change(before, study, bool(changes))
        if study.recruiter_name == "Prolific":
            # What to set for each code on Prolific: the action decides how the base is paid.
            self.stdout.write("codes to set on Prolific (ending: code, action, pay):")
            for row in payrules.table(study):
                if row["code"]:
                    self.stdout.write(
                        f"  {row['ending']}: {row['code']}, {row['action_words']}; paid "
                        f"{row['rule_words']}"
                    )

    def after_change(self, before: Study, study: Study, changed: bool) -> None:
        """What an update means beyond the study: a reached budget that was cleared (the study
        reopens), and a Prolific draft that may no longer match."""
        if before.budget_reached_at and study.budget_reached_at is None:
            raised = (
                before.model_budget is not None
                and study.model_budget is not None
                and study.model_budget > before.model_budget
            ) or study.model_budget is None
            self.stdout.write(
                f"the model budget was reached at {before.budget_reached_at:%Y-%m-%d %H:%M} UTC; "
                + (
                    "raising the budget reopens the study: new people start again and new "
                    "tables seat the models"
                    if raised
                    else "the budget or the prices changed, so it is checked afresh as the next "
                    "table opens"
                )
            )
        if changed and study.prolific_study:
            self.stderr.write(
                f"warning: {study.slug} has a Prolific study ({study.prolific_study}), which may "
                f"now differ from the site's: run `manage.py prolific check {study.slug}`"
            )

    def stdin_text(self) -> str:
        import sys

        return sys.stdin.read()

    def plan(self, slug: str, places: Any, as_json: bool) -> None:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"no study {slug!r}")
        if not isinstance(places, int) or places < 1:
            raise CommandError(f"--places must be a whole number of at least 1, not {places!r}")
        calculated = None
        warning = ""
        if settings.PROLIFIC_API_TOKEN:
            try:
                client = ProlificClient(settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL)
                calculated = launch.cost_in_minor(study, client, places)
            except ProlificError as err:
                warning = f"Prolific's cost calculator could not be asked ({err.detail})"
        try:
            report = spend_plan.plan(study, places, calculated)
        except ValueError as err:
            raise CommandError(str(err)) from None
        if warning:
            report["prolific"]["warning"] = warning
        if as_json:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(spend_plan.text(report))
            if warning:
                self.stderr.write(warning + "; the fee rate was used")

    def spend(self, slug: str, as_json: bool) -> None:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"no study {slug!r}")
        report = budget.status(study)
        report["plan"] = spend_plan.shown_plan(study)  # None: the study has no places
        if as_json:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(budget.text(report))
        if report["plan"] is None:
            self.stdout.write(
                "no plan beside it: the study has no places (set places, or draft it on Prolific)"
            )
        else:
            self.stdout.write(spend_plan.text(report["plan"]))

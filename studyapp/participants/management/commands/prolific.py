"""``manage.py prolific approve SLUG`` and ``manage.py prolific pay SLUG``: pay a study's people
through Prolific's API (studyapp.participants.prolific: approvals, bonuses), with ``--dry-run`` to see what would be
done first. ``manage.py prolific status SLUG`` lists every disagreement between the ledger and
Prolific (and fails when there is one); it changes nothing. One run per study at a time: a second waits for the first (the study's payment lock).
``manage.py prolific draft SLUG --places N`` creates the Prolific study from the site's (once),
``check SLUG`` lists every difference between them, ``publish SLUG`` publishes it when there is
none (studyapp.participants.prolific.launch; the link's address is SITE_URL or ``--site``).
Needs PROLIFIC_API_TOKEN (and PROLIFIC_API_URL for another server than Prolific's)."""

from __future__ import annotations

import argparse
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from studyapp import locks
from studyapp.participants.models import Study
from studyapp.participants.prolific import approvals, bonuses, launch, ledger_check, records
from studyapp.participants.prolific.client import ProlificClient, ProlificError


class Command(BaseCommand):
    help = (
        "Approve finished submissions (approve) or pay bonuses and early stops' shares (pay) "
        "through Prolific's API; status lists where the ledger and Prolific disagree."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "what", choices=["approve", "pay", "status", "draft", "check", "publish"]
        )
        parser.add_argument("slug")
        parser.add_argument("--places", type=int, help="draft: the places to ask Prolific for")
        parser.add_argument(
            "--site",
            default="",
            help="draft, check, publish: the site's address for the study link (default SITE_URL)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would be done; call nothing"
        )

    def handle(self, *args: object, **options: object) -> None:
        slug = str(options["slug"])
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"no study {slug!r}")
        dry_run = bool(options["dry_run"])
        if options["what"] == "status":
            self.status(study)
            return
        if options["what"] in ("draft", "check", "publish"):
            self.launch(study, str(options["what"]), options)
            return
        client = None
        if not dry_run:
            try:
                client = ProlificClient(settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL)
            except ProlificError as err:
                raise CommandError(str(err)) from err
        run = approvals.approve if options["what"] == "approve" else bonuses.pay

        def waiting() -> None:
            self.stdout.write(
                f"another payment run for {slug} is under way; waiting for it to finish"
            )

        try:
            outcomes = run(study, client, dry_run=dry_run, on_wait=waiting)
        except TimeoutError as err:
            raise CommandError(
                f"another payment run for {slug} still holds the study's payment lock; "
                "nothing was done"
            ) from err
        except locks.LockLost as err:
            raise CommandError(
                f"{err}: stopped before the next call to Prolific; run the command again"
            ) from err
        finally:
            if client is not None:
                client.close()
        for outcome in outcomes:
            amount = f" {outcome.amount:.2f} {study.currency}" if outcome.amount is not None else ""
            line = f"{outcome.participant} {outcome.action}{amount}: {outcome.detail}"
            (self.stdout if outcome.ok else self.stderr).write(line)
        counts = records.summary(outcomes)
        verb = "would be done" if dry_run else "done"
        self.stdout.write(f"{counts['ok']} {verb}, {counts['failed']} failed")
        if counts["failed"]:
            raise CommandError(f"{counts['failed']} participant(s) failed; see the lines above")

    def status(self, study: Study) -> None:
        try:
            client = ProlificClient(settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL)
            checked, found = ledger_check.check_ledger(study, client)
        except ProlificError as err:
            for item in ledger_check.open_items(study):
                self.stdout.write(f"{item.who}: {item.what}")
            raise CommandError(
                f"could not read Prolific ({err.detail}): only the ledger's open records are "
                "listed above"
            ) from err
        for item in found:
            self.stdout.write(f"{item.who}: {item.what}")
        if found:
            raise CommandError(
                f"{len(found)} disagreement(s) between the ledger and Prolific "
                f"({checked} submission(s) checked)"
            )
        self.stdout.write(f"the ledger agrees with Prolific ({checked} submission(s) checked)")

    def launch(self, study: Study, what: str, options: dict[str, Any]) -> None:
        site = str(options.get("site") or settings.SITE_URL)
        try:
            client = ProlificClient(settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL)
            if what == "draft":
                if options.get("places") is None:
                    raise CommandError("draft needs --places N: the places to ask Prolific for")
                made = launch.draft(study, client, int(options["places"]), site)
                self.stdout.write(
                    f"{study.slug}: drafted on Prolific as study {made} ({study.places} places); "
                    f"check it with `prolific check {study.slug}`, then `prolific publish "
                    f"{study.slug}`"
                )
            elif what == "check":
                _, found = launch.check(study, client, site)
                for line in found:
                    self.stdout.write(f"{study.prolific_study}: {line}")
                if found:
                    raise CommandError(
                        f"{len(found)} difference(s) between Prolific's study and the site's"
                    )
                self.stdout.write(
                    f"{study.slug}: Prolific's study {study.prolific_study} matches the site "
                    "(link, codes and actions, reward, places, minutes)"
                )
            else:
                launch.publish(study, client, site)
                self.stdout.write(
                    f"{study.slug}: Prolific's study {study.prolific_study} published"
                )
        except (ProlificError, launch.LaunchError) as err:
            raise CommandError(str(getattr(err, "detail", err))) from err

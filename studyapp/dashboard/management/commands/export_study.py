"""``python manage.py export_study <study> --out DIR``: a study's games, turns and pseudonymised
participants as formula-safe CSV and parquet with a Frictionless ``datapackage.json``, plus the
study's tables and figures under ``analysis/``. Streamed: memory stays bounded for any size.
``--check`` then cross-checks the files (:func:`analysis.export_check.check_export`: every
person in games and turns is in participants, the counts agree) and exits with an error naming
each disagreement."""

from __future__ import annotations

import gc

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.export import FORMATS
from analysis.export_check import check_export
from studyapp.dashboard.exporting import export_study
from studyapp.participants.models import Study


class Command(BaseCommand):
    help = __doc__
    # No system checks: they import every view, and with them the model SDKs (seconds of start).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's slug")
        parser.add_argument(
            "--format", choices=(*FORMATS, "both"), default="both", help="default: both"
        )
        parser.add_argument("--out", required=True, help="folder to write into")
        parser.add_argument(
            "--include-pilots", action="store_true", help="keep the pilot bots' games"
        )
        parser.add_argument(
            "--processes",
            type=int,
            choices=(1, 2),
            default=2,
            help="2 (default): the turns are written by a second process (PostgreSQL only)",
        )
        parser.add_argument(
            "--quiet", action="store_true", help="no progress bar on stderr (for scripts)"
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="cross-check the files written (people and counts agree); exit 1 if not",
        )
        parser.add_argument(
            "--include-all-people",
            action="store_true",
            help="count pilots and screened people in analysis/'s curves and means "
            "(by default left out, with their counts in analysis/people_left_out.csv)",
        )
        parser.add_argument(
            "--allow-mixed",
            action="store_true",
            help="draw people and models together even when their oracle or rules version differ",
        )

    def handle(self, *args, study: str, format: str, out: str, **options) -> None:
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"no study with slug {study!r}")
        formats = FORMATS if format == "both" else (format,)
        # Millions of short-lived objects and no cycles worth collecting: the collector's passes
        # over an ever larger heap were a tenth of a large export's time.
        gc.disable()
        try:
            written = export_study(
                found,
                out,
                formats=formats,
                include_pilots=options["include_pilots"],
                allow_mixed=options["allow_mixed"],
                include_all_people=options["include_all_people"],
                processes=options["processes"],
                progress=not options["quiet"],
            )
        except OSError as err:  # a full disk, a folder it may not write: nothing half-written
            raise CommandError(
                f"the export could not be written ({err.strerror or err}); {out} was left as it "
                "was, with no partial files"
            ) from err
        finally:
            gc.enable()
        for path in written:
            self.stdout.write(str(path))
        if options["check"]:
            problems = check_export(out)
            if problems:
                raise CommandError(
                    "the export's files disagree:\n" + "\n".join(f"- {p}" for p in problems)
                )
            self.stdout.write("check: the files agree")

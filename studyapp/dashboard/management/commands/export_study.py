"""``python manage.py export_study <study> --format csv|parquet --out DIR``: a study's games, turns
and pseudonymised participants as files, with a README of the columns, for analysis elsewhere."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.export import FORMATS, export_frames
from studyapp.dashboard.records import export_docs, study_frames
from studyapp.participants.models import Study


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", required=True, help="folder to write into")

    def handle(self, *args, study: str, format: str, out: str, **options) -> None:
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"no study with slug {study!r}")
        frames = study_frames(found)
        written = export_frames(
            frames, out, format, docs=export_docs(), title=f"Study {found.slug}: {found.title}"
        )
        for path in written:
            self.stdout.write(str(path))

"""``python manage.py run_job <kind> --param k=v ... [--wait]``: the scripted form of the job
pages, for clusters of Celery workers. Values are read as JSON when they parse (numbers, lists,
true/false) and as plain strings otherwise."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.pipelines.checks import refusal
from studyapp.pipelines.jobs import create_job, enqueue, execute
from studyapp.pipelines.kinds import KINDS


def parse_param(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise CommandError(f"--param takes key=value, not {text!r}")
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw


class Command(BaseCommand):
    help = "Start a background job; --wait runs it here and prints its result."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=sorted(KINDS))
        parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("--wait", action="store_true", help="run inline, print the result")

    def handle(self, *args: Any, **options: Any) -> None:
        parameters = dict(parse_param(p) for p in options["param"])
        reason = refusal(options["kind"], {**KINDS[options["kind"]].defaults, **parameters})
        if reason:
            raise CommandError(reason)
        job = create_job(options["kind"], parameters)
        if not options["wait"]:
            enqueue(job)
            self.stdout.write(f"job #{job.pk} queued ({job.kind})")
            return
        job = execute(job.pk)
        self.stdout.write(json.dumps(job.result, indent=2, default=str))
        if job.status != job.Status.SUCCEEDED:
            raise CommandError(f"job #{job.pk} {job.status}: {job.message}")
        self.stdout.write(f"job #{job.pk} succeeded")

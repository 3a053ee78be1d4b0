"""The database steps of `make production` and `make run` in one process: migrate only when a
migration is waiting, then seed only what is missing (``seed_demo``, which never duplicates or
resets anything).

A restart after a crash (supervisord killed, the machine rebooted) finds everything in place, and
each ``manage.py`` started costs the site's whole import (several seconds on a busy machine): one
process that looks and finds nothing to do, instead of ``migrate`` (which also runs every app's
post-migrate handlers) and ``seed_demo`` one after the other, is what lets the site answer
``/healthz`` a few seconds after ``make production`` rather than tens.
"""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def pending_migrations(alias: str = DEFAULT_DB_ALIAS) -> list[str]:
    """``app.name`` of each migration not yet applied to the database, in the order of the plan."""
    executor = MigrationExecutor(connections[alias])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _backwards in plan]


class Command(BaseCommand):
    help = "Migrate when a migration is waiting, then seed what is missing (make production)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password-file",
            help="passed to seed_demo: a new staff password goes to this file, not the output",
        )

    def handle(self, *args: object, **options: Any) -> None:
        pending = pending_migrations()
        if pending:
            self.stdout.write(f"{len(pending)} migration(s) to apply, from {pending[0]}")
            call_command("migrate", interactive=False, stdout=self.stdout, stderr=self.stderr)
        else:
            self.stdout.write("Database schema up to date: nothing to migrate.")
        call_command(
            "seed_demo",
            password_file=options.get("password_file"),
            stdout=self.stdout,
            stderr=self.stderr,
        )

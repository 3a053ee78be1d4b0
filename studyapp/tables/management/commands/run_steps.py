"""An executor of the tables' real-time steps (studyapp.steps): one process, one event loop,
up to STEPS_IN_FLIGHT steps at once. Run as many as the site needs, on any machine that reaches
its PostgreSQL and Redis (deploy/supervisord.conf runs STEPS of them; deploy/systemd has a unit)."""

from __future__ import annotations

import asyncio
import logging
import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from studyapp import db, steps
from studyapp.tables.driver import resume_unfinished

log = logging.getLogger("studyapp.steps")


class Command(BaseCommand):
    help = "Run the tables' real-time steps (agents' turns, deadlines, lobbies) on an event loop."
    # A restarted executor must be back in seconds: the system checks (admin, templates, URLs)
    # are the web processes' business and took most of its start on a loaded machine.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--name", default=None, help="this executor's name in the group")
        parser.add_argument(
            "--no-resume",
            action="store_true",
            help="do not schedule the next step of every open table at start",
        )

    def handle(self, *args: object, **options: object) -> None:
        if not steps.stream_mode():
            raise CommandError(
                "run_steps needs REDIS_URL (and a broker): without them the site runs its steps "
                "on the server's own loop (make run)"
            )
        db.size_pool(settings.STEPS_DB_THREADS + 1)
        if not options["no_resume"]:
            resumed = resume_unfinished()
            log.info("steps executor: %s open table(s) resumed", len(resumed))
        asyncio.run(self.serve(options["name"]))

    async def serve(self, name: str | None) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await steps.serve(stop, name=name)

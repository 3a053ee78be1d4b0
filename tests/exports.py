"""The one way tests export a study: through the real ``manage.py export_study`` with ``--check``,
so every export a test makes is also cross-checked (every person in games and turns is in
participants, counts agree; :mod:`analysis.export_check`). A disagreement fails the test with the
command's own message."""

from __future__ import annotations

import io
from pathlib import Path

from django.core.management import call_command

from analysis.export_check import check_export


def export_checked(slug: str, out: str | Path, *options: str) -> str:
    """``manage.py export_study SLUG --out OUT [OPTIONS] --check``; returns what it printed."""
    printed = io.StringIO()
    call_command("export_study", slug, "--out", str(out), *options, "--check", stdout=printed)
    assert "check: the files agree" in printed.getvalue()
    return printed.getvalue()


def assert_export_agrees(out: str | Path) -> None:
    """The check of ``--check`` on a folder a test wrote by calling the export service itself."""
    problems = check_export(out)
    assert problems == [], "\n".join(problems)

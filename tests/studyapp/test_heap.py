"""Long-running processes keep what they loaded at startup out of the garbage collector's full
scans (studyapp.heap): daphne's entry point and every Celery worker process freeze it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.site import ROOT

# Django, Channels, Celery and the games load a few hundred thousand objects.
LOADED = 100_000


def frozen_after(code: str) -> int:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", f"{code}; import gc; print(gc.get_freeze_count())"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.split()[-1])


def test_daphnes_entry_point_freezes_the_loaded_app() -> None:
    assert frozen_after("import studyapp.asgi") > LOADED
    assert frozen_after("import django; django.setup()") == 0  # nothing else freezes


@pytest.mark.parametrize("signal", ["worker_init", "worker_process_init"])
def test_a_worker_and_each_of_its_processes_freeze_what_they_loaded(signal: str) -> None:
    """A worker's main process (worker_init), and each process of its pool once forked
    (worker_process_init), as Celery signals them."""
    code = (
        "import django; django.setup(); import studyapp.celery; "
        f"from celery import signals; signals.{signal}.send(sender=None)"
    )
    assert frozen_after(code) > LOADED

"""`make production` around the processes (the Makefile): one copy per VAR_DIR, refused with a
clear message while another holds its lock, before anything is migrated; and the staff password
of a fresh site goes to a file of its owner's, never to the output."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.site import ROOT


@pytest.mark.skipif(shutil.which("flock") is None, reason="util-linux flock is not installed")
def test_a_second_make_production_is_refused_while_one_runs(tmp_path: Path) -> None:
    (tmp_path / "supervisord.pid").write_text("4242\n")
    held = os.open(tmp_path / "production.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as the running copy's supervisord holds it
    try:
        result = subprocess.run(
            ["make", "-o", "install", "production", f"VAR_DIR={tmp_path}"],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
                "REDIS_URL": "redis://127.0.0.1:1/0",
            },
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(held)
    assert result.returncode != 0
    assert "make production is already running" in result.stdout
    assert "supervisord pid 4242" in result.stdout
    assert "migrate" not in result.stdout  # refused before touching anything


def test_seed_demo_writes_a_new_staff_password_to_a_private_file(db, tmp_path: Path) -> None:
    import io

    from django.contrib.auth import authenticate
    from django.core.management import call_command

    out = io.StringIO()
    target = tmp_path / "var" / "staff-password"
    call_command("seed_demo", password_file=str(target), stdout=out)
    user, password = target.read_text().split()
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    assert password not in out.getvalue() and str(target) in out.getvalue()
    assert authenticate(username=user, password=password) is not None


def test_prepare_site_migrates_only_when_a_migration_waits(db, monkeypatch) -> None:
    """A restart finds the schema in place: no migrate (nor its post-migrate handlers), only the
    seed, which adds nothing twice. A migration recorded as not applied is migrated."""
    import io

    from django.core.management import call_command
    from django.db.migrations.recorder import MigrationRecorder

    from studyapp.participants.management.commands import prepare_site
    from studyapp.participants.models import Study

    called: list[str] = []
    real = prepare_site.call_command

    def recording(name: str, *args: object, **kwargs: object) -> None:
        called.append(name)
        if name != "migrate":  # the test database is migrated; the record below is a pretence
            real(name, *args, **kwargs)

    monkeypatch.setattr(prepare_site, "call_command", recording)
    out = io.StringIO()
    call_command("prepare_site", stdout=out)
    call_command("prepare_site", stdout=out)
    assert called == ["seed_demo", "seed_demo"]
    assert "nothing to migrate" in out.getvalue()
    assert Study.objects.filter(slug="demo").count() == 1

    last = MigrationRecorder.Migration.objects.filter(app="participants").order_by("-id").first()
    last.delete()
    assert prepare_site.pending_migrations() == [f"participants.{last.name}"]
    called.clear()
    call_command("prepare_site", stdout=out)
    assert called == ["migrate", "seed_demo"]
    assert f"1 migration(s) to apply, from participants.{last.name}" in out.getvalue()


def test_a_restart_skips_django_only_while_the_database_is_as_the_stamp_says(
    transactional_db, tmp_path: Path
) -> None:
    """deploy/prepared.py: `make production` starts no Django to find nothing to migrate or
    seed, but only while the schema, the seed and the database are what the last start left."""
    import importlib.util

    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    from studyapp.participants.models import Study

    if connection.vendor != "postgresql":
        pytest.skip("make production runs on PostgreSQL (DATABASE_URL)")
    spec = importlib.util.spec_from_file_location("prepared", ROOT / "deploy/prepared.py")
    prepared = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prepared)
    params = connection.settings_dict
    url = (
        f"postgresql://{params['USER']}:{params['PASSWORD']}@{params['HOST'] or '127.0.0.1'}:"
        f"{params['PORT'] or 5432}/{params['NAME']}"
    )
    stamp = tmp_path / "prepared"
    assert not prepared.check(stamp, url)  # no stamp yet
    call_command("prepare_site", stdout=__import__("io").StringIO())
    prepared.write(stamp, url)
    assert prepared.check(stamp, url)
    assert not prepared.check(stamp, url + "?application_name=other")  # another DATABASE_URL

    Study.objects.filter(slug="demo-undercover").delete()  # a demo study gone: seed again
    assert not prepared.check(stamp, url)
    call_command("prepare_site", stdout=__import__("io").StringIO())
    prepared.write(stamp, url)
    assert prepared.check(stamp, url)

    MigrationRecorder.Migration.objects.filter(app="participants").order_by("-id").first().delete()
    assert not prepared.check(stamp, url)  # a migration not applied
    call_command("migrate", "participants", fake=True, verbosity=0)
    assert prepared.check(stamp, url)

    tree = tmp_path / "tree"  # a migration file added to the code
    for path in [*ROOT.glob("studyapp/**/migrations/*.py"), *ROOT.glob(".venv/.installed-*")]:
        copy = tree / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    seed = "studyapp/participants/management/commands/seed_demo.py"
    (tree / seed).parent.mkdir(parents=True, exist_ok=True)
    (tree / seed).write_bytes((ROOT / seed).read_bytes())
    assert prepared.fingerprint(url, tree) == prepared.fingerprint(url)
    (tree / "studyapp/participants/migrations/9999_new.py").write_text("# new\n")
    assert prepared.fingerprint(url, tree) != prepared.fingerprint(url)

"""An export is moved into place only when whole: when the disk fills up part-way (here the
process's file-size limit, which makes a write fail as a full disk does), the command says so in
one line, the folder is left as it was (absent, or the previous export byte for byte) and no
partial or 0-byte file, nor the staging folder, is left behind."""

from __future__ import annotations

import contextlib
import hashlib
import resource
import signal
from pathlib import Path

import pytest
from analysis_db_helpers import make_study
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def disk_fills_after(size: int):
    """Writes past ``size`` bytes of any file fail with EFBIG, as on a full disk."""
    previous_signal = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous_signal)


def digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_full_disk_leaves_no_partial_export(tmp_path):
    study = make_study()
    out = tmp_path / "export"
    with disk_fills_after(4096), pytest.raises(CommandError, match="could not be written"):
        call_command("export_study", study.slug, "--out", str(out), "--quiet")
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staging folder left


def test_a_full_disk_leaves_the_previous_export_as_it_was(tmp_path):
    study = make_study()
    out = tmp_path / "export"
    call_command("export_study", study.slug, "--out", str(out), "--quiet")
    before = digest(out)
    assert "datapackage.json" in before and all((out / name).stat().st_size > 0 for name in before)
    with disk_fills_after(4096), pytest.raises(CommandError, match="left as it was"):
        call_command("export_study", study.slug, "--out", str(out), "--quiet")
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]

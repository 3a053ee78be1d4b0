"""What produced an artefact: the project's version and commit, the lock files' hashes, the
versions of the packages that shape numbers, the models with the servers they were reached at, and
(when given) the prompt set's hashes. Experiment records, job results and study exports carry it,
so a number can be rebuilt later with the same code, packages, prompts and models.

Pure: no Django, nothing read from the environment. Server addresses lose any credentials.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = Path(__file__).resolve().parent / "llm" / "prompts"
LOCK_FILES = ("requirements/lock.txt", "requirements/lock-ttra.txt")
# The distributions whose versions can change a number the project reports.
PACKAGES = ("openai", "anthropic", "torch", "transformers", "trl", "math-verify", "pandas")


def public_url(url: str | None) -> str | None:
    """``url`` without user, password, query or fragment: where a server is, never how to log in.

    >>> public_url("http://me:secret@127.0.0.1:8000/v1?key=abc")
    'http://127.0.0.1:8000/v1'
    """
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def project_version() -> str | None:
    return package_version("studyapp")


@functools.cache
def git_commit(root: Path = ROOT) -> str | None:
    """The checkout's commit, with ``-dirty`` when tracked files differ from it; None outside git."""
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head or None


def file_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@functools.cache
def lock_hashes(root: Path = ROOT) -> dict[str, str | None]:
    """sha256 of each lock file (None where the checkout has none, e.g. an installed wheel)."""
    return {name: file_sha256(root / name) for name in LOCK_FILES}


def prompt_hashes(folder: Path = PROMPTS) -> dict[str, Any]:
    """The prompt set as hashes: sha256 of each template file and one over all of them (names
    and contents), so two runs can be told apart by their prompts without shipping the texts.
    (Where prompt sets become data with hashes of their own, pass those to :func:`provenance`.)"""
    files = {
        path.name: file_sha256(path) or ""
        for path in sorted(folder.glob("*.txt"))
        if path.is_file()
    }
    whole = hashlib.sha256()
    for name, digest in files.items():
        whole.update(f"{name}\0{digest}\n".encode())
    return {"folder": folder.name, "sha256": whole.hexdigest(), "files": files}


def model_entries(models: Mapping[str, str | None]) -> list[dict[str, str | None]]:
    """``{spec: server URL}`` as a sorted list of ``{"spec", "server"}``, credentials removed."""
    return [{"spec": spec, "server": public_url(models[spec])} for spec in sorted(models)]


def provenance(
    models: Mapping[str, str | None] | None = None,
    *,
    prompts: Mapping[str, Any] | None = None,
    root: Path = ROOT,
) -> dict[str, Any]:
    """The provenance block of one artefact. ``models`` maps each model spec to the server it was
    reached at (None for offline agents); ``prompts`` is the prompt set's hashes when known."""
    block: dict[str, Any] = {
        "project": {"name": "studyapp", "version": project_version(), "commit": git_commit(root)},
        "lock": lock_hashes(root),
        "python": platform.python_version(),
        "packages": {name: package_version(name) for name in PACKAGES},
        "models": model_entries(models or {}),
    }
    if prompts is not None:
        block["prompts"] = dict(prompts)
    return block

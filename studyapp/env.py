"""The typed readers settings.py reads the environment with: each returns the default for an unset
or empty variable and refuses a bad value with ImproperlyConfigured naming the variable and the
value. Only studyapp.settings calls them; the rest of the site reads django.conf.settings."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as err:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from err


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as err:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from err


def env_spec_counts(name: str) -> dict[str, int]:
    """``spec=count`` pairs separated by commas (``openai:gpt-4o=50,anthropic:claude-x=20``); a
    spec may itself hold ``=``, so a pair splits at its last one."""
    counts: dict[str, int] = {}
    for pair in filter(None, (p.strip() for p in env_str(name).split(","))):
        spec, eq, count = pair.rpartition("=")
        if not eq or not spec or not count.strip().isdigit():
            raise ImproperlyConfigured(
                f"{name}: {pair!r} is not spec=count (e.g. openai:gpt-4o=50)"
            )
        counts[spec.strip()] = int(count)
    return counts


def redis_db(url: str) -> int:
    """The database number a Redis URL names (``redis://host:6379/4``, or ``?db=4``), 0 if none."""
    from redis.connection import parse_url

    return int(parse_url(url).get("db") or 0)


def local_secret_key(path: Path) -> str:
    """The key kept in ``path``, made on first use (readable by this user only), so that `make run`
    needs no setup and its sessions survive a restart. Several machines must share SECRET_KEY."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    key = secrets.token_urlsafe(50)
    with os.fdopen(handle, "w", encoding="ascii") as out:
        out.write(key + "\n")
    return key

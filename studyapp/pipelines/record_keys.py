"""The key an experiment job stores on each table it writes (``Table.options["record"]``):
``game|model|setting|sample|round``. The experiment runner writes it, so a resumed job skips the
games it already stored; the dashboard reads it back to place a job's game at its setting, sample
and round. Plain Python, so reading a key loads none of the runner's model SDKs."""

from __future__ import annotations

from typing import Any

FIELDS = ("game", "model", "setting", "sample", "round")


def record_key(record: dict[str, Any]) -> str:
    """The key of an experiment record."""
    return "|".join(str(record[k]) for k in FIELDS)


def key_position(key: str) -> tuple[str, int, int] | None:
    """(setting, sample, round) of a :func:`record_key`; None for text that is not one."""
    parts = str(key).split("|")
    if len(parts) != len(FIELDS):
        return None
    return parts[2], int(parts[3]), int(parts[4])

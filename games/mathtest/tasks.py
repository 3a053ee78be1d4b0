"""Math task files: the task format of ``games/tasks.py`` (TTRA reads the same files through the
same reader), loaded once per file version for the testbed."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from games.tasks import KINDS, LETTERS, Task, TaskFileError
from games.tasks import load_tasks as read_tasks

MathTask = Task  # a problem of the testbed is a task of the file

__all__ = ["KINDS", "LETTERS", "MathTask", "TaskFileError", "load_tasks"]


@lru_cache(maxsize=16)
def _load(path: str, mtime: float) -> tuple[Task, ...]:
    return tuple(read_tasks(path))


def load_tasks(path: str | Path) -> tuple[Task, ...]:
    """Every task of a JSONL file, in file order; a bad line raises :class:`TaskFileError`."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError as err:
        raise TaskFileError(f"{path}: {err.strerror or err}") from err
    return _load(str(path), mtime)

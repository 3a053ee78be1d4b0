"""Math task files: one JSON object a line, ``{"question", "answer"[, "id", "options", "kind"]}``.

The format of TTRA's task files (``studyapp/pipelines/ttra/tasks.py``), read here without Django:
``kind`` is ``math`` (a number or expression), ``choice`` (``options`` given; the answer is a
letter or the text of one option) or ``word``; it defaults to ``choice`` when options are given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

KINDS = ("math", "choice", "word")
LETTERS = "ABCDEFGHIJ"


class TaskFileError(ValueError):
    """A task file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class MathTask:
    id: str
    question: str
    answer: str  # a letter for a choice task
    kind: str = "math"
    options: tuple[str, ...] = ()

    def as_config(self) -> dict:
        """The record's ``config``: what the problem was and its reference answer."""
        return {
            "task_id": self.id,
            "question": self.question,
            "gold": self.answer,
            "kind": self.kind,
            "options": list(self.options),
        }

    @classmethod
    def from_config(cls, config: dict) -> MathTask:
        return cls(
            config["task_id"],
            config["question"],
            config["gold"],
            config["kind"],
            tuple(config.get("options") or ()),
        )

    def options_text(self) -> str:
        """The lettered options on lines of their own, after a newline; empty without options."""
        if not self.options:
            return ""
        return "\n" + "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options))


def _task(record: object, where: str, number: int) -> MathTask:
    if not isinstance(record, dict):
        raise TaskFileError(f"{where}: expected a JSON object")
    missing = [key for key in ("question", "answer") if key not in record]
    if missing:
        raise TaskFileError(f"{where}: missing {', '.join(missing)}")
    question, answer = record["question"], record["answer"]
    if not isinstance(question, str) or not question.strip():
        raise TaskFileError(f"{where}: 'question' must be a non-empty string")
    if isinstance(answer, bool) or not isinstance(answer, str | int | float):
        raise TaskFileError(f"{where}: 'answer' must be a string or a number")
    options = record.get("options") or []
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TaskFileError(f"{where}: 'options' must be a list of strings")
    if len(options) > len(LETTERS):
        raise TaskFileError(f"{where}: at most {len(LETTERS)} options")
    kind = record.get("kind") or ("choice" if options else "math")
    if kind not in KINDS:
        raise TaskFileError(f"{where}: 'kind' must be one of {', '.join(KINDS)}")
    label = str(answer).strip()
    if kind == "choice":
        if len(options) < 2:
            raise TaskFileError(f"{where}: a multiple-choice task needs at least two options")
        letter = label.strip("()").upper()
        if not (len(letter) == 1 and letter in LETTERS[: len(options)]):
            matches = [i for i, o in enumerate(options) if o.strip().lower() == label.lower()]
            if not matches:
                raise TaskFileError(f"{where}: answer {label!r} is no option letter nor option")
            letter = LETTERS[matches[0]]
        label = letter
    if not label:
        raise TaskFileError(f"{where}: the answer is empty")
    return MathTask(
        str(record.get("id", f"line-{number}")), question.strip(), label, kind, tuple(options)
    )


@lru_cache(maxsize=16)
def _load(path: str, mtime: float) -> tuple[MathTask, ...]:
    tasks: list[MathTask] = []
    seen: set[str] = set()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise TaskFileError(f"{path}: {err.strerror or err}") from err
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise TaskFileError(f"{where}: not valid JSON ({err.msg})") from err
        task = _task(record, where, number)
        if task.id in seen:
            raise TaskFileError(f"{where}: duplicate id {task.id!r}")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f"{path}: no tasks")
    return tuple(tasks)


def load_tasks(path: str | Path) -> tuple[MathTask, ...]:
    """Every task of a JSONL file, in file order; a bad line raises :class:`TaskFileError`."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError as err:
        raise TaskFileError(f"{path}: {err.strerror or err}") from err
    return _load(str(path), mtime)

"""Task files of single-turn problems, read in one place: one JSON object a line,
``{"question", "answer"[, "id", "options", "kind"]}``. The math testbed (``games.mathtest``) and
TTRA (``studyapp.pipelines.ttra``) both read them through here, so one file means the same to both.

``kind`` is ``math`` (a number or expression; an answer field may hold a ``\\boxed{}`` body or a
GSM8K-style ``#### n`` tail, whose content is the label), ``choice`` (``options`` given; the answer
is a letter or the text of one option, stored as the letter) or ``word``; it defaults to ``choice``
when options are given, else ``math``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KINDS = ("math", "choice", "word")
LETTERS = "ABCDEFGHIJ"
BOXED = "\\boxed"


class TaskFileError(ValueError):
    """A task file or record that cannot be read; the message names the line or record."""


@dataclass(frozen=True)
class Task:
    """One question with its label; ``options`` only for multiple choice (label = a letter)."""

    id: str
    question: str
    answer: str
    kind: str = "math"
    options: tuple[str, ...] = ()

    def as_config(self) -> dict:
        """A record's ``config``: what the problem was and its reference answer."""
        return {
            "task_id": self.id,
            "question": self.question,
            "gold": self.answer,
            "kind": self.kind,
            "options": list(self.options),
        }

    @classmethod
    def from_config(cls, config: dict) -> Task:
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


def boxed_contents(text: str) -> list[str]:
    """Every ``\\boxed{...}`` body in order, with nested braces kept whole.

    >>> boxed_contents(r"first \\boxed{1} then \\boxed{\\frac{1}{2}}")
    ['1', '\\\\frac{1}{2}']
    """
    found: list[str] = []
    start = text.find(BOXED)
    while start != -1:
        i = start + len(BOXED)
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == "{":
            depth, j = 0, i
            while j < len(text):
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        found.append(text[i + 1 : j].strip())
                        break
                j += 1
        start = text.find(BOXED, i)
    return found


def math_label(raw: str) -> str:
    """The label inside a math answer field: a boxed body, a GSM8K ``#### n`` tail, or the text."""
    boxed = boxed_contents(raw)
    if boxed:
        return boxed[-1]
    if "####" in raw:
        return raw.rsplit("####", 1)[1].strip()
    return raw.strip()


def choice_label(answer: str, options: tuple[str, ...], where: str) -> str:
    """A choice label as a letter; the option text itself is accepted too."""
    letter = answer.strip().strip("()").upper()
    if len(letter) == 1 and letter in LETTERS[: len(options)]:
        return letter
    for i, option in enumerate(options):
        if option.strip().lower() == answer.strip().lower():
            return LETTERS[i]
    raise TaskFileError(f"{where}: answer {answer!r} is neither an option letter nor an option")


def task_from_record(record: object, where: str, default_id: str) -> Task:
    """One task from a JSON object ``{question, answer[, id, options, kind]}``."""
    if not isinstance(record, dict):
        raise TaskFileError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [k for k in ("question", "answer") if k not in record]
    if missing:
        raise TaskFileError(f"{where}: missing field(s) {', '.join(missing)}")
    question, answer = record["question"], record["answer"]
    if not isinstance(question, str) or not question.strip():
        raise TaskFileError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(answer, str | int | float) or isinstance(answer, bool):
        raise TaskFileError(f"{where}: 'answer' must be a string or a number")
    raw_options = record.get("options") or []
    if not isinstance(raw_options, list) or not all(isinstance(o, str) for o in raw_options):
        raise TaskFileError(f"{where}: 'options' must be a list of strings")
    options = tuple(raw_options)
    if len(options) > len(LETTERS):
        raise TaskFileError(f"{where}: at most {len(LETTERS)} options")
    kind = record.get("kind") or ("choice" if options else "math")
    if kind not in KINDS:
        raise TaskFileError(f"{where}: 'kind' must be one of {', '.join(KINDS)}")
    if kind == "choice" and len(options) < 2:
        raise TaskFileError(f"{where}: a multiple-choice task needs at least two options")
    if kind == "choice":
        label = choice_label(str(answer), options, where)
    elif kind == "math":
        label = math_label(str(answer))
    else:
        label = str(answer).strip()
    if not label:
        raise TaskFileError(f"{where}: the answer is empty")
    return Task(str(record.get("id", default_id)), question.strip(), label, kind, options)


def json_lines(path: str | Path) -> Iterator[tuple[int, str, Any]]:
    """``(line number, "file:line", parsed JSON)`` for each non-blank line; a line that is not
    JSON, or a file that cannot be read, raises `TaskFileError` naming where."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 (closed by the with below)
    except OSError as err:
        raise TaskFileError(f"{path}: {err.strerror or err}") from err
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                yield number, where, json.loads(line)
            except json.JSONDecodeError as err:
                raise TaskFileError(f"{where}: not valid JSON ({err.msg})") from err


def load_tasks(path: str | Path) -> list[Task]:
    """Read a JSONL task file; a bad line raises `TaskFileError` naming ``file:line``."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, where, record in json_lines(path):
        task = task_from_record(record, where, default_id=f"line-{number}")
        if task.id in seen:
            raise TaskFileError(f"{where}: duplicate id {task.id!r}")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f"{path}: no tasks")
    return tasks

"""Tasks: a question with a short answer that a program can check.

TTRA needs nothing but such tasks: one labeled task for stage 1, the questions (labels unused) for
stage 2, and the labels again for scoring. They come from three places: the study's own Twenty
Questions games, a JSONL file of math problems, and multiple-choice problems whose options are
rotated so that a one-shot example does not teach "the answer is always B".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.twenty_questions.engine import question_text
from studyapp.pipelines.ttra.answers import boxed_contents
from studyapp.pipelines.ttra.prompt_files import load_prompts

KINDS = ("math", "choice", "word")
LETTERS = "ABCDEFGHIJ"

# The built-in prompts (appendices A.1 and B); ``--prompts DIR`` overrides them by file name.
BUILT_IN = load_prompts()
MATH_PROMPT, CHOICE_PROMPT, WORD_PROMPT = BUILT_IN["math"], BUILT_IN["choice"], BUILT_IN["word"]


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

    def prompt(self, templates: Mapping[str, str] | None = None) -> str:
        """The user message the model sees (the paper's prompts, appendices A.1 and B), from
        ``templates`` (`prompt_files.load_prompts`) or the built-in ones."""
        templates = templates or BUILT_IN
        if self.kind == "choice":
            lines = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options))
            return templates["choice"].format(question=self.question, options=lines)
        if self.kind == "math":
            return templates["math"].format(question=self.question)
        return self.question


def rotations(task: Task) -> list[Task]:
    """Every cyclic rotation of a multiple-choice task's options, label letter moved along.

    The paper (appendix A.1) trains the one-shot stage on rotated copies of its MathQA example so
    the model cannot learn a fixed letter. A non-choice task is returned alone.

    >>> t = Task("q", "2+2?", "B", "choice", ("3", "4", "5"))
    >>> [(r.options, r.answer) for r in rotations(t)]
    [(('3', '4', '5'), 'B'), (('4', '5', '3'), 'A'), (('5', '3', '4'), 'C')]
    """
    if task.kind != "choice":
        return [task]
    n = len(task.options)
    right = LETTERS.index(task.answer)
    out = []
    for shift in range(n):
        options = task.options[shift:] + task.options[:shift]
        out.append(
            Task(
                id=f"{task.id}#rot{shift}",
                question=task.question,
                answer=LETTERS[(right - shift) % n],
                kind="choice",
                options=options,
            )
        )
    return out


def _math_label(raw: str) -> str:
    """The label inside a math answer field: a boxed body, a GSM8K ``#### n`` tail, or the text."""
    boxed = boxed_contents(raw)
    if boxed:
        return boxed[-1]
    if "####" in raw:
        return raw.rsplit("####", 1)[1].strip()
    return raw.strip()


def _choice_label(answer: str, options: tuple[str, ...], where: str) -> str:
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
        label = _choice_label(str(answer), options, where)
    elif kind == "math":
        label = _math_label(str(answer))
    else:
        label = str(answer).strip()
    if not label:
        raise TaskFileError(f"{where}: the answer is empty")
    return Task(str(record.get("id", default_id)), question.strip(), label, kind, options)


def _json_lines(path: str | Path) -> Iterator[tuple[int, str, Any]]:
    """``(line number, "file:line", parsed JSON)`` for each non-blank line; a line that is not
    JSON raises `TaskFileError` naming where it is."""
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
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
    for number, where, record in _json_lines(path):
        task = task_from_record(record, where, default_id=f"line-{number}")
        if task.id in seen:
            raise TaskFileError(f"{where}: duplicate id {task.id!r}")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f"{path}: no tasks")
    return tasks


def _names_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None


def twenty_questions_task(
    record: Mapping,
    *,
    where: str,
    candidates: tuple[str, ...],
    list_candidates: bool = True,
    templates: Mapping[str, str] | None = None,
) -> Task:
    """A task from one finished Twenty Questions game: the transcript minus the winning guess.

    ``record`` is a plain mapping with ``config`` (holding ``answer``) and ``events`` (the engine's
    event dicts), such as one line of an experiment JSONL or a table's config and turns. The label is
    the candidate spelling that matches the config's answer, case-insensitively.
    """
    if record.get("game", "twenty-questions") != "twenty-questions":
        raise TaskFileError(f"{where}: not a Twenty Questions game ({record.get('game')!r})")
    config, events = record.get("config"), record.get("events")
    if not isinstance(config, Mapping) or not isinstance(events, list):
        raise TaskFileError(f"{where}: needs 'config' (an object) and 'events' (a list)")
    by_lower = {c.lower(): c for c in candidates}
    secret = str(config.get("answer", "")).strip().lower()
    if secret not in by_lower:
        raise TaskFileError(f"{where}: answer {config.get('answer')!r} is not a candidate word")
    answer = by_lower[secret]
    pairs: list[list[str]] = []
    for event in events:
        if event.get("type") == "question":
            pairs.append([question_text(event), ""])
        elif event.get("type") == "answer" and pairs:
            pairs[-1][1] = str(event.get("answer", ""))
    if pairs and _names_word(pairs[-1][0], answer):
        pairs.pop()
    if not pairs:
        raise TaskFileError(f"{where}: no questions left once the final guess is removed")
    transcript = "\n".join(f"Q{i}: {q}\nA{i}: {a or 'No'}" for i, (q, a) in enumerate(pairs, 1))
    listed = f" from this list: {', '.join(candidates)}" if list_candidates else ""
    question = (templates or BUILT_IN)["word"].format(candidates=listed, transcript=transcript)
    return Task(str(record.get("id", where)), question, answer, "word")


def tasks_from_games(
    records: Iterable[Mapping],
    *,
    candidates: tuple[str, ...] | None = None,
    list_candidates: bool = True,
    templates: Mapping[str, str] | None = None,
) -> list[Task]:
    """Tasks from finished Twenty Questions games (plain records, e.g. database rows as dicts).

    ``candidates`` defaults to the game's 157 words (`games.twenty_questions.CANDIDATES`).
    """
    if candidates is None:
        from games.twenty_questions import CANDIDATES

        candidates = tuple(CANDIDATES)
    return [
        twenty_questions_task(
            r,
            where=f"game {i}",
            candidates=candidates,
            list_candidates=list_candidates,
            templates=templates,
        )
        for i, r in enumerate(records)
    ]


def load_games(
    path: str | Path,
    *,
    candidates: tuple[str, ...] | None = None,
    list_candidates: bool = True,
    templates: Mapping[str, str] | None = None,
) -> list[Task]:
    """Tasks from an experiment results JSONL (one finished game per line); errors name the line."""
    if candidates is None:
        from games.twenty_questions import CANDIDATES

        candidates = tuple(CANDIDATES)
    tasks = []
    for number, where, record in _json_lines(path):
        if not isinstance(record, dict):
            raise TaskFileError(f"{where}: expected a JSON object")
        record.setdefault("id", f"line-{number}")
        tasks.append(
            twenty_questions_task(
                record,
                where=where,
                candidates=candidates,
                list_candidates=list_candidates,
                templates=templates,
            )
        )
    if not tasks:
        raise TaskFileError(f"{path}: no games")
    return tasks

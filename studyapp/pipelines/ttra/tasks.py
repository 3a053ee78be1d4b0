"""Tasks: a question with a short answer that a program can check.

TTRA needs nothing but such tasks: one labeled task for stage 1, the questions (labels unused) for
stage 2, and the labels again for scoring. They come from three places: the study's own Twenty
Questions games, a JSONL file of math problems, and multiple-choice problems whose options are
rotated so that a one-shot example does not teach "the answer is always B".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from games import tasks
from games.tasks import LETTERS, TaskFileError, json_lines
from games.twenty_questions import CANDIDATES
from games.twenty_questions.names import question_text
from studyapp.pipelines.ttra.prompt_files import load_prompts

# The built-in prompts (appendices A.1 and B); ``--prompts DIR`` overrides them by file name.
BUILT_IN = load_prompts()
MATH_PROMPT, CHOICE_PROMPT, WORD_PROMPT = BUILT_IN["math"], BUILT_IN["choice"], BUILT_IN["word"]


@dataclass(frozen=True)
class Task(tasks.Task):
    """A task of a task file (``games/tasks.py``, the one reader of the format) as TTRA prompts
    it. ``extra`` keeps the record's other plain fields (``level``, ``split``, ``year``...) as
    ``(name, text)`` pairs, so a run can choose its one-shot example by them (`value_of`)."""

    extra: tuple[tuple[str, str], ...] = ()

    def value_of(self, name: str) -> str | None:
        """The text of the record's field ``name``; None when the record has no such field.

        >>> Task("t", "q", "1", extra=(("level", "1"),)).value_of("level")
        '1'
        """
        return dict(self.extra).get(name)

    def prompt(self, templates: Mapping[str, str] | None = None) -> str:
        """The user message the model sees (the paper's prompts, appendices A.1, B and C), from
        ``templates`` (`prompt_files.load_prompts`) or the built-in ones; a ``word`` task's
        question goes into the ``label`` frame (by default the question as it is)."""
        templates = templates or BUILT_IN
        if self.kind == "choice":
            lines = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options))
            return templates["choice"].format(question=self.question, options=lines)
        if self.kind == "math":
            return templates["math"].format(question=self.question)
        return templates.get("label", "{question}").format(question=self.question)


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


def task_from_record(record: object, where: str, default_id: str) -> Task:
    """One task from a JSON object ``{question, answer[, id, options, kind]}``."""
    return Task(**asdict(tasks.task_from_record(record, where, default_id)))


STANDARD_FIELDS = frozenset({"id", "question", "answer", "options", "kind"})


def extra_fields(record: object) -> tuple[tuple[str, str], ...]:
    """A record's plain fields beyond the task format's own, as sorted ``(name, text)`` pairs.

    >>> extra_fields({"question": "q", "answer": "1", "level": 1, "split": "test", "x": [1]})
    (('level', '1'), ('split', 'test'))
    """
    if not isinstance(record, dict):
        return ()
    return tuple(
        sorted(
            (str(k), str(v))
            for k, v in record.items()
            if k not in STANDARD_FIELDS and isinstance(v, str | int | float | bool)
        )
    )


def load_tasks(path: str | Path) -> list[Task]:
    """Read a JSONL task file; a bad line raises `TaskFileError` naming ``file:line``. Each task
    keeps its record's extra plain fields (`extra_fields`)."""
    read = tasks.load_tasks(path)
    records = [record for _, _, record in json_lines(path)]  # the same lines, in the same order
    return [
        Task(**asdict(task), extra=extra_fields(record))
        for task, record in zip(read, records, strict=True)
    ]


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
        candidates = tuple(CANDIDATES)
    tasks = []
    for number, where, record in json_lines(path):
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

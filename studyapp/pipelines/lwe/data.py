"""Pairwise judging cases: the JSONL loader researchers upload, and the built-in dataset made from
the study's own Twenty Questions games.

A bad upload must say exactly which line is wrong and why, so every problem is collected with its
line number before anything runs; a run never starts on half a dataset.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

from games.twenty_questions.engine import question_text

LABELS = ("A", "B")
REQUIRED = ("prompt", "response_a", "response_b", "label")


@dataclass(frozen=True)
class PairCase:
    """One comparison: which of two responses to ``prompt`` is better (``label`` "A" or "B")."""

    id: str
    prompt: str
    response_a: str
    response_b: str
    label: str
    image: str | None = None

    def swapped(self) -> PairCase:
        """The same case with the responses in the other order (and the label following them)."""
        return replace(
            self,
            response_a=self.response_b,
            response_b=self.response_a,
            label="B" if self.label == "A" else "A",
        )

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "prompt": self.prompt,
            "response_a": self.response_a,
            "response_b": self.response_b,
            "label": self.label,
        }
        if self.image:
            data["image"] = self.image
        return data


class DatasetError(ValueError):
    """A dataset that cannot be used; ``problems`` lists ``(line, message)`` pairs."""

    def __init__(self, source: str, problems: list[tuple[int, str]]) -> None:
        self.source = source
        self.problems = problems
        shown = "\n".join(f"{source}, line {line}: {message}" for line, message in problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(shown + more)


def _case_from_row(row: Any, line: int, base_dir: Path | None) -> tuple[PairCase | None, str]:
    if not isinstance(row, dict):
        return None, f"expected a JSON object, got {type(row).__name__}"
    missing = [key for key in REQUIRED if key not in row]
    if missing:
        return None, f"missing field(s) {', '.join(missing)}"
    for key in ("prompt", "response_a", "response_b"):
        if not isinstance(row[key], str) or not row[key].strip():
            return None, f"field {key!r} must be a non-empty string"
    label = row["label"]
    if not isinstance(label, str) or label.strip().upper() not in LABELS:
        return None, f'label must be "A" or "B", not {label!r}'
    image = row.get("image") or row.get("image_path")
    if image is not None:
        if not isinstance(image, str):
            return None, "image must be a file path string"
        path = Path(image)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if base_dir is not None and not path.is_file():
            return None, f"image file {image!r} does not exist"
        image = str(path)
    case_id = str(row.get("id", f"line-{line}"))
    case = PairCase(
        case_id, row["prompt"], row["response_a"], row["response_b"], label.strip().upper(), image
    )
    return case, ""


def parse_jsonl(
    lines: Iterable[str], *, source: str = "<input>", base_dir: Path | None = None
) -> list[PairCase]:
    """Parse JSONL text lines into cases; raise :class:`DatasetError` naming every bad line.

    Blank lines are skipped. ``base_dir`` resolves relative image paths and checks they exist.
    """
    cases: list[PairCase] = []
    problems: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as err:
            problems.append((number, f"not valid JSON ({err.msg} at column {err.colno})"))
            continue
        case, problem = _case_from_row(row, number, base_dir)
        if case is None:
            problems.append((number, problem))
            continue
        if case.id in seen:
            problems.append((number, f"id {case.id!r} already used on line {seen[case.id]}"))
            continue
        seen[case.id] = number
        cases.append(case)
    if problems:
        raise DatasetError(source, problems)
    if not cases:
        raise DatasetError(source, [(0, "the file holds no cases")])
    return cases


def load_jsonl(path: str | Path) -> list[PairCase]:
    """Load a pairwise JSONL file (``prompt``, ``response_a``, ``response_b``, ``label``, optional
    ``image`` relative to the file, optional ``id``)."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        return parse_jsonl(handle, source=path.name, base_dir=path.parent)


def transcript(events: Iterable[Mapping[str, Any]]) -> str:
    """A Twenty Questions log as the numbered dialogue a judge reads."""
    lines: list[str] = []
    asked = 0
    for event in events:
        kind = event.get("type")
        if kind == "question":
            asked += 1
            lines.append(f"Q{asked}: {question_text(event)}")
        elif kind == "answer":
            lines.append(f"A{asked}: {event.get('answer', '')}")
        elif kind == "abort":
            lines.append("(the game was stopped early)")
    return "\n".join(lines) if lines else "(no questions were asked)"


TQ_PROMPT = (
    "In a game of Twenty Questions a questioner tries to identify a secret word, asking at most "
    "20 yes/no questions; naming the word ends the game, and finding it with fewer questions is "
    "better. The secret word was {word!r}. Which questioner played better?"
)


def twenty_questions_pairs(
    records: Iterable[Mapping[str, Any]], *, seed: int = 0, max_pairs_per_word: int | None = 20
) -> list[PairCase]:
    """Pair finished Twenty Questions games on the same secret word; the better response is the
    game with the higher reward (ties carry no label and are skipped).

    ``records`` are plain dicts (an experiment JSONL line, or a table's rows flattened by the
    caller) with ``config["answer"]`` (or ``answer``), ``events`` and ``reward``. Which game is
    shown first is drawn from ``seed`` so the labels are balanced between A and B.
    """
    by_word: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        word = (record.get("config") or {}).get("answer") or record.get("answer")
        if word is None or record.get("reward") is None:
            continue
        by_word[str(word).lower()].append(record)
    rng = random.Random(seed)
    cases: list[PairCase] = []
    for word in sorted(by_word):
        games = by_word[word]
        pairs = [(a, b) for a, b in combinations(range(len(games)), 2)]
        pairs = [(a, b) for a, b in pairs if games[a]["reward"] != games[b]["reward"]]
        if max_pairs_per_word is not None:
            pairs = pairs[:max_pairs_per_word]
        for a, b in pairs:
            better, worse = (a, b) if games[a]["reward"] > games[b]["reward"] else (b, a)
            first, second = (better, worse) if rng.random() < 0.5 else (worse, better)
            shown_word = (games[a].get("config") or {}).get("answer") or games[a].get("answer")
            cases.append(
                PairCase(
                    id=f"{word}:{games[a].get('id', a)}-{games[b].get('id', b)}",
                    prompt=TQ_PROMPT.format(word=shown_word),
                    response_a=transcript(games[first]["events"]),
                    response_b=transcript(games[second]["events"]),
                    label="A" if first == better else "B",
                )
            )
    return cases

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

from games.llm.providers import image_media_type
from games.twenty_questions.names import question_text

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


# Which of a case's two responses is shown first. §4.3 of the LWE paper measures Accuracy "on a
# single random ordering of the two responses": "random" (the commands' default) swaps each case
# with probability 1/2, drawn from the seed and the case's id alone, so a case keeps its ordering
# across methods, case orders, subsets and --limit; "file" keeps the benchmark's order, in which a
# label imbalance moves Accuracy by up to half the inconsistent share.
RESPONSE_ORDERS = ("random", "file")
DEFAULT_RESPONSE_ORDER = "random"


def is_swapped(case_id: str, seed: int) -> bool:
    """Whether the seeded random ordering shows ``case_id``'s responses the other way round."""
    return random.Random(f"{seed}:response-order:{case_id}").random() < 0.5


def orient(
    cases: list[PairCase], order: str = DEFAULT_RESPONSE_ORDER, seed: int = 0
) -> tuple[list[PairCase], dict[str, Any]]:
    """``cases`` in one ordering of their responses, and what to record of it: the ordering,
    its seed, the ids shown swapped and the labels that result (ids and images are kept)."""
    if order not in RESPONSE_ORDERS:
        raise ValueError(f"response order must be one of {', '.join(RESPONSE_ORDERS)}")
    swapped = {c.id for c in cases if order == "random" and is_swapped(c.id, seed)}
    shown = [c.swapped() if c.id in swapped else c for c in cases]
    labels = {label: sum(c.label == label for c in shown) for label in LABELS}
    record = {
        "order": order,
        "seed": seed if order == "random" else None,
        "swapped": [c.id for c in cases if c.id in swapped],
        "labels": labels,
    }
    return shown, record


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


# ---------------------------------------------------------------------------------------------
# The paper's benchmarks in their published layouts (LWE, §4.2): VL-RewardBench (Li et al., CVPR
# 2025; the MMInstruction/VL-RewardBench parquet: ``id``, ``query``, ``response`` [two texts],
# ``human_ranking`` [rank of each, 0 = best], ``image`` {bytes, path}) and Multimodal RewardBench
# (Yasunaga et al., arXiv:2502.14191; its release's ``all_data.json``, a list of ``ID``, ``Text``,
# ``Output1``, ``Output2``, ``Better`` ("Output1"/"Output2"), ``Image`` (a path under the image
# folder), ``Category``; the same fields as JSONL or parquet with the image inline). The LWE
# authors' converted JSONL uses the Multimodal RewardBench fields for both.

FORMATS = ("auto", "pairwise", "vl-rewardbench", "mm-rewardbench")


def detect_format(row: Mapping[str, Any]) -> str:
    """Which layout a record is in, from its fields."""
    if "response_a" in row or "label" in row:
        return "pairwise"
    if "human_ranking" in row and "response" in row:
        return "vl-rewardbench"
    if "Output1" in row and "Better" in row:
        return "mm-rewardbench"
    raise ValueError(
        "unknown layout: expected prompt/response_a/response_b/label, "
        "query/response/human_ranking (VL-RewardBench) or Text/Output1/Output2/Better "
        "(Multimodal RewardBench)"
    )


def _suffix(data: bytes) -> str:
    return "." + image_media_type(data).split("/")[1].replace("jpeg", "jpg")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def _image_path(
    value: Any, case_id: str, image_root: Path, image_dir: Path
) -> tuple[str | None, str]:
    """A case's image as a file path: a path (relative to ``image_root``) is checked; inline bytes
    (a parquet image column) are written once to ``image_dir``."""
    if value is None:
        return None, ""
    if isinstance(value, Mapping):
        if value.get("bytes"):
            data = bytes(value["bytes"])
            try:
                path = image_dir / (_safe(case_id) + _suffix(data))
            except ValueError as err:
                return None, f"image: {err}"
            if not path.is_file():
                image_dir.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            return str(path), ""
        value = value.get("path")
        if not value:
            return None, ""
    if not isinstance(value, str):
        return None, f"image must be a path or inline bytes, not {type(value).__name__}"
    path = Path(value)
    if not path.is_absolute():
        path = image_root / path
    if not path.is_file():
        return None, f"image file {value!r} does not exist under {image_root}"
    return str(path), ""


def _benchmark_case(
    row: Any, layout: str, line: int, case_id: str, image_root: Path, image_dir: Path
) -> tuple[PairCase | None, str]:
    if not isinstance(row, Mapping):
        return None, f"expected an object, got {type(row).__name__}"
    if layout == "vl-rewardbench":
        missing = [k for k in ("query", "response", "human_ranking") if k not in row]
        if missing:
            return None, f"missing field(s) {', '.join(missing)}"
        responses, ranking = list(row["response"]), list(row["human_ranking"])
        if len(responses) != 2 or len(ranking) != 2:
            return None, "VL-RewardBench rows hold exactly two responses and two ranks"
        if ranking[0] == ranking[1]:
            return None, f"human_ranking {ranking} prefers neither response"
        label = "A" if ranking[0] < ranking[1] else "B"
        prompt, image = row["query"], row.get("image")
    else:
        missing = [k for k in ("Text", "Output1", "Output2", "Better") if k not in row]
        if missing:
            return None, f"missing field(s) {', '.join(missing)}"
        if row["Better"] not in ("Output1", "Output2"):
            return None, f'Better must be "Output1" or "Output2", not {row["Better"]!r}'
        responses = [row["Output1"], row["Output2"]]
        label = "A" if row["Better"] == "Output1" else "B"
        prompt, image = row["Text"], row.get("Image")
    texts = [prompt, *responses]
    if not all(isinstance(t, str) and t.strip() for t in texts):
        return None, "the question and both responses must be non-empty strings"
    path, problem = _image_path(image, case_id, image_root, image_dir)
    if problem:
        return None, problem
    return PairCase(case_id, prompt, responses[0], responses[1], label, path), ""


def _records(path: Path) -> list[tuple[int, Any]]:
    """(line or row number, record) pairs from a JSONL, JSON list or parquet file."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(enumerate(pq.read_table(path).to_pylist(), start=1))
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise DatasetError(path.name, [(err.lineno, f"not valid JSON ({err.msg})")]) from None
        if not isinstance(data, list):
            raise DatasetError(path.name, [(1, "expected a JSON list of records")])
        return list(enumerate(data, start=1))
    out, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as err:
                problems.append((number, f"not valid JSON ({err.msg} at column {err.colno})"))
    if problems:
        raise DatasetError(path.name, problems)
    return out


def load_cases(
    path: str | Path,
    *,
    layout: str = "auto",
    image_root: str | Path | None = None,
    image_dir: str | Path | None = None,
    ids: list[str] | None = None,
) -> list[PairCase]:
    """Cases from the project's pairwise JSONL or a benchmark's published file (see `FORMATS`).

    ``image_root``: where relative image paths start (default: the file's folder, where
    Multimodal RewardBench's release keeps ``images/``). ``image_dir``: where inline images are
    written (default ``<file>_images`` beside it). ``ids`` keeps only those cases, in that order
    (the LWE authors list the 1,000 Multimodal RewardBench cases of the paper). An id that repeats
    in the file gets ``_1``, ``_2``… in order of appearance, as the LWE authors' converters do.
    Every bad record is named before anything is returned.
    """
    path = Path(path)
    if layout not in FORMATS:
        raise ValueError(f"layout must be one of {', '.join(FORMATS)}")
    if layout == "pairwise" or (
        layout == "auto" and path.suffix == ".jsonl" and _is_pairwise(path)
    ):
        cases = load_jsonl(path)
        return _select(cases, ids, path.name)
    records = _records(path)
    if not records:
        raise DatasetError(path.name, [(0, "the file holds no cases")])
    root = Path(image_root) if image_root is not None else path.parent
    inline = Path(image_dir) if image_dir is not None else path.parent / f"{path.stem}_images"
    if layout == "auto":
        try:
            layout = detect_format(records[0][1]) if isinstance(records[0][1], Mapping) else ""
        except ValueError as err:
            raise DatasetError(path.name, [(records[0][0], str(err))]) from None
    key = "id" if layout == "vl-rewardbench" else "ID"
    raw_ids = [str(r.get(key, f"line-{n}")) if isinstance(r, Mapping) else "" for n, r in records]
    repeated = {i for i in raw_ids if raw_ids.count(i) > 1}
    seen: dict[str, int] = defaultdict(int)
    cases, problems = [], []
    for (number, row), raw in zip(records, raw_ids, strict=True):
        case_id = raw
        if raw in repeated:
            seen[raw] += 1
            case_id = f"{raw}_{seen[raw]}"
        case, problem = _benchmark_case(row, layout, number, case_id, root, inline)
        if case is None:
            problems.append((number, problem))
        else:
            cases.append(case)
    if problems:
        raise DatasetError(path.name, problems)
    return _select(cases, ids, path.name)


def _is_pairwise(path: Path) -> bool:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    return True  # let the pairwise loader name the line
                try:
                    return not isinstance(row, Mapping) or detect_format(row) == "pairwise"
                except ValueError:
                    return True  # neither layout: the pairwise loader names what is missing
    return True


def _select(cases: list[PairCase], ids: list[str] | None, source: str) -> list[PairCase]:
    if ids is None:
        return cases
    by_id = {case.id: case for case in cases}
    missing = [i for i in ids if i not in by_id]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise DatasetError(source, [(0, f"{len(missing)} listed id(s) not in the file: {shown}")])
    return [by_id[i] for i in ids]

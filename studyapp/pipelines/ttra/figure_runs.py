"""The runs the TTRA paper's figures are drawn from (``paper_figures``): every ``results.json``
under a folder as a :class:`Run` (benchmark, model folder, variant), what ``models.json`` says of
each model (:class:`Models`), AIME's per-year split, and the score each figure reads."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Run:
    """One results.json and where it sits: benchmark, model folder, variant (the rest)."""

    path: Path
    benchmark: str
    model: str
    variant: str
    results: dict[str, Any]

    @property
    def experiment(self) -> str:
        return str(self.results.get("experiment", "ttra"))

    @property
    def seed(self) -> int | None:
        return self.results.get("options", {}).get("seed")


@dataclass
class Models:
    """What models.json says of each model folder."""

    info: dict[str, dict[str, Any]] = field(default_factory=dict)

    def group(self, model: str) -> str:
        return str(self.info.get(model, {}).get("group", model))

    def is_base(self, model: str) -> bool:
        return bool(self.info.get(model, {}).get("base", False))

    def label(self, model: str) -> str:
        return str(self.info.get(model, {}).get("label", model))

    def reported(self, model: str, benchmark: str) -> float | None:
        value = self.info.get(model, {}).get("reported", {}).get(benchmark)
        return None if value is None else float(value)


def discover(folder: Path) -> list[Run]:
    """Every ``results.json`` under ``folder``, in path order."""
    runs = []
    for path in sorted(folder.rglob("results.json")):
        parts = path.parent.relative_to(folder).parts
        if len(parts) < 2:
            raise ValueError(f"{path}: lay runs out as <benchmark>/<model>/[variant/]results.json")
        results = json.loads(path.read_text(encoding="utf-8"))
        runs.append(Run(path, parts[0], parts[1], "/".join(parts[2:]), results))
    return runs


def split_runs(runs: list[Run], splits: dict[str, list[str]]) -> list[Run]:
    """The runs with each ``ttra`` run of a split benchmark replaced by one run per id prefix,
    scored on its questions alone (§4.1 aligns on AIME 2024 and 2025 together and reports each
    year: ``{"aime": ["2024", "2025"]}`` turns the run into ``aime2024`` and ``aime2025``).
    """
    out = []
    for run in runs:
        prefixes = splits.get(run.benchmark)
        if not prefixes or run.experiment != "ttra":
            out.append(run)
            continue
        for prefix in prefixes:
            results = dict(run.results)
            for when in ("direct", "aligned"):
                rows = [
                    q
                    for q in (run.results.get(when) or {}).get("per_question", [])
                    if str(q["id"]).startswith(prefix)
                ]
                results[when] = (
                    {"avg_at_k": sum(q["avg"] for q in rows) / len(rows), "macro_avg_at_k": None}
                    if rows
                    else None
                )
            out.append(Run(run.path, f"{run.benchmark}{prefix}", run.model, run.variant, results))
    return out


def parse_splits(values: list[str]) -> dict[str, list[str]]:
    """``BENCH=PREFIX,PREFIX`` pairs.

    >>> parse_splits(["aime=2024,2025"])
    {'aime': ['2024', '2025']}
    """
    found = {}
    for value in values:
        name, sep, prefixes = value.partition("=")
        parts = [p.strip() for p in prefixes.split(",") if p.strip()]
        if not sep or not name.strip() or not parts:
            raise ValueError(f"--split takes BENCH=PREFIX,PREFIX, not {value!r}")
        found[name.strip()] = parts
    return found


def score(evaluation: dict[str, Any] | None) -> float | None:
    """An evaluation's figure in percent: the macro average over labels where there is one
    (appendix C), else avg@k.

    >>> score({"avg_at_k": 0.25, "macro_avg_at_k": None}), score({"avg_at_k": 0.2, "macro_avg_at_k": 0.5})
    (25.0, 50.0)
    """
    if not evaluation:
        return None
    value = evaluation.get("macro_avg_at_k")
    if value is None:
        value = evaluation.get("avg_at_k")
    return None if value is None else 100.0 * float(value)


def ttra_scores(runs: list[Run]) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """(model, benchmark) → (direct, after TTRA) from the ``ttra`` runs; the first run of a pair
    (the lowest seed folder) when there are several."""
    found: dict[tuple[str, str], tuple[float | None, float | None]] = {}
    for run in runs:
        if run.experiment != "ttra" or (run.model, run.benchmark) in found:
            continue
        found[run.model, run.benchmark] = (
            score(run.results.get("direct")),
            score(run.results.get("aligned")),
        )
    return found

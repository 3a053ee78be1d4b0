"""The pieces every judging method shares: prompt templates, the verdict parser, and the per-case
result whose two orders feed accuracy, consistency and pair accuracy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from studyapp.pipelines.lwe.data import PairCase
from studyapp.pipelines.lwe.llm import METHOD, Ledger, Provider, ask

PROMPTS_DIR = Path(__file__).parent / "prompts"
NAMES = tuple(sorted(p.stem for p in PROMPTS_DIR.glob("*.txt")))
# Files from a ``--prompts DIR`` that replace built-in ones of the same name (`use_prompts`).
_overrides: dict[str, Path] = {}

# ``report(fraction_done, message)`` is awaited between steps; raising from it (a cancelled job)
# stops the run, and the caller still holds everything recorded so far.
Report = Callable[[float, str], Awaitable[None]]


class PromptDirError(ValueError):
    """A prompt directory that cannot be used; the message names the files."""


def prompt_path(name: str) -> Path:
    return _overrides.get(name, PROMPTS_DIR / f"{name}.txt")


@cache
def template(name: str) -> Template:
    return Template(prompt_path(name).read_text(encoding="utf-8"))


def use_prompts(directory: str | Path | None) -> dict[str, str]:
    """Put a directory's prompt files in force (None: the built-in ones only) and return the
    sha256 of every prompt file in force.

    Files are matched by name (``vanilla.txt``, ``build_eval.txt``, …, ``$name`` placeholders);
    a ``.txt`` file whose name is not one of the built-in prompts is refused, and nothing changes.
    """
    found: dict[str, Path] = {}
    if directory is not None:
        folder = Path(directory)
        if not folder.is_dir():
            raise PromptDirError(f"--prompts {folder}: not a directory")
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        unknown = [p.name for p in files if p.suffix != ".txt" or p.stem not in NAMES]
        if unknown:
            raise PromptDirError(
                f"--prompts {folder}: unknown prompt file(s) {', '.join(unknown)}; "
                f"the names are {', '.join(n + '.txt' for n in NAMES)}"
            )
        found = {p.stem: p for p in files}
    _overrides.clear()
    _overrides.update(found)
    template.cache_clear()
    return prompt_hashes()


def prompt_hashes() -> dict[str, str]:
    """Name → sha256 of each prompt file in force, for a run's record."""
    return {name: hashlib.sha256(prompt_path(name).read_bytes()).hexdigest() for name in NAMES}


def render(name: str, **values: Any) -> str:
    """Fill a prompt template; ``$name`` placeholders, so braces in the data are harmless."""
    return template(name).substitute(**values).strip()


def case_block(case: PairCase) -> str:
    return render(
        "case", prompt=case.prompt, response_a=case.response_a, response_b=case.response_b
    )


def extract_judgment(text: str) -> str | None:
    """ "A" or "B" from a judge's reply; None when it names both or neither.

    The double-bracket form wins over the single one, and a reply carrying both double-bracket
    verdicts is rejected rather than guessed at.
    """
    if "[[A]]" in text and "[[B]]" in text:
        return None
    for marker, choice in (("[[A]]", "A"), ("[[B]]", "B"), ("[A]", "A"), ("[B]", "B")):
        if marker in text:
            return choice
    return None


def flip(choice: str | None) -> str | None:
    """A verdict on the swapped case, expressed in the original case's labels."""
    return {"A": "B", "B": "A"}.get(choice or "")


def tagged(text: str, tag: str) -> str | None:
    """The content of the last ``<tag>...</tag>`` in ``text``, stripped; None if there is none."""
    start_tag, end_tag = f"<{tag}>", f"</{tag}>"
    end = text.rfind(end_tag)
    if end == -1:
        return None
    start = text.rfind(start_tag, 0, end)
    if start == -1:
        return None
    return text[start + len(start_tag) : end].strip()


@dataclass
class CaseResult:
    """The verdicts on one case. ``first`` is the judgment in the order the dataset gives; ``second``
    the judgment with the responses swapped, already mapped back to the original labels, so a
    position-independent judge has ``first == second``."""

    id: str
    label: str
    first: str | None
    second: str | None
    path: str = "vanilla"  # which part of the method produced the verdicts ("vanilla", "lwe", ...)

    @property
    def correct(self) -> bool:
        return self.first == self.label

    @property
    def consistent(self) -> bool:
        return self.first is not None and self.first == self.second

    @property
    def pair_correct(self) -> bool:
        return self.first == self.label and self.second == self.label

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    """Everything one pass of a method over an ordered list of cases produced."""

    method: str
    order: list[str]
    results: dict[str, CaseResult] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=Ledger)
    meta_prompt: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)

    def in_order(self) -> list[CaseResult]:
        return [self.results[case_id] for case_id in self.order if case_id in self.results]


async def judge(
    provider: Provider,
    ledger: Ledger,
    prompt: str,
    *,
    purpose: str = METHOD,
    temperature: float = 0.0,
    sample: int = 0,
    step: str = "judge",
    images: Sequence[str | None] = (),
) -> tuple[str | None, str]:
    """Ask for a verdict (the case's image, when it has one, sent along); return the parsed
    choice and the raw reply."""
    text = await ask(
        provider,
        ledger,
        step,
        prompt,
        temperature=temperature,
        sample=sample,
        purpose=purpose,
        images=images,
    )
    return extract_judgment(text), text


async def no_report(fraction: float, message: str) -> None:
    return None

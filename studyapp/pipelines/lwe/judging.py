"""The pieces every judging method shares: prompt templates, the verdict parser, and the per-case
result whose two orders feed accuracy, consistency and pair accuracy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from games.llm.prompts import Catalog, PromptSetError
from studyapp.pipelines.lwe.data import PairCase
from studyapp.pipelines.lwe.llm import METHOD, Ledger, Provider, ask

PROMPTS_DIR = Path(__file__).parent / "prompts"
# The judge's prompt files, loaded, overridden (``--prompts DIR``), checked and hashed by the one
# prompt loader, ``games.llm.prompts.Catalog``: a file whose name or ``$name`` slots differ from the
# built-in one's is refused, and nothing changes.
CATALOG = Catalog(PROMPTS_DIR, where="studyapp/pipelines/lwe/prompts/ holds them all")
NAMES = CATALOG.names
PromptDirError = PromptSetError  # the loader's error, under the name this package used

# ``report(fraction_done, message)`` is awaited between steps; raising from it (a cancelled job)
# stops the run, and the caller still holds everything recorded so far.
Report = Callable[[float, str], Awaitable[None]]


def use_prompts(directory: str | Path | None) -> dict[str, str]:
    """Put a directory's prompt files in force over the built-in ones (None: the built-in ones
    only) and return the sha256 of every prompt in force (:func:`prompt_hashes`)."""
    CATALOG.use(directory)
    return prompt_hashes()


def prompt_hashes() -> dict[str, str]:
    """Name → sha256 of each prompt text in force, for a run's record."""
    return {
        name.removesuffix(".txt"): digest
        for name, digest in CATALOG.fingerprint()["sha256"].items()
    }


def raw_text(name: str) -> str:
    """A prompt's text in force, unfilled (the initial meta-prompt is itself a template's text)."""
    return CATALOG.current().texts[name]


def render(name: str, **values: Any) -> str:
    """Fill a prompt template; ``$name`` placeholders, so braces in the data are harmless."""
    return CATALOG.render(name, **values).strip()


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
    # LWE: the meta-prompt the pass started from (each change is in ``history``'s "meta_prompt")
    initial_meta_prompt: str | None = None

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

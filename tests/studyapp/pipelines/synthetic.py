"""A synthetic judge behind the loopback OpenAI-format server, for the LWE tests.

Every case ``n`` has a good and a poor response ("GOOD answer for case-n" / "POOR answer for
case-n"), so the responder can tell from the text alone which verdict a careful judge would give;
the test decides which cases the judge gets wrong on purpose, and how.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from games.llm.providers import ProviderConfig, get_provider
from studyapp.pipelines.lwe.data import PairCase
from tests.fakes.llm_server import FakeLLMServer, content_text

CASE_ID = re.compile(r"case-(\d+)")


def make_cases(labels: str) -> list[PairCase]:
    """One case per letter of ``labels`` ("ABBA..."): the letter says where the good response is."""
    cases = []
    for n, label in enumerate(labels, start=1):
        good, poor = f"GOOD answer for case-{n}", f"POOR answer for case-{n}"
        a, b = (good, poor) if label == "A" else (poor, good)
        cases.append(PairCase(f"case-{n}", f"Question number {n}?", a, b, label))
    return cases


def sent_chars(body: dict[str, Any]) -> int:
    """Characters of everything sent: the system text plus every message's text (not images)."""
    return sum(len(content_text(m.get("content"))) for m in body.get("messages", [])) + len(
        body.get("system") or ""
    )


def task_of(text: str) -> str:
    for heading, task in (
        ("# Updating the cheatsheet", "curate"),
        ("# Condensing the meta-prompt", "summarise"),
        ("# Revising the meta-prompt", "refine"),
        ("# Reflecting on a judgment", "feedback"),
        ("# Writing an evaluation prompt", "build"),
        ("# Critiquing a judgment", "critique"),
        ("# Improving the judge's instructions", "improve"),
        ("# Case to judge", "judge"),
    ):
        if heading in text:
            return task
    raise AssertionError(f"unrecognised request: {text[:200]!r}")


def judged_case(text: str) -> tuple[int, str]:
    """The case number in the last case block and where its good response sits ("A" or "B")."""
    block = text[text.rindex("# Case to judge") :]
    response_a = block[block.index("[Response A]") : block.index("[Response B]")]
    number = int(CASE_ID.search(block).group(1))
    return number, "A" if "GOOD" in response_a else "B"


@dataclass
class SyntheticJudge:
    """``biased`` cases get "A" whatever the order; ``wrong`` cases get the poor response; the rest
    the good one. ``refine``/``summarise`` produce the replies to those steps (call count -> text)."""

    biased: set[int] = field(default_factory=set)
    wrong: set[int] = field(default_factory=set)
    # Biased only under the fixed vanilla prompt; a sample-specific prompt fixes the bias.
    biased_only_vanilla: bool = False
    refine: Callable[[int], str] = lambda n: (
        f"<meta_prompt>Meta-prompt version {n}. "
        + ("Check every claim against the question. " * 20)
        + "</meta_prompt>"
    )
    summarise: Callable[[int], str] = lambda n: (
        f"<meta_prompt>Summary {n}. " + ("Be brief and exact. " * 20) + "</meta_prompt>"
    )
    replies: list[tuple[str, str, str]] = field(default_factory=list)  # (task, prompt, reply)
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> str:
        text = "\n".join(content_text(m["content"]) for m in body["messages"])
        task = task_of(text)
        with self.lock:
            self.counts[task] = self.counts.get(task, 0) + 1
            count = self.counts[task]
        if task == "judge":
            number, good = judged_case(text)
            poor = "B" if good == "A" else "A"
            biased = number in self.biased and not (
                self.biased_only_vanilla and "Instructions for case-" in text
            )
            verdict = "A" if biased else poor if number in self.wrong else good
            reply = f"Weighing both answers to case-{number}.\n[[{verdict}]]"
        elif task == "build":
            number = int(CASE_ID.search(text).group(1))
            reply = f"<evaluation_prompt>Instructions for case-{number}.</evaluation_prompt>"
        elif task == "feedback":
            number = int(CASE_ID.search(text[text.index("# Case to judge") :]).group(1))
            reply = f"- Feedback after case-{number}: look harder at facts."
        elif task == "refine":
            reply = self.refine(count)
        elif task == "critique":
            reply = "The instructions should make the judge check facts first."
        elif task == "improve":
            reply = (
                f"<improved_instructions>Judge carefully, version {count}.</improved_instructions>"
            )
        elif task == "curate":
            reply = f"<cheatsheet>Cheatsheet version {count}: check facts first.</cheatsheet>"
        else:
            reply = self.summarise(count)
        with self.lock:
            self.replies.append((task, text, reply))
        return reply

    def prompts(self, task: str) -> list[str]:
        return [prompt for kind, prompt, _ in self.replies if kind == task]


def provider_for(server: FakeLLMServer):
    """The real OpenAI-SDK provider, pointed at the loopback server, with no cache."""
    config = ProviderConfig(api_key="test", base_url=server.openai_base_url, max_retries=0)
    return get_provider("openai-compatible:synthetic-judge", config)

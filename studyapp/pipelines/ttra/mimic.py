"""MIMIC-CDM-FI cases as TTRA tasks, fitted to appendix C's 4,000-token prompts as §5.1 fits them.

``python -m studyapp.pipelines.ttra.mimic --cases CASES.jsonl --out TASKS.jsonl --tokenizer
Qwen/Qwen3-8B --summariser openai:gpt-5-nano --cache summaries.sqlite``

Each line of CASES is ``{"id", "pathology", "sections": {name: text, ...}}`` (a section's value may
also be a list of texts, as several imaging reports, or an object of ``name: value`` lines, as a
lab panel); the sections keep the file's order (appendix C's is diagnostic criteria, history,
physical examination, laboratory tests, imaging reports). For each case:

1. every section longer than ``--section-limit`` tokens (1,000; counted with ``--tokenizer``, §5.1
   counts with the Qwen3 tokenizer) is summarised by ``--summariser``, any provider of
   ``games.llm`` (the paper used GPT-5-nano), with the summary prompt: a built-in one written for
   this project after appendix C's description (``prompts/mimic/summary.txt``), or the paper's own
   text through ``--summary-prompt FILE`` (``{report}`` or ``{Report}`` marks where the section
   goes). Replies are cached in ``--cache`` (the providers' SQLite response cache), so a rerun
   asks nothing again; ``--keep-section NAME`` exempts a section (repeatable);
2. if the whole prompt (the clinical frame of ``--prompt-set s5-clinical`` around the sections,
   and the chat template with its system message unless ``--no-chat-template``) is still longer
   than ``--max-prompt-length`` (4,000, appendix C), the longest section loses its end, again
   until the prompt fits. The frame's opening instruction and closing request are never cut.

TASKS is a TTRA task file (``kind: word``, the pathology as the label) with, per case, which
sections were summarised and what was cut. Runs with ``--max-prompt-length`` at the same value
then cut nothing. The summary file and the summariser are recorded in ``TASKS.meta.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from games.llm.cache import ResponseCache
from games.llm.providers import close_clients, config_from_env, get_provider, model_options
from games.tasks import TaskFileError, json_lines
from studyapp.pipelines.ttra.prompt_files import PROMPTS_DIR, load_prompts

SUMMARY_PROMPT = PROMPTS_DIR / "mimic" / "summary.txt"
SYSTEM = "You are a helpful assistant."  # appendix C's system message (Qwen3's template)

Counter = Callable[[str], int]
Cutter = Callable[[str, int], str]
Summariser = Callable[[str], str]


@dataclass
class Case:
    id: str
    pathology: str
    sections: list[tuple[str, str]]
    summarised: list[str] = field(default_factory=list)
    cut: list[dict[str, Any]] = field(default_factory=list)


def section_text(value: object) -> str:
    """A section's value as text: a string as it is, a list's items on lines of their own, an
    object's entries as ``name: value`` lines.

    >>> section_text(["CT: appendix 9 mm", "US: no fluid"])
    'CT: appendix 9 mm\\nUS: no fluid'
    >>> section_text({"WBC": "14.2 K/uL", "CRP": 88})
    'WBC: 14.2 K/uL\\nCRP: 88'
    """
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "\n".join(section_text(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(f"{k}: {section_text(v)}" for k, v in value.items())
    return str(value)


def read_cases(path: str | Path) -> list[Case]:
    """The cases of a JSONL file; a bad line raises `TaskFileError` naming it."""
    cases = []
    for number, where, record in json_lines(path):
        if not isinstance(record, dict) or not isinstance(record.get("sections"), dict):
            raise TaskFileError(f"{where}: needs 'sections', an object of section texts")
        label = record.get("pathology", record.get("answer"))
        if not isinstance(label, str) or not label.strip():
            raise TaskFileError(f"{where}: needs 'pathology', the case's label")
        sections = [(str(k), section_text(v)) for k, v in record["sections"].items()]
        cases.append(Case(str(record.get("id", f"line-{number}")), label.strip(), sections))
    if not cases:
        raise TaskFileError(f"{path}: no cases")
    return cases


def render(sections: list[tuple[str, str]]) -> str:
    """The case text that goes into the frame's ``{question}``: each section under its name.

    >>> render([("Patient History", "Pain."), ("Imaging Reports", "CT: normal.")])
    'Patient History:\\nPain.\\n\\nImaging Reports:\\nCT: normal.'
    """
    return "\n\n".join(f"{name}:\n{text}" for name, text in sections)


def summary_prompt(path: str | Path | None = None) -> str:
    """The summary prompt's text; it must mark the report's place with {report} or {Report}."""
    text = Path(path or SUMMARY_PROMPT).read_text(encoding="utf-8")
    if "{report}" not in text and "{Report}" not in text:
        raise ValueError(f"{path}: the summary prompt needs a {{report}} slot")
    return text


def fill(prompt: str, report: str) -> str:
    return prompt.replace("{report}", report).replace("{Report}", report).rstrip() + "\n"


def summarise_long_sections(
    case: Case, count: Counter, summarise: Summariser, limit: int, keep: set[str]
) -> None:
    """Replace every section over ``limit`` tokens (but those in ``keep``) by its summary."""
    out = []
    for name, text in case.sections:
        if name not in keep and count(text) > limit:
            text = summarise(text).strip()
            case.summarised.append(name)
        out.append((name, text))
    case.sections = out


def fit(case: Case, count: Counter, cut: Cutter, room: int) -> None:
    """Cut the end of the longest section until the rendered case is at most ``room`` tokens;
    each cut is recorded (section, tokens before and after)."""
    for _ in range(10_000):
        total = count(render(case.sections))
        if total <= room:
            return
        lengths = [count(text) for _, text in case.sections]
        longest = max(range(len(lengths)), key=lambda i: lengths[i])
        if lengths[longest] == 0:
            break  # the section names alone are too long
        name, text = case.sections[longest]
        shorter = cut(text, max(lengths[longest] - (total - room), 0))
        if count(shorter) >= lengths[longest]:  # a decode that did not shorten it: one token less
            shorter = cut(text, lengths[longest] - 1)
        case.sections[longest] = (name, shorter)
        case.cut.append({"section": name, "tokens": lengths[longest], "kept": count(shorter)})
    raise ValueError(f"case {case.id}: the sections cannot be cut to {room} tokens")


def frame_overhead(tokenizer: Any, frame: str, chat: bool, system: str | None) -> int:
    """Tokens of the prompt without the case text: the frame, and the chat template with its
    system message when ``chat``."""
    text = frame.format(question="")
    if chat and getattr(tokenizer, "chat_template", None):
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": text}
        ]
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        return len(ids if isinstance(ids, list) else ids["input_ids"])
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def provider_summariser(
    spec: str,
    cache_path: str | Path | None,
    prompt: str,
    max_tokens: int | None = None,
    temperature: float = 1.0,
) -> tuple[Summariser, Callable[[], None]]:
    """A summariser calling ``spec`` through ``games.llm`` (its key and address from the
    environment, as every command's), its replies in the response cache at ``cache_path``;
    and a function that closes the clients and the cache."""

    config = replace(
        config_from_env(spec, os.environ), options=model_options(spec, max_tokens=max_tokens)
    )
    cache = ResponseCache(cache_path) if cache_path else None
    provider = get_provider(spec, config, cache=cache)
    loop = asyncio.new_event_loop()

    def summarise(report: str) -> str:
        messages = [{"role": "user", "content": fill(prompt, report)}]
        reply = loop.run_until_complete(
            provider.complete(messages, temperature=temperature, max_tokens=2048)
        )
        return reply.text

    def close() -> None:

        loop.run_until_complete(close_clients())
        loop.close()
        if cache is not None:
            cache.close()

    return summarise, close


def prepare(
    cases: list[Case],
    tokenizer: Any,
    summarise: Summariser,
    *,
    section_limit: int = 1000,
    max_prompt_length: int = 4000,
    frame: str = "{question}",
    chat: bool = True,
    system: str | None = SYSTEM,
    keep: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """Summarise, then fit, every case; the task records to write."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    def cut(text: str, keep_tokens: int) -> str:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return tokenizer.decode(ids[: max(keep_tokens, 0)]).rstrip()

    room = max_prompt_length - frame_overhead(tokenizer, frame, chat, system)
    if room <= 0:
        raise ValueError(f"the frame alone takes {max_prompt_length - room} tokens")
    records = []
    for case in cases:
        summarise_long_sections(case, count, summarise, section_limit, set(keep))
        fit(case, count, cut, room)
        question = render(case.sections)
        records.append(
            {
                "id": case.id,
                "question": question,
                "answer": case.pathology,
                "kind": "word",
                "summarised": case.summarised,
                "cut": case.cut,
                "prompt_tokens": count(question) + max_prompt_length - room,
            }
        )
    return records


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.ttra.mimic",
        description="MIMIC-CDM-FI cases to a TTRA task file: long sections summarised, then the "
        "longest section cut until appendix C's 4,000-token prompt fits.",
    )
    parser.add_argument("--cases", required=True, help="JSONL of {id, pathology, sections}.")
    parser.add_argument("--out", required=True, help="The task file to write (JSONL).")
    parser.add_argument(
        "--tokenizer", required=True, help="Tokenizer that counts tokens (§5.1: Qwen3's)."
    )
    parser.add_argument(
        "--summariser",
        required=True,
        help="Model spec of the summariser, any games.llm provider (the paper: openai:gpt-5-nano).",
    )
    parser.add_argument("--cache", help="SQLite response cache of the summaries (reused).")
    parser.add_argument(
        "--summary-prompt", help="File of the summary prompt with a {report} slot (default: ours)."
    )
    parser.add_argument("--section-limit", type=int, default=1000, help="Tokens (default 1000).")
    parser.add_argument("--max-prompt-length", type=int, default=4000, help="Default 4000.")
    parser.add_argument("--summary-max-tokens", type=int, help="The summariser's output budget.")
    parser.add_argument(
        "--summary-temperature",
        type=float,
        default=1.0,
        help="Sampling temperature of the summaries (default 1.0, the only one GPT-5-nano takes).",
    )
    parser.add_argument("--prompt-set", default="s5-clinical", help="Frame's prompt set.")
    parser.add_argument("--prompts", help="A --prompts directory, as the TTRA run's.")
    parser.add_argument(
        "--chat-template",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Count the chat template and its system message (Qwen3: yes; Gemma: --no-...).",
    )
    parser.add_argument(
        "--keep-section", action="append", default=[], help="A section never summarised."
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        cases = read_cases(args.cases)
        prompt = summary_prompt(args.summary_prompt)
        frame = load_prompts(args.prompts, args.prompt_set)["label"]
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    summarise, close = provider_summariser(
        args.summariser, args.cache, prompt, args.summary_max_tokens, args.summary_temperature
    )
    try:
        records = prepare(
            cases,
            tokenizer,
            summarise,
            section_limit=args.section_limit,
            max_prompt_length=args.max_prompt_length,
            frame=frame,
            chat=args.chat_template,
            keep=set(args.keep_section),
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    meta = {
        "cases": args.cases,
        "summariser": args.summariser,
        "summary_prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
        "summary_prompt": args.summary_prompt or "built-in (prompts/mimic/summary.txt)",
        "tokenizer": args.tokenizer,
        "section_limit": args.section_limit,
        "max_prompt_length": args.max_prompt_length,
        "chat_template": args.chat_template,
        "summarised_sections": sum(len(r["summarised"]) for r in records),
        "cut_cases": sum(1 for r in records if r["cut"]),
    }
    Path(f"{out}.meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    print(json.dumps({"tasks": len(records), **meta}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

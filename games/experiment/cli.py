"""``python -m games experiment``: one model and setting from flags, or a models × settings grid
from a TOML file. This is the one place in ``games`` that reads the environment (API keys and
``OPENAI_BASE_URL``), and it passes the values on explicitly.

Grid file (every key but ``models`` and ``settings`` is optional; flags fill what it leaves out)::

    game = "twenty-questions"
    models = ["openai:gpt-4o", "anthropic:claude-sonnet-4-5"]
    settings = ["none", "rule-policy", "experience-policy", "human-policy"]
    cases = 32
    samples = 3
    seed = 0
    out = "results.jsonl"
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from games import GAME_NAMES
from games.experience.context import SETTINGS
from games.experience.steps import MEMORY_WORD_CAP
from games.experiment.records import ResumeConflict
from games.experiment.runner import run_experiment
from games.experiment.spec import (
    DEFAULT_CASES,
    DEFAULT_EXPERIENCE_GAMES,
    DEFAULT_SAMPLES,
    EVALUATED_ROLES,
    PAPER_ROLE,
    ExperimentSpec,
    provider_configs,
    role_note,
)
from games.experiment.summary import format_summary, summarize, voided_note
from games.llm import prompts
from games.llm.cache import ResponseCache
from games.llm.providers import (
    REASONING_EFFORTS,
    close_clients,
)
from games.mathtest import GAME as MATH


def add_experiment(commands: argparse._SubParsersAction) -> None:
    """Register the ``experiment`` sub-command (called by ``games/__main__.py``)."""
    parser = commands.add_parser(
        "experiment",
        help="run the paper's evaluation protocol and write one JSONL line per game",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", type=Path, help="TOML grid of models × settings")
    parser.add_argument("--game", choices=(*GAME_NAMES, MATH))
    parser.add_argument("--math-tasks", type=Path, help="math: JSONL task file (TTRA's format)")
    parser.add_argument(
        "--math-experience-tasks",
        type=Path,
        help="math: JSONL problems the earlier games draw from (default: the test file's own)",
    )
    parser.add_argument("--model", help="model spec, e.g. openai:gpt-4o or offline:infogain")
    parser.add_argument("--oracle", help="Twenty Questions oracle spec (default: the same model)")
    parser.add_argument("--setting", choices=SETTINGS, default="none")
    parser.add_argument("--cases", type=int, default=DEFAULT_CASES, help="test cases M (32)")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, help="samples K (3)")
    parser.add_argument(
        "--rounds", type=int, help="games per sample T (default 50 for cumulative, else M)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument(
        "--experience-games", type=int, default=DEFAULT_EXPERIENCE_GAMES, help="earlier games N (5)"
    )
    parser.add_argument("--players", type=int, default=5, help="Undercover players per table")
    parser.add_argument(
        "--max-vote-rounds",
        type=int,
        help="Undercover: vote rounds before the difference wins (default: the engine's 6)",
    )
    parser.add_argument(
        "--human-policy",
        "--policy-file",
        dest="policy_file",
        type=Path,
        help="human-policy text file (default: the prompt set's human_policy_<game>.txt)",
    )
    parser.add_argument(
        "--evaluated-role",
        choices=EVALUATED_ROLES,
        help="undercover: the seat scored: difference (default, as the paper's Tables 2-4 "
        "imply), normal (a seat drawn among the others) or any (a seat drawn uniformly; with "
        "one model in every seat it wins at least 1/players of the games)",
    )
    add_common(parser)
    parser.add_argument("--name", default="experiment", help="experiment name in every record")
    parser.add_argument("--out", type=Path, help="results JSONL (appended; resumes)")
    parser.add_argument(
        "--cache", type=Path, help="response cache file (default: <out>.cache.sqlite)"
    )
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    parser.add_argument("--parallel", type=int, default=64, help="games in flight at once")
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight per provider")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per HTTP attempt")
    parser.add_argument("--max-retries", type=int, default=4, help="SDK retries per call")
    parser.add_argument(
        "--max-tokens",
        type=int,
        help="output budget per call (default: the move's own; 16384 for o1/o3/o4/gpt-5 models)",
    )
    parser.add_argument(
        "--reasoning-effort",
        choices=REASONING_EFFORTS,
        help="OpenAI reasoning models (default: medium for o1/o3/o4/gpt-5 models)",
    )
    parser.add_argument(
        "--thinking-budget", type=int, help="Anthropic extended thinking tokens (default: off)"
    )
    parser.add_argument(
        "--memory-word-cap",
        type=int,
        default=MEMORY_WORD_CAP,
        help="cumulative setting: words the curator's memory may hold (2000, near DC's)",
    )
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=run)


def specs_from_args(args: argparse.Namespace) -> tuple[list[ExperimentSpec], Path]:
    """The specs and output path from flags, with a grid file's values taking precedence."""
    grid: dict[str, Any] = {}
    if args.config is not None:
        grid = tomllib.loads(args.config.read_text(encoding="utf-8"))
    models = grid.get("models") or ([args.model] if args.model else [])
    settings = grid.get("settings") or [args.setting]
    game = grid.get("game", args.game)
    out = grid.get("out", args.out)
    if not game or not models or not out:
        raise SystemExit(
            "experiment needs --game, --model and --out (or a --config grid with them)"
        )
    policy = args.policy_file.read_text(encoding="utf-8") if args.policy_file else None
    base = ExperimentSpec(
        game=game,
        model=models[0],
        cases=grid.get("cases", args.cases),
        samples=grid.get("samples", args.samples),
        rounds=grid.get("rounds", args.rounds),
        seed=grid.get("seed", args.seed),
        oracle=grid.get("oracle", args.oracle),
        temperature=grid.get("temperature", args.temperature),
        experience_games=grid.get("experience_games", args.experience_games),
        players=grid.get("players", args.players),
        policy=policy,
        experiment=grid.get("name", args.name),
        max_tokens=grid.get("max_tokens", args.max_tokens),
        reasoning_effort=grid.get("reasoning_effort", args.reasoning_effort),
        thinking_budget=grid.get("thinking_budget", args.thinking_budget),
        memory_word_cap=grid.get("memory_word_cap", args.memory_word_cap),
        evaluated_role=resolved_role(game, grid.get("evaluated_role", args.evaluated_role)),
        max_tokens_for=args.max_tokens_for,
        tasks=str(grid.get("tasks", args.math_tasks or "")) or None,
        experience_tasks=str(grid.get("experience_tasks", args.math_experience_tasks or ""))
        or None,
        max_vote_rounds=grid.get("max_vote_rounds", args.max_vote_rounds),
    )
    # Per-model options in a grid: [options."openai:o3"] max_tokens = 32000, reasoning_effort = "high"
    per_model = grid.get("options", {})
    specs = [
        replace(base, model=m, setting=s, **per_model.get(m, {})) for m in models for s in settings
    ]
    return specs, Path(out)


def resolved_role(game: str, role: str | None) -> str | None:
    """The Undercover role to score: the one asked for, else the paper's (the difference)."""
    if game == "undercover" and role is None:
        return PAPER_ROLE
    return role


def add_common(parser: argparse.ArgumentParser) -> None:
    """Flags shared by ``experiment`` and ``reproduce``: the prompt set and per-model budgets."""
    parser.add_argument(
        "--prompts",
        type=Path,
        help="folder of prompt files replacing the shipped ones by name "
        "(python -m games prompts export DIR writes the set)",
    )
    parser.add_argument(
        "--max-tokens-for",
        action="append",
        type=budget_arg,
        default=[],
        metavar="SPEC=N",
        help="output budget per call for one model, e.g. openai-compatible:deepseek-r1=32768 "
        "(repeatable; reasoning models default to 16384)",
    )


def budget_arg(value: str) -> tuple[str, int]:
    spec, sep, number = value.rpartition("=")
    if not sep or not spec:
        raise argparse.ArgumentTypeError(f"{value!r}: expected SPEC=N")
    try:
        budget = int(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: N must be a whole number") from None
    if budget < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: N must be positive")
    return spec, budget


def use_prompts(folder: Path | None, variant: Path | None = None) -> None:
    """Put the prompt folder in force (with ``variant``'s files over it, as ``reproduce table4``
    does), or exit with the loader's message (nothing run)."""
    try:
        prompts.use(folder, variant)
    except prompts.PromptSetError as err:
        raise SystemExit(f"error: {err}") from None


def run(args: argparse.Namespace) -> int:
    use_prompts(args.prompts)
    args.max_tokens_for = tuple(args.max_tokens_for)
    try:
        specs, out = specs_from_args(args)
    except ValueError as err:  # a bad setting, role, budget or task file: nothing has run
        raise SystemExit(f"error: {err}") from None
    config_for = provider_configs(args)

    for spec in specs:  # fail on a missing OPENAI_BASE_URL before any game starts
        config_for(spec.model)
        config_for(spec.oracle_spec)
    cache = None if args.no_cache else ResponseCache(args.cache or out.with_suffix(".cache.sqlite"))

    async def experiment() -> list[dict]:
        try:
            return await run_experiment(
                specs,
                out,
                config_for=config_for,
                cache=cache,
                parallel=args.parallel,
                progress=not args.no_progress,
            )
        finally:
            await close_clients()  # before asyncio.run closes the loop under their connections

    for role in sorted({s.scored_role for s in specs if s.scored_role}):
        print(f"undercover: {role_note(role, specs[0].players)}", file=sys.stderr)
    try:
        records = asyncio.run(experiment())
    except ResumeConflict as err:
        raise SystemExit(f"error: {err}") from None
    print(format_summary(summarize(records)), file=sys.stdout)
    if voided := voided_note(records):
        print(voided, file=sys.stdout)
    return 0

"""The paper's reproduction targets as games to play: the plan, its cost and the play itself, for
``python -m analysis reproduce`` (see docs/reproduce.md), which lays the records out as the
paper's tables and figures afterwards, and for ``python -m games reproduce``, which plays here and
runs ``python -m analysis reproduce-layout`` as a process of its own. Nothing here imports
``analysis``: dependencies point from ``analysis`` to ``games``.

Targets of "How Far Can LLMs Improve from Experience? Measuring Test-Time Learning Ability in LLMs
with Human Comparison" (arXiv:2506.14448): ``table1`` (token lengths of the instruction, one
earlier game's experience and the derived policy), ``table2`` (every block and setting),
``table3`` (thinking models on Who is Undercover), ``table4`` (the role names of Who is
Undercover: the paper's neutral "difference"/"normal" against "undercover"/"civilian", through two
prompt sets) and ``figure3`` (Twenty Questions for t = 50 rounds with and without the cumulative
policy). The defaults are the paper's protocol per target (:data:`TARGET_DEFAULTS`), the
Who is Undercover seat scored included (:data:`TARGET_ROLES`: the difference's; ``--evaluated-role``).

Records land in ``DIR/<target>.jsonl`` (``table4``: one file per role naming, since a prompt set
is process-wide) with ``DIR/cache.sqlite`` beside them. A run that is stopped resumes where it
stopped: finished games are never played again, and calls already answered come from the cache.
``--dry-run`` prints the plan (games, calls, tokens, cost) and spends nothing.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from games.experiment.records import ResumeConflict, load_records, record_key
from games.experiment.runner import run_experiment
from games.experiment.spec import (
    DEFAULT_CASES,
    DEFAULT_EXPERIENCE_GAMES,
    DEFAULT_ROUNDS,
    DEFAULT_SAMPLES,
    EVALUATED_ROLES,
    PAPER_ROLE,
    ExperimentSpec,
    provider_configs,
    role_note,
)
from games.llm.providers import close_clients
from games.mathtest import GAME as MATH

TQ, UC = "twenty-questions", "undercover"
TABLE2_BLOCKS = (
    (MATH, ("none", "experience-policy")),
    (TQ, ("none", "rule-policy", "experience-policy", "human-policy")),
    (UC, ("none", "rule-policy", "experience-policy", "human-policy")),
)
TARGETS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    # Table 1: the experience (full-experience's context holds the N earlier games) and the policy
    # derived from the same earlier games (the cache serves them to the second setting).
    "table1": tuple((game, ("full-experience", "experience-policy")) for game in (TQ, UC)),
    "table2": TABLE2_BLOCKS,
    "table3": ((UC, ("none", "experience-policy", "human-policy")),),
    "table4": ((UC, ("none",)),),
    "figure3": ((TQ, ("none", "cumulative")),),
}
# The paper's protocol per target, settled from its text (docs/reproduce.md, "departures"):
# Table 2's Undercover and AIME values are multiples of 1/32 and 1/30, one run of M test cases per
# setting (its "three times" is §3.2.2's cumulative setting, Figure 3); Table 3's values are
# multiples of 0.05, one run of 20; Table 1 needs only the N earlier games and the policy, so one
# test game per sample; Table 4 scores the seat that holds the different word.
TARGET_DEFAULTS: dict[str, dict[str, Any]] = {
    "table1": {"cases": 1, "samples": DEFAULT_SAMPLES},
    "table2": {"cases": DEFAULT_CASES, "samples": 1},
    "table3": {"cases": 20, "samples": 1},
    "table4": {"cases": DEFAULT_CASES, "samples": 1},
    "figure3": {"cases": DEFAULT_CASES, "samples": DEFAULT_SAMPLES},
}
# The Undercover seat each target scores unless --evaluated-role says otherwise. The paper puts
# the same model in every seat (§4.2), so a uniformly drawn seat wins at least 1/players of the
# games (0.2 at five); seven of Table 2's twelve Undercover cells and one of Table 3's lie below
# that bound, and Appendix C's example plays the difference: the authors scored the difference.
# Table 1 measures the policies of Table 2's protocol, so it plays the same seat.
TARGET_ROLES: dict[str, str | None] = {
    "table1": PAPER_ROLE,
    "table2": PAPER_ROLE,
    "table3": PAPER_ROLE,
    "table4": PAPER_ROLE,
    "figure3": None,  # Twenty Questions only
}
# Table 4's role namings: the shipped set (the paper's neutral names) and a variant folder that
# names the roles as the paper's Appendix C contrasts them.
ROLE_NAMINGS: dict[str, Path | None] = {
    "difference": None,
    "undercover": Path(__file__).resolve().parents[1]
    / "llm"
    / "prompts"
    / "variants"
    / "undercover",
}


def record_files(target: str, out: Path) -> dict[str, Path]:
    """Where a target's records go, by prompt variant ('' when the target has one)."""
    if target == "table4":
        return {name: out / f"table4-{name}.jsonl" for name in ROLE_NAMINGS}
    return {"": out / f"{target}.jsonl"}


# Rough sizes for the dry run's estimate (not measurements): model calls per game and tokens per
# call. A Twenty Questions game asks up to 20 questions, each a questioner and an oracle call; an
# Undercover table of five gives 15 clues and 5 votes, then a clue and a vote round or two more.
CALLS_PER_GAME = {TQ: 30, UC: 32, MATH: 1}
INPUT_TOKENS = {TQ: 1400, UC: 1000, MATH: 400}
OUTPUT_TOKENS = {TQ: 250, UC: 250, MATH: 1500}
STEP_INPUT, STEP_OUTPUT = 3000, 600  # a reflection, policy derivation or curator call
REASONING_OUTPUT = 4000  # hidden or visible thinking per call of a reasoning model


@dataclass(frozen=True)
class PlanRow:
    spec: ExperimentSpec
    games: int  # test games, all samples
    earlier: int  # earlier (warm-up) games, all samples
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None  # dollars; None without a price for the model
    prompt_set: str = ""  # table4: the role naming the row is played under


def estimate(spec: ExperimentSpec, prices: dict[str, tuple[float, float]]) -> PlanRow:
    """Games, calls and tokens one spec will spend, from :data:`CALLS_PER_GAME` and friends."""
    from games.llm.providers import needs_reasoning_budget

    games = spec.samples * spec.games_per_sample
    learns = spec.setting in ("experience-policy", "full-experience")
    earlier = spec.samples * spec.experience_games if learns else 0
    per_game = CALLS_PER_GAME[spec.game]
    steps = 0
    if spec.setting == "rule-policy":
        steps = spec.samples
    elif spec.setting == "experience-policy":
        steps = earlier + spec.samples  # a reflection per earlier game, a derivation per sample
    elif spec.setting == "full-experience":
        steps = earlier  # a reflection per earlier game
    elif spec.setting == "cumulative":
        steps = games - spec.samples  # the curator after every game but the last
    calls = (games + earlier) * per_game + steps
    output_each = (
        REASONING_OUTPUT if needs_reasoning_budget(spec.model) else OUTPUT_TOKENS[spec.game]
    )
    input_tokens = (games + earlier) * per_game * INPUT_TOKENS[spec.game] + steps * STEP_INPUT
    output_tokens = (games + earlier) * per_game * output_each + steps * STEP_OUTPUT
    price = prices.get(spec.model)
    if price is None and spec.model.startswith("offline:"):
        price = (0.0, 0.0)
    cost = None if price is None else (input_tokens * price[0] + output_tokens * price[1]) / 1e6
    return PlanRow(spec, games, earlier, calls, input_tokens, output_tokens, cost)


def setting_label(row: PlanRow) -> str:
    return f"{row.spec.setting} [{row.prompt_set}]" if row.prompt_set else row.spec.setting


def format_plan(target: str, rows: list[PlanRow], done: int) -> str:
    header = f"{'task':<17} {'model':<30} {'setting':<18} {'games':>6} {'earlier':>7} {'calls':>8} {'tokens in':>11} {'tokens out':>11} {'cost $':>9}"
    lines = [f"reproduce {target}: plan (estimate; nothing is spent)", header, "-" * len(header)]
    for row in rows:
        cost = "?" if row.cost is None else f"{row.cost:.2f}"
        lines.append(
            f"{row.spec.game:<17} {row.spec.model:<30} {setting_label(row):<18} {row.games:>6} "
            f"{row.earlier:>7} {row.calls:>8} {row.input_tokens:>11,} {row.output_tokens:>11,} {cost:>9}"
        )
    known = [r.cost for r in rows if r.cost is not None]
    total_cost = f"{sum(known):.2f}" if len(known) == len(rows) else "? (pass --price SPEC=IN,OUT)"
    lines.append("-" * len(header))
    lines.append(
        f"total: {sum(r.games for r in rows)} games ({done} already finished in the output), "
        f"{sum(r.earlier for r in rows)} earlier games, {sum(r.calls for r in rows):,} calls, "
        f"{sum(r.input_tokens for r in rows):,} input and {sum(r.output_tokens for r in rows):,} "
        f"output tokens, cost ${total_cost}"
    )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``python -m analysis reproduce`` (the command lives there because it lays
    the records out with ``analysis`` after playing them here)."""
    from games.experiment.cli import add_common

    parser.add_argument("target", choices=tuple(TARGETS))
    parser.add_argument("--model", action="append", required=True, help="model spec (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="folder for records and tables")
    parser.add_argument("--math-tasks", type=Path, help="table2: JSONL math problems (AIME 2025)")
    parser.add_argument(
        "--math-experience-tasks",
        type=Path,
        help="table2: JSONL problems the earlier math games draw from (AIME 2024, say); default "
        "the test problems themselves, as the paper leaves it unsaid",
    )
    parser.add_argument(
        "--no-math", action="store_true", help="table2 without its math block (no task file)"
    )
    parser.add_argument(
        "--cases", type=int, help="test cases M (the target's default: TARGET_DEFAULTS)"
    )
    parser.add_argument(
        "--samples", type=int, help="samples (table2, table3, table4: 1; table1, figure3: 3)"
    )
    parser.add_argument(
        "--experience-games", type=int, default=DEFAULT_EXPERIENCE_GAMES, help="earlier games N (5)"
    )
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="figure3: rounds t (50)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--players", type=int, default=5, help="Undercover players per table")
    parser.add_argument(
        "--max-vote-rounds",
        type=int,
        help="Undercover: vote rounds before the game ends with the difference winning "
        "(default: the engine's 6; the paper states no cap)",
    )
    parser.add_argument(
        "--evaluated-role",
        choices=EVALUATED_ROLES,
        help="Who is Undercover: the seat scored: difference (the default of table1-table4, "
        "as the paper's numbers imply), normal, or any (a seat drawn uniformly, which wins at "
        "least 1/players of the games when one model plays every seat)",
    )
    parser.add_argument(
        "--human-policy",
        action="append",
        default=[],
        metavar="[GAME=]FILE",
        help="human-policy text for a game (twenty-questions=FILE, undercover=FILE), or FILE for "
        "every game; default: the prompt set's human_policy_<game>.txt",
    )
    parser.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="SPEC=IN,OUT",
        help="dollars per million input and output tokens, for the dry run's cost",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan; spend nothing")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--parallel", type=int, default=64, help="games in flight at once")
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight per provider")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per HTTP attempt")
    parser.add_argument("--max-retries", type=int, default=4, help="SDK retries per call")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 when a block has no scorable game (default: a warning)",
    )
    parser.add_argument(
        "--tokenizer",
        type=Path,
        help="table1: a tokenizer.json (Hugging Face tokenizers) to count tokens with; "
        "default: an estimate of one token per four characters",
    )
    add_common(parser)


def fill_defaults(args: argparse.Namespace) -> None:
    """The target's protocol where a flag was left out; a bad value exits before anything runs."""
    for name, value in TARGET_DEFAULTS[args.target].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    for name in ("cases", "samples", "rounds", "players"):
        if getattr(args, name) < 1:
            raise SystemExit(f"error: --{name} must be at least 1")
    if args.experience_games < 1:
        raise SystemExit("error: --experience-games must be at least 1")
    role = getattr(args, "evaluated_role", None)
    if role is not None and TARGET_ROLES[args.target] is None:
        raise SystemExit(f"error: --evaluated-role: {args.target} plays no Who is Undercover")
    args.evaluated_role = role or TARGET_ROLES[args.target]


def _policies(values: list[str], games: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        game, sep, path = value.partition("=")
        if not sep:
            targets, path = games, value
        elif game in (TQ, UC):
            targets = [game]
        else:
            raise SystemExit(f"error: --human-policy {value!r}: the game must be {TQ} or {UC}")
        try:
            text = Path(path).read_text(encoding="utf-8").strip()
        except OSError as err:
            raise SystemExit(f"error: --human-policy {path}: {err.strerror or err}") from None
        if not text:
            raise SystemExit(f"error: --human-policy {path}: the file is empty")
        for target in targets:
            out[target] = text
    return out


def _prices(values: list[str]) -> dict[str, tuple[float, float]]:
    out = {}
    for value in values:
        spec, sep, pair = value.rpartition("=")
        try:
            low, high = (float(x) for x in pair.split(","))
        except ValueError:
            raise SystemExit(f"error: --price {value!r}: expected SPEC=IN,OUT") from None
        if not sep or low < 0 or high < 0:
            raise SystemExit(f"error: --price {value!r}: expected SPEC=IN,OUT")
        out[spec] = (low, high)
    return out


def plan_specs(args: argparse.Namespace) -> list[ExperimentSpec]:
    """The specs of a target, in the paper's order; a bad value exits before anything runs."""
    blocks = list(TARGETS[args.target])
    if args.target == "table2":
        if args.no_math:
            blocks = [b for b in blocks if b[0] != MATH]
        elif args.math_tasks is None:
            raise SystemExit(
                "error: table2 needs --math-tasks FILE (AIME 2025 as JSONL: question, answer), "
                "or --no-math to leave the math block out"
            )
    games = [game for game, _ in blocks]
    policies = _policies(args.human_policy, [g for g in games if g != MATH])
    specs = []
    try:
        for game, settings in blocks:
            for model in args.model:
                for setting in settings:
                    specs.append(
                        ExperimentSpec(
                            game=game,
                            model=model,
                            setting=setting,
                            cases=args.cases,
                            samples=args.samples,
                            rounds=args.rounds if args.target == "figure3" else None,
                            seed=args.seed,
                            temperature=args.temperature,
                            experience_games=args.experience_games,
                            players=args.players,
                            policy=policies.get(game) if setting == "human-policy" else None,
                            experiment=f"reproduce-{args.target}",
                            evaluated_role=args.evaluated_role if game == UC else None,
                            max_tokens_for=tuple(args.max_tokens_for),
                            tasks=str(args.math_tasks) if game == MATH else None,
                            experience_tasks=str(args.math_experience_tasks)
                            if game == MATH and args.math_experience_tasks
                            else None,
                            max_vote_rounds=args.max_vote_rounds if game == UC else None,
                        )
                    )
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    return specs


def play(args: argparse.Namespace) -> bool:
    """Play a target's games into its record files (:func:`record_files`), or with ``--dry-run``
    print the plan and spend nothing. True when games were played (the layout may follow)."""
    from games.experiment.cli import use_prompts

    fill_defaults(args)
    use_prompts(args.prompts)
    specs = plan_specs(args)
    files = record_files(args.target, args.out)
    if args.dry_run:
        keys = {(s.game, s.model, s.setting) for s in specs}
        done = sum(
            1
            for path in files.values()
            if path.exists()
            for r in load_records(path)
            if record_key(r)[:3] in keys
        )
        rows = [
            replace(estimate(spec, _prices(args.price)), prompt_set=variant)
            for variant in files
            for spec in specs
        ]
        print(format_plan(args.target, rows, done))
        if args.evaluated_role:
            print(
                f"Who is Undercover, {args.players} players: {role_note(args.evaluated_role, args.players)} (--evaluated-role {args.evaluated_role})"
            )
        return False
    config_for = provider_configs(args)
    try:
        for spec in specs:  # a missing OPENAI_BASE_URL fails before any game starts
            config_for(spec.model)
            config_for(spec.oracle_spec)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    from games.llm.cache import ResponseCache

    cache = None if args.no_cache else ResponseCache(args.out / "cache.sqlite")
    for variant, path in files.items():
        if variant:  # table4: the role naming's files over the user's (or the shipped) set
            use_prompts(args.prompts, ROLE_NAMINGS[variant])

        async def one(records_path: Path = path) -> list[dict[str, Any]]:
            try:
                return await run_experiment(
                    specs,
                    records_path,
                    config_for=config_for,
                    cache=cache,
                    parallel=args.parallel,
                    progress=not args.no_progress,
                )
            finally:
                await close_clients()

        try:
            asyncio.run(one())
        except ResumeConflict as err:
            raise SystemExit(f"error: {err}") from None
    use_prompts(args.prompts)
    return True


def run(args: argparse.Namespace) -> int:
    """``python -m games reproduce``: play here, then hand the records to ``python -m analysis
    reproduce-layout`` in a process of its own (``games`` imports no ``analysis``); its exit
    status is the command's. ``python -m analysis reproduce`` does the same in one process."""
    import os
    import subprocess
    import sys

    if not play(args):
        return 0  # a dry run
    command = [sys.executable, "-m", "analysis", "reproduce-layout", args.target]
    command += ["--out", str(args.out)]
    if args.strict:
        command.append("--strict")
    if args.tokenizer is not None:
        command += ["--tokenizer", str(args.tokenizer)]
    root = str(Path(__file__).resolve().parents[2])  # the checkout that holds games and analysis
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    sys.stdout.flush()
    return subprocess.run(command, env={**os.environ, "PYTHONPATH": path}, check=False).returncode

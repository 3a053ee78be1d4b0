"""``python -m games reproduce``: one command per table and figure of the test-time learning paper
("How Far Can LLMs Improve from Experience? Measuring Test-Time Learning Ability in LLMs with
Human Comparison").

    python -m games reproduce table2 --model SPEC [--model SPEC ...] --math-tasks FILE --out DIR
    python -m games reproduce table3 --model openai:o1 --model openai-compatible:deepseek-r1 --out DIR
    python -m games reproduce figure3 --model SPEC [--model SPEC ...] --out DIR

``table2`` plays every block of Table 2 (single-turn math: none and experience-policy; Twenty
Questions and Who is Undercover: none, rule-policy, experience-policy, human-policy), ``table3``
Who is Undercover for thinking models (none, experience-policy, human-policy), ``figure3`` Twenty
Questions for t = 50 rounds with and without the cumulative policy. The paper's protocol is the
default: N = 5 earlier games, M = 32 test cases, 3 samples, temperature 1.

Everything lands in DIR: ``<target>.jsonl`` (one record per game, appended), ``cache.sqlite``
(every model reply), and the outputs: ``<target>.csv`` (task, setting, model, score, improve_pct,
ci_low, ci_high, n), ``<target>.md`` and ``<target>.tex`` in the paper's layout, and for figure3
``figure3.png/.svg/.pdf`` with the data drawn. A run that is stopped resumes where it stopped:
finished games are never played again, and calls already answered come from the cache.
``--dry-run`` prints the plan (games, calls, tokens, cost) and spends nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games.experiment.records import load_records, record_key
from games.experiment.runner import run_experiment
from games.experiment.spec import (
    DEFAULT_CASES,
    DEFAULT_EXPERIENCE_GAMES,
    DEFAULT_ROUNDS,
    DEFAULT_SAMPLES,
    ExperimentSpec,
    provider_configs,
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
    "table2": TABLE2_BLOCKS,
    "table3": ((UC, ("none", "experience-policy", "human-policy")),),
    "figure3": ((TQ, ("none", "cumulative")),),
}

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


def estimate(spec: ExperimentSpec, prices: dict[str, tuple[float, float]]) -> PlanRow:
    """Games, calls and tokens one spec will spend, from :data:`CALLS_PER_GAME` and friends."""
    from games.llm.providers import needs_reasoning_budget

    games = spec.samples * spec.games_per_sample
    earlier = spec.samples * spec.experience_games if spec.setting == "experience-policy" else 0
    per_game = CALLS_PER_GAME[spec.game]
    steps = 0
    if spec.setting == "rule-policy":
        steps = spec.samples
    elif spec.setting == "experience-policy":
        steps = earlier + spec.samples  # a reflection per earlier game, a derivation per sample
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


def format_plan(target: str, rows: list[PlanRow], done: int) -> str:
    header = f"{'task':<17} {'model':<30} {'setting':<18} {'games':>6} {'earlier':>7} {'calls':>8} {'tokens in':>11} {'tokens out':>11} {'cost $':>9}"
    lines = [f"reproduce {target}: plan (estimate; nothing is spent)", header, "-" * len(header)]
    for row in rows:
        cost = "?" if row.cost is None else f"{row.cost:.2f}"
        lines.append(
            f"{row.spec.game:<17} {row.spec.model:<30} {row.spec.setting:<18} {row.games:>6} "
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


def add_reproduce(commands: argparse._SubParsersAction) -> None:
    """Register ``reproduce`` (called by ``games/__main__.py``)."""
    from games.experiment.cli import add_common

    parser = commands.add_parser(
        "reproduce",
        help="one command per table of the test-time learning paper (table2, table3, figure3)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", choices=tuple(TARGETS))
    parser.add_argument("--model", action="append", required=True, help="model spec (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="folder for records and tables")
    parser.add_argument("--math-tasks", type=Path, help="table2: JSONL math problems (AIME 2025)")
    parser.add_argument(
        "--no-math", action="store_true", help="table2 without its math block (no task file)"
    )
    parser.add_argument("--cases", type=int, default=DEFAULT_CASES, help="test cases M (32)")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, help="samples (3)")
    parser.add_argument(
        "--experience-games", type=int, default=DEFAULT_EXPERIENCE_GAMES, help="earlier games N (5)"
    )
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="figure3: rounds t (50)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--players", type=int, default=5, help="Undercover players per table")
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
    add_common(parser)
    parser.set_defaults(func=run)


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
                            max_tokens_for=tuple(args.max_tokens_for),
                            tasks=str(args.math_tasks) if game == MATH else None,
                        )
                    )
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    return specs


def write_outputs(target: str, records: list[dict[str, Any]], out: Path) -> list[Path]:
    """The target's CSV, Markdown and LaTeX table (and figure3's figure) from its records, all
    through :func:`analysis.summary.summarize` (whose Table 2 is
    :func:`games.experiment.summary.table2`).

    The one place where ``games`` imports ``analysis`` (dependencies otherwise point from
    ``analysis`` to ``games``): a command's last step, importing lazily, so the paper's layout and
    Figure 3 are drawn by the code that draws them everywhere else."""
    from analysis import frames
    from analysis.plots import save_figure
    from analysis.report import cumulative_figure, table_latex, table_markdown
    from analysis.safe_csv import safe_frame
    from analysis.summary import summarize

    summary = summarize(frames.games_frame(records))
    written = [out / f"{target}.csv", out / f"{target}.md", out / f"{target}.tex"]
    safe_frame(summary.rows).to_csv(written[0], index=False)
    written[1].write_text(table_markdown(summary.table, summary.differences), encoding="utf-8")
    written[2].write_text(table_latex(summary.table, summary.differences), encoding="utf-8")
    if target == "figure3":
        made = cumulative_figure(summary, TQ)
        if made is not None:
            written += save_figure(made[0], out / "figure3", made[1])
    return written


def run(args: argparse.Namespace) -> int:
    from games.experiment.cli import use_prompts

    for name in ("cases", "samples", "rounds", "players"):
        if getattr(args, name) < 1:
            raise SystemExit(f"error: --{name} must be at least 1")
    if args.experience_games < 1:
        raise SystemExit("error: --experience-games must be at least 1")
    use_prompts(args.prompts)
    specs = plan_specs(args)
    records_path = args.out / f"{args.target}.jsonl"
    if args.dry_run:
        done = 0
        if records_path.exists():
            keys = {(s.game, s.model, s.setting) for s in specs}
            done = sum(1 for r in load_records(records_path) if record_key(r)[:3] in keys)
        rows = [estimate(spec, _prices(args.price)) for spec in specs]
        print(format_plan(args.target, rows, done))
        return 0
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

    async def play() -> list[dict[str, Any]]:
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

    records = asyncio.run(play())
    for path in write_outputs(args.target, records, args.out):
        print(path)
    print((args.out / f"{args.target}.md").read_text(encoding="utf-8"), file=sys.stdout)
    return 0

"""``python -m analysis reproduce``: the test-time learning paper's tables and figures, played by
``games`` (:mod:`games.experiment.reproduce`) and laid out here, so ``games`` imports no
``analysis``.

    python -m analysis reproduce TARGET --model SPEC [...] --out DIR [--dry-run]
    python -m analysis reproduce-layout TARGET --out DIR   (the layout of records already there)

Targets: ``table1`` (token lengths), ``table2``, ``table3``, ``table4`` (role names) and
``figure3``. Each writes ``<target>.csv`` (the table), ``<target>.md`` and, for the tables in the
paper's Table 2 layout, ``<target>.tex``; ``figure3`` draws its curves into
``figure3_curves.png/.svg/.pdf`` with the data drawn in ``figure3_curves.csv``, apart from the table.

A block (task, setting, model) whose games were all voided (the oracle failed, or failed model calls
ended the game: an Undercover seat or a questioner failing three times in a row) is not
dropped: it is shown with "–", n = 0 and the reason, and the command warns (exit 1 with
``--strict``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import frames
from analysis.plots import save_figure
from analysis.report import (
    GAME_LABELS,
    SETTING_LABELS,
    cumulative_figure,
    table_latex,
    table_markdown,
)
from analysis.reproduce_figure4 import add_command as add_figure4
from analysis.safe_frames import safe_frame
from analysis.summary import summarize
from games.experiment import reproduce as plan
from games.experiment.records import load_records
from games.experiment.spec import role_note
from games.experiment.summary import (
    TABLE2_COLUMNS,
    is_scored,
    oracle_failed,
    void_reason,
    wilson,
)

TABLE_COLUMNS = (*TABLE2_COLUMNS, "played", "note")
TABLE1_COLUMNS = ("task", "model", "part", "tokens", "sd", "n", "counted_with")
TABLE4_COLUMNS = ("role_names", "model", "games", "wins", "win_rate", "ci_low", "ci_high", "note")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """``reproduce`` and ``reproduce-layout`` (called by ``analysis/__main__.py``)."""
    parser = commands.add_parser(
        "reproduce",
        help="play and lay out one table or figure of the test-time learning paper",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plan.add_arguments(parser)
    parser.set_defaults(func=run)
    layout = commands.add_parser(
        "reproduce-layout", help="lay out a reproduce target's records already in --out"
    )
    layout.add_argument("target", choices=tuple(plan.TARGETS))
    layout.add_argument("--out", type=Path, required=True)
    layout.add_argument("--strict", action="store_true")
    layout.add_argument("--tokenizer", type=Path)
    layout.set_defaults(func=run_layout)
    add_figure4(commands)


def run(args: argparse.Namespace) -> int:
    if not plan.play(args):
        return 0  # a dry run
    return run_layout(args)


def run_layout(args: argparse.Namespace) -> int:
    files = plan.record_files(args.target, args.out)
    if not any(path.exists() for path in files.values()):
        print(f"error: no records of {args.target} in {args.out}", file=sys.stderr)
        return 2
    written, warnings = write_outputs(args.target, args.out, tokenizer=args.tokenizer)
    for path in written:
        print(path)
    print((args.out / f"{args.target}.md").read_text(encoding="utf-8"))
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 1 if warnings and args.strict else 0


def read(target: str, out: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        variant: load_records(path) if path.exists() else []
        for variant, path in plan.record_files(target, out).items()
    }


def write_outputs(
    target: str, out: Path, tokenizer: Path | None = None
) -> tuple[list[Path], list[str]]:
    """Every output of ``target`` from the records in ``out``; the paths and the warnings (one
    per block that has no scorable game)."""
    records = read(target, out)
    if target == "table1":
        return write_table1(records[""], out, tokenizer)
    if target == "table4":
        return write_table4(records, out)
    return write_table(target, records[""], out)


# --- Table 2's layout (table2, table3, figure3) --------------------------------------------------


def voided_reason(records: list[dict[str, Any]]) -> str:
    """Why the unscored games of a block were not scored, most frequent reason first, with the
    first error of a game a model's failures ended (the oracle's, an Undercover seat's)."""
    errors: Counter[str] = Counter()
    for record in records:
        reason = void_reason(record)
        if reason is None:
            continue
        failures = record.get("failures") or []
        first = str(failures[0].get("error", "")) if failures else ""
        if len(first) > 160:
            first = first[:160].rsplit(" ", 1)[0] + " …"
        failed = oracle_failed(record) or record.get("ended") == "model_failed"
        errors[f"{reason}: {first}" if failed and first else reason] += 1
    return "; ".join(f"{what}: {n}" for what, n in errors.most_common(3))


def leaks_test_problems(records: list[dict[str, Any]]) -> bool:
    """Whether a math block's earlier games were drawn from its own test problems."""
    return any(
        r["game"] == "math" and r.get("experience_games") and not r.get("experience_tasks")
        for r in records
    )


def ended_at_cap(record: dict[str, Any]) -> bool:
    """Whether an Undercover game ended because its vote rounds ran out (the engine's cap)."""
    outcome = record.get("outcome") or {}
    return any(isinstance(v, dict) and v.get("end") == "vote_cap" for v in outcome.values())


def block_notes(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Per (task, setting, model): games played, games scored and a note when some were voided;
    a warning for each block with none scored."""
    blocks: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        blocks[(record["game"], record["setting"], record["model"])].append(record)
    from games.experience.context import SETTINGS

    def paper_order(key: tuple[str, str, str]) -> tuple[int, str, int]:
        game, setting, model = key
        rank = SETTINGS.index(setting) if setting in SETTINGS else len(SETTINGS)
        return plan_order(game), model, rank

    notes, warnings = [], []
    for game, setting, model in sorted(blocks, key=paper_order):
        group = blocks[(game, setting, model)]
        scored = sum(1 for r in group if is_scored(r))
        capped = sum(1 for r in group if is_scored(r) and ended_at_cap(r))
        note = f"{capped} of {scored} ended at the vote cap" if capped else ""
        if leaks_test_problems(group):
            leak = "earlier games drawn from the test problems (--math-experience-tasks)"
            note = f"{note}; {leak}" if note else leak
        if scored < len(group):
            reason = voided_reason(group)
            voided = f"{len(group) - scored} of {len(group)} games voided ({reason})"
            note = f"{voided}; {note}" if note else voided
            if scored == 0:
                note = f"no scorable game: all {len(group)} voided ({reason})"
                warnings.append(
                    f"{GAME_LABELS.get(game, game)}, {SETTING_LABELS.get(setting, setting)}, "
                    f"{model}: {note}"
                )
        notes.append(
            {"task": game, "setting": setting, "model": model, "played": len(group),
             "scored": scored, "note": note, "role": scored_roles(group)}
        )  # fmt: skip
    return notes, warnings


def scored_roles(records: list[dict[str, Any]]) -> str:
    """Which Undercover seat a block's games scored, as its note says it ("" for other games);
    a record without ``evaluated_role`` was written before the option and scored any seat."""
    texts = {
        role_note(r.get("evaluated_role") or "any", int(r["config"].get("players") or 5))
        for r in records
        if r["game"] == plan.UC
    }
    return "; ".join(sorted(texts))


def full_note(note: dict[str, Any]) -> str:
    """A block's note in the CSV: the seat scored first (Undercover), then the games' notes."""
    return "; ".join(part for part in (note.get("role", ""), note["note"]) if part)


def with_voided(table: pd.DataFrame, notes: list[dict[str, Any]]) -> pd.DataFrame:
    """The settings table with a row of "–" for every block played but never scored, in the
    paper's order of games and settings."""
    missing = [n for n in notes if n["scored"] == 0]
    if not missing:
        return table
    columns = list(table.columns)
    for note in missing:
        if note["model"] not in columns:
            columns.append(note["model"])
    keys = list(table.index)
    for note in missing:
        key = (note["task"], note["setting"], "mean")
        if key not in keys:
            keys.append(key)
    games = list(dict.fromkeys([k[0] for k in table.index] + [n["task"] for n in notes]))
    games.sort(key=lambda g: plan_order(g))
    from games.experience.context import SETTINGS

    def order(key: tuple[str, str, str]) -> tuple[int, int, int]:
        game, setting, row = key
        rank = SETTINGS.index(setting) if setting in SETTINGS else len(SETTINGS)
        return games.index(game), rank, 0 if row == "mean" else 1

    index = pd.MultiIndex.from_tuples(sorted(keys, key=order), names=["game", "setting", "row"])
    return table.reindex(index=index, columns=columns)


def plan_order(game: str) -> int:
    order = [g for g, _ in plan.TABLE2_BLOCKS]
    return order.index(game) if game in order else len(order)


def notes_markdown(notes: list[dict[str, Any]]) -> str:
    lines = [
        f"- {GAME_LABELS.get(n['task'], n['task'])}, {SETTING_LABELS.get(n['setting'], n['setting'])}, "
        f"{n['model']}: n = {n['scored']} of {n['played']}; {n['note']}"
        for n in notes
        if n["note"]
    ]
    roles = sorted({n["role"] for n in notes if n.get("role")})
    said = "".join(f"\nWho is Undercover, {role}.\n" for role in roles)
    return said + (
        (
            "\n**Notes** (voided games are not scored and counted in no n):\n\n"
            + "\n".join(lines)
            + "\n"
        )
        if lines
        else ""
    )


def write_table(
    target: str, records: list[dict[str, Any]], out: Path
) -> tuple[list[Path], list[str]]:
    summary = summarize(frames.games_frame(records))
    notes, warnings = block_notes(records)
    by_block = {(n["task"], n["setting"], n["model"]): n for n in notes}
    rows = summary.rows.to_dict("records") if len(summary.rows) else []
    for row in rows:
        note = by_block.get((row["task"], row["setting"], row["model"]))
        row["played"] = note["played"] if note else row["n"]
        row["note"] = full_note(note) if note else ""
    for note in notes:
        if note["scored"] == 0:
            rows.append(
                {"task": note["task"], "setting": note["setting"], "model": note["model"],
                 "score": None, "improve_pct": None, "ci_low": None, "ci_high": None, "n": 0,
                 "played": note["played"], "note": full_note(note)}
            )  # fmt: skip
    table = with_voided(summary.table, notes)
    written = [out / f"{target}.csv", out / f"{target}.md", out / f"{target}.tex"]
    safe_frame(pd.DataFrame(rows, columns=list(TABLE_COLUMNS))).to_csv(written[0], index=False)
    markdown = table_markdown(table, summary.differences) if len(table) else ""
    written[1].write_text(markdown + notes_markdown(notes), encoding="utf-8")
    latex = table_latex(table, summary.differences) if len(table) else ""
    latex += "".join(
        f"% {n['task']}, {n['setting']}, {n['model']}: {full_note(n)}\n"
        for n in notes
        if full_note(n)
    )
    written[2].write_text(latex, encoding="utf-8")
    if target == "figure3":
        made = cumulative_figure(summary, plan.TQ)
        if made is not None:
            written += save_figure(made[0], out / "figure3_curves", made[1])
    return written, warnings


# --- Table 1: token lengths ---------------------------------------------------------------------


def token_counter(tokenizer: Path | None) -> tuple[Callable[[str], int], str]:
    """A function counting a text's tokens, and how it counts (for the table's column)."""
    if tokenizer is None:
        return (lambda text: math.ceil(len(text) / 4)), "estimate: characters / 4"
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise SystemExit("error: --tokenizer needs the tokenizers package") from None
    try:
        loaded = Tokenizer.from_file(str(tokenizer))
    except Exception as err:  # the library raises a bare Exception on a bad file
        raise SystemExit(f"error: --tokenizer {tokenizer}: {err}") from None
    return (lambda text: len(loaded.encode(text).ids)), f"tokenizer {tokenizer.name}"


def instruction_text(game: str, config: dict[str, Any]) -> str:
    """What a player reads in the ``none`` setting: the rules and the role's instructions."""
    from games.llm import prompts, render

    role = "twenty_questions_questioner" if game == plan.TQ else "undercover_player"
    return render.rules_for_config(game, config) + "\n\n" + prompts.text(role)


def write_table1(
    records: list[dict[str, Any]], out: Path, tokenizer: Path | None
) -> tuple[list[Path], list[str]]:
    """Per task and model: mean tokens of the instruction, of one earlier game's experience
    (dialogue, reward and reflection: the full-experience context divided by its N games) and of
    the derived policy, with their standard deviation and count."""
    count, how = token_counter(tokenizer)
    parts: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    seen: set[tuple[str, str, str, int]] = set()
    for record in records:
        key = (record["game"], record["model"], record["setting"], record["sample"])
        if key in seen:  # one policy per sample, shared by its test games
            continue
        seen.add(key)
        game, model = record["game"], record["model"]
        if record["setting"] == "full-experience" and record.get("policy"):
            n_games = int(record.get("experience_games") or plan.DEFAULT_EXPERIENCE_GAMES)
            parts[(game, model, "experience")].append(round(count(record["policy"]) / n_games))
            parts[(game, model, "instruction")].append(
                count(instruction_text(game, record["config"]))
            )
        elif record["setting"] == "experience-policy" and record.get("policy"):
            parts[(game, model, "policy")].append(count(record["policy"]))
    rows = []
    for (game, model, part), values in sorted(
        parts.items(),
        key=lambda kv: (
            plan_order(kv[0][0]),
            kv[0][1],
            ("instruction", "experience", "policy").index(kv[0][2]),
        ),
    ):
        mean = sum(values) / len(values)
        sd = (
            math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            if len(values) > 1
            else None
        )
        rows.append(
            dict(zip(TABLE1_COLUMNS, (game, model, part, mean, sd, len(values), how), strict=True))
        )
    frame = pd.DataFrame(rows, columns=list(TABLE1_COLUMNS))
    written = [out / "table1.csv", out / "table1.md"]
    safe_frame(frame).to_csv(written[0], index=False)
    lines = [
        "| Task | Model | Instruction | Experience | Policy |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for (game, model), block in frame.groupby(["task", "model"], sort=False):
        cells = {r.part: f"{r.tokens:.0f}" for r in block.itertuples()}
        lines.append(
            f"| {GAME_LABELS.get(game, game)} | {model} | "
            + " | ".join(cells.get(p, "–") for p in ("instruction", "experience", "policy"))
            + " |"
        )
    lines.append(f"\nTokens counted with: {how}. Experience: one earlier game (its dialogue, reward "
                 "and reflection); the paper's Table 1 is 463 / 1011 / 243 (Twenty Questions) and "
                 "341 / 2356 / 261 (Who is Undercover).")  # fmt: skip
    roles = scored_roles(records)
    if roles:
        lines.append(f"Who is Undercover's games (the earlier ones included): {roles}.")
    written[1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written, []


# --- Table 4: role names ------------------------------------------------------------------------


def write_table4(
    records: dict[str, list[dict[str, Any]]], out: Path
) -> tuple[list[Path], list[str]]:
    """Per role naming and model: the games of the seat holding the different word, its wins and
    win rate with Wilson's 95% interval."""
    rows, warnings = [], []
    roles: set[str] = set()
    for naming, group in records.items():
        by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in group:
            by_model[record["model"]].append(record)
        for model, games in by_model.items():
            scored = [r for r in games if is_scored(r)]
            wins = sum(1 for r in scored if r.get("win"))
            role = scored_roles(games)
            note = role
            if len(scored) < len(games):
                voided = f"{len(games) - len(scored)} of {len(games)} voided"
                note = f"{role}; {voided} ({voided_reason(games)})"
            roles.add(role)
            if not scored:
                warnings.append(f"table4, {naming}, {model}: no scorable game")
                rows.append((naming, model, 0, 0, None, None, None, note))
                continue
            low, high = wilson(wins, len(scored))
            rows.append((naming, model, len(scored), wins, wins / len(scored), low, high, note))
    frame = pd.DataFrame(rows, columns=list(TABLE4_COLUMNS))
    written = [out / "table4.csv", out / "table4.md"]
    safe_frame(frame).to_csv(written[0], index=False)
    lines = [
        "| Role names | Model | Games | Wins | Win rate | 95% interval | Note |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for r in frame.itertuples():
        rate = "–" if pd.isna(r.win_rate) else f"{r.win_rate:.4f}"
        interval = "" if pd.isna(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        names = "undercover / civilians" if r.role_names == "undercover" else "difference / normal"
        note = str(r.note).replace("|", "/")
        lines.append(
            f"| {names} | {r.model} | {r.games} | {r.wins} | {rate} | {interval} | {note} |"
        )
    lines.append(
        f"\nWho is Undercover, {'; '.join(sorted(roles)) or 'no games'} (the default: the seat "
        "holding the different word). The paper's Table 4 quotes DeepSeek-R1's thinking under "
        "each naming; this table measures the effect as the scored seat's win rate."
    )
    written[1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written, warnings

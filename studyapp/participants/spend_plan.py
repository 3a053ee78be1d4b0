"""A study's plan of spend before anyone is paid (``manage.py study plan SLUG --places N``, and
the study's admin page): the games its places will play, the model calls, input and output tokens
each model will make and what they cost, Prolific's share, and how long a person takes.

How the plan counts (docs/participants.md, Launching a study):

- **Places to tables.** Each place plays the study's rounds. The places are shared among the arms
  (by their quotas, else evenly); an arm's round seats its people ``p`` to a table, so a round of
  ``n`` people opens ``ceil(n / p)`` tables, and a place left empty there is played by the
  design's replacement agent (which may be a model).
- **Calls per table.** Once the study has finished tables of its own (pilots' included), a table
  makes the calls, and each call the tokens, that those tables made on average, per model. Before
  that, from the design: an Undercover game is played by the engine with offline agents at every
  seat whose votes fall at random among the others (voters no better than chance, so the game
  runs longer than at most real tables: the plan errs towards spending more), counting each
  seat's turns (clues in every speaking round, ballots in every vote round, a tie's new vote
  included), over :data:`SIMULATED_GAMES` games of the study's own cases; a Twenty Questions game
  is planned at its cap (``max_questions`` questions, each one call of a model questioner and
  one of a model oracle), the longest it can be. Each model turn is one call (an illegal move's
  retry is a further call; the measured figures include them).
- **Tokens per call** before any measurement: :data:`TOKENS_PER_CALL` by game.
- **Cost** at the study's prices (:mod:`studyapp.participants.prices`); a model without a price
  says so and leaves the total unknown.
- **Prolific**: reward × places plus Prolific's fee, from Prolific's cost calculator when a token
  is set (``studyapp.participants.prolific.launch``), else at ``PROLIFIC_FEE_RATE``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache

from games import get_engine
from games.agents import make_agent
from games.cases import case_config
from games.runner import play_game
from studyapp.participants import design as designs
from studyapp.participants import prices, spend, table_study
from studyapp.participants.models import MINUTES_SETUP, Study
from studyapp.participants.models.validation import currency_decimals

# Games the engine plays to learn an Undercover design's length (the study's first cases).
SIMULATED_GAMES = 24
# Finished tables a study needs before the plan takes its own measured figures.
MEASURED_TABLES = 3
# Tokens per model call before the study has measured its own: a prompt carries the rules, the
# game so far and the seat's instructions; a reply is a clue, a ballot, a question or an answer.
TOKENS_PER_CALL = {"undercover": (1000, 120), "twenty-questions": (1400, 60)}
# How long a plan the pages show is kept (its key changes with what it depends on).
SHOWN_PLAN_SECONDS = 300


class _ChanceVoter:
    """An offline Undercover player (its clues the offline agent's) whose ballot falls at random
    among the other seats still in the game."""

    def __init__(self, inner: Any, rng: random.Random) -> None:
        self.inner, self.rng = inner, rng

    async def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        if observation["phase"] == "vote":
            others = [seat for seat in observation["alive"] if seat != observation["seat"]]
            return {"type": "vote", "target": self.rng.choice(others) if others else None}
        return await self.inner.act(observation)


def turns_per_seat(study: Study, design: dict[str, Any]) -> list[float]:
    """The turns each seat of ``design`` takes in an average game (see the module's note)."""
    seats = len(design["seats"])
    if study.game == "twenty-questions":
        limit = float(case_config(study.game, study.seed, 0).get("max_questions", 20))
        return [limit] * seats
    engine = get_engine(study.game)
    totals: Counter[int] = Counter()
    for case in range(SIMULATED_GAMES):
        config = case_config(study.game, study.seed, case, players=seats)
        roles = engine.seats(config)
        rng = random.Random(f"{study.seed}:{case}")
        agents = {
            seat: _ChanceVoter(
                make_agent("offline:kb", game=study.game, role=roles[seat], seed=case * 31 + seat),
                rng,
            )
            for seat in range(seats)
        }
        _, events = asyncio.run(play_game(engine, config, agents))
        for event in events:
            if event.get("seat") is not None:
                totals[int(event["seat"])] += 1
    return [totals[seat] / SIMULATED_GAMES for seat in range(seats)]


def arm_shares(study: Study, arms: list[tuple[str, dict[str, Any]]]) -> list[float]:
    """Each arm's share of the places: by the conditions' quotas where every arm has one, else
    even."""
    quotas = {c.name: c.quota for c in study.conditions.all()}
    given = [quotas.get(name) or 0 for name, _ in arms]
    if all(given) and sum(given):
        return [q / sum(given) for q in given]
    return [1 / len(arms)] * len(arms)


def tables_of(
    places: int, rounds: int, arms: list[tuple[str, dict[str, Any]]], shares: list[float]
):
    """Per arm: (tables, empty person places) over all rounds for ``places`` people."""
    found = []
    left = places
    for index, ((_, design), share) in enumerate(zip(arms, shares, strict=True)):
        people = left if index == len(arms) - 1 else round(places * share)
        left -= people
        per_table = max(len(designs.person_seats(design)), 1)
        tables = math.ceil(people / per_table) if people > 0 else 0
        found.append((tables * rounds, (tables * per_table - people) * rounds))
    return found


def _money(amount: Decimal, currency: str) -> Decimal:
    places = currency_decimals(currency)
    return amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def model_plan(study: Study, places: int) -> dict[str, Any]:
    """Games, calls and tokens per model for ``places`` people, and where the figures came from."""
    arms = designs.arm_designs(study)
    if not arms:
        raise ValueError(
            f"study {study.slug}: its design cannot be played, so nothing can be planned"
        )
    rounds = max(int(study.rounds), 1)
    shares = arm_shares(study, arms)
    counts = tables_of(places, rounds, arms, shares)
    games = sum(tables for tables, _ in counts)
    measured = spend.per_table(study)
    finished = (
        spend.study_tables(study)
        .filter(status="finished")
        .exclude(options__has_key=table_study.BUDGET_STAND_IN)
        .count()
    )
    calls: dict[str, float] = defaultdict(float)
    tokens_in: dict[str, float] = defaultdict(float)
    tokens_out: dict[str, float] = defaultdict(float)
    if finished >= MEASURED_TABLES and measured:
        source = f"measured: the study's {finished} finished tables"
        for spec, per in measured.items():
            calls[spec] += per["calls"] * games
            tokens_in[spec] += per["input_tokens"] * games
            tokens_out[spec] += per["output_tokens"] * games
        specs = {spec for _, spec, _ in designs.model_specs(study) if not prices.is_free(spec)}
        for spec in specs - set(measured):
            calls[spec] += 0.0  # in the design, never called at the measured tables
    else:
        source = (
            f"estimated from the design ({SIMULATED_GAMES} simulated games a design)"
            if study.game == "undercover"
            else "estimated from the design (every game at its question cap)"
        )
        per_in, per_out = TOKENS_PER_CALL[study.game]
        for (_, design), (tables, empty) in zip(arms, counts, strict=True):
            if not tables:
                continue
            turns = turns_per_seat(study, design)
            person_turns = [turns[i] for i in designs.person_seats(design)]
            for index, seat in enumerate(design["seats"]):
                if seat["kind"] == designs.AGENT and not prices.is_free(seat["spec"]):
                    calls[seat["spec"]] += turns[index] * tables
            replacement = design.get("replacement_spec")
            if empty and replacement and not prices.is_free(replacement) and person_turns:
                calls[replacement] += sum(person_turns) / len(person_turns) * empty
        for spec, count in calls.items():
            tokens_in[spec] = count * per_in
            tokens_out[spec] = count * per_out
    models: dict[str, dict[str, Any]] = {}
    for spec in sorted(calls):
        price = prices.price_of(study, spec)
        cost = prices.cost(price, round(tokens_in[spec]), round(tokens_out[spec]))
        models[spec] = {
            "calls": round(calls[spec]),
            "input_tokens": round(tokens_in[spec]),
            "output_tokens": round(tokens_out[spec]),
            "cost": None if cost is None else str(_money(cost, study.currency)),
            "price_per_million": None if price is None else [str(p) for p in price],
        }
        if price is None:
            models[spec]["note"] = f"no price for {spec} in {study.currency}: set model_prices"
    return {"games": games, "source": source, "models": models}


def prolific_cost(study: Study, places: int, calculated: int | None = None) -> dict[str, Any]:
    """Prolific's share: the rewards, the fee, the total; ``calculated`` is the total in minor
    units that Prolific's cost calculator answered, when it was asked."""
    rewards = Decimal(study.payment_amount or 0) * places
    if calculated is not None:
        total = Decimal(calculated).scaleb(-currency_decimals(study.currency))
        source = "Prolific's cost calculator (its VAT and fee)"
    else:
        total = rewards * (1 + Decimal(settings.PROLIFIC_FEE_RATE))
        source = f"reward × places plus a fee of {Decimal(settings.PROLIFIC_FEE_RATE) * 100:g}%"
    return {
        "reward": str(study.payment_amount),
        "places": places,
        "rewards": str(_money(rewards, study.currency)),
        "fee": str(_money(total - rewards, study.currency)),
        "total": str(_money(total, study.currency)),
        "source": source,
        "bonuses": "not included (paid on top, by the study's bonus rule)",
    }


def duration_minutes(study: Study) -> dict[str, Any]:
    """How long a person takes: the study's finished tables' mean game times the rounds, plus the
    setup, once it has tables; else the study's own estimate."""
    finished = spend.study_tables(study).filter(status="finished", finished_at__isnull=False)
    spans = [
        (t.finished_at - (t.started_at or t.created_at)).total_seconds() / 60
        for t in finished.only("created_at", "started_at", "finished_at")[:500]
    ]
    if len(spans) >= MEASURED_TABLES:
        minutes = MINUTES_SETUP + sum(spans) / len(spans) * study.rounds
        return {"per_person": round(minutes), "source": f"measured ({len(spans)} tables)"}
    return {"per_person": study.duration_minutes, "source": "the study's estimate"}


def plan(study: Study, places: int, calculated: int | None = None) -> dict[str, Any]:
    """The whole plan for ``places`` people (one JSON object; amounts as strings)."""
    if places < 1:
        raise ValueError("--places must be a whole number of at least 1")
    models = model_plan(study, places)
    rows = models["models"]
    costs = [row["cost"] for row in rows.values()]
    model_cost = None if None in costs else sum((Decimal(c) for c in costs), Decimal(0))
    recruit = prolific_cost(study, places, calculated)
    total = None if model_cost is None else model_cost + Decimal(recruit["total"])
    budget = None if study.model_budget is None else Decimal(str(study.model_budget))
    return {
        "study": study.slug,
        "places": places,
        "rounds": study.rounds,
        "currency": study.currency,
        "games": models["games"],
        "source": models["source"],
        "models": rows,
        "calls": sum(row["calls"] for row in rows.values()),
        "input_tokens": sum(row["input_tokens"] for row in rows.values()),
        "output_tokens": sum(row["output_tokens"] for row in rows.values()),
        "cost": None if model_cost is None else str(_money(model_cost, study.currency)),
        "model_budget": None if budget is None else str(budget),
        "within_budget": None
        if budget is None or model_cost is None
        else bool(model_cost <= budget),
        "prolific": recruit,
        "total_cost": None if total is None else str(_money(total, study.currency)),
        "duration_minutes": duration_minutes(study),
    }


def per_table_cost(study: Study) -> dict[str, Decimal | None]:
    """What one more table is expected to cost, per model (the cap's look ahead,
    :mod:`studyapp.participants.budget`): a plan of one place's first round."""
    rows = model_plan(study, 1)["models"]
    rounds = max(int(study.rounds), 1)
    return {
        spec: None if row["cost"] is None else Decimal(row["cost"]) / rounds
        for spec, row in rows.items()
    }


def text(report: dict[str, Any]) -> str:
    """The plan as a person reads it."""
    cur = report["currency"]
    lines = [
        f"plan of {report['study']} for {report['places']} place(s), {report['rounds']} "
        f"round(s) each: {report['games']} game(s) ({report['source']})",
        f"{'model':<36} {'calls':>9} {'tokens in':>13} {'tokens out':>12} {'cost ' + cur:>12}",
    ]
    for spec, row in report["models"].items():
        cost = row["cost"] if row["cost"] is not None else "no price"
        lines.append(
            f"{spec:<36} {row['calls']:>9,} {row['input_tokens']:>13,} "
            f"{row['output_tokens']:>12,} {cost:>12}"
        )
        if row.get("note"):
            lines.append(f"  {row['note']}")
    if not report["models"]:
        lines.append("(no model calls: every agent is offline or local)")
    model_cost = report["cost"] if report["cost"] is not None else "unknown (a model has no price)"
    lines.append(
        f"models: {report['calls']:,} calls, {report['input_tokens']:,} input and "
        f"{report['output_tokens']:,} output tokens, {model_cost} {cur}"
    )
    if report["model_budget"] is not None:
        verdict = {True: "within it", False: "MORE than it", None: "unknown"}[
            report["within_budget"]
        ]
        lines.append(f"model budget: {report['model_budget']} {cur} (the plan is {verdict})")
    recruit = report["prolific"]
    lines.append(
        f"Prolific: {recruit['rewards']} {cur} in rewards + {recruit['fee']} fee = "
        f"{recruit['total']} {cur} ({recruit['source']}; bonuses {recruit['bonuses']})"
    )
    total = report["total_cost"] if report["total_cost"] is not None else "unknown"
    lines.append(f"total: {total} {cur}")
    duration = report["duration_minutes"]
    lines.append(
        f"duration: about {duration['per_person']} minutes a person ({duration['source']})"
    )
    return "\n".join(lines)


def plan_inputs(study: Study) -> str:
    """A digest of everything a plan of ``study`` depends on: the study's own fields (its
    design, rounds, prices, budget, places, currency...), its conditions, the site's prices and
    fee rate, and how many of its tables are finished (the measured figures move with each).
    The caches of a plan key on it, so a new finished table or a changed study gives a fresh
    plan at once."""
    fields = {
        f.attname: getattr(study, f.attname)
        for f in Study._meta.concrete_fields
        if f.name != "budget_reached_at"
    }
    conditions = list(study.conditions.order_by("pk").values()) if study.pk else []
    finished = spend.study_tables(study).filter(status="finished").count() if study.pk else 0
    given = [fields, conditions, finished, settings.MODEL_PRICES, settings.PROLIFIC_FEE_RATE]
    raw = json.dumps(given, sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()[:32]


def shown_plan(study: Study) -> dict[str, Any] | None:
    """The plan for the study's places (set when it was drafted on Prolific, or in the admin) as
    the pages and ``study spend`` show it beside the spend; None without places. It is kept in
    the cache for :data:`SHOWN_PLAN_SECONDS` under :func:`plan_inputs`, so it is never older
    than the study and its finished tables."""
    if not study.places:
        return None
    key = f"study-plan:{plan_inputs(study)}"
    found = cache.get(key)
    if found is None:
        try:
            found = plan(study, study.places)
        except ValueError:
            return None
        cache.set(key, found, SHOWN_PLAN_SECONDS)
    return found

"""A study's model budget, held where tables open (docs/participants.md, Launching a study).

``Study.model_budget`` caps what the study's models may cost (its currency, at its prices). Before
a study table opens (:func:`studyapp.participants.study_tables.open_table`), :func:`seats_within`
asks whether the table could pass the budget: the spend so far (:mod:`studyapp.participants.spend`)
plus, for this table and each of the study's tables still in play with a priced model (their games
run on, so their spend is reserved), what one table of the design is expected to cost (:func:`studyapp.participants.spend_plan.
per_table_cost`, the study's measured tables once it has some). If it could, no table opens with
a priced model: its seats, and the lobby's replacement, go to the design's stand-in (the offline
agent for the seat's role), and the table records which seats the stand-in took and for which
model (``budget_stand_in`` in its options), so the exports can tell them apart. A study whose
``over_budget`` is ``full`` also takes nobody new (:func:`closed`: the study shows as full, as a
study whose conditions met their quotas); people already in it finish their rounds with the
stand-in. A game in play is never cut: its calls run on, which is why the look ahead is a whole
table.

Staff are told once, when the budget is first reached (``budget_reached_at``): a log line at
WARNING, the study's admin page and the live monitor, and ``/healthz`` for a staff login.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.utils import timezone

from studyapp.participants import design as designs
from studyapp.participants import prices, spend, spend_plan, table_study
from studyapp.participants.models import Study
from studyapp.tables.models import Table

log = logging.getLogger(__name__)

OPEN = (Table.Status.LOBBY, Table.Status.PLAYING, Table.Status.PAUSED)  # not yet over

# How long a design's expected cost per table is kept (keyed on what it depends on, the study
# and its count of finished tables: spend_plan.plan_inputs).
TABLE_COST_SECONDS = 300
# The offline agent that stands in for a model past the budget, by game and role.
STAND_INS = {
    ("undercover", "player"): "offline:kb",
    ("twenty-questions", "questioner"): "offline:infogain",
    ("twenty-questions", "oracle"): "offline:kb",
}


def table_cost(study: Study) -> dict[str, Decimal | None]:
    """What one more table is expected to cost, per priced model (kept a while in the cache)."""
    key = spend_plan.plan_inputs(study)
    found = cache.get(f"budget-table-cost:{key}")
    if found is None:
        found = {
            spec: None if cost is None else str(cost)
            for spec, cost in spend_plan.per_table_cost(study).items()
        }
        cache.set(f"budget-table-cost:{key}", found, TABLE_COST_SECONDS)
    return {spec: None if cost is None else Decimal(cost) for spec, cost in found.items()}


def in_play(study: Study) -> int:
    """The study's tables still open (a lobby, a game in play, a paused one) that seat a priced
    model: each may yet spend a whole table's worth, so the look ahead reserves it."""
    open_tables = spend.study_tables(study).filter(status__in=OPEN).prefetch_related("seats")
    return sum(
        1
        for table in open_tables
        if any(
            seat.kind == "agent" and not prices.is_free(seat.agent_spec)
            for seat in table.seats.all()
        )
    )


def projected(study: Study, spent: spend.StudySpend) -> Decimal | None:
    """The spend so far, a table's worth for each table still in play, and one for the next
    (None: some of it cannot be priced)."""
    so_far = spent.cost
    ahead = table_cost(study)
    if so_far is None or None in ahead.values():
        return None
    per_table = sum(ahead.values(), Decimal(0))  # type: ignore[arg-type]
    return so_far + per_table * (in_play(study) + 1)


def reached(study: Study, spent: spend.StudySpend | None = None) -> bool:
    """Whether the next table with the study's models could pass its model budget
    (:func:`projected`)."""
    if study.model_budget is None:
        return False
    ahead = projected(study, spent or spend.of_study(study))
    if ahead is None:
        return True  # spend that cannot be priced cannot be held under a cap
    return ahead > Decimal(str(study.model_budget))


def tell_once(study: Study, spent: spend.StudySpend) -> None:
    """Record the moment the budget was reached and log it, once per study."""
    now = timezone.now()
    if Study.objects.filter(pk=study.pk, budget_reached_at__isnull=True).update(
        budget_reached_at=now
    ):
        study.budget_reached_at = now
        ahead = projected(study, spent)
        log.warning(
            "study %s: the next table could pass its model budget: %s spent, %s projected with "
            "tables in play, of %s %s; %s",
            study.slug,
            "an unknown amount" if spent.cost is None else spent.cost,
            "an unknown amount" if ahead is None else ahead.quantize(Decimal("0.0001")),
            study.model_budget,
            study.currency,
            "nobody new starts (the study shows as full) and those in it play with the stand-in"
            if study.over_budget == "full"
            else "new tables seat the stand-in in the model's place",
        )


def closed(study: Study) -> bool:
    """A study that takes nobody new because its budget is reached (``over_budget = full``)."""
    if study.model_budget is None or study.over_budget != "full":
        return False
    spent = spend.of_study(study)
    if not reached(study, spent):
        return False
    tell_once(study, spent)
    return True


def stand_in_for(study: Study, index: int, seats: int) -> str:
    roles = designs.ROLES[study.game]
    role = roles[index] if len(roles) > 1 and index < len(roles) else roles[0]
    return STAND_INS.get((study.game, role), "offline:kb")


def seats_within(
    study: Study, seats: list[dict[str, Any]], options: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The seats and options of a table about to open, with a priced model's seats (and the
    lobby's replacement) given to the stand-in when this table could pass the budget."""
    if study.model_budget is None:
        return seats, options
    priced = [
        i
        for i, seat in enumerate(seats)
        if seat.get("kind") == "agent" and not prices.is_free(str(seat.get("agent_spec", "")))
    ]
    replacement = str(options.get("replacement_spec") or "")
    swap_replacement = bool(replacement) and not prices.is_free(replacement)
    if not priced and not swap_replacement:
        return seats, options
    spent = spend.of_study(study)
    if not reached(study, spent):
        return seats, options
    tell_once(study, spent)
    stood_in: dict[str, str] = {}
    changed = [dict(seat) for seat in seats]
    for index in priced:
        stood_in[str(index)] = changed[index]["agent_spec"]
        changed[index].update(agent_spec=stand_in_for(study, index, len(seats)), policy=None)
    options = dict(options)
    if swap_replacement:
        options["replacement_spec"] = STAND_INS.get((study.game, "player"), "offline:kb")
        stood_in["replacement"] = replacement
    options[table_study.BUDGET_STAND_IN] = stood_in
    return changed, options


def status(study: Study) -> dict[str, Any]:
    """The spend so far beside the budget: what the study page, the monitor and ``study spend``
    show."""
    spent = spend.of_study(study)
    report = spent.as_dict()
    budget = None if study.model_budget is None else Decimal(str(study.model_budget))
    report.update(
        study=study.slug,
        currency=study.currency,
        model_budget=None if budget is None else str(budget),
        left=None if budget is None or spent.cost is None else str(budget - spent.cost),
        reached_at=study.budget_reached_at.isoformat() if study.budget_reached_at else None,
        over_budget=study.over_budget,
    )
    return report


def text(report: dict[str, Any]) -> str:
    cur = report["currency"]
    lines = [f"{'model':<36} {'calls':>9} {'tokens in':>13} {'tokens out':>12} {'cost ' + cur:>12}"]
    for spec, row in report["models"].items():
        cost = row["cost"] if row["cost"] is not None else "no price"
        lines.append(
            f"{spec:<36} {row['calls']:>9,} {row['input_tokens']:>13,} "
            f"{row['output_tokens']:>12,} {cost:>12}"
        )
    total = report["cost"] if report["cost"] is not None else "unknown (a model has no price)"
    lines.append(
        f"spent so far: {report['calls']:,} calls, {total} {cur} ({report['tables']} tables)"
    )
    if report["model_budget"] is not None:
        lines.append(f"model budget: {report['model_budget']} {cur}, left {report['left']}")
    if report["reached_at"]:
        at = datetime.fromisoformat(report["reached_at"]).astimezone(UTC)
        lines.append(f"the budget was reached at {at:%Y-%m-%d %H:%M} UTC")
    return "\n".join(lines)


def staff_notes() -> dict[str, str]:
    """Studies that reached their model budget, for ``/healthz`` to a staff login."""
    found = Study.objects.filter(budget_reached_at__isnull=False, active=True).order_by("slug")
    return {
        f"model_budget:{study.slug}": f"reached at {study.budget_reached_at:%Y-%m-%d %H:%M} UTC "
        f"(budget {study.model_budget} {study.currency}; "
        + ("the study shows as full)" if study.over_budget == "full" else "stand-ins seated)")
        for study in found
    }


def page_context(study: Study) -> dict[str, Any]:
    """What ``participants/_study_spend.html`` shows: the spend so far per model, the budget,
    and the plan for the study's places beside it."""
    report = status(study)
    plan = spend_plan.shown_plan(study)
    planned = plan["models"] if plan else {}
    rows = []
    for spec in sorted(set(report["models"]) | set(planned)):
        row = dict(report["models"].get(spec, {}))
        if spec in planned:
            row.update(planned_calls=planned[spec]["calls"], planned_cost=planned[spec]["cost"])
        rows.append((spec, row))
    return {
        "spend": report,
        "plan": plan,
        "spend_rows": rows,
        "reached_at": study.budget_reached_at,  # a time, shown as the page shows its others
    }

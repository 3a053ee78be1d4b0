"""What a study's models have spent so far: per model spec, the calls, input and output tokens
its agents' turns recorded (``Turn.usage``, credited to the turn's ``actor``) at the study's
tables, pilots' included (their calls are paid too), and their cost at the study's prices
(:mod:`studyapp.participants.prices`). The one place usage is added up: the study's admin page,
the live monitor, the export's ``usage.csv`` and the model budget all read :func:`of_study`.

A turn whose model failed and whose move an offline agent made in its place (``usage`` names
the ``stand_in``) still counts: the model's calls were made and are paid."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import IntegerField, QuerySet, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from studyapp.participants import prices, table_study
from studyapp.tables.models import PERSON_ACTOR, SKIP_SPEC, Table, Turn


@dataclass(frozen=True)
class ModelSpend:
    """One model's calls, tokens and their cost (None: the model has no price)."""

    model: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = Decimal(0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": None if self.cost is None else str(self.cost),
        }


@dataclass(frozen=True)
class StudySpend:
    """A study's spend so far, by model, with its totals (``cost`` None when a model that made
    calls has no price) and the finished tables they came from."""

    models: dict[str, ModelSpend] = field(default_factory=dict)
    tables: int = 0
    finished_tables: int = 0

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.models.values())

    @property
    def input_tokens(self) -> int:
        return sum(m.input_tokens for m in self.models.values())

    @property
    def output_tokens(self) -> int:
        return sum(m.output_tokens for m in self.models.values())

    @property
    def cost(self) -> Decimal | None:
        costs = [m.cost for m in self.models.values()]
        return None if None in costs else sum(costs, Decimal(0))  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, Any]:
        cost = self.cost
        return {
            "models": {name: spend.as_dict() for name, spend in sorted(self.models.items())},
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": None if cost is None else str(cost),
            "tables": self.tables,
        }


def _number(key: str) -> Coalesce:
    return Coalesce(Sum(Cast(KT(f"usage__{key}"), IntegerField())), 0)


def study_tables(study: Any):
    """The tables of ``study`` (every round and condition, pilots' too)."""
    return Table.objects.filter(table_study.in_study(study.slug))


def model_usage(tables: QuerySet) -> QuerySet:
    """Per model (a turn's actor) over ``tables``' turns: its ``calls``, ``input_tokens`` and
    ``output_tokens`` (people's moves, the table's own events and passes left out)."""
    return (
        Turn.objects.filter(table__in=tables)
        .exclude(actor__in=("", PERSON_ACTOR, SKIP_SPEC))
        .values("actor")
        .annotate(
            calls=_number("calls"),
            input_tokens=_number("input_tokens"),
            output_tokens=_number("output_tokens"),
        )
    )


def of_study(study: Any) -> StudySpend:
    """The study's spend so far, per model (one query over its turns)."""
    tables = study_tables(study)
    rows = model_usage(tables)
    found: dict[str, ModelSpend] = {}
    for row in rows:
        if not row["calls"]:
            continue  # an offline agent's turns: no model was called
        spec = row["actor"]
        found[spec] = ModelSpend(
            spec,
            row["calls"],
            row["input_tokens"],
            row["output_tokens"],
            prices.cost(prices.price_of(study, spec), row["input_tokens"], row["output_tokens"]),
        )
    counts = tables.values_list("status", flat=True)
    finished = sum(1 for status in counts if status == Table.Status.FINISHED)
    return StudySpend(found, len(counts), finished)


def per_table(study: Any) -> dict[str, dict[str, float]]:
    """The study's finished tables' model use, per model, averaged over those tables: ``calls``,
    ``input_tokens`` and ``output_tokens`` per table (what the plan takes as a game's measured
    length once the study has some). Tables where the budget's stand-in took the models' seats
    are left out: they say nothing of a model's game."""
    finished = study_tables(study).filter(status=Table.Status.FINISHED)
    finished = finished.exclude(options__has_key=table_study.BUDGET_STAND_IN)
    count = finished.count()
    if not count:
        return {}
    rows = model_usage(finished)
    return {
        row["actor"]: {
            "calls": row["calls"] / count,
            "input_tokens": row["input_tokens"] / count,
            "output_tokens": row["output_tokens"] / count,
        }
        for row in rows
        if row["calls"]
    }

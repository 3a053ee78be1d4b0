"""Finished games from the tables app as plain records, the shape the pure-Python pipelines take
(the same keys as an experiment JSONL line), so human and model games feed them alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings

from games import get_engine
from studyapp.tables.models import Table
from studyapp.tables.moves import storable


def table_records(
    game: str, *, table_ids: list[int] | None = None, seat: int = 0
) -> list[dict[str, Any]]:
    """One record per finished table of ``game``: config, events, and ``seat``'s reward."""
    engine = get_engine(game)
    tables = Table.objects.filter(game=game, status=Table.Status.FINISHED).prefetch_related("turns")
    if table_ids:
        tables = tables.filter(pk__in=table_ids)
    records = []
    for table in tables.order_by("pk"):
        events = [storable(turn.event) for turn in table.turns.all()]  # see tables.moves
        state = engine.replay(table.config, events)
        if not engine.is_over(state):
            continue
        outcome = engine.outcome(state)
        records.append(
            {
                "id": table.pk,
                "game": game,
                "config": table.config,
                "events": events,
                "seat": seat,
                "reward": outcome[seat]["reward"],
            }
        )
    return records


def resolve_path(name: str) -> Path:
    """A dataset path as given, or relative to MEDIA_ROOT (where uploads land)."""
    path = Path(name)
    return path if path.is_absolute() else Path(settings.MEDIA_ROOT) / path


def jsonl_records(name: str) -> list[dict[str, Any]]:
    """Records from an experiment results file (``python -m games experiment --out``)."""
    with resolve_path(name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]

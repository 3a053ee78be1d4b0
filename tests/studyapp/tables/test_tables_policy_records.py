"""The policy records live in the tables app, whose seats play with them, and no model of the tables
app points at a higher app (docs/architecture.md, "Dependencies"). Their move from the pipelines
app keeps a database's rows: a record made before the move, and the seat that plays with it, are
there after it, still linked, and the record still names its job."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("tables", "0003_table_paused"), ("pipelines", "0001_initial")]
AFTER = [
    ("tables", "0004_policyrecord_from_pipelines"),
    ("pipelines", "0002_policyrecord_to_tables"),
]


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor


def test_no_model_of_the_tables_app_points_at_a_higher_app():
    pointing = {
        f"{model.__name__}.{field.name}": field.related_model._meta.app_label
        for model in apps.get_app_config("tables").get_models()
        for field in model._meta.get_fields()
        if field.is_relation and field.concrete
    }
    assert pointing and not {"dashboard", "participants", "pipelines"} & set(pointing.values())


@pytest.mark.django_db(transaction=True)
def test_a_policy_record_and_its_seat_survive_the_move():
    executor = migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps
        job = old.get_model("pipelines", "Job").objects.create(kind="policy")
        record = old.get_model("pipelines", "PolicyRecord").objects.create(
            name="tq-rules",
            version=1,
            game="twenty-questions",
            kind="rule",
            text="Wide first.",
            job=job,
        )
        table = old.get_model("tables", "Table").objects.create(game="twenty-questions", config={})
        old.get_model("tables", "Seat").objects.create(
            table=table, index=0, kind="agent", agent_spec="offline:x", policy=record
        )

        executor = migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        moved = new.get_model("tables", "PolicyRecord").objects.get(pk=record.pk)
        assert (moved.name, moved.version, moved.text, moved.job_id) == (
            "tq-rules",
            1,
            "Wide first.",
            job.pk,
        )
        seat = new.get_model("tables", "Seat").objects.get(table_id=table.pk)
        assert seat.policy_id == record.pk and seat.policy.text == "Wide first."
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

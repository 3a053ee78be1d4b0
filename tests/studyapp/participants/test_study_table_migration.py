"""A study table's study part leaves the table's options for the participants app's own row
(participants 0020): every key moves without loss, a value the row cannot hold stays where it was,
a table outside any study is untouched, and the migration reverses to the same options."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("participants", "0019_study_table")]
AFTER = [("participants", "0020_study_keys_leave_table_options")]

TABLES_OWN = {"dropout": "replace", "person_seats": [1, 3], "lobby_kind": "study:3:policy:2:people"}
STUDY_PART = {
    "study": "uc-blind",
    "condition": "policy",
    "round": 2,
    "group": 1,
    "seat_order": "drawn",
    "seat_order_seed": 99,
    "seat_slots": [2, 0, 4, 1, 3],
    "shown_policy": True,
}


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_the_study_part_moves_to_its_row_and_back_without_loss():
    executor = migrate(BEFORE)
    try:
        Table = executor.loader.project_state(BEFORE).apps.get_model("tables", "Table")

        def made(**options):
            return Table.objects.create(game="undercover", config={}, options=options).pk

        study = made(**TABLES_OWN, **STUDY_PART)
        odd = made(study="s", round="two", condition=None, dropout="end")
        outside = made(dropout="skip", job=4)

        executor = migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        Table, StudyTable = (
            new.get_model("tables", "Table"),
            new.get_model("participants", "StudyTable"),
        )
        assert Table.objects.get(pk=study).options == TABLES_OWN
        part = StudyTable.objects.get(table_id=study)
        assert {key: getattr(part, key) for key in STUDY_PART} == STUDY_PART
        # a round nobody can read as a number stays in the options; the rest moves
        assert Table.objects.get(pk=odd).options == {"round": "two", "dropout": "end"}
        kept = StudyTable.objects.get(table_id=odd)
        assert (kept.study, kept.condition, kept.round) == ("s", None, None)
        assert Table.objects.get(pk=outside).options == {"dropout": "skip", "job": 4}
        assert not StudyTable.objects.filter(table_id=outside).exists()

        executor = migrate(BEFORE)
        Table = executor.loader.project_state(BEFORE).apps.get_model("tables", "Table")
        assert Table.objects.get(pk=study).options == {**TABLES_OWN, **STUDY_PART}
        assert Table.objects.get(pk=odd).options == {
            "study": "s",
            "round": "two",
            "dropout": "end",
            "shown_policy": False,  # the one key a reversal adds where a table had none
        }
        assert Table.objects.get(pk=outside).options == {"dropout": "skip", "job": 4}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

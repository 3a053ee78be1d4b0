"""A table's study part (the participants app's StudyTable row, beside the tables app's table) is
written, read and queried through one module (studyapp.participants.table_study), and no other
module of the participants app or the dashboard's views spells its keys in a table lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from studyapp.participants import table_study
from studyapp.tables.models import Table

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]


def table(**options) -> Table:
    return Table.objects.create(game="undercover", config={}, options=options)


def study_table(lobby_kind: str = "", **part) -> Table:
    made = table(lobby_kind=lobby_kind) if lobby_kind else table()
    table_study.record(made, part)
    return made


def test_a_study_table_is_read_and_found_by_its_study_part():
    mine = study_table("study:1:c:2:people", study="s1", condition="c", round=2, group=3)
    study_table(study="s2", round=1)
    outside = table()

    found = table_study.of(Table.objects.get(pk=mine.pk))
    assert (found.study, found.condition, found.round, found.group) == ("s1", "c", 2, 3)
    assert table_study.of(mine).is_study and not table_study.of(outside).is_study
    assert table_study.of(outside).condition is None and table_study.of(outside).slots(3) == []
    assert list(Table.objects.filter(table_study.in_study("s1"))) == [mine]
    assert list(Table.objects.filter(table_study.in_any_study()).order_by("pk"))[0] == mine
    assert outside not in Table.objects.filter(table_study.in_any_study())
    assert list(Table.objects.filter(table_study.in_lobby("study:1:c:2:people"))) == [mine]
    assert table_study.study_slugs(Table.objects.all()) == ["s1", "s2"]


def test_a_study_tables_options_are_split_into_the_tables_and_the_studys():
    options = {"study": "s", "condition": "", "round": 1, "seat_slots": [1, 0], "dropout": "end"}
    part = table_study.split(options)
    assert options == {"dropout": "end"}
    assert part == {"study": "s", "condition": "", "round": 1, "seat_slots": [1, 0]}
    made = table(**options)
    table_study.record(made, part)
    assert table_study.of(Table.objects.get(pk=made.pk)).slots(2) == [1, 0]
    assert table_study.of(table()).slots(2) == []
    legacy = study_table(study="s")  # a study table made before seats were drawn
    assert table_study.of(legacy).slots(3) == [0, 1, 2]


def test_no_other_module_spells_a_study_key_in_a_table_lookup():
    spelled = []
    folders = [ROOT / "studyapp" / "participants", ROOT / "studyapp" / "dashboard" / "views"]
    for folder in folders:
        for path in folder.rglob("*.py"):
            if path.name == "table_study.py" or "migrations" in path.parts:
                continue
            text = path.read_text()
            for key in ("study", "condition", "round", "group", "lobby_kind"):
                for form in (f"options__{key}", f"opts.{key}", f'options["{key}"]'):
                    if form in text:
                        spelled.append(f"{path.relative_to(ROOT)}: {form}")
    assert spelled == []

"""A table's study part is read and queried through one module (studyapp.participants.table_study):
the keys it names are the keys a study's table is written with, and no other module of the
participants app or the dashboard's views spells them in a lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from studyapp.participants import table_study
from studyapp.tables.models import Table

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]


def table(**options) -> Table:
    return Table.objects.create(game="undercover", config={}, options=options)


def test_a_study_table_is_read_and_found_by_its_study_part():
    mine = table(study="s1", condition="c", round=2, group=3, lobby_kind="study:1:c:2:people")
    table(study="s2", round=1)
    outside = table()

    assert table_study.of(mine) == table_study.StudyTable("s1", "c", 2, 3)
    assert table_study.of(mine).is_study and not table_study.of(outside).is_study
    assert list(Table.objects.filter(table_study.in_study("s1"))) == [mine]
    assert list(Table.objects.filter(table_study.in_lobby("study:1:c:2:people"))) == [mine]
    assert table_study.study_slugs(Table.objects.all()) == ["s1", "s2"]


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

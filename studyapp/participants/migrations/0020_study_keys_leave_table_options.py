"""A study table's study part leaves the table's options (``Table.options``) for its own row
(``StudyTable``): study, condition, round, group, seat order and slots, and shown policy. A value the row's field cannot hold as it is (a hand-edited round of
"two") stays in the table's options, so nothing stored is lost; reversed, the row's values go
back into the options as they were written (``shown_policy`` false where a table older than that
key had none) and the rows are deleted."""

from __future__ import annotations

from django.db import migrations

TEXT = ("study", "condition", "seat_order")
WHOLE = ("round", "group", "seat_order_seed")
KEYS = (*TEXT, *WHOLE, "seat_slots", "shown_policy")
LONGEST = 100  # the text fields' max_length


def holds(key: str, value: object) -> bool:
    """Whether the row's field for ``key`` holds ``value`` unchanged."""
    if key in TEXT:
        return (isinstance(value, str) and len(value) <= LONGEST) or (
            key == "condition" and value is None
        )
    if key in WHOLE:
        if value is None:
            return True
        whole = isinstance(value, int) and not isinstance(value, bool)
        return whole and (key == "seat_order_seed" or value >= 0)
    if key == "shown_policy":
        return isinstance(value, bool)
    return True  # JSON fields hold any JSON value


def forwards(apps, schema_editor) -> None:
    Table = apps.get_model("tables", "Table")
    StudyTable = apps.get_model("participants", "StudyTable")
    tables = Table.objects.filter(options__has_key="study").only("pk", "options")
    for table in tables.iterator(chunk_size=500):
        options = dict(table.options)
        if not holds("study", options["study"]):
            continue  # not a study's table as the code reads it: left as it is
        part = {
            key: options.pop(key) for key in KEYS if key in options and holds(key, options[key])
        }
        StudyTable.objects.create(table_id=table.pk, **part)
        Table.objects.filter(pk=table.pk).update(options=options)


def backwards(apps, schema_editor) -> None:
    Table = apps.get_model("tables", "Table")
    StudyTable = apps.get_model("participants", "StudyTable")
    for part in StudyTable.objects.iterator(chunk_size=500):
        table = Table.objects.only("pk", "options").get(pk=part.table_id)
        options = dict(table.options)
        options.update(study=part.study, shown_policy=part.shown_policy)
        for key in ("condition", "round", "group", "seat_order_seed", "seat_slots"):
            if getattr(part, key) is not None:
                options[key] = getattr(part, key)
        if part.seat_order:
            options["seat_order"] = part.seat_order
        Table.objects.filter(pk=table.pk).update(options=options)
    StudyTable.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("participants", "0019_study_table"),
        ("tables", "0005_turn_actor"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]

# A table pauses when its answering model keeps failing (docs/architecture.md, oracle failures).

from django.db import migrations, models

import studyapp.tables.models


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0002_seat_policy_turn_usage"),
    ]

    operations = [
        migrations.AlterField(
            model_name="table",
            name="status",
            field=models.CharField(
                choices=[
                    ("lobby", "waiting for players"),
                    ("playing", "playing"),
                    ("finished", "finished"),
                    ("aborted", "ended early"),
                    ("paused", "paused (the answering model failed)"),
                ],
                default="playing",
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="table",
            name="options",
            field=models.JSONField(
                blank=True,
                default=studyapp.tables.models.default_options,
                help_text="wait_seconds, lobby_timeout (fill|exit), turn_deadline_seconds, "
                "dropout (replace|skip|end), agent_delay_seconds, replacement_spec, "
                "max_oracle_failures; study tables add study, condition and round.",
            ),
        ),
    ]

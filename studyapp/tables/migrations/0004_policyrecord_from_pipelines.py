# The policy records move from the pipelines app to the tables app, whose seats play with them
# (docs/architecture.md, "Dependencies"). Only Django's idea of the models changes here: the table
# keeps its name (pipelines_policyrecord) and its rows, and the seats' foreign key points at the
# same table as before. pipelines/0002 drops the record's foreign key to the jobs, keeping the
# job's id as a plain number, and forgets its own PolicyRecord.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0003_table_paused"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="PolicyRecord",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=100)),
                        ("version", models.PositiveIntegerField()),
                        ("game", models.CharField(max_length=32)),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("rule", "rule policy"),
                                    ("experience", "experience policy"),
                                    ("cumulative", "cumulative memory"),
                                    ("human", "human policy"),
                                ],
                                max_length=16,
                            ),
                        ),
                        (
                            "source",
                            models.TextField(
                                blank=True, help_text="Where it came from: model, games, job."
                            ),
                        ),
                        ("text", models.TextField()),
                        (
                            "job_id",
                            models.BigIntegerField(
                                blank=True,
                                db_index=True,
                                help_text="The pipelines job that made it, if any.",
                                null=True,
                            ),
                        ),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "pipelines_policyrecord",
                        "ordering": ["name", "-version"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("name", "version"), name="unique_policy_version"
                            )
                        ],
                    },
                ),
                migrations.AlterField(
                    model_name="seat",
                    name="policy",
                    field=models.ForeignKey(
                        blank=True,
                        help_text="The policy text an agent seat plays with.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="seats",
                        to="tables.policyrecord",
                    ),
                ),
            ],
        ),
    ]

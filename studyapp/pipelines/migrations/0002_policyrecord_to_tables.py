# The policy records move to the tables app (tables/0004, which takes over the table
# pipelines_policyrecord with its rows). Here the record's job becomes a plain number in the
# database (its foreign key constraint goes; the column job_id, its values and its index stay), so
# that the tables app points at nothing of the pipelines app, and the pipelines app forgets its
# PolicyRecord without touching the table.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("pipelines", "0001_initial"),
        ("tables", "0004_policyrecord_from_pipelines"),
    ]

    operations = [
        migrations.AlterField(
            model_name="policyrecord",
            name="job",
            field=models.BigIntegerField(
                blank=True,
                db_column="job_id",
                db_index=True,
                help_text="The pipelines job that made it, if any.",
                null=True,
            ),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="PolicyRecord")],
        ),
    ]

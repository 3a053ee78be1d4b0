"""The rounds of a participant's sequence, each a game at a table of the tables app."""

from __future__ import annotations

from django.db import models

from studyapp.participants.models.people import Participant


class Round(models.Model):
    """One game of a participant's sequence: round k of the study's cumulative rounds."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="round_set")
    number = models.PositiveIntegerField(help_text="1-based")
    table = models.ForeignKey("tables.Table", on_delete=models.PROTECT, related_name="+")
    seat = models.PositiveSmallIntegerField(
        default=0, help_text="The participant's seat at the table (people may share a table)."
    )
    reward = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "number"], name="one_table_per_round")
        ]
        ordering = ["number"]

    def __str__(self) -> str:
        return f"{self.participant} round {self.number}"

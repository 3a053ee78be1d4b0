"""A table's study part: the study, condition, round and group a table of the tables app was
opened for, and how its seats were drawn. The tables app knows none of this (a table plays the
same whoever opened it); the participants app writes it when it opens a table and reads it
through :mod:`studyapp.participants.table_study`."""

from __future__ import annotations

from django.db import models


class StudyTable(models.Model):
    """One table of a study (a table outside any study has no row)."""

    table = models.OneToOneField(
        "tables.Table", on_delete=models.CASCADE, primary_key=True, related_name="study_part"
    )
    study = models.CharField(max_length=100, db_index=True, help_text="The study's slug.")
    # None where the table was opened with none (as a table outside any study reads), "" for a
    # one-arm study's
    condition = models.CharField(max_length=100, null=True, blank=True)
    round = models.PositiveIntegerField(null=True, blank=True, help_text="1-based")
    group = models.PositiveIntegerField(
        null=True, blank=True, help_text="The number of the group seated here (a group design)."
    )
    # Who is Undercover draws which design slot sits at which seat (study_tables.arrange):
    # "drawn" with the seed it drew from, or "fixed"; seat_slots[k] is the design slot at seat k.
    seat_order = models.CharField(max_length=10, blank=True)
    seat_order_seed = models.BigIntegerField(null=True, blank=True)
    seat_slots = models.JSONField(null=True, blank=True)
    shown_policy = models.BooleanField(
        default=False, help_text="Whether the people here were shown a strategy text."
    )

    def __str__(self) -> str:
        return f"table {self.table_id} of {self.study}"

    @property
    def is_study(self) -> bool:
        return bool(self.study)

    def slots(self, seats: int) -> list[int]:
        """The design slot of each of ``seats`` seats (a study table made before seats were drawn
        sat its design in order); empty for a table outside any study."""
        if self.seat_slots is not None:
            return [int(slot) for slot in self.seat_slots]
        return list(range(seats)) if self.study else []

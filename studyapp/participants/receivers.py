"""The participants app listening to what the tables app announces (studyapp.tables.signals): a
lobby place given back takes its study round with it, and a study table's ended game (or released
lobby) books its rounds. Connected in ParticipantsConfig.ready. Where the tables need an answer
(a group lobby closing, an idle seat, the sweep, a table's page, a final board) they ask the hooks
of studyapp/participants/hooks.py instead."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from studyapp.participants import rounds, table_study
from studyapp.participants.models import Round
from studyapp.tables.signals import game_over, lobby_place_left, lobby_released


@receiver(lobby_place_left, dispatch_uid="participants.forget_lobby_round")
def forget_lobby_round(sender: Any, table_id: int, seat: int, **_: Any) -> None:
    """The study round that waited at a place given back is gone with it: the person starts the
    round again from their study page (and is never matched to whoever takes the place)."""
    Round.objects.filter(table_id=table_id, seat=seat, finished_at__isnull=True).delete()


@receiver(game_over, dispatch_uid="participants.book_table")
@receiver(lobby_released, dispatch_uid="participants.book_released_lobby")
def book_table(sender: Any, table: Any, snap: Any = None, **_: Any) -> None:
    """A study table's game ended, or its lobby released its people: their rounds are booked
    now (a released person leaves with the lobby-timeout code, paid for the rounds played),
    from the finished table the game's end comes with."""
    if table_study.of(table).is_study:
        rounds.book_table(table.pk, snap)

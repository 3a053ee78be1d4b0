"""The participants app listening to what the tables app announces (studyapp.tables.signals):
a study's group lobby forms its group, and a lobby place given back takes its study round with
it. Connected in ParticipantsConfig.ready."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from studyapp.tables.signals import group_lobby_closing, lobby_place_left


@receiver(group_lobby_closing, dispatch_uid="participants.form_group")
def form_group(sender: Any, table_id: int, **_: Any) -> str:
    from studyapp.participants import groups

    return groups.form(table_id)


@receiver(lobby_place_left, dispatch_uid="participants.forget_lobby_round")
def forget_lobby_round(sender: Any, table_id: int, seat: int, **_: Any) -> None:
    """The study round that waited at a place given back is gone with it: the person starts the
    round again from their study page (and is never matched to whoever takes the place)."""
    from studyapp.participants.models import Round

    Round.objects.filter(table_id=table_id, seat=seat, finished_at__isnull=True).delete()

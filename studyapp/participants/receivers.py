"""The participants app listening to what the tables app announces (studyapp.tables.signals):
a study's group lobby forms its group, a lobby place given back takes its study round with it, a
study table's ended game (or released lobby) books its rounds, the final board of a study table
carries the player's running total, a study table's page shows the study's name and bar, a
person idle at a table is marked dropped, and the sweep's tick drops people idle between rounds.
Connected in ParticipantsConfig.ready."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver
from django.template.loader import render_to_string

from studyapp.tables.signals import (
    final_board,
    game_over,
    group_lobby_closing,
    lobby_place_left,
    lobby_released,
    seat_idle,
    swept,
    table_page,
)


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


@receiver(game_over, dispatch_uid="participants.book_table")
@receiver(lobby_released, dispatch_uid="participants.book_released_lobby")
def book_table(sender: Any, table: Any, **_: Any) -> None:
    """A study table's game ended, or its lobby released its people: their rounds are booked
    now (a released person leaves with the lobby-timeout code, paid for the rounds played)."""
    if table.options.get("study"):
        from studyapp.participants import rounds

        rounds.book_table(table.pk)


@receiver(final_board, dispatch_uid="participants.study_total")
def study_total(sender: Any, table: Any, seat: int, **_: Any) -> str:
    """The running total of the study participant at the seat, for the study bar, pushed with the
    board once the game is over (its round is booked when the game ends); nothing when no
    participant plays the seat."""
    if not table.options.get("study"):
        return ""
    from studyapp.participants.models import Round

    round_ = Round.objects.filter(table_id=table.pk, seat=seat).select_related("participant")
    found = round_.first()
    if found is None:
        return ""
    context = {"study_total": found.participant.total_reward}
    return render_to_string("participants/_study_total.html", context)


@receiver(seat_idle, dispatch_uid="participants.drop_idle_person")
def drop_idle_person(sender: Any, table_id: int, seat: int, **_: Any) -> bool:
    """The study participant at the seat is marked dropped (paid for their time; the table's
    dropout policy is applied to the seat). False when no participant plays it."""
    from studyapp.participants import rounds
    from studyapp.participants.models import Round

    round_ = Round.objects.filter(table_id=table_id, seat=seat).select_related("participant")
    found = round_.first()
    if found is None:
        return False
    rounds.mark_dropped(found.participant, "idle at a table past the study's idle limit")
    return True


@receiver(swept, dispatch_uid="participants.drop_idle_between_rounds")
def drop_idle_between_rounds(sender: Any, now: Any, **_: Any) -> dict[str, int]:
    from studyapp.participants import rounds

    dropped = rounds.drop_idle_between_rounds(now)
    return {"idle person dropped between rounds": dropped} if dropped else {}


@receiver(table_page, dispatch_uid="participants.study_bar")
def study_bar(sender: Any, table: Any, request: Any, **_: Any) -> dict[str, str]:
    """A study table's page: the study's title in place of the site's name, and the bar above the
    board (the game's number, this browser's participant's running total and a way out)."""
    from studyapp.participants import identity
    from studyapp.participants.models import Study

    slug = table.options.get("study")
    study = Study.objects.filter(slug=slug).first() if slug else None
    if study is None:
        return {}
    context = {
        "study": study,
        "participant": identity.session_participant(request.session, study),
        "round": table.options.get("round"),
    }
    return {"title": study.title, "bar": render_to_string("participants/_study_bar.html", context)}

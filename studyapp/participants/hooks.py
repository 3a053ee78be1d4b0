"""The participants app's answers to what the tables ask (studyapp.tables.hooks, named in
settings as ``TABLES_HOOKS``): a study's group lobby forms its group, a person idle at a table is
marked dropped, the sweep's tick drops people idle between rounds, a study table's page shows the
study's name and bar, and the final board of a study table carries the player's running total.
What the tables only announce is heard in studyapp/participants/receivers.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.template.loader import render_to_string

from studyapp.participants import groups, identity, rounds, table_study
from studyapp.participants.models import Round, Study
from studyapp.tables.hooks import TablesHooks


class ParticipantsHooks(TablesHooks):
    def form_group(self, table_id: int) -> str:
        return groups.form(table_id)

    def seat_idle(self, table_id: int, seat: int, reason: str = "") -> bool:
        """The study participant at the seat is marked dropped (paid for their time; the table's
        dropout policy is applied to the seat). False when no participant plays it."""
        round_ = Round.objects.filter(table_id=table_id, seat=seat).select_related("participant")
        found = round_.first()
        if found is None:
            return False
        why = reason or "idle at a table past the study's idle limit"
        rounds.mark_dropped(found.participant, why)
        return True

    def swept(self, now: datetime) -> dict[str, int]:
        dropped = rounds.drop_idle_between_rounds(now)
        return {"idle person dropped between rounds": dropped} if dropped else {}

    def table_page(self, table: Any, request: Any) -> dict[str, str]:
        """A study table's page: the study's title in place of the site's name, and the bar above
        the board (the game's number, this browser's participant's running total and a way
        out)."""
        part = table_study.of(table)
        slug = part.study
        study = Study.objects.filter(slug=slug).first() if slug else None
        if study is None:
            return {}
        context = {
            "study": study,
            "participant": identity.session_participant(request.session, study),
            "round": part.round,
        }
        bar = render_to_string("participants/_study_bar.html", context)
        return {"title": study.title, "bar": bar}

    def final_board(self, table: Any, seat: int) -> str:
        """The running total of the study participant at the seat, for the study bar, pushed with
        the board once the game is over (its round is booked when the game ends); nothing when no
        participant plays the seat."""
        round_ = Round.objects.filter(table_id=table.pk, seat=seat).select_related("participant")
        found = round_.first()
        if found is None:
            return ""
        context = {"study_total": found.participant.total_reward}
        return render_to_string("participants/_study_total.html", context)

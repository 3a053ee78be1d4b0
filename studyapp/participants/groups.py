"""Group randomisation: in a group design the people who meet in a lobby are one unit.

A study whose arms seat several people at one table (:func:`design.is_group_design`) and that has
conditions does not draw a condition when a person passes the checks. The person enters the
study's *group lobby* of the first round instead: one lobby table per study and round (pilots
apart), with as many places as the arm with the most person seats. The group forms when those
places are taken, or at the lobby's wait limit with whoever is there (:func:`form`, called by the
tables app through :func:`studyapp.tables.lobby.start_if_full` and
:func:`studyapp.tables.driver.check_lobby`). Only then is the group drawn a condition, balanced
over groups (:func:`assignment.assign_group`: the same seeded blocked walk as for people, over
group numbers), and every member gets that condition, the group and the draw.

The group then sits at tables of its condition's design: all together when the condition has as
many person seats as the group has people; in tables of that many people when it has fewer (a
group of two drawn into a one-person arm plays at two tables); a table with person seats left
over gives them to the replacement agent (``lobby_timeout = "fill"``) or, with ``"exit"``, its
people leave with the lobby-timeout code, as in any lobby. The lobby table itself is never played:
it closes (aborted, no exit code, the table option ``group_formed``, which its board shows) and its
page sends everyone on.

A blinded study's group tables, as its other tables, start no sooner than their drawn hold
(``start_after_seconds``): they open full, as lobbies, and their lobby check starts them.

Later rounds keep the group's condition and match people by study, condition and round, as in a
one-arm study.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from studyapp.participants import assignment, table_study
from studyapp.participants import design as designs
from studyapp.participants.models import Participant, Round, Study, StudyGroup
from studyapp.participants.rounds import lobby_timed_out
from studyapp.participants.study_tables import agent_seat, arrange, open_table, table_options
from studyapp.tables import services
from studyapp.tables.models import Table


def form(table_id: int) -> str:
    """Close the group lobby ``table_id`` and seat its people by their group's condition.

    Returns what happened: "formed", "full" (no condition could take the whole group: its people
    see the study's full page), "empty" or "not a lobby" (someone formed it first)."""
    with transaction.atomic():
        lobby = Table.objects.filter(pk=table_id).first()
        if lobby is None:
            return "not a lobby"
        # The study row first, as joiners take it (study_tables._join_lobby): nobody can take a
        # place while the group forms, and two groups never get the same number.
        study = Study.objects.select_for_update().get(slug=table_study.of(lobby).study)
        lobby = Table.objects.select_for_update().get(pk=table_id)
        if lobby.status != Table.Status.LOBBY:
            return "not a lobby"
        seated = {s.index: s for s in lobby.seats.all() if not s.is_vacant}
        rounds = [
            r
            for r in Round.objects.filter(table_id=table_id)
            .select_related("participant")
            .order_by("seat")
            if r.seat in seated and r.participant.status in Participant.ACTIVE
        ]
        lobby.status = Table.Status.ABORTED
        lobby.finished_at = timezone.now()
        if not rounds:
            lobby.save(update_fields=["status", "finished_at"])
            return "empty"
        pilot = rounds[0].participant.is_pilot
        try:
            draw = assignment.assign_group(study, len(rounds), pilot=pilot)
        except assignment.StudyFull:
            for round_ in rounds:
                _turned_away(round_.participant)
            lobby.options = {**lobby.options, table_study.GROUP_FORMED: "full"}
            lobby.save(update_fields=["status", "finished_at", "options"])
            result = "full"
        else:
            number = (
                study.groups.order_by("-number").values_list("number", flat=True).first() or 0
            ) + 1
            group = StudyGroup.objects.create(
                study=study,
                number=number,
                is_pilot=pilot,
                condition=draw["condition"],
                size=len(rounds),
                assignment=draw,
                lobby_table=table_id,
            )
            lobby.options = {**lobby.options, table_study.GROUP_FORMED: number}
            lobby.save(update_fields=["status", "finished_at", "options"])
            for round_ in rounds:
                member = round_.participant
                member.group = group
                member.condition = group.condition
                member.assignment = {**draw, "group": number}
                member.save(update_fields=["group", "condition", "assignment"])
            _seat_group(study, group, rounds, seated)
            result = "formed"
    services.broadcast(services.table_state(table_id))  # the lobby's page sends everyone on
    return result


def _turned_away(participant: Participant) -> None:
    participant.status = Participant.Status.FULL
    participant.end_reason = "no condition could take the group that formed in the lobby"
    participant.finished_at = timezone.now()
    participant.save(update_fields=["status", "end_reason", "finished_at"])


def _seat_group(study: Study, group: StudyGroup, rounds: list[Round], seated: dict) -> list[int]:
    """Tables of the group's condition for its members (their rounds now point there)."""
    merged = designs.effective(study, group.condition)["design"]
    size = len(designs.person_seats(merged))
    number = rounds[0].number
    tables = []
    for start in range(0, len(rounds), size):
        design, order = arrange(study, merged)  # each table draws its own seat order
        places = designs.person_seats(design)
        chunk = rounds[start : start + len(places)]
        if len(chunk) < len(places) and design["lobby_timeout"] == "exit":
            for round_ in chunk:  # their table would wait for people who are not coming
                lobby_timed_out(round_.participant)
            continue
        holders = dict(zip(places, chunk, strict=False))
        seats: list[dict[str, Any]] = []
        for index, seat in enumerate(design["seats"]):
            if seat["kind"] != designs.PERSON:
                seats.append(agent_seat(seat))
            elif index in holders:
                key = seated[holders[index].seat].session_key
                seats.append({"kind": "human", "session_key": key})
            else:  # a person seat nobody of the group takes: the replacement agent's
                seats.append({"kind": "agent", "agent_spec": design["replacement_spec"]})
        options = {**table_options(chunk[0].participant, number, design), **order}
        options[table_study.GROUP] = group.number
        # A blinded study's table holds its drawn while before it starts, as any of its lobbies
        # does (studyapp.tables.timing.start_hold): opened full, as a lobby, started by its check.
        held = bool(options.get("start_after_seconds"))
        table = open_table(study, number, design, seats, lobby=held, **options)
        for index, round_ in holders.items():
            Round.objects.filter(pk=round_.pk).update(table=table, seat=index)
        tables.append(table.pk)
    return tables

"""The table of a participant's round, made from the study's design through the tables services.

Round ``k`` (1-based) plays case ``k - 1`` of the study's case sequence (:mod:`games.cases`), the
same config as case ``k - 1`` of a model experiment with the study's seed. Twenty Questions tables
are one person's; Who is Undercover tables gather the people of one study, condition and round
in a lobby (in a group design with conditions, the first round's lobby is the study's, and the
group that forms there is drawn its condition: :mod:`studyapp.participants.groups`), whose person seats still empty at the wait limit go to the study's replacement agent
(or, with ``lobby_timeout = "exit"``, the lobby closes and its people get the study's
lobby-timeout code). Every study table carries in ``Table.options`` what the monitor, the driver
(turn deadline, dropout policy, idle limit) and the exports read: study, condition, round, and
the seats meant for people.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import reverse

from games.base import Config
from games.cases import case_config, case_seed
from studyapp.participants import design as designs
from studyapp.participants.models import Participant, Round, Study


def round_config(study: Study, number: int, players: int) -> Config:
    """The game config of round ``number`` (1-based): case ``number - 1`` of the sequence, its
    words in the study's language (games.languages)."""
    options = {"players": players} if study.game == "undercover" else {}
    return case_config(study.game, study.seed, number - 1, language=study.language, **options)


def _shown_policy(study: Any, condition: str) -> str:
    try:
        return designs.effective(study, condition)["shown_policy"] or ""
    except designs.DesignError:
        return study.shown_policy or ""


def table_options(
    participant: Participant, number: int, design: dict[str, Any], *, group_lobby: bool = False
) -> dict:
    study, condition, pilot = participant.study, participant.condition, participant.is_pilot
    person_seats = designs.person_seats(design)
    shared = len(person_seats) > 1
    options: dict[str, Any] = {
        "study": study.slug,
        "condition": condition,
        "round": number,
        # A deadline protects other people at the table from waiting; alone with agents, a person
        # takes the time they need (the idle limit still ends a round someone walked away from),
        # also at a table for several people whose other places the lobby filled with agents.
        "turn_deadline_seconds": study.turn_deadline_seconds if shared else 0,
        "dropout": study.dropout,
        "idle_limit_seconds": study.idle_limit_seconds,
        "person_seats": person_seats,
        # A shared table has one Continue link for everyone: it finds each browser's participant.
        "return_url": reverse("participants:continue", args=[study.slug]),
        # The language the table's pages and boards are shown in (the study's).
        "language": study.language,
        # Blinded (False): the table's pages name no seat's kind and agents take a person's time.
        "agents_disclosed": study.agents_disclosed,
        # Whether the person was shown a strategy text (the study's or the condition's): the
        # export's setting for their games (shown-policy, or none).
        "shown_policy": bool(_shown_policy(study, condition)),
    }
    if shared:
        options["deadline_between_people"] = True
    if not study.agents_disclosed:
        options["agent_think_seconds"] = list(study.agent_think_seconds)
    if study.game == "undercover":
        options.update(
            wait_seconds=design["wait_seconds"],
            lobby_timeout=design["lobby_timeout"],
            replacement_spec=design["replacement_spec"],
            # Pilot bots never share a table with real people, nor people with pilots.
            lobby_kind=f"study:{study.pk}:{condition}:{number}:{'pilot' if pilot else 'people'}",
        )
        if group_lobby:  # people of every condition-to-be meet here (studyapp.participants.groups)
            options["lobby_kind"] = (
                f"study:{study.pk}:group:{number}:{'pilot' if pilot else 'people'}"
            )
            options["group_lobby"] = True
        if study.code_lobby_timeout:
            options["exit_code"] = study.code_lobby_timeout
    return options


def agent_seat(seat: dict[str, Any]) -> dict[str, Any]:
    from studyapp.tables.models import PolicyRecord

    policy = None
    if seat.get("policy") is not None:
        policy = PolicyRecord.objects.filter(pk=seat["policy"]).first()
    return {
        "kind": "agent",
        "agent_spec": seat["spec"],
        "setting": seat.get("setting") or "none",
        "policy": policy,
    }


def seat_list(design: dict[str, Any], session_key: str = "", person: int | None = None) -> list:
    """The services' seat dicts; the person seat ``person`` is held by ``session_key``, the other
    person seats are lobby places."""
    seats = []
    for index, seat in enumerate(design["seats"]):
        if seat["kind"] == designs.PERSON:
            holder = session_key if index == person else ""
            seats.append({"kind": "human", "session_key": holder})
        else:
            seats.append(agent_seat(seat))
    return seats


def create_round(participant: Participant, number: int, session_key: str) -> Round:
    """The table of round ``number`` for this participant, and the round that points at it.
    An Undercover seat may wait in a lobby; a full lobby starts its game once committed."""
    from studyapp.participants import groups

    study = participant.study
    if groups.uses_group_lobby(participant):
        lobby_design = designs.group_lobby_design(study)
        return _join_lobby(participant, number, session_key, lobby_design, group_lobby=True)
    merged = designs.effective(study, participant.condition)
    design = merged["design"]
    if study.game == "undercover":
        return _join_lobby(participant, number, session_key, design)
    from studyapp.tables import services

    person = designs.person_seats(design)[0]
    with transaction.atomic():
        table = services.create_table(
            study.game,
            round_config(study, number, design["players"]),
            seat_list(design, session_key, person),
            seed=case_seed(study.seed, number - 1),
            **table_options(participant, number, design),
        )
        return Round.objects.create(
            participant=participant, number=number, table=table, seat=person
        )


def _join_lobby(
    participant: Participant,
    number: int,
    session_key: str,
    design: dict,
    *,
    group_lobby: bool = False,
) -> Round:
    from studyapp.tables import lobby, services
    from studyapp.tables.models import Seat, Table

    study = participant.study
    options = table_options(participant, number, design, group_lobby=group_lobby)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # one joiner at a time
        lobbies = Table.objects.filter(
            status=Table.Status.LOBBY, options__lobby_kind=options["lobby_kind"]
        )
        seat = lobby.open_place(lobbies)
        if seat is None:
            table = services.create_table(
                study.game,
                round_config(study, number, design["players"]),
                seat_list(design),
                seed=case_seed(study.seed, number - 1),
                lobby=True,
                **options,
            )
            seat = table.seats.filter(kind=Seat.Kind.HUMAN).order_by("index").first()
        full = lobby.take_place(seat, session_key)
        round_ = Round.objects.create(
            participant=participant, number=number, table_id=seat.table_id, seat=seat.index
        )
    lobby.start_if_full(seat.table_id, full)
    return round_

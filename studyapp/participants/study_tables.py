"""The table of a participant's round, made from the study's design through the tables services.

Round ``k`` (1-based) plays case ``k - 1`` of the study's case sequence (:mod:`games.cases`), the
same config as case ``k - 1`` of a model experiment with the study's seed. Twenty Questions tables
are one person's; Who is Undercover tables gather the people of one study, condition and round
in a lobby (in a group design with conditions, the first round's lobby is the study's, and the
group that forms there is drawn its condition: :mod:`studyapp.participants.groups`), whose person seats still empty at the wait limit go to the study's replacement agent
(or, with ``lobby_timeout = "exit"``, the lobby closes and its people get the study's
lobby-timeout code). Every study table carries in ``Table.options`` what the driver reads to play
it (turn deadline, dropout policy, idle limit, the seats meant for people), and in its study part
(:mod:`studyapp.participants.table_study`) what the monitor and the exports read of the study:
study, condition, round, group and the seat order drawn.
"""

from __future__ import annotations

import random
import secrets
from typing import Any

from django.db import transaction
from django.urls import reverse

from games.base import Config
from games.cases import case_config, case_seed
from studyapp.participants import budget, table_study
from studyapp.participants import design as designs
from studyapp.participants.models import Participant, Round, Study
from studyapp.tables import lobby, services, think
from studyapp.tables.models import PolicyRecord, Seat, Table


def round_config(study: Study, number: int, players: int) -> Config:
    """The game config of round ``number`` (1-based): case ``number - 1`` of the sequence, its
    words in the study's language (games.languages)."""
    options = {"players": players} if study.game == "undercover" else {}
    return case_config(study.game, study.seed, number - 1, language=study.language, **options)


def open_table(
    study: Study, number: int, design: dict[str, Any], seats: list[dict], /, **options: Any
) -> Table:
    """A table of round ``number`` (1-based) seating ``design``: the round's case config and
    seed (case ``number - 1`` of the study's sequence), ``seats`` as the services take them,
    ``options`` the table's (:func:`table_options`, the seat order, ``lobby``, ``group``; their
    ``study`` is the slug, hence the positional-only parameters). A table that could pass the
    study's model budget seats the stand-in in its models' place (:mod:`.budget`). The study's
    part of the options (study, condition, round, group, seat order) is kept with the study, not
    in the table's options (:mod:`studyapp.participants.table_study`)."""
    seats, options = budget.seats_within(study, seats, options)
    part = table_study.split(options)
    with transaction.atomic():
        table = services.create_table(
            study.game,
            round_config(study, number, design["players"]),
            seats,
            seed=case_seed(study.seed, number - 1),
            **options,
        )
        table_study.record(table, part)
    return table


def _shown_policy(study: Any, condition: str) -> str:
    try:
        return designs.effective(study, condition)["shown_policy"] or ""
    except designs.DesignError:
        return study.shown_policy or ""


# The while a blinded study's lobby holds before it starts, even when full: [shortest, longest]
# seconds (cut to the lobby's wait), drawn per table.
HOLD_SECONDS = (5.0, 45.0)


def arrange(study: Study, design: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The design as one table seats it, and what to record of the seat order in its options.

    Who is Undercover draws, per table, which design slot sits at which seat (seat *k* speaks
    *k*-th in every clue round), so people do not always sit first and speak first: a fresh seed
    per table (``seat_order_seed``) shuffles the slots, and ``seat_slots[k]`` is the design slot
    at seat *k*. ``seat_order = "fixed"`` in the design pins every slot to its own seat, as do
    Twenty Questions' seats, which are roles (questioner 0, oracle 1)."""
    count = len(design["seats"])
    slots = list(range(count))
    recorded: dict[str, Any] = {"seat_order": designs.FIXED, "seat_slots": slots}
    if study.game == "undercover" and design.get("seat_order", designs.DRAWN) == designs.DRAWN:
        seed = secrets.randbelow(2**31)
        random.Random(seed).shuffle(slots)
        recorded = {"seat_order": designs.DRAWN, "seat_order_seed": seed, "seat_slots": slots}
    return {**design, "seats": [design["seats"][slot] for slot in slots]}, recorded


def table_options(
    participant: Participant, number: int, design: dict[str, Any], *, group_lobby: bool = False
) -> dict:
    study, condition, pilot = participant.study, participant.condition, participant.is_pilot
    person_seats = designs.person_seats(design)
    # A blinded study keeps one timing rule for every seat whoever sits at the others: the turn
    # deadline (and its countdown) applies at every table, never only where a second person is
    # (which would tell a person that the others are agents). A disclosed study spares a person
    # alone with agents the deadline.
    blinded = not study.agents_disclosed
    shared = len(person_seats) > 1 or blinded
    options: dict[str, Any] = {
        table_study.STUDY: study.slug,
        table_study.CONDITION: condition,
        table_study.ROUND: number,
        # A deadline protects other people at the table from waiting; alone with agents, a person
        # takes the time they need (the idle limit still ends a round someone walked away from),
        # also at a table for several people whose other places the lobby filled with agents.
        "turn_deadline_seconds": study.turn_deadline_seconds if shared else 0,
        "dropout": study.dropout,
        # the idle policy: a missed deadline is a missed turn; only this many in a row, or the
        # idle limit, take the person out of the study (studyapp.tables.driver.miss_turn)
        "missed_turns_limit": study.missed_turns_limit,
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
    if shared and not blinded:
        options["deadline_between_people"] = True
    if not study.agents_disclosed:
        # every kind of move's bounds, the study's or the defaults (studyapp.tables.think)
        options["agent_think_seconds"] = think.resolved(study.agent_think_seconds)
        # Each table's agents draw their think times from a seed of its own (per move), never a
        # sequence shared by the tables of a round (whose game seed is the same).
        options["think_seed"] = secrets.randbelow(2**31)
    if study.game == "undercover":
        options.update(
            wait_seconds=design["wait_seconds"],
            lobby_timeout=design["lobby_timeout"],
            replacement_spec=design["replacement_spec"],
        )
        if design.get("model_clue_form"):  # off by default: a model's own words are measured
            options["model_clue_form"] = True
        # Pilot bots never share a table with real people, nor people with pilots.
        kind = f"study:{study.pk}:{condition}:{number}:{'pilot' if pilot else 'people'}"
        options[table_study.LOBBY_KIND] = kind
        if blinded and design["wait_seconds"] > 0 and not group_lobby:
            # A blinded lobby starts no sooner than a drawn while even when full, so a table whose
            # other places are agents' (full at once) does not start at once where one waiting
            # for people would not: studyapp.tables.timing.start_hold.
            high = min(float(design["wait_seconds"]), HOLD_SECONDS[1])
            low = min(HOLD_SECONDS[0], high)
            options["start_after_seconds"] = round(
                random.Random(secrets.token_hex()).uniform(low, high), 1
            )
        if group_lobby:  # people of every condition-to-be meet here (studyapp.participants.groups)
            options[table_study.LOBBY_KIND] = (
                f"study:{study.pk}:group:{number}:{'pilot' if pilot else 'people'}"
            )
            options[table_study.GROUP_LOBBY] = True
        if study.code_lobby_timeout:
            options["exit_code"] = study.code_lobby_timeout
    return options


def agent_seat(seat: dict[str, Any]) -> dict[str, Any]:
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
    study = participant.study
    if designs.uses_group_lobby(participant):
        lobby_design = designs.group_lobby_design(study)
        return _join_lobby(participant, number, session_key, lobby_design, group_lobby=True)
    merged = designs.effective(study, participant.condition)
    design = merged["design"]
    if study.game == "undercover":
        return _join_lobby(participant, number, session_key, design)
    design, order = arrange(study, design)
    person = designs.person_seats(design)[0]
    with transaction.atomic():
        table = open_table(
            study,
            number,
            design,
            seat_list(design, session_key, person),
            **table_options(participant, number, design),
            **order,
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
    study = participant.study
    options = table_options(participant, number, design, group_lobby=group_lobby)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # one joiner at a time
        lobbies = Table.objects.filter(
            table_study.in_lobby(options[table_study.LOBBY_KIND]), status=Table.Status.LOBBY
        )
        seat = lobby.open_place(lobbies)
        if seat is None:
            if not group_lobby:  # a group's lobby is never played: its tables draw their own
                design, order = arrange(study, design)
                options = {**table_options(participant, number, design), **order}
            table = open_table(study, number, design, seat_list(design), lobby=True, **options)
            seat = table.seats.filter(kind=Seat.Kind.HUMAN).order_by("index").first()
        full = lobby.take_place(seat, session_key)
        round_ = Round.objects.create(
            participant=participant, number=number, table_id=seat.table_id, seat=seat.index
        )
    lobby.start_if_full(seat.table_id, full)
    return round_

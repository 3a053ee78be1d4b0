"""A seat plan: how an experiment seats a study's table design, so a model arm plays the games the
study's people played (DESIGN, "A model arm is the people's twin").

Without a plan an experiment seats its model everywhere (the oracle aside) and draws the scored
seat from a stream of its own. With one, design slot *k* is either the model (a slot that was a
person's at the study's tables) or the agent spec that sat there for the people; the table has
as many seats as the design, its words are in the study's language, and the scored seat is one of
the model's, holding in round *r* of track *i* the role that person *i* of the study held in
their round *r + 1*. Pure Python: the dashboard builds the plan from a study, this module reads
nothing else.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.base import Config

MODEL = "model"  # a design slot the arm's model plays (a person's at the study's tables)
DRAWN, FIXED = "drawn", "fixed"
PEOPLE_ROLES = "people"  # the scored-role rule of a plan that follows the people's roles
UNDERCOVER_ROLES = ("normal", "difference")
PLAN_KEYS = {"seats", "language", "roles", "seat_order", "condition"}


@dataclass(frozen=True)
class SeatPlan:
    """``seats``: per design slot, :data:`MODEL` or an agent spec; ``language``: the words' and
    the rules' language; ``roles``: per twin (a person of the study, in a fixed order), the
    Undercover role they held in each round, ``""`` for a round they did not play (then drawn);
    empty when no person played yet; ``seat_order``: ``drawn`` (each game draws which slot sits
    where, as each study table does) or ``fixed``; ``condition``: the study condition the plan
    is the design of."""

    seats: tuple[str, ...]
    language: str = "en"
    roles: tuple[tuple[str, ...], ...] = ()
    seat_order: str = DRAWN
    condition: str = ""

    def __post_init__(self) -> None:
        if not self.seats or MODEL not in self.seats:
            raise ValueError(f"seat_plan.seats must name at least one {MODEL!r} slot")
        for index, spec in enumerate(self.seats):
            if not isinstance(spec, str) or not spec or (spec != MODEL and ":" not in spec):
                raise ValueError(
                    f"seat_plan.seats[{index}] must be {MODEL!r} or a spec such as offline:kb, "
                    f"not {spec!r}"
                )
        if self.seat_order not in (DRAWN, FIXED):
            raise ValueError("seat_plan.seat_order must be 'drawn' or 'fixed'")
        for twin, rounds in enumerate(self.roles):
            wrong = [role for role in rounds if role not in ("", *UNDERCOVER_ROLES)]
            if wrong:
                raise ValueError(
                    f"seat_plan.roles[{twin}] holds {wrong[0]!r}; a role is normal, difference, "
                    "or empty (a round the person did not play)"
                )

    @classmethod
    def from_value(cls, value: SeatPlan | Mapping[str, Any]) -> SeatPlan:
        """A plan from itself or from its JSON object (an experiment job's parameters)."""
        if isinstance(value, SeatPlan):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"seat_plan must be an object, not {value!r}")
        unknown = set(value) - PLAN_KEYS
        if unknown:
            raise ValueError(f"seat_plan has unknown keys: {', '.join(sorted(unknown))}")
        if not isinstance(value.get("seats"), Sequence) or isinstance(value.get("seats"), str):
            raise ValueError("seat_plan.seats must be a list of slots")
        return cls(
            seats=tuple(value["seats"]),
            language=str(value.get("language") or "en"),
            roles=tuple(tuple(str(r or "") for r in rounds) for rounds in value.get("roles") or ()),
            seat_order=str(value.get("seat_order") or DRAWN),
            condition=str(value.get("condition") or ""),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "seats": list(self.seats),
            "language": self.language,
            "roles": [list(rounds) for rounds in self.roles],
            "seat_order": self.seat_order,
            "condition": self.condition,
        }

    @property
    def players(self) -> int:
        return len(self.seats)

    def role(self, sample: int, round_: int) -> str | None:
        """The role the scored seat holds in ``round_`` of track ``sample``: its twin's (track
        ``i`` follows person ``i`` modulo the people); None (drawn) without one."""
        if not self.roles:
            return None
        rounds = self.roles[sample % len(self.roles)]
        return (rounds[round_] if round_ < len(rounds) else "") or None

    def opponents(self) -> str:
        """The design's agents, as comparisons name them ("offline:kb ×4"); "" with none."""
        return opponents_text(spec for spec in self.seats if spec != MODEL)


def opponents_text(specs: Sequence[str] | Any) -> str:
    """Agent specs as one text, each with its count, in a fixed order: "offline:kb ×4"."""
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec] = counts.get(spec, 0) + 1
    return ", ".join(f"{spec} ×{n}" for spec, n in sorted(counts.items()))


@dataclass(frozen=True)
class Seating:
    """One game of a plan: the spec at every seat (:data:`MODEL` for the model's), the seat
    scored, and the design slot at every seat."""

    specs: tuple[str, ...]
    evaluated: int
    slots: tuple[int, ...]
    model_seats: tuple[int, ...] = ()  # the seats the model plays


def seat_game(plan: SeatPlan, config: Config, seed: int, sample: int, round_: int) -> Seating:
    """Where each slot sits in this game and which model seat is scored.

    A drawn order shuffles the slots from the game's own stream (as each study table draws its
    own); when the twin's role asks for it, one model slot then trades places with the slot at a
    seat of that role (the difference seat, or a normal one), so the scored seat holds the role
    its person held, and the other seats stay as drawn. A fixed order keeps slot *k* at seat *k*:
    the people's roles came from the same config, so the model's seats hold theirs already."""
    rng = random.Random(f"{seed}:{sample}:{round_}:seat-plan")
    slots = list(range(plan.players))
    if plan.seat_order == DRAWN:
        rng.shuffle(slots)
    role = plan.role(sample, round_)
    difference = config.get("difference_seat")

    def holds(seat: int) -> str:
        return "difference" if seat == difference else "normal"

    def model_seats() -> list[int]:
        return [seat for seat, slot in enumerate(slots) if plan.seats[slot] == MODEL]

    drawn = role is not None and difference is not None and plan.seat_order == DRAWN
    if drawn and not any(holds(seat) == role for seat in model_seats()):
        target = rng.choice([s for s in range(plan.players) if holds(s) == role])
        mine = rng.choice(model_seats())
        slots[target], slots[mine] = slots[mine], slots[target]
    candidates = model_seats()
    if role is not None and difference is not None:
        candidates = [seat for seat in candidates if holds(seat) == role] or candidates
    evaluated = rng.choice(candidates)
    specs = tuple(plan.seats[slot] for slot in slots)
    return Seating(specs, evaluated, tuple(slots), tuple(model_seats()))


def plan_marks(spec: Any, seating: Seating) -> dict[str, Any]:
    """What a game's record says of its table, so an analysis can tell like from unlike: the
    language, the number of players, every seat's spec (``seat_specs``), the seats the model
    played (``model_seats``), the other seats' agents (``opponents``, Undercover), the design
    slot at every seat and the study condition (a plan's)."""
    plan: SeatPlan | None = spec.seat_plan
    specs = list(seating.specs)
    mine = list(seating.model_seats) if plan is not None else [seating.evaluated]
    marks: dict[str, Any] = {
        "language": spec.language,
        "players": len(specs),
        "seat_specs": specs,
        "model_seats": mine,
    }
    if spec.game == "undercover":
        marks["opponents"] = opponents_text([s for seat, s in enumerate(specs) if seat not in mine])
    if plan is not None:
        marks["seat_slots"] = list(seating.slots)
        marks["condition"] = plan.condition
    return marks

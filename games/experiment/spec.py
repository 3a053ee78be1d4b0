"""What an experiment runs: a model under a setting (:class:`ExperimentSpec`), and the seeds of
its games (test cases are :func:`games.cases.case_seed`'s, earlier games :func:`warmup_seed`'s,
the scored seat :func:`evaluated_seat`'s)."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from games import get_engine
from games.base import Config
from games.experience import steps
from games.experience.context import (
    check_setting,
)
from games.experiment.seating import PEOPLE_ROLES, SeatPlan
from games.llm.providers import (
    ModelOptions,
    ProviderConfig,
    config_from_env,
    model_options,
    parse_spec,
)
from games.mathtest import GAME as MATH
from games.mathtest import load_tasks

DEFAULT_CASES = 32
DEFAULT_SAMPLES = 3
DEFAULT_ROUNDS = 50
DEFAULT_EXPERIENCE_GAMES = 5
MATH_MAX_TOKENS = 4096  # a worked solution; --max-tokens or a reasoning model's budget replaces it
# Undercover: which seat is scored. "difference" the seat holding the different word (the paper's
# Tables 2-4: a uniformly drawn seat would win at least 1/players, above several of its cells),
# "normal" a seat drawn among the others, "any" a seat drawn uniformly among all.
EVALUATED_ROLES = ("normal", "difference", "any")
ANY_ROLE = "any"
PAPER_ROLE = "difference"  # what the paper's Undercover numbers imply (docs/reproduce.md)


@dataclass(frozen=True)
class ExperimentSpec:
    """One model under one setting. ``rounds`` is the number of games per sample; left as None
    it is ``DEFAULT_ROUNDS`` for ``cumulative`` and ``cases`` otherwise (pass ``rounds`` to run a
    ``none`` baseline as long as a cumulative run)."""

    game: str
    model: str
    setting: str = "none"
    cases: int = DEFAULT_CASES
    samples: int = DEFAULT_SAMPLES
    rounds: int | None = None
    seed: int = 0
    oracle: str | None = None
    temperature: float = 1.0
    experience_games: int = DEFAULT_EXPERIENCE_GAMES
    players: int = 5
    policy: str | None = None  # human-policy text; the shipped default when None
    experiment: str = "experiment"
    # The evaluated model's output budget per call, OpenAI reasoning effort and Anthropic thinking
    # budget; None = the model's defaults (games.llm.providers.model_options).
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    memory_word_cap: int = steps.MEMORY_WORD_CAP  # the cumulative curator's length limit
    # Undercover: which role the evaluated seat holds (EVALUATED_ROLES); None = "any": a seat
    # drawn uniformly (the difference 1/players of the time, as at a table of people). The
    # command lines default to the paper's "difference" (PAPER_ROLE).
    evaluated_role: str | None = None
    # Output budgets per model spec (the oracle and the other seats included), e.g.
    # (("openai-compatible:deepseek-r1", 32768),); the evaluated model's max_tokens wins.
    max_tokens_for: tuple[tuple[str, int], ...] = ()
    tasks: str | None = None  # math: the JSONL task file (games.mathtest)
    # math: where the earlier games' problems are drawn from; None = the test file itself (the
    # paper does not say; its problems are then seen, and judged, before the test).
    experience_tasks: str | None = None
    # Undercover: the engine's cap on vote rounds (None: its default, 6); the paper states none.
    max_vote_rounds: int | None = None
    # A study's table design to play (games.experiment.seating): the model in the people's seats,
    # the design's agents in theirs, its players, language and the people's roles. A JSON
    # object (a job's parameters) is read into a SeatPlan. None: the model at every seat.
    seat_plan: SeatPlan | None = None

    def __post_init__(self) -> None:
        check_setting(self.setting)
        if self.seat_plan is not None:
            object.__setattr__(self, "seat_plan", SeatPlan.from_value(self.seat_plan))
            self._check_plan(self.seat_plan)
        if self.game == MATH:
            if not self.tasks:
                raise ValueError("the math testbed needs a task file (tasks=..., --math-tasks)")
            load_tasks(self.tasks)  # raises TaskFileError naming the bad line
            if self.experience_tasks:
                load_tasks(self.experience_tasks)
            if self.setting == "cumulative":
                raise ValueError("the math testbed has no cumulative setting")
            if self.setting == "human-policy" and not self.policy:
                raise ValueError("math has no shipped human policy: pass one (--human-policy)")
        else:
            get_engine(self.game)
            if self.experience_tasks:
                raise ValueError("experience_tasks is for the math testbed only")
        parse_spec(self.model)
        self.options_for(self.model)  # raises on an unknown effort or a too small budget
        if self.memory_word_cap < 1:
            raise ValueError("memory_word_cap must be positive")
        if self.max_vote_rounds is not None:
            if self.game != "undercover":
                raise ValueError("max_vote_rounds is for undercover only")
            if self.max_vote_rounds < 1:
                raise ValueError("max_vote_rounds must be at least 1")
        if self.evaluated_role is not None:
            if self.game != "undercover":
                raise ValueError("evaluated_role is for undercover only")
            if self.evaluated_role not in EVALUATED_ROLES:
                raise ValueError(f"evaluated_role must be one of {', '.join(EVALUATED_ROLES)}")

    def _check_plan(self, plan: SeatPlan) -> None:
        if self.game == MATH:
            raise ValueError("seat_plan: the math testbed has no table to seat")
        if self.evaluated_role is not None:
            raise ValueError(
                "seat_plan: the plan's roles choose the scored seat, not evaluated_role"
            )
        if self.game == "twenty-questions" and (plan.players != 2 or plan.seats[0] != "model"):
            raise ValueError(
                "seat_plan: Twenty Questions seats the model as the questioner (slot 0)"
            )
        if self.game == "undercover":
            try:  # 4 to 8 seats
                get_engine(self.game).new_config(0, players=plan.players)
            except ValueError as err:
                raise ValueError(f"seat_plan: {err}") from err
        for spec in plan.seats:
            if spec != "model":
                parse_spec(spec)

    @property
    def players_at_table(self) -> int:
        """Undercover's players: the plan's seats, else ``players``."""
        return self.seat_plan.players if self.seat_plan is not None else self.players

    @property
    def language(self) -> str:
        return self.seat_plan.language if self.seat_plan is not None else "en"

    @property
    def scored_role(self) -> str | None:
        """The role rule every record of this spec names (``evaluated_role`` in the record):
        Undercover's ``evaluated_role`` with None as "any", ``people`` for a plan that follows the
        people's roles; None for the other games."""
        if self.game != "undercover":
            return None
        if self.seat_plan is not None and self.seat_plan.roles:
            return PEOPLE_ROLES
        return self.evaluated_role or ANY_ROLE

    @property
    def model_options(self) -> ModelOptions:
        """The evaluated model's options, defaults filled in; recorded in every record."""
        return self.options_for(self.model)

    def options_for(self, model: str) -> ModelOptions:
        """Options for a model of this spec: the evaluated one's as set, any other's defaults."""
        if parse_spec(model)[0] == "offline":
            return ModelOptions()
        budget = dict(self.max_tokens_for).get(model)
        if model != self.model:
            return model_options(model, max_tokens=budget)
        return model_options(
            model,
            max_tokens=self.max_tokens or budget,
            reasoning_effort=self.reasoning_effort,
            thinking_budget=self.thinking_budget,
        )

    @property
    def games_per_sample(self) -> int:
        if self.game == MATH:  # every problem once, in file order, at most ``cases`` of them
            return min(self.rounds or self.cases, len(load_tasks(self.tasks)))
        if self.rounds is not None:
            return self.rounds
        return DEFAULT_ROUNDS if self.setting == "cumulative" else self.cases

    @property
    def oracle_spec(self) -> str:
        """The oracle is the same model unless set; offline questioners get the offline oracle."""
        if self.oracle:
            return self.oracle
        return "offline:kb" if self.model.startswith("offline:") else self.model


def derive_seed(*parts: object) -> int:
    return random.Random(":".join(str(p) for p in parts)).randrange(2**31)


def warmup_seed(seed: int, sample: int, index: int) -> int:
    """The seed of the ``index``-th earlier game of a sample (never a test case)."""
    return derive_seed(seed, "warmup", sample, index)


def evaluated_seat(game: str, seed: int, config: Config, role: str | None = None) -> int:
    """The seat whose play is scored. Twenty Questions: the questioner. Undercover: a seat drawn
    from a stream of its own (``seed`` salted), independent of the draw that placed the
    difference, so it holds the difference word 1/players of the time; ``role`` restricts the
    draw to the difference seat or the normal seats ("any" or None: no restriction)."""
    if game != "undercover":
        return 0
    seats = list(range(config["players"]))
    if role == "difference":
        return config["difference_seat"]
    if role == "normal":
        seats.remove(config["difference_seat"])
    return random.Random(derive_seed(seed, "evaluated-seat")).choice(seats)


# The paper does not say which seat it scored; the note says the default is read from its numbers.
DIFFERENCE_INFERRED = "inferred; --evaluated-role normal scores a normal seat"


def role_note(role: str | None, players: int) -> str:
    """What a table's note says about the Undercover seat scored. With every seat played by the
    same model, a uniformly drawn seat wins at least 1/players of the games (the civilians' wins
    weigh (players - 1)/players, the difference's 1/players, and one side always wins). The
    difference seat is the paper's by inference (its numbers rule out any seat, not a normal one;
    docs/reproduce.md), and its note says so."""
    if role == "difference":
        return f"scored: the difference seat ({DIFFERENCE_INFERRED})"
    if role == "normal":
        return "scored: a normal seat"
    return f"scored: any seat, drawn uniformly (at least 1/{players} = {1 / players:.2f} won)"


def provider_configs(args: Any) -> Callable[[str], ProviderConfig]:
    """How a run reaches each model: the environment's provider settings (``config_from_env``)
    with the command line's timeout, retries and concurrency, made once per spec."""
    configs: dict[str, ProviderConfig] = {}

    def config_for(spec: str) -> ProviderConfig:
        if spec not in configs:
            configs[spec] = replace(
                config_from_env(spec, os.environ),
                timeout=args.timeout,
                max_retries=args.max_retries,
                concurrency=args.concurrency,
            )
        return configs[spec]

    return config_for

"""Runs the paper's evaluation protocol and writes every finished game as one JSONL line.

An experiment is a list of :class:`ExperimentSpec` (a model under a setting) and a seed. For each
spec and sample index it runs one *track*: a sequence of games, one per round, on a fixed sequence
of test cases (case ``r`` has the same config in every setting and sample, so settings are
compared on identical games). Tracks run concurrently; inside a track the games of the fixed
settings run concurrently too, while the cumulative setting plays its rounds in order because each
game's policy is the memory rewritten after the previous one.

Resume: lines already in the output are never replayed. The policy text in force is stored in
every record, so a resumed track reuses it instead of deriving it again, and a cumulative track
rebuilds its next memory from its last finished record.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from games import get_engine, languages
from games.base import Agent, Config
from games.cases import case_config, case_seed  # case_seed stays importable from here
from games.experience import steps
from games.experience.context import (
    Experience,
    experience_block,
    human_policy,
)
from games.experience.transcript import transcript
from games.experiment.access import ConfigFor, ModelAccess
from games.experiment.mathsolve import solve
from games.experiment.records import (
    append_record,
    check_resumable,
    game_record,
    load_records,
    record_key,
    utc_now,
)
from games.experiment.seating import MODEL, Seating, plan_marks, seat_game
from games.experiment.spec import (
    ExperimentSpec,
    derive_seed,
    evaluated_seat,
    warmup_seed,
)
from games.llm import prompts, render
from games.llm.agents import LLMAgent
from games.llm.cache import ResponseCache
from games.llm.providers import (
    Provider,
    ProviderConfig,
)
from games.llm.usage import Usage
from games.mathtest import GAME as MATH
from games.mathtest import MathTask, load_tasks
from games.runner import play_game
from games.undercover.words import PAIRS


@dataclass
class Runner(ModelAccess):
    """Plays the games of a list of specs; see :func:`run_experiment`."""

    out: Path
    config_for: ConfigFor = field(default=lambda spec: ProviderConfig())
    cache: ResponseCache | None = None
    provider: Provider | None = None  # overrides every non-offline spec (a local model)
    parallel: int = 64
    progress: bool = True
    prompts: Mapping[str, Any] | None = None  # the prompt set's hashes; the shipped set's if None
    done: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._games = asyncio.Semaphore(self.parallel)
        self._bar: tqdm | None = None
        self._provenance: dict[tuple[str, ...], dict[str, Any]] = {}

    def seating(
        self, spec: ExperimentSpec, config: Config, seed: int, sample: int, round_: int | None
    ) -> Seating:
        """Who sits where and which seat is scored. With a seat plan, the plan's (the model in
        the people's slots, the design's agents in theirs; ``round_`` None, an earlier game: the
        scored role drawn); else the model at every seat, the oracle aside, and the scored seat
        from its own stream (``evaluated_seat``)."""
        labels = get_engine(spec.game).seats(config)
        if spec.seat_plan is not None:
            placed = seat_game(
                spec.seat_plan, config, seed, sample, -1 if round_ is None else round_
            )
            specs = tuple(spec.model if s == MODEL else s for s in placed.specs)
            if spec.game == "twenty-questions":  # the oracle's slot is the study's oracle
                specs = (spec.model, placed.specs[1])
            return Seating(specs, placed.evaluated, placed.slots, placed.model_seats)
        specs = tuple(spec.oracle_spec if label == "oracle" else spec.model for label in labels)
        return Seating(specs, evaluated_seat(spec.game, seed, config, spec.evaluated_role), ())

    def seat_agents(
        self,
        spec: ExperimentSpec,
        config: Config,
        seed: int,
        seating: Seating,
        sample: int,
        policy: str | None,
        setting: str,
    ) -> dict[int, Agent]:
        """Every seat's agent: the evaluated seat gets the setting and its text; the others
        (the oracle, the other Undercover players, the design's agents) play without
        experience.

        The agents' cache draw mixes the sample index with the game's seed. Games of one sample
        can show a model the very same prompt (every Twenty Questions game opens alike); with the
        bare sample index they would share one cached reply, so a rerun from the cache would not
        replay the first run, whose concurrent calls each got their own reply."""
        engine = get_engine(spec.game)
        draw = derive_seed(sample, seed)
        agents: dict[int, Agent] = {}
        for seat, label in enumerate(engine.seats(config)):
            model = seating.specs[seat]
            mine = seat == seating.evaluated
            # a design's agent plays as it did at the people's tables: in their rules of form
            designed = spec.seat_plan is not None and seat not in seating.model_seats
            agents[seat] = self.agent(
                model,
                spec.game,
                label,
                seed + seat,
                spec.options_for(model),
                language=spec.language,
                sentences=designed,
                setting=setting if mine else "none",
                policy=policy if mine else None,
                temperature=spec.temperature,
                sample=draw,
            )
        return agents

    def engine_options(self, spec: ExperimentSpec) -> dict[str, Any]:
        if spec.game == MATH:
            return {}
        if spec.game != "undercover":
            return {}
        if spec.max_vote_rounds is not None:
            return {"players": spec.players_at_table, "max_vote_rounds": spec.max_vote_rounds}
        return {"players": spec.players_at_table}

    def warmup_config(self, spec: ExperimentSpec, sample: int, index: int, seed: int) -> Config:
        """The config of an earlier game. Math: the ``index``-th of N distinct problems drawn
        for this sample from ``experience_tasks``, else the test file (the paper does not say)."""
        if spec.game != MATH:
            return self.new_config(spec, seed)
        tasks = load_tasks(spec.experience_tasks or spec.tasks)
        order = random.Random(derive_seed(spec.seed, "math-warmup", sample)).sample(
            range(len(tasks)), len(tasks)
        )
        return tasks[order[index % len(tasks)]].as_config()

    def new_config(self, spec: ExperimentSpec, seed: int) -> Config:
        """A config from a seed alone: the earlier (warm-up) games, never a test case; in the
        seat plan's language, as its test cases are."""
        options = self.engine_options(spec)
        if spec.language != "en" and spec.game == "undercover":
            pair = random.Random(seed).choice(PAIRS)
            options["pair"] = languages.undercover_pair(pair, spec.language)
        elif spec.language != "en":
            options["language"] = spec.language
        return get_engine(spec.game).new_config(seed, **options)

    def case_config(self, spec: ExperimentSpec, case: int) -> Config:
        """Test case ``case``: games.cases's sequence, words drawn without replacement; for
        math, problem ``case`` of the task file."""
        if spec.game == MATH:
            return load_tasks(spec.tasks)[case].as_config()
        options = self.engine_options(spec)
        return case_config(spec.game, spec.seed, case, language=spec.language, **options)

    async def play(
        self,
        spec: ExperimentSpec,
        seed: int,
        sample: int,
        policy: str | None,
        setting: str,
        config: Config | None = None,
        seating: Seating | None = None,
    ) -> tuple[Config, list[dict[str, Any]], dict[int, dict[str, Any]], int, Usage, str, str, list]:
        """One game (``config``, else one made from ``seed``; seated as ``seating`` says, else
        as :meth:`seating` seats an earlier game); returns config, events, outcome, evaluated
        seat, usage, times and the moves agents did not make themselves, each with its reason
        (see ``play_game``)."""
        config = config if config is not None else self.new_config(spec, seed)
        if spec.game == MATH:
            provider = self.provider_for(spec.model, spec.model_options)
            rules = self.rules(spec)
            return await solve(
                provider, rules, self._games, spec, seed, sample, policy, setting, config
            )
        seating = seating or self.seating(spec, config, seed, sample, None)
        evaluated = seating.evaluated
        agents = self.seat_agents(spec, config, seed, seating, sample, policy, setting)
        async with self._games:
            started = utc_now()
            failures: list[dict[str, Any]] = []
            state, events = await play_game(
                get_engine(spec.game), config, agents, failures=failures
            )
            finished = utc_now()
        usage = Usage()
        for agent in agents.values():
            if isinstance(agent, LLMAgent):
                usage.merge(agent.usage)
        outcome = get_engine(spec.game).outcome(state)
        return config, events, outcome, evaluated, usage, started, finished, failures

    async def test_game(
        self, spec: ExperimentSpec, sample: int, round_: int, policy: str | None, extra: Usage
    ) -> dict[str, Any]:
        """Play round ``round_`` of a track and append its record to the output."""
        seed = case_seed(spec.seed, round_)
        config = self.case_config(spec, round_)
        seating = None if spec.game == MATH else self.seating(spec, config, seed, sample, round_)
        config, events, outcome, evaluated, usage, started, finished, failures = await self.play(
            spec, seed, sample, policy, spec.setting, config, seating
        )
        usage.merge(extra)
        record = game_record(
            spec,
            sample,
            round_,
            seed,
            (config, events, outcome, evaluated, usage, started, finished, failures),
            policy,
            self.provenance_for(spec),
        )
        if seating is not None:
            record.update(plan_marks(spec, seating))
        self.write(record)
        return record

    def write(self, record: dict[str, Any]) -> None:
        append_record(self.out, record)
        self.done[record_key(record)] = record
        if self._bar is not None:
            self._bar.update(1)

    def story(self, spec: ExperimentSpec, config: Config, events: list, seat: int) -> str:
        """A finished game (or problem) as the reflection, policy and curator prompts show it."""
        if spec.game != MATH:
            return transcript(spec.game, config, events, seat)
        task = MathTask.from_config(config)
        return prompts.render(
            "math_transcript",
            question=task.question,
            options=task.options_text(),
            answer=events[0].get("answer") or "(none given)",
        )

    def rules(self, spec: ExperimentSpec) -> str:
        if spec.game == MATH:
            return prompts.text("math_rules")
        return render.rules_for_config(spec.game, self.case_config(spec, 0))

    async def earlier_games(
        self, spec: ExperimentSpec, sample: int, usage: Usage
    ) -> list[Experience]:
        """N games without experience, each with the model's reflection on it."""
        provider = self.provider_for(spec.model, spec.model_options)
        rules = self.rules(spec)

        async def one(index: int) -> Experience:
            seed = warmup_seed(spec.seed, sample, index)
            config = self.warmup_config(spec, sample, index, seed)
            config, events, outcome, evaluated, game_usage, _, _, _ = await self.play(
                spec, seed, sample, None, "none", config
            )
            usage.merge(game_usage)
            story = self.story(spec, config, events, evaluated)
            return await steps.reflect(
                provider,
                rules,
                story,
                outcome[evaluated]["reward"],
                usage=usage,
                temperature=spec.temperature,
                sample=sample,
            )

        return list(await asyncio.gather(*(one(i) for i in range(spec.experience_games))))

    async def fixed_policy(self, spec: ExperimentSpec, sample: int, usage: Usage) -> str | None:
        """The text in force for a fixed setting, derived once per sample."""
        if spec.setting == "none":
            return None
        if spec.setting == "human-policy":
            return spec.policy or human_policy(spec.game)
        provider = self.provider_for(spec.model, spec.model_options)
        if spec.setting == "rule-policy":
            return await steps.write_rule_policy(
                provider, self.rules(spec), usage=usage, temperature=spec.temperature, sample=sample
            )
        experiences = await self.earlier_games(spec, sample, usage)
        if spec.setting == "full-experience":
            return experience_block(experiences)
        return await steps.write_experience_policy(
            provider,
            self.rules(spec),
            experiences,
            usage=usage,
            temperature=spec.temperature,
            sample=sample,
        )

    async def fixed_track(self, spec: ExperimentSpec, sample: int) -> None:
        rounds = range(spec.games_per_sample)
        finished = [self.done.get((spec.game, spec.model, spec.setting, sample, r)) for r in rounds]
        todo = [r for r, rec in zip(rounds, finished, strict=True) if rec is None]
        if not todo:
            return
        usage = Usage()
        previous = next((rec for rec in finished if rec is not None), None)
        if previous is not None:
            policy = previous["policy"]  # resume: keep the text earlier games were played with
        else:
            policy = await self.fixed_policy(spec, sample, usage)
        # The cost of deriving the policy is booked on the first game this run plays.
        await asyncio.gather(
            *(
                self.test_game(spec, sample, r, policy, usage if i == 0 else Usage())
                for i, r in enumerate(todo)
            )
        )

    async def cumulative_track(self, spec: ExperimentSpec, sample: int) -> None:
        provider = self.provider_for(spec.model, spec.model_options)
        rules = self.rules(spec)
        previous: dict[str, Any] | None = None
        for r in range(spec.games_per_sample):
            done = self.done.get((spec.game, spec.model, spec.setting, sample, r))
            if done is not None:
                previous = done
                continue
            usage = Usage()
            memory = None
            if previous is not None:
                seat = previous["evaluated_seat"]
                story = self.story(spec, previous["config"], previous["events"], seat)
                memory = await steps.curate(
                    provider,
                    rules,
                    previous["policy"],
                    story,
                    previous["reward"],
                    usage=usage,
                    temperature=spec.temperature,
                    sample=sample,
                    word_cap=spec.memory_word_cap,
                )
            previous = await self.test_game(spec, sample, r, memory, usage)

    async def run(self, specs: Iterable[ExperimentSpec]) -> list[dict[str, Any]]:
        specs = list(specs)
        earlier = load_records(self.out)
        check_resumable(specs, earlier, self.out)
        for record in earlier:
            self.done[record_key(record)] = record
        total = sum(
            1
            for spec in specs
            for sample in range(spec.samples)
            for r in range(spec.games_per_sample)
            if (spec.game, spec.model, spec.setting, sample, r) not in self.done
        )
        self._bar = tqdm(total=total, desc="games", unit="game", disable=not self.progress)
        try:
            await asyncio.gather(
                *(
                    (self.cumulative_track if spec.setting == "cumulative" else self.fixed_track)(
                        spec, sample
                    )
                    for spec in specs
                    for sample in range(spec.samples)
                )
            )
        finally:
            self._bar.close()
            self._bar = None
        keys = {(s.game, s.model, s.setting) for s in specs}
        return [rec for key, rec in sorted(self.done.items()) if key[:3] in keys]


async def run_experiment(
    specs: Iterable[ExperimentSpec],
    out: str | Path,
    *,
    config_for: ConfigFor | None = None,
    cache: ResponseCache | None = None,
    provider: Provider | None = None,
    parallel: int = 64,
    progress: bool = True,
    prompts: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run (or resume) every spec, appending finished games to ``out``; returns all records of
    these specs, old and new. ``config_for(spec)`` gives each model's provider config; a
    ``provider`` object, if given, serves every non-offline spec. SDK clients stay open for reuse:
    await ``games.llm.providers.close_clients()`` before the event loop ends. Every record carries
    its provenance (:mod:`games.provenance`), with ``prompts`` as the prompt set's hashes when
    given."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runner = Runner(
        out=out,
        config_for=config_for or (lambda spec: ProviderConfig()),
        cache=cache,
        provider=provider,
        parallel=parallel,
        progress=progress,
        prompts=prompts,
    )
    return await runner.run(specs)

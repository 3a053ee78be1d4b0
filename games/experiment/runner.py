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
import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from games import get_engine
from games.agents import make_agent
from games.base import Agent, Config
from games.cases import case_config, case_seed
from games.experience import steps
from games.experience.context import Experience, check_setting, experience_block, human_policy
from games.experience.transcript import transcript
from games.llm import render
from games.llm.agents import LLMAgent
from games.llm.cache import ResponseCache
from games.llm.providers import (
    REASONING_TIMEOUT,
    ModelOptions,
    Provider,
    ProviderConfig,
    get_provider,
    is_reasoning_model,
    model_options,
    parse_spec,
    server_url,
)
from games.llm.usage import Usage
from games.provenance import prompt_hashes, provenance
from games.runner import play_game

DEFAULT_CASES = 32
DEFAULT_SAMPLES = 3
DEFAULT_ROUNDS = 50
DEFAULT_EXPERIENCE_GAMES = 5


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

    def __post_init__(self) -> None:
        get_engine(self.game)
        check_setting(self.setting)
        parse_spec(self.model)
        self.options_for(self.model)  # raises on an unknown effort or a too small budget
        if self.memory_word_cap < 1:
            raise ValueError("memory_word_cap must be positive")

    @property
    def model_options(self) -> ModelOptions:
        """The evaluated model's options, defaults filled in; recorded in every record."""
        return self.options_for(self.model)

    def options_for(self, model: str) -> ModelOptions:
        """Options for a model of this spec: the evaluated one's as set, any other's defaults."""
        if parse_spec(model)[0] == "offline":
            return ModelOptions()
        if model != self.model:
            return model_options(model)
        return model_options(
            model,
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort,
            thinking_budget=self.thinking_budget,
        )

    @property
    def games_per_sample(self) -> int:
        if self.rounds is not None:
            return self.rounds
        return DEFAULT_ROUNDS if self.setting == "cumulative" else self.cases

    @property
    def oracle_spec(self) -> str:
        """The oracle is the same model unless set; offline questioners get the offline oracle."""
        if self.oracle:
            return self.oracle
        return "offline:kb" if self.model.startswith("offline:") else self.model


def _seed(*parts: object) -> int:
    return random.Random(":".join(str(p) for p in parts)).randrange(2**31)


# ``case_seed`` (imported above, importable from here as before) is games.cases's: test case ``k``
# is the same config as round ``k + 1`` of a human study with the same seed, and its word is
# drawn without replacement.


def warmup_seed(seed: int, sample: int, index: int) -> int:
    """The seed of the ``index``-th earlier game of a sample (never a test case)."""
    return _seed(seed, "warmup", sample, index)


def record_key(record: dict[str, Any]) -> tuple[Any, ...]:
    return (record["game"], record["model"], record["setting"], record["sample"], record["round"])


def load_records(path: Path) -> list[dict[str, Any]]:
    """Finished games already in ``path``. A line cut off by an interrupted write is dropped from
    the file, so the game is played again and the file stays valid JSONL."""
    if not path.exists():
        return []
    raw = path.read_text(encoding="utf-8")
    lines = raw.split("\n")
    records: list[dict[str, Any]] = []
    kept: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
        kept.append(line)
    rewritten = "".join(f"{line}\n" for line in kept)
    if rewritten != raw:
        path.write_text(rewritten, encoding="utf-8")
    return records


ConfigFor = Callable[[str], ProviderConfig]


@dataclass
class Runner:
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

    def server_of(self, spec: str) -> str | None:
        """Where ``spec``'s calls go: its server's address, "local" for a provider object that
        serves every model (a local model), None for rule-based agents."""
        kind, _ = parse_spec(spec)
        if kind == "offline":
            return None
        if self.provider is not None:
            return getattr(self.provider, "server", None) or "local"
        try:
            return server_url(spec, self.config_for(spec))
        except ValueError:  # no address configured: the calls themselves will say so
            return None

    def provenance_for(self, spec: ExperimentSpec) -> dict[str, Any]:
        """What produced this spec's records (games.provenance): code, lock, packages, prompt
        set, and the evaluated model and the oracle with their servers. Computed once per pair."""
        models = {spec.model}
        if spec.game == "twenty-questions":
            models.add(spec.oracle_spec)
        key = tuple(sorted(models))
        if key not in self._provenance:
            prompts = prompt_hashes() if self.prompts is None else self.prompts
            self._provenance[key] = provenance(
                {model: self.server_of(model) for model in key}, prompts=prompts
            )
        return self._provenance[key]

    def provider_for(self, spec: str, options: ModelOptions | None = None) -> Provider:
        """The provider of ``spec`` with its ``options`` (output budget, reasoning, thinking)."""
        kind, _ = parse_spec(spec)
        if self.provider is not None and kind != "offline":
            return self.provider
        config = self.config_for(spec)
        if options is not None and options != ModelOptions():
            config = replace(config, options=options)
            if is_reasoning_model(spec) or options.thinking_budget:
                config = replace(config, timeout=max(config.timeout, REASONING_TIMEOUT))
        return get_provider(spec, config, cache=self.cache)

    def _agent(
        self,
        spec: str,
        game: str,
        role: str,
        seed: int,
        model_options: ModelOptions | None = None,
        **options: Any,
    ) -> Agent:
        kind, _ = parse_spec(spec)
        if kind == "offline":
            return make_agent(spec, game=game, role=role, seed=seed)
        provider = self.provider_for(spec, model_options)
        return make_agent(spec, game=game, role=role, seed=seed, provider=provider, **options)

    def seat_agents(
        self,
        spec: ExperimentSpec,
        config: Config,
        seed: int,
        evaluated: int,
        sample: int,
        policy: str | None,
        setting: str,
    ) -> dict[int, Agent]:
        """Every seat's agent: the evaluated seat gets the setting and its text; the others
        (the oracle, the other Undercover players) play the same model without experience.

        The agents' cache draw mixes the sample index with the game's seed. Games of one sample
        can show a model the very same prompt (every Twenty Questions game opens alike); with the
        bare sample index they would share one cached reply, so a rerun from the cache would not
        replay the first run, whose concurrent calls each got their own reply."""
        engine = get_engine(spec.game)
        draw = _seed(sample, seed)
        agents: dict[int, Agent] = {}
        for seat, label in enumerate(engine.seats(config)):
            model = spec.oracle_spec if label == "oracle" else spec.model
            mine = seat == evaluated
            agents[seat] = self._agent(
                model,
                spec.game,
                label,
                seed + seat,
                spec.options_for(model),
                setting=setting if mine else "none",
                policy=policy if mine else None,
                temperature=spec.temperature,
                sample=draw,
            )
        return agents

    def evaluated_seat(self, spec: ExperimentSpec, seed: int, config: Config) -> int:
        if spec.game == "twenty-questions":
            return 0
        return random.Random(seed).randrange(config["players"])

    def engine_options(self, spec: ExperimentSpec) -> dict[str, Any]:
        return {"players": spec.players} if spec.game == "undercover" else {}

    def new_config(self, spec: ExperimentSpec, seed: int) -> Config:
        """A config from a seed alone: the earlier (warm-up) games, never a test case."""
        return get_engine(spec.game).new_config(seed, **self.engine_options(spec))

    def case_config(self, spec: ExperimentSpec, case: int) -> Config:
        """Test case ``case``: games.cases's sequence, words drawn without replacement."""
        return case_config(spec.game, spec.seed, case, **self.engine_options(spec))

    async def play(
        self,
        spec: ExperimentSpec,
        seed: int,
        sample: int,
        policy: str | None,
        setting: str,
        config: Config | None = None,
    ) -> tuple[Config, list[dict[str, Any]], dict[int, dict[str, Any]], int, Usage, str, str, list]:
        """One game (``config``, else one made from ``seed``); returns config, events, outcome,
        evaluated seat, usage, times and the moves agents did not make themselves, each with its
        reason (see ``play_game``)."""
        config = config if config is not None else self.new_config(spec, seed)
        evaluated = self.evaluated_seat(spec, seed, config)
        agents = self.seat_agents(spec, config, seed, evaluated, sample, policy, setting)
        async with self._games:
            started = _now()
            failures: list[dict[str, Any]] = []
            state, events = await play_game(
                get_engine(spec.game), config, agents, failures=failures
            )
            finished = _now()
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
        config, events, outcome, evaluated, usage, started, finished, failures = await self.play(
            spec, seed, sample, policy, spec.setting, self.case_config(spec, round_)
        )
        usage.merge(extra)
        mine = outcome[evaluated]
        record = {
            "experiment": spec.experiment,
            "game": spec.game,
            "model": spec.model,
            "setting": spec.setting,
            "sample": sample,
            "round": round_,
            "case": round_,
            "seed": seed,
            "config": config,
            "events": events,
            "outcome": {str(seat): result for seat, result in outcome.items()},
            "evaluated_seat": evaluated,
            "reward": mine["reward"],
            "win": mine["win"] if spec.game == "undercover" else None,
            "questions": mine.get("questions"),
            "usage": usage.as_dict(),
            **failure_marks(spec.game, events, failures),
            "model_options": spec.model_options.as_dict(),
            "memory_word_cap": spec.memory_word_cap if spec.setting == "cumulative" else None,
            "policy": policy,
            "started_at": started,
            "finished_at": finished,
            "provenance": self.provenance_for(spec),
        }
        self.write(record)
        return record

    def write(self, record: dict[str, Any]) -> None:
        with self.out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.done[record_key(record)] = record
        if self._bar is not None:
            self._bar.update(1)

    def rules(self, spec: ExperimentSpec) -> str:
        return render.rules_for_config(spec.game, self.case_config(spec, 0))

    async def earlier_games(
        self, spec: ExperimentSpec, sample: int, usage: Usage
    ) -> list[Experience]:
        """N games without experience, each with the model's reflection on it."""
        provider = self.provider_for(spec.model, spec.model_options)
        rules = self.rules(spec)

        async def one(index: int) -> Experience:
            seed = warmup_seed(spec.seed, sample, index)
            config, events, outcome, evaluated, game_usage, _, _, _ = await self.play(
                spec, seed, sample, None, "none"
            )
            usage.merge(game_usage)
            story = transcript(spec.game, config, events, evaluated)
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
                story = transcript(spec.game, previous["config"], previous["events"], seat)
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
        for record in load_records(self.out):
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


def failure_marks(game: str, events: list[dict[str, Any]], failures: list) -> dict[str, Any]:
    """What a record says about failed model calls, so the analysis can leave out games that
    measure an outage rather than the evaluated model: ``voids`` (Twenty Questions questions the
    oracle could not answer, not counted), ``oracle_failed`` (the oracle failed so often that the
    game was ended; its reward is not the questioner's doing) and ``failures`` (every move an agent
    did not make itself, with the reason)."""
    oracle_failed = game == "twenty-questions" and any(
        event["type"] == "abort" and event.get("failed_seat") == 1 for event in events
    )
    return {
        "voids": sum(event["type"] == "void" for event in events),
        "oracle_failed": oracle_failed,
        "failures": failures,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


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

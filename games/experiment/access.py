"""How an experiment reaches its models: each spec's provider (with the run's cache, options and
timeouts), the agent a seat gets, and the provenance its records carry (the servers it called)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from games.agents import make_agent
from games.base import Agent
from games.experiment.spec import ExperimentSpec
from games.llm.cache import ResponseCache
from games.llm.providers import (
    REASONING_TIMEOUT,
    ModelOptions,
    Provider,
    ProviderConfig,
    get_provider,
    needs_reasoning_budget,
    parse_spec,
    server_url,
)
from games.provenance import prompt_hashes, provenance

ConfigFor = Callable[[str], ProviderConfig]


class ModelAccess:
    """The model side of :class:`games.experiment.runner.Runner`: it holds ``config_for``,
    ``cache``, ``provider`` (a provider object serving every non-offline spec) and ``prompts``
    (the prompt set's hashes, the shipped set's if None)."""

    config_for: ConfigFor
    cache: ResponseCache | None
    provider: Provider | None
    prompts: Mapping[str, Any] | None
    _provenance: dict[tuple[str, ...], dict[str, Any]]

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
            if needs_reasoning_budget(spec) or options.thinking_budget:
                config = replace(config, timeout=max(config.timeout, REASONING_TIMEOUT))
        return get_provider(spec, config, cache=self.cache)

    def agent(
        self,
        spec: str,
        game: str,
        role: str,
        seed: int,
        model_options: ModelOptions | None = None,
        language: str = "en",
        sentences: bool = False,
        **options: Any,
    ) -> Agent:
        """The agent of one seat: an offline agent speaks ``language`` (Undercover's clues), with
        ``sentences`` the people's rules of form it keeps at a table with people; a model is told
        the table's language and gets ``options`` (setting, policy, sampling)."""
        kind, _ = parse_spec(spec)
        if kind == "offline":
            return make_agent(
                spec, game=game, role=role, seed=seed, language=language, sentences=sentences
            )
        provider = self.provider_for(spec, model_options)
        return make_agent(
            spec, game=game, role=role, seed=seed, provider=provider, language=language, **options
        )

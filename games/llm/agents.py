"""LLM agents for every seat: Twenty Questions questioner and oracle, Undercover speaker and voter.

An agent renders the observation into a prompt, asks its provider, and takes the last
``<answer></answer>``. A reply with no usable answer gets one corrective follow-up in the same
conversation; if that fails too, or the provider gives up after its retries, the agent raises
:class:`~games.base.NoMove` with the reason and the reply, and the runner makes the engine's
stand-in move (``Engine.failed``: a do-nothing move, or a withdrawn turn) with that explanation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from games import languages
from games.base import Event, NoMove, Observation
from games.experience.context import check_setting, player_system
from games.llm import prompts, render
from games.llm.cache import ResponseCache
from games.llm.parse import parse_answer
from games.llm.providers import Provider, ProviderConfig, ProviderError, get_provider
from games.llm.usage import Usage
from games.twenty_questions.rules import ANSWERS, REPLY_HINT

ROLES = {"twenty-questions": ("questioner", "oracle"), "undercover": ("player", "speaker", "voter")}

_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
_INT = re.compile(r"-?\d+")


def _plain(answer: str) -> str:
    return answer.strip().strip(_QUOTES).strip()


def valid_question(answer: str) -> str | None:
    return _plain(answer) or None


def valid_reply(answer: str) -> str | None:
    """One of Twenty Questions' replies (Yes, No or Invalid) from the first word (``"yes."`` and ``"No, it is not"`` count)."""
    words = re.findall(r"[a-z]+", answer.lower())
    replies = {answer.lower(): answer for answer in ANSWERS}
    if words and words[0] in replies:
        return replies[words[0]]
    return None


def valid_clue(answer: str) -> str | None:
    return _plain(answer) or None


def vote_target(answer: str, targets: list[int]) -> int | None:
    """The first number in the answer, if it is a seat one may vote for."""
    match = _INT.search(answer)
    if match is None:
        return None
    target = int(match.group())
    return target if target in targets else None


class LLMAgent:
    """One seat played by a model. ``usage`` adds up every call this seat made."""

    def __init__(
        self,
        provider: Provider,
        *,
        game: str,
        role: str,
        setting: str = "none",
        policy: str | None = None,
        temperature: float = 1.0,
        sample: int = 0,
        max_tokens: int = 1024,
        language: str = "en",
    ) -> None:
        if game not in ROLES:
            raise ValueError(f"unknown game {game!r}")
        if role not in ROLES[game]:
            raise ValueError(f"{game} has no role {role!r}; use one of {ROLES[game]}")
        self.provider = provider
        self.game = game
        self.role = role
        self.setting = check_setting(setting)
        self.policy = policy
        self.temperature = temperature
        self.sample = sample
        self.max_tokens = max_tokens
        self.language = language  # the table's: the seat is told (games.languages.instruction)
        self.usage = Usage()

    def system_prompt(self, observation: Observation) -> str:
        """What the seat is told before its turn: rules, learned text, role instructions, and
        the table's language when it is not English."""
        told = languages.instruction(self.language, self.role)
        text = self._system_prompt(observation)
        return f"{text}\n\n{told}" if told else text

    def _system_prompt(self, observation: Observation) -> str:
        if self.role == "oracle":
            return prompts.text("twenty_questions_oracle")
        instructions = (
            "twenty_questions_questioner"
            if self.game == "twenty-questions"
            else "undercover_player"
        )
        return player_system(
            render.rules_for(self.game, observation),
            prompts.text(instructions),
            setting=self.setting,
            policy=self.policy,
        )

    def turn_prompt(self, observation: Observation) -> str:
        """The user message for this turn, with the engine's reason if the last move was refused."""
        if self.role == "oracle":
            text = render.oracle_turn(observation)
        elif self.game == "twenty-questions":
            text = render.questioner_turn(observation)
        else:
            text = render.undercover_turn(observation)
        note = render.rejected_note(observation)
        return f"{note}\n\n{text}" if note else text

    async def act(self, observation: Observation) -> Event:
        if self.role == "oracle":
            reply = await self.ask(observation, valid_reply, REPLY_HINT)
            return {"type": "answer", "answer": reply}
        if self.game == "twenty-questions":
            question = await self.ask(
                observation, valid_question, "Put one yes/no question inside the tags."
            )
            return {"type": "question", "text": question}
        if observation["phase"] == "vote":
            targets = (
                observation["legal_actions"][0]["targets"] if observation["legal_actions"] else []
            )
            target = await self.ask(
                observation,
                lambda answer: vote_target(answer, targets),
                f"Put only the number of one of these players inside the tags: {targets}.",
            )
            return {"type": "vote", "target": target}
        clue = await self.ask(
            observation, valid_clue, "Put your one-sentence clue inside the tags."
        )
        return {"type": "clue", "text": clue}

    async def ask(self, observation: Observation, validate: Callable[[str], Any], hint: str) -> Any:
        """Ask for a move; one corrective follow-up if the reply has no usable answer.
        Returns the validated value; raises NoMove when the model gave none or its call failed."""
        system = self.system_prompt(observation)
        messages = [{"role": "user", "content": self.turn_prompt(observation)}]
        for attempt in range(2):
            try:
                completion = await self.provider.complete(
                    messages,
                    system=system,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    sample=self.sample,
                )
            except ProviderError as err:
                self.usage.add_failure(err)
                raise NoMove(f"the model call failed: {err}") from err
            self.usage.add(completion)
            answer = parse_answer(completion.text)
            value = validate(answer) if answer is not None else None
            if value is not None:
                return value
            if attempt == 0:
                messages = [
                    *messages,
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": prompts.render("corrective", hint=hint)},
                ]
        found = (
            "no answer inside <answer> tags"
            if answer is None
            else f"the answer {answer[:80]!r} is not usable"
        )
        raise NoMove(
            f"no usable reply after a corrective follow-up: {found}. {hint}", completion.text
        )


def make_llm_agent(
    spec: str,
    *,
    game: str,
    role: str,
    seed: int = 0,
    setting: str = "none",
    policy: str | None = None,
    provider: Provider | None = None,
    provider_config: ProviderConfig | None = None,
    cache: ResponseCache | None = None,
    temperature: float = 1.0,
    sample: int = 0,
    max_tokens: int = 1024,
    language: str = "en",
) -> LLMAgent:
    """An agent for one seat. ``provider`` may be any object with the ``complete`` method (a local
    model, a test double); otherwise the spec's provider is built from ``provider_config`` and
    ``cache``. ``seed`` is accepted for the common agent signature; sampling variety comes from
    ``sample``, which is part of the cache key."""
    if provider is None:
        provider = get_provider(spec, provider_config, cache=cache)
    return LLMAgent(
        provider,
        game=game,
        role=role,
        setting=setting,
        policy=policy,
        temperature=temperature,
        sample=sample,
        max_tokens=max_tokens,
        language=language,
    )

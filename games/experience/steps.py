"""The model calls that turn play into learned text: reflection, policy writing, and the curator
of the cumulative setting. Each is one call whose prompt comes from ``context.py``.

A failed call or a reply without an answer never stops an experiment: a reflection becomes a
note that none was written, a policy becomes None (the game is played without one), and the
curator keeps the previous memory, as in Dynamic Cheatsheet.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.experience import context
from games.experience.context import Experience
from games.llm.parse import parse_answer
from games.llm.providers import Provider, ProviderError
from games.llm.usage import Usage

NO_REFLECTION = "(no reflection was written)"


async def _answer(
    provider: Provider,
    prompt: str,
    *,
    usage: Usage | None,
    temperature: float,
    sample: int,
    max_tokens: int,
) -> str | None:
    try:
        completion = await provider.complete(
            [{"role": "user", "content": prompt}],
            temperature=temperature,
            max_tokens=max_tokens,
            sample=sample,
        )
    except ProviderError as err:
        if usage is not None:
            usage.add_failure(err)
        return None
    if usage is not None:
        usage.add(completion)
    return parse_answer(completion.text)


async def reflect(
    provider: Provider,
    rules: str,
    transcript: str,
    reward: float,
    *,
    usage: Usage | None = None,
    temperature: float = 1.0,
    sample: int = 0,
) -> Experience:
    """The model's reflection on one finished game, packed with the game as an experience."""
    prompt = context.reflection_prompt(rules, transcript, reward)
    text = await _answer(
        provider, prompt, usage=usage, temperature=temperature, sample=sample, max_tokens=1024
    )
    return Experience(transcript=transcript, reward=reward, reflection=text or NO_REFLECTION)


async def write_rule_policy(
    provider: Provider,
    rules: str,
    *,
    usage: Usage | None = None,
    temperature: float = 1.0,
    sample: int = 0,
) -> str | None:
    """A policy derived from the rules alone (the ``rule-policy`` baseline)."""
    prompt = context.rule_policy_prompt(rules)
    return await _answer(
        provider, prompt, usage=usage, temperature=temperature, sample=sample, max_tokens=2048
    )


async def write_experience_policy(
    provider: Provider,
    rules: str,
    experiences: Sequence[Experience],
    *,
    usage: Usage | None = None,
    temperature: float = 1.0,
    sample: int = 0,
) -> str | None:
    """A policy derived from the rules and earlier games (the ``experience-policy`` setting)."""
    prompt = context.experience_policy_prompt(rules, experiences)
    return await _answer(
        provider, prompt, usage=usage, temperature=temperature, sample=sample, max_tokens=2048
    )


MEMORY_WORD_CAP = 2000


async def curate(
    provider: Provider,
    rules: str,
    memory: str | None,
    transcript: str,
    reward: float,
    *,
    usage: Usage | None = None,
    temperature: float = 1.0,
    sample: int = 0,
    word_cap: int = MEMORY_WORD_CAP,
) -> str | None:
    """The memory after one more game: the curator's whole rewritten memory, or the previous
    memory when its reply has no answer tag (or the call fails).

    ``word_cap`` is the length the curator is asked to stay under; the default is near Dynamic
    Cheatsheet's memory (about 2,000 words), which the cumulative setting follows. The output
    budget leaves room for the thinking the prompt asks for plus a memory at the cap."""
    prompt = context.curator_prompt(rules, memory, transcript, reward, word_cap)
    text = await _answer(
        provider,
        prompt,
        usage=usage,
        temperature=temperature,
        sample=sample,
        max_tokens=max(2048, 1024 + 2 * word_cap),
    )
    return text if text is not None else memory

"""The math testbed's game: one problem, one call, the reply's answer judged; played by the
experiment runner where another game would seat agents at a table."""

from __future__ import annotations

import asyncio
from typing import Any

from games.base import Config
from games.experience.context import player_system
from games.experiment.records import utc_now
from games.experiment.spec import MATH_MAX_TOKENS, ExperimentSpec, derive_seed
from games.llm import prompts
from games.llm.parse import parse_answer
from games.llm.providers import Provider, ProviderError
from games.llm.usage import Usage
from games.mathtest import JUDGE as MATH_JUDGE
from games.mathtest import MathTask, is_correct


async def solve(
    provider: Provider,
    rules: str,
    games: asyncio.Semaphore,
    spec: ExperimentSpec,
    seed: int,
    sample: int,
    policy: str | None,
    setting: str,
    config: Config,
) -> tuple[Config, list[dict[str, Any]], dict[int, dict[str, Any]], int, Usage, str, str, list]:
    """One math problem, one call: the same return shape as the runner's ``play``. The reply's answer
    tag is judged (``games.mathtest.judge``); a failed call or a reply without the tag
    scores 0 and is listed in the failures."""
    task = MathTask.from_config(config)
    system = player_system(rules, prompts.text("math_solver"), setting=setting, policy=policy)
    user = prompts.render("math_problem", question=task.question, options=task.options_text())
    usage = Usage()
    failures: list[dict[str, Any]] = []
    async with games:
        started = utc_now()
        try:
            completion = await provider.complete(
                [{"role": "user", "content": user}],
                system=system,
                temperature=spec.temperature,
                max_tokens=MATH_MAX_TOKENS,
                sample=derive_seed(sample, seed),
            )
            usage.add(completion)
            text = completion.text
        except ProviderError as err:
            usage.add_failure(err)
            text = ""
            failures.append({"seat": 0, "error": str(err)})
        finished = utc_now()
    answer = parse_answer(text) if text else None
    if text and answer is None:
        failures.append({"seat": 0, "error": "no answer inside <answer> tags"})
    correct = is_correct(answer, task.answer, task.kind)
    event = {
        "type": "solution",
        "seat": 0,
        "text": text,
        "answer": answer,
        "correct": correct,
        "judge": MATH_JUDGE if task.kind == "math" else "letter",
    }
    outcome = {0: {"reward": 1.0 if correct else 0.0, "win": None, "role": "solver"}}
    return config, [event], outcome, 0, usage, started, finished, failures

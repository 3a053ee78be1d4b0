"""The two TTRA rewards, as TRL reward functions ``(completions, **kwargs) -> list[float]``.

Stage 1 rewards a completion for matching the label of the one labeled task; stage 2 has no labels
and rewards agreement with the plurality answer of all completions sampled for the same question
(TTRL's majority vote). TRL passes every dataset column as a keyword argument, one value per
completion, so the question's ``task_id`` travels with each completion.

Votes are grouped by ``task_id``, never by position: on several devices TRL deliberately spreads
one question's completions over the processes, so a process sees only part of a group. Pass a
``gather`` function (``accelerate.utils.gather_object`` in training) and each process votes over the
whole group; without one the vote is over what this call sees, which is the whole group on one device.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence

from studyapp.pipelines.ttra.answers import extract_answer, is_correct, normalize

Gather = Callable[[list], list]


def completion_text(completion: str | list[dict]) -> str:
    """The text of a completion, plain (``"..."``) or conversational (``[{"content": ...}]``)."""
    if isinstance(completion, str):
        return completion
    return "".join(str(message["content"]) for message in completion)


def plurality(votes: Sequence[str]) -> str | None:
    """The answer with the most votes, ignoring empty answers; None when there is no single winner.

    Tie rule: when two or more answers share the top count there is no pseudo-label, so every
    completion of that question gets 0 (no consensus, no signal; GRPO sees a zero advantage).

    >>> plurality(["4", "4", "5", ""])
    '4'
    >>> plurality(["4", "5"]) is None
    True
    >>> plurality(["", ""]) is None
    True
    """
    counts = Counter(v for v in votes if v)
    if not counts:
        return None
    (best, top), *rest = counts.most_common()
    if rest and rest[0][1] == top:
        return None
    return best


def majorities(
    keys: Sequence[Hashable], votes: Sequence[str], gather: Gather | None = None
) -> dict[Hashable, str | None]:
    """The plurality answer per key, over this call's votes or, with ``gather``, every process's."""
    pairs = list(zip(keys, votes, strict=True))
    if gather is not None:
        pairs = [tuple(p) for p in gather(pairs)]
    grouped: dict[Hashable, list[str]] = defaultdict(list)
    for key, vote in pairs:
        grouped[key].append(vote)
    return {key: plurality(group) for key, group in grouped.items()}


def majority_vote_reward(
    completions: list,
    task_id: list[Hashable],
    gather: Gather | None = None,
    on_majorities: Callable[[dict[Hashable, str | None]], None] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: object,
) -> list[float]:
    """1.0 for a completion whose answer is its question's plurality answer, else 0.0.

    Empty answers never vote and always get 0. ``on_majorities`` receives the winning answer per
    question (the collapse monitor listens there); ``log_metric`` is TRL's hook for extra scalars.

    >>> majority_vote_reward(
    ...     [r"\\boxed{4}", "4", r"\\boxed{5}", "", r"\\boxed{A}", r"\\boxed{B}"],
    ...     task_id=["q1", "q1", "q1", "q1", "q2", "q2"],
    ... )
    [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    """
    votes = [normalize(extract_answer(completion_text(c))) for c in completions]
    winners = majorities(task_id, votes, gather)
    if on_majorities is not None:
        on_majorities(winners)
    rewards = [
        1.0 if vote and vote == winners[key] else 0.0
        for key, vote in zip(task_id, votes, strict=True)
    ]
    if log_metric is not None:
        log_metric("majority_agreement", sum(rewards) / len(rewards))
    return rewards


def correctness_reward(
    completions: list,
    answer: list[str],
    kind: list[str],
    task_id: list[Hashable] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: object,
) -> list[float]:
    """1.0 for a completion whose final answer matches the label, else 0.0 (stage 1 and scoring).

    With ``task_id`` and ``log_metric`` it also logs how often completions agree with their
    question's plurality answer, so progress reports the same figure in both stages.

    >>> correctness_reward([r"so \\boxed{\\frac{1}{2}}", r"\\boxed{2}"], ["0.5", "0.5"], ["math"] * 2)
    [1.0, 0.0]
    """
    texts = [completion_text(c) for c in completions]
    predictions = [extract_answer(t) for t in texts]
    rewards = [
        1.0 if is_correct(p, a, k) else 0.0
        for p, a, k in zip(predictions, answer, kind, strict=True)
    ]
    if task_id is not None and log_metric is not None:
        votes = [normalize(p) for p in predictions]
        winners = majorities(task_id, votes)
        agree = [v != "" and v == winners[t] for t, v in zip(task_id, votes, strict=True)]
        log_metric("majority_agreement", sum(agree) / len(agree))
    return rewards

"""The two TTRA rewards, as TRL reward functions ``(completions, **kwargs) -> list[float]``.

Stage 1 rewards a completion for matching the label of the one labeled task; stage 2 has no labels
and rewards agreement with the plurality answer of all completions sampled for the same question
(TTRL's majority vote). The plurality is over meanings, not spellings: answers are grouped into
classes with math-verify for math and the kind's own rule for multiple choice and text (appendix B:
"we used the math-verify for verifying the correctness and majority voting"). TRL passes every dataset column as a keyword argument, one value per
completion, so the question's ``task_id`` travels with each completion.

Votes are grouped by ``task_id``, never by position: on several devices TRL deliberately spreads
one question's completions over the processes, so a process sees only part of a group. Pass a
``gather`` function (``accelerate.utils.gather_object`` in training) and each process votes over the
whole group; without one the vote is over what this call sees, which is the whole group on one device.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from studyapp.pipelines.ttra.answers import (
    choice_letter,
    extract_answer,
    is_correct,
    normalize,
    same_answer,
)

Gather = Callable[[list], list]


def completion_text(completion: str | list[dict]) -> str:
    """The text of a completion, plain (``"..."``) or conversational (``[{"content": ...}]``)."""
    if isinstance(completion, str):
        return completion
    return "".join(str(message["content"]) for message in completion)


TIES = ("first", "none")


@dataclass
class Vote:
    """One question's answers grouped by meaning: each class's first-seen spelling and size.

    ``winner`` is the index of the plurality class, or None when no answer was given (or, with
    ties="none", when the top classes tie).
    """

    kind: str
    representatives: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    winner: int | None = None

    def class_of(self, answer: str) -> int | None:
        """The class an answer belongs to: the first whose representative it means the same as."""
        for index, representative in enumerate(self.representatives):
            if same_answer(representative, answer, self.kind):
                return index
        return None

    @property
    def label(self) -> str | None:
        """The pseudo-label: the winning class's first-seen answer, normalized (a letter for choice)."""
        if self.winner is None:
            return None
        first = self.representatives[self.winner]
        return choice_letter(first) if self.kind == "choice" else normalize(first)


def vote(answers: Sequence[str], kind: str = "math", ties: str = "first") -> Vote:
    """Group answers into classes of one meaning (`same_answer`) and pick the plurality class.

    An answer joins the first class, in order of appearance, whose first answer means the same;
    empty answers never vote, nor, for multiple choice, answers that are not exactly a letter. Meaning is not always transitive (math-verify finds ``50\\%`` equal to
    both ``50`` and ``0.5``), and comparing with each class's first answer keeps the grouping
    well defined and order-stable. Ties: "first" gives the win to the class seen first, as TTRL's
    ``Counter.most_common`` does; "none" gives no pseudo-label, so the whole group scores 0.

    >>> v = vote(["0.5", r"\\frac{1}{2}", "1/2", "0.7", "0.7"])
    >>> v.sizes, v.label
    ([3, 2], '0.5')
    >>> vote(["4", "5"]).label, vote(["4", "5"], ties="none").label
    ('4', None)
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, not {ties!r}")
    result = Vote(kind)
    for answer in answers:
        if not answer.strip() or (kind == "choice" and not choice_letter(answer)):
            continue  # no answer, or (multiple choice) not an option letter: no vote
        index = result.class_of(answer)
        if index is None:
            result.representatives.append(answer)
            result.sizes.append(1)
        else:
            result.sizes[index] += 1
    if result.sizes:
        top = max(result.sizes)
        leaders = [i for i, size in enumerate(result.sizes) if size == top]
        if len(leaders) == 1 or ties == "first":
            result.winner = leaders[0]
    return result


def plurality(answers: Sequence[str], kind: str = "math", ties: str = "first") -> str | None:
    """The plurality answer by meaning (normalized first-seen spelling), or None.

    >>> plurality(["4", "4", "5", ""])
    '4'
    >>> plurality(["", ""]) is None
    True
    """
    return vote(answers, kind, ties).label


def votes_by_key(
    keys: Sequence[Hashable],
    answers: Sequence[str],
    kinds: Sequence[str],
    ties: str = "first",
    gather: Gather | None = None,
) -> dict[Hashable, Vote]:
    """One `Vote` per key, over this call's answers or, with ``gather``, every process's.

    The gathered list is in the same order on every process, so ties break the same everywhere.
    """
    triples = list(zip(keys, answers, kinds, strict=True))
    if gather is not None:
        triples = [tuple(t) for t in gather(triples)]
    grouped: dict[Hashable, list[str]] = defaultdict(list)
    kind_of: dict[Hashable, str] = {}
    for key, answer, kind in triples:
        grouped[key].append(answer)
        kind_of.setdefault(key, kind)
    return {key: vote(group, kind_of[key], ties) for key, group in grouped.items()}


def agreement(
    keys: Sequence[Hashable], answers: Sequence[str], votes: dict[Hashable, Vote]
) -> list[float]:
    """1.0 where an answer belongs to its key's winning class, else 0.0 (empty answers: 0.0)."""
    out = []
    for key, answer in zip(keys, answers, strict=True):
        v = votes[key]
        won = v.winner is not None and answer.strip() != "" and v.class_of(answer) == v.winner
        out.append(1.0 if won else 0.0)
    return out


def majority_vote_reward(
    completions: list,
    task_id: list[Hashable],
    kind: list[str] | None = None,
    ties: str = "first",
    gather: Gather | None = None,
    on_majorities: Callable[[dict[Hashable, str | None]], None] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: object,
) -> list[float]:
    """1.0 for a completion whose answer means the same as its question's plurality, else 0.0.

    Answers are extracted per task kind (``kind`` column; "math" when absent) and grouped by
    meaning (`vote`); empty answers never vote and always get 0. ``on_majorities`` receives the
    winning answer per question (the collapse monitor listens there); ``log_metric`` is TRL's hook
    for extra scalars.

    >>> majority_vote_reward(
    ...     [r"\\boxed{4}", "so it is 4", r"\\boxed{5}", "", r"\\boxed{A}", r"\\boxed{B}", "B"],
    ...     task_id=["q1", "q1", "q1", "q1", "q2", "q2", "q2"],
    ...     kind=["math"] * 4 + ["choice"] * 3,
    ... )
    [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    """
    kinds = kind if kind is not None else ["math"] * len(completions)
    answers = [
        extract_answer(completion_text(c), k) for c, k in zip(completions, kinds, strict=True)
    ]
    votes = votes_by_key(task_id, answers, kinds, ties, gather)
    if on_majorities is not None:
        on_majorities({key: v.label for key, v in votes.items()})
    rewards = agreement(task_id, answers, votes)
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
    predictions = [extract_answer(t, k) for t, k in zip(texts, kind, strict=True)]
    rewards = [
        1.0 if is_correct(p, a, k) else 0.0
        for p, a, k in zip(predictions, answer, kind, strict=True)
    ]
    if task_id is not None and log_metric is not None:
        agree = agreement(task_id, predictions, votes_by_key(task_id, predictions, kind))
        log_metric("majority_agreement", sum(agree) / len(agree))
    return rewards

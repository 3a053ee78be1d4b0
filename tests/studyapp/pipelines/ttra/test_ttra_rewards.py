import threading

import pytest

from studyapp.pipelines.ttra.rewards import (
    correctness_reward,
    majority_vote_reward,
    plurality,
)


def test_the_plurality_answer_wins():
    assert plurality(["4", "4", "5"]) == "4"


def test_a_tie_goes_to_the_first_answer_seen_unless_asked_otherwise():
    assert plurality(["4", "4", "5", "5"]) == "4"
    assert plurality(["4", "4", "5", "5"], ties="none") is None
    completions = [r"\boxed{4}", "4", r"\boxed{5}", "5"]
    assert majority_vote_reward(completions, task_id=["q"] * 4) == [1.0, 1.0, 0.0, 0.0]
    assert majority_vote_reward(completions, task_id=["q"] * 4, ties="none") == [0.0] * 4


def test_empty_answers_neither_vote_nor_score():
    rewards = majority_vote_reward(["", "  ", r"\boxed{}", r"\boxed{9}"], task_id=["q"] * 4)
    assert rewards == [0.0, 0.0, 0.0, 1.0]
    assert majority_vote_reward(["", ""], task_id=["q", "q"]) == [0.0, 0.0]


def test_boxed_and_unboxed_answers_count_as_the_same_vote():
    completions = [r"thus \boxed{12}", "12\nI think", r"\boxed{1,2}", r"\boxed{13}"]
    assert majority_vote_reward(completions, task_id=["q"] * 4) == [1.0, 1.0, 0.0, 0.0]


def test_each_prompt_in_a_batch_gets_its_own_vote():
    completions = [
        r"\boxed{1}",
        r"\boxed{2}",
        r"\boxed{1}",
        r"\boxed{2}",
        r"\boxed{2}",
        r"\boxed{1}",
    ]
    task_id = ["a", "b", "a", "b", "b", "a"]
    assert majority_vote_reward(completions, task_id=task_id) == [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    # The same answers with other ids form other groups: "1" wins in a, "2" wins in b.
    task_id = ["a", "a", "a", "b", "b", "b"]
    assert majority_vote_reward(completions, task_id=task_id) == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0]


def test_conversational_completions_are_read_from_their_content():
    completions = [[{"role": "assistant", "content": r"\boxed{Apple}"}]] * 2 + [
        [{"role": "assistant", "content": r"\boxed{Pear}"}]
    ]
    assert majority_vote_reward(completions, task_id=[0, 0, 0]) == [1.0, 1.0, 0.0]


def test_a_group_split_across_two_processes_votes_as_one_group():
    """Two threads stand in for two devices; ``gather`` exchanges their votes like gather_object."""
    barrier = threading.Barrier(2)
    shared: dict[int, list] = {}

    def gather_for(rank):
        def gather(items):
            shared[rank] = list(items)
            barrier.wait()
            return shared[0] + shared[1]

        return gather

    # Question "q": device 0 sees 5, 5; device 1 sees 7, 5, 7. Over the whole group 5 wins 3 to 2;
    # device 1 alone would have picked 7.
    calls = {
        0: ([r"\boxed{5}", r"\boxed{5}"], ["q", "q"]),
        1: ([r"\boxed{7}", r"\boxed{5}", r"\boxed{7}"], ["q", "q", "q"]),
    }
    results = {}

    def run(rank):
        completions, task_id = calls[rank]
        results[rank] = majority_vote_reward(completions, task_id=task_id, gather=gather_for(rank))

    threads = [threading.Thread(target=run, args=(r,)) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: [1.0, 1.0], 1: [0.0, 1.0, 0.0]}
    # Without the gather, device 1 would reward its local plurality instead.
    assert majority_vote_reward(*calls[1]) == [1.0, 0.0, 1.0]


def test_it_reports_the_winners_and_the_agreement():
    seen, metrics = [], []
    majority_vote_reward(
        [r"\boxed{x}", r"\boxed{x}", r"\boxed{y}", r"\boxed{z}"],
        task_id=["a", "a", "b", "b"],
        on_majorities=seen.append,
        log_metric=lambda name, value: metrics.append((name, value)),
        ties="none",
    )
    assert seen == [{"a": "x", "b": None}]
    assert metrics == [("majority_agreement", 0.5)]


def test_correctness_reward_checks_each_completion_against_its_label():
    pytest.importorskip("math_verify")
    rewards = correctness_reward(
        [r"\boxed{0.5}", r"\boxed{2}", "B", r"\boxed{C}", ""],
        answer=[r"\frac{1}{2}", "3", "B", "B", "B"],
        kind=["math", "math", "choice", "choice", "choice"],
    )
    assert rewards == [1.0, 0.0, 1.0, 0.0, 0.0]

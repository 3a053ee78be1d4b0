import pytest

from studyapp.pipelines.ttra.collapse import CollapseMonitor, CollapseWarning, dominant_share


def test_the_share_counts_questions_with_an_answer():
    found = dominant_share(["appendicitis"] * 9 + ["cholecystitis", None, ""])
    assert found.answer == "appendicitis"
    assert found.share == pytest.approx(0.9)
    assert found.questions == 10


def test_the_monitor_warns_with_the_measured_share():
    monitor = CollapseMonitor(threshold=0.9, min_questions=4)
    monitor.update({f"q{i}": "a" for i in range(19)} | {"q19": "b"})
    with pytest.warns(CollapseWarning, match=r"'a' is the majority answer for 95.0% of 20"):
        found = monitor.check()
    assert found is not None and found.share == pytest.approx(0.95)


def test_the_monitor_stays_quiet_below_the_threshold_or_the_minimum():
    monitor = CollapseMonitor(threshold=0.9, min_questions=4)
    monitor.update({"q1": "a", "q2": "a", "q3": "a"})
    assert monitor.check() is None
    monitor.update({"q4": "b", "q5": "c"})
    assert monitor.check() is None


def test_the_latest_majority_per_question_counts():
    monitor = CollapseMonitor(threshold=0.5, min_questions=2)
    monitor.update({"q1": "a", "q2": "a"})
    monitor.update({"q2": "b"})
    assert monitor.measure().share == pytest.approx(0.5)

import threading

import pytest

from studyapp.pipelines.ttra.answers import boxed_contents, extract_answer, is_correct, normalize


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        (r"so \boxed{42}", "math", "42"),
        (r"\boxed{1} then \boxed{2}", "math", "2"),
        (r"\boxed{\frac{1}{2}}", "math", r"\frac{1}{2}"),
        (r"\boxed {7}", "math", "7"),
        ("Reasoning: 6 times 7, so the answer is 42", "math", "42"),
        ("12 apples, 3 eaten: 9\nso 9 left.", "math", "9"),
        ("It costs 1,250.50 dollars", "math", "1,250.50"),
        ("a half: 1/2", "math", "1/2"),
        ("about 50% of them", "math", "50%"),
        ("no number here", "math", ""),
        ("B\nbecause B is right", "choice", "B"),
        ("Let me think. 3 is wrong.\n(B)", "choice", "Let me think. 3 is wrong."),
        (r"thinking \boxed{C}", "choice", "C"),
        ("So the secret word is Apple.", "word", "Apple"),
        ("Apple\nmore", "word", ""),
        (r"\boxed{baseball bat}", "word", "baseball bat"),
        ("", "math", ""),
        ("   \n ", "choice", ""),
        (r"\boxed{}", "math", ""),
    ],
)
def test_it_extracts_the_final_answer_by_kind(text, kind, expected):
    assert extract_answer(text, kind) == expected


def test_an_unclosed_box_is_not_an_answer_box():
    assert boxed_contents(r"\boxed{3") == []
    assert extract_answer(r"\boxed{3") == "3"
    assert extract_answer(r"\boxed{B", "choice") == r"\boxed{B"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1,000", "1000"), ("$5$", "5"), (r"\text{Apple}", "apple"), ("2.50", "2.5"), ("B.", "b")],
)
def test_it_normalizes_spellings_of_one_answer(raw, expected):
    assert normalize(raw) == expected


def test_math_answers_are_compared_by_value():
    pytest.importorskip("math_verify")
    assert is_correct(r"\frac{1}{2}", "0.5", "math")
    assert not is_correct("3", "4", "math")
    assert not is_correct("", "4", "math")


def test_choice_and_word_answers_need_an_exact_match():
    assert is_correct("B", "B", "choice")
    assert is_correct(" B ", "B", "choice")
    assert not is_correct("b", "B", "choice")
    assert not is_correct("(B)", "B", "choice")
    assert not is_correct("B. 4", "B", "choice")
    assert not is_correct("0.5", r"\frac{1}{2}", "choice")
    assert is_correct("baseball bat", "Baseball bat", "word")
    assert not is_correct("baseball", "Baseball bat", "word")


def test_math_verification_works_outside_the_main_thread():
    pytest.importorskip("math_verify")
    results, errors = [], []

    def check():
        try:
            results.append(is_correct(r"\frac{3}{4}", "0.75", "math"))
        except Exception as err:  # noqa: BLE001 - the test reports whatever escapes
            errors.append(err)

    worker = threading.Thread(target=check)
    worker.start()
    worker.join()
    assert errors == []
    assert results == [True]


@pytest.mark.parametrize(
    ("completion", "label", "right"),
    [
        ("A train travels 60 km in 1.5 hours. Its speed is 40 km/h.", "A", False),
        ("A\nbecause the train's speed is 40 km/h", "A", True),
        ("A) 40 km/h", "A", False),
        ("Answer: A", "A", False),
        ("a", "A", False),
        ("The speed is 40 km/h, which is option A.", "A", False),
        (r"The speed is 40 km/h. \boxed{A}", "A", True),
        (r"A\nso \boxed{C}", "A", False),
        (r"\boxed{(A)}", "A", False),
        ("\n\n  C  \nwhy: ...", "C", True),
    ],
)
def test_mathqa_completions_are_read_by_exact_string_match(completion, label, right):
    """Appendix A.1: the boxed answer, else the first line, must be the letter itself."""
    assert is_correct(extract_answer(completion, "choice"), label, "choice") is right

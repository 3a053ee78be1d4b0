"""Pull the final answer out of a model's text and decide whether two answers agree.

Both stages of TTRA and the evaluation depend on the same reading of a completion: stage 1 rewards
it against the label, stage 2 rewards it against the group's majority, evaluation scores it. Keeping
the reading in one module means the three can never disagree about what a model answered.
"""

from __future__ import annotations

import functools
import re
import threading

from games.tasks import boxed_contents  # the one reading of a boxed answer

_SPACES = re.compile(r"\s+")
# Thousands separators only in groups of three, so "1,2" (a pair) is not read as twelve.
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_TEXT_WRAPPER = re.compile(r"^\\(?:text|textbf|mathrm|mbox)\{(.*)\}$", re.DOTALL)


_LAST_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?%?")
LETTERS = "ABCDEFGHIJ"
_ANSWER_IS = re.compile(r"(?:answer|secret word)\s+(?:is|was)\s*:?\s*(.+?)\s*[.!]?\s*$", re.I)


_BARE_BOX = re.compile(r"(?<!\\)boxed\{([^{}]*)\}")


def extract_answer(text: str, kind: str = "math") -> str:
    """The model's final answer for a task of this kind; "" when it gave none.

    The last ``\\boxed{}`` body wins for every kind (the prompts ask for one). Without a box:
    ``math`` takes the last number in the text, so "... so the answer is 42" reads 42; ``choice``
    takes the first line, as the paper does for MathQA (appendix A.1: models that answer directly
    put the letter first); ``word`` takes what follows "the answer is" / "the secret word is".

    >>> extract_answer(r"Try \\boxed{3}. No wait, \\boxed{4}.")
    '4'
    >>> extract_answer("Reasoning: 6 times 7, so the answer is 42.")
    '42'
    >>> extract_answer("B\\nbecause the rest are wrong", "choice")
    'B'
    >>> extract_answer("So the secret word is Apple.", "word")
    'Apple'
    >>> extract_answer("so the letter is boxed{C}.", "choice")
    'C'
    >>> extract_answer("   ")
    ''
    """
    boxed = boxed_contents(text)
    if boxed:
        return boxed[-1]
    if kind == "math":
        numbers = _LAST_NUMBER.findall(text)
        return numbers[-1] if numbers else ""
    if kind == "choice":
        bare = _BARE_BOX.findall(text)  # A.1's MathQA prompt asks for "boxed{}", no backslash
        if bare:
            return bare[-1].strip()
        for line in text.splitlines():
            if line.strip():
                return line.strip()
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    match = _ANSWER_IS.search(lines[-1]) if lines else None
    return match.group(1).strip() if match else ""


def choice_letter(answer: str) -> str:
    """The option letter an answer is, by exact string match: "B" is B; "(B)", "b" and "B. 42" are
    no letter, and neither is "A train travels 60 km" (the paper, appendix A.1: MathQA is read by
    "exact string matching" of the boxed answer or else the first line).

    Only whitespace around the answer is dropped. "" when the answer is not one letter, so it never
    joins a letter's vote.

    >>> [choice_letter(a) for a in ["B", " C ", "(A)", "a", "B. 42", "A train travels 60 km"]]
    ['B', 'C', '', '', '', '']
    """
    a = answer.strip()
    return a if len(a) == 1 and a in LETTERS else ""


def normalize(answer: str) -> str:
    """A canonical spelling used for voting: case, spaces, ``$``, ``\\text{}`` and number commas.

    Votes are counted by exact equality of this form, so "1,000", " 1000 " and "$1000$" count as one
    answer, and "Apple" equals "apple".

    >>> normalize(r" \\text{Apple}. ")
    'apple'
    >>> normalize("$1,000.50$")
    '1000.5'
    """
    a = answer.strip().rstrip(".").strip().strip("$").strip()
    match = _TEXT_WRAPPER.match(a)
    if match:
        a = match.group(1)
    a = _SPACES.sub(" ", a).strip().rstrip(".").strip().lower()
    if _NUMBER.fullmatch(a):
        a = a.replace(",", "")
        if "." in a:
            a = a.rstrip("0").rstrip(".")
    return a


def _timeout() -> int | None:
    """math-verify's SIGALRM timeouts, only where signals work.

    math-verify guards parsing and comparison with ``signal.alarm``, which raises outside the main
    thread (a Celery worker thread, a web server thread). There we turn the timeouts off rather than
    fail; in the main thread they stay on.
    """
    return 5 if threading.current_thread() is threading.main_thread() else None


@functools.lru_cache(maxsize=4096)
def _parsed(answer: str) -> tuple:
    """math-verify's reading of one answer, cached: a vote compares each answer many times."""
    from math_verify import parse

    return tuple(parse(f"${answer}$", parsing_timeout=_timeout()))


def _math_equal(prediction: str, gold: str) -> bool:
    """math-verify equivalence of two extracted answers (gold first, as math-verify expects)."""
    from math_verify import verify

    gold_parsed, pred_parsed = _parsed(gold), _parsed(prediction)
    if not gold_parsed or not pred_parsed:
        return False
    return verify(list(gold_parsed), list(pred_parsed), timeout_seconds=_timeout())


def same_answer(a: str, b: str, kind: str) -> bool:
    """Whether two extracted answers mean the same for a task of this kind.

    ``math``: equal spellings, else math-verify's ``verify`` (so ``0.5`` = ``\\frac{1}{2}`` = ``1/2``,
    ``\\dfrac{3}{4}`` = ``\\frac{3}{4}``, and, as math-verify decides, ``50\\%`` = ``50`` and
    ``5 cm`` = ``5``). ``choice``: the same option letter (``(A)`` = ``A`` = ``a``). ``word``: the same
    normalized text. An empty answer equals nothing.

    >>> same_answer("A", " A", "choice"), same_answer("(A)", "A", "choice")
    (True, False)
    >>> same_answer(r"\\text{Apple}", "apple", "word")
    True
    """
    if not a.strip() or not b.strip():
        return False
    if kind == "choice":
        letter = choice_letter(a)
        return letter != "" and letter == choice_letter(b)
    if normalize(a) == normalize(b):
        return True
    return kind == "math" and _math_equal(a, b)


def is_correct(prediction: str, gold: str, kind: str) -> bool:
    """Whether an extracted answer matches the label for a task of this kind (see `same_answer`).

    ``math`` uses math-verify (appendix B); ``choice`` is the paper's exact string match for MathQA
    (appendix A.1): the answer, spaces around it dropped, is the label letter itself; ``word``
    compares the normalized text. An empty prediction is never correct.
    """
    return same_answer(prediction, gold, kind)

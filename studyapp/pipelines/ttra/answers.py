"""Pull the final answer out of a model's text and decide whether two answers agree.

Both stages of TTRA and the evaluation depend on the same reading of a completion: stage 1 rewards
it against the label, stage 2 rewards it against the group's majority, evaluation scores it. Keeping
the reading in one module means the three can never disagree about what a model answered.
"""

from __future__ import annotations

import re
import threading

BOXED = "\\boxed"
_SPACES = re.compile(r"\s+")
# Thousands separators only in groups of three, so "1,2" (a pair) is not read as twelve.
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_TEXT_WRAPPER = re.compile(r"^\\(?:text|textbf|mathrm|mbox)\{(.*)\}$", re.DOTALL)


def boxed_contents(text: str) -> list[str]:
    """Every ``\\boxed{...}`` body in order, with nested braces kept whole.

    >>> boxed_contents(r"first \\boxed{1} then \\boxed{\\frac{1}{2}}")
    ['1', '\\\\frac{1}{2}']
    """
    found: list[str] = []
    start = text.find(BOXED)
    while start != -1:
        i = start + len(BOXED)
        while i < len(text) and text[i] == " ":
            i += 1
        if i < len(text) and text[i] == "{":
            depth, j = 0, i
            while j < len(text):
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        found.append(text[i + 1 : j].strip())
                        break
                j += 1
        start = text.find(BOXED, i)
    return found


def extract_answer(text: str) -> str:
    """The model's final answer: the last ``\\boxed{}`` body, else the first non-empty line.

    The first-line fallback follows the paper's MathQA reading (appendix A.1): models that answer
    directly, without reasoning, put the answer first. An empty or whitespace-only text gives "".

    >>> extract_answer(r"Try \\boxed{3}. No wait, \\boxed{4}.")
    '4'
    >>> extract_answer("B\\nbecause the rest are wrong")
    'B'
    >>> extract_answer("   ")
    ''
    """
    boxed = boxed_contents(text)
    if boxed:
        return boxed[-1]
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


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


def _math_equal(prediction: str, gold: str) -> bool:
    """math-verify equivalence, with its SIGALRM timeouts only where signals work.

    math-verify guards parsing and comparison with ``signal.alarm``, which raises outside the main
    thread (a Celery worker thread, a web server thread). There we turn the timeouts off rather than
    fail; in the main thread they stay on.
    """
    from math_verify import parse, verify

    timeout = 5 if threading.current_thread() is threading.main_thread() else None
    gold_parsed = parse(f"${gold}$", parsing_timeout=timeout)
    pred_parsed = parse(f"${prediction}$", parsing_timeout=timeout)
    if not gold_parsed or not pred_parsed:
        return False
    return verify(gold_parsed, pred_parsed, timeout_seconds=timeout)


def is_correct(prediction: str, gold: str, kind: str) -> bool:
    """Whether an extracted answer matches the label for a task of this kind.

    ``math`` uses math-verify (so ``\\frac{1}{2}`` equals ``0.5``); ``choice`` and ``word`` use exact
    match of the normalized forms, as the paper does for multiple choice. An empty prediction is
    never correct.
    """
    if not prediction.strip():
        return False
    if normalize(prediction) == normalize(gold):
        return True
    if kind == "math":
        return _math_equal(prediction, gold)
    return False

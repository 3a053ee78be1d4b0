"""Whether a final answer is right: math-verify's equivalence when it is installed (the paper's
judge for AIME-style answers), else an exact match after normalising both sides.

math-verify (with sympy, about 85 MB) ships in the ``math`` and ``ttra`` extras; without it
``JUDGE`` is ``"exact"`` and every record says so, since ``1/2`` and ``0.5`` then differ.
"""

from __future__ import annotations

import re
import threading

from games.tasks import boxed_contents

try:
    from math_verify import parse as _mv_parse
    from math_verify import verify as _mv_verify
except ImportError:  # the math extra is not installed
    _mv_parse = _mv_verify = None

JUDGE = "math-verify" if _mv_verify is not None else "exact"


def normalise(answer: str) -> str:
    """Lower case, no spaces, dollar signs, ``\\boxed{}``, trailing full stop, thousands commas
    or leading zeros of a whole number.

    >>> normalise(" $\\\\boxed{0,204}$. ")
    '204'
    """
    text = answer.strip().strip("$").strip()
    boxed = boxed_contents(text)  # the last box, nested braces whole (games.tasks)
    if boxed:
        text = boxed[-1]
    text = re.sub(r"\s+", "", text).rstrip(".").lower()
    if re.fullmatch(r"[\d,]+", text):
        text = text.replace(",", "").lstrip("0") or "0"
    return text


def _choice(answer: str) -> str:
    match = re.search(r"\b([A-J])\b", answer.strip().strip("()").upper())
    return match.group(1) if match else ""


def is_correct(prediction: str | None, gold: str, kind: str = "math", judge: str = JUDGE) -> bool:
    """Whether ``prediction`` (the text inside the answer tags) matches ``gold``."""
    if prediction is None or not prediction.strip():
        return False
    if kind == "choice":
        return _choice(prediction) == gold.upper()
    if kind == "math" and judge == "math-verify" and _mv_verify is not None:
        # math-verify's timeouts use SIGALRM, which only the main thread may set.
        timeout = 5 if threading.current_thread() is threading.main_thread() else None
        try:
            gold_parsed = _mv_parse(f"${gold}$", parsing_timeout=timeout)
            parsed = _mv_parse(prediction, parsing_timeout=timeout)
            if parsed and gold_parsed:
                return bool(_mv_verify(gold_parsed, parsed, timeout_seconds=timeout))
        except Exception:  # a parse or timeout failure: fall back to the exact match
            pass
    return normalise(prediction) == normalise(gold)

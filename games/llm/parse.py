"""Pulls the final output out of a model reply.

Every prompt asks the model to reason first and put its final output inside ``<answer></answer>``.
Models break that format in every way imaginable (several tags, tags inside tags, a tag left open
because the reply hit the token limit, upper case, spaces), so the parser is forgiving and works in
linear time on replies of any length: string searches only, no backtracking regular expression.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"<\s*answer\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*answer\s*>", re.IGNORECASE)
_ANY_TAG = re.compile(r"<\s*/?\s*answer\s*>", re.IGNORECASE)


def parse_answer(text: str | None) -> str | None:
    """The content of the last ``<answer>...</answer>`` in ``text``, stripped; ``None`` if there is
    no usable answer (no tag, or only whitespace inside).

    The last closing tag wins, paired with the nearest opening tag before it, so nested tags give
    the innermost content. A last opening tag that is never closed (a reply cut off by the token
    limit) yields the text after it. Stray tags inside the chosen span are removed.

    >>> parse_answer("I think... <answer>Is it alive?</answer>")
    'Is it alive?'
    >>> parse_answer("<answer>a</answer> then <answer> b </answer>")
    'b'
    >>> parse_answer("no tag here") is None
    True
    """
    if not text:
        return None
    opens = [m.end() for m in _OPEN.finditer(text)]
    closes = [m.start() for m in _CLOSE.finditer(text)]
    if not opens:
        return None
    last_open = opens[-1]
    if closes and closes[-1] >= last_open:
        # The last opening tag is closed: its span is the answer.
        content = text[last_open : min(c for c in closes if c >= last_open)]
    elif closes:
        # The last closing tag comes before the last opening tag. An open tag after the final
        # close is a cut-off reply; prefer it if it has content, else the last closed span.
        content = text[last_open:]
        if not _clean(content):
            last_close = closes[-1]
            start = max((o for o in opens if o <= last_close), default=None)
            if start is None:
                return None
            content = text[start:last_close]
    else:
        content = text[last_open:]
    return _clean(content)


def _clean(content: str) -> str | None:
    cleaned = _ANY_TAG.sub(" ", content).strip()
    return cleaned or None

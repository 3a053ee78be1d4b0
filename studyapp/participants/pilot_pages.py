"""What a pilot bot (:mod:`studyapp.participants.pilot_bot`) reads on the pages and boards it
gets, as a person reads them: the forms' hidden fields, the links, the board's state and choices,
and the questionnaire's fields with the answers a pilot gives. Plain text in, plain values out:
no network and no Django here."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
VERSION_RE = re.compile(r'name="version" value="([^"]*)"')
PUBLIC_ID_RE = re.compile(r"/p/([^/]+)/")
TABLE_RE = re.compile(r"/tables/(\d+)/")
CODE_RE = re.compile(r'id="completion-code">([^<]*)<')
SEQ_RE = re.compile(r'data-seq="(\d+)"')
STATUS_RE = re.compile(r'data-status="(\w+)"')
TARGET_RE = re.compile(r'name="target" value="(\d+)"')
ANSWER_RE = re.compile(r'name="answer" value="([^"]+)"')
CANDIDATES_RE = re.compile(r'id="candidates"><summary>[^<]*</summary>\s*<p[^>]*>(.*?)</p>', re.S)
HEARTBEAT_RE = re.compile(r'id="heartbeat" data-every="([\d.]+)"')


class _Form(HTMLParser):
    """The questionnaire's fields as its page shows them: options per name, and each free
    field's kind and lower bound."""

    def __init__(self) -> None:
        super().__init__()
        self.options: dict[str, list[str]] = {}
        self.kinds: dict[str, str] = {}
        self.minimum: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        name = found.get("name", "")
        if not name.startswith("q_"):
            return
        kind = found.get("type", "text") if tag == "input" else tag
        self.kinds.setdefault(name, kind)
        if kind in ("radio", "checkbox"):
            self.options.setdefault(name, []).append(found.get("value", ""))
        elif "min" in found:
            self.minimum[name] = found["min"]


def questionnaire_answers(
    page: str, index: int, checks: dict[str, Any] | None = None, fail: bool = False
) -> dict[str, Any]:
    """A pilot's answers to the questionnaire on ``page``: an option chosen by the bot's index
    (so pilots differ), every checkbox's first option, a number at the lower bound (or 1), a
    short text. An attention check (``checks``: field name -> expected answer, from the study)
    is answered as designed, or, with ``fail``, otherwise than expected, as a careless person
    would, so a pilot rehearses both paths of the study's attention policy."""
    form = _Form()
    form.feed(page)
    answers: dict[str, Any] = {}
    for name, kind in form.kinds.items():
        options = form.options.get(name, [])
        if checks and name in checks:
            answers[name] = _check_answer(kind, options, checks[name], fail)
        elif kind == "radio" and options:
            answers[name] = options[index % len(options)]
        elif kind == "checkbox" and options:
            answers[name] = options[0]
        elif kind == "number":
            answers[name] = form.minimum.get(name, "1")
        else:
            answers[name] = f"Pilot {index} answer."
    return answers


def _check_answer(kind: str, options: list[str], expected: Any, fail: bool) -> Any:
    """The answer to an attention check: the expected one, or (``fail``) one that is not."""
    if not fail:
        return list(expected) if isinstance(expected, list) else str(expected)
    if kind == "radio":
        return next(o for o in options if o != expected)
    if kind == "checkbox":
        wrong = [o for o in options if o not in expected]
        return wrong[:1] or options[:-1] or options
    if kind == "number":
        return str(float(expected) + 1)
    return f"not {expected}"

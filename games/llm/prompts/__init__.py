"""Prompt templates as plain text files, one per role and step, filled with ``string.Template``.

Keeping them as files lets researchers read and edit the exact wording without touching code, and
``$name`` placeholders leave JSON braces and code examples in prompts alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

_DIR = Path(__file__).parent


@cache
def _template(name: str) -> Template:
    return Template((_DIR / f"{name}.txt").read_text(encoding="utf-8").strip())


def render(name: str, **values: object) -> str:
    """Fill the template ``<name>.txt``; a missing value raises ``KeyError`` rather than leaving
    a stray ``$placeholder`` in front of a model."""
    return _template(name).substitute({key: str(value) for key, value in values.items()})


def text(name: str) -> str:
    """A template file with no placeholders (a shipped policy, for example)."""
    return _template(name).template

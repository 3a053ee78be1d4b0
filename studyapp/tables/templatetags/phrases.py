"""``{% phrase %}``: the board's short phrases said once per seat, clue or ballot, translated once
per language and process.

Django's ``{% blocktranslate %}`` looks its message up and renders its placeholders anew each
time; on an Undercover board, said once per seat, clue and ballot, that was nearly half of the
board's render time, and every move renders a board for each person at the table
(``benchmarks/ws_load.py --mode study``). ``{% phrase "Seat %(index)s" index=s.index %}`` gives
what ``{% blocktranslate trimmed with index=s.index %}Seat {{ index }}{% endblocktranslate %}``
gives: the message from the active language's catalog (the same message id, so the same
translation), the values escaped as the template would escape them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, gettext_noop

register = template.Library()

# Every message {% phrase %} may say, marked here so that makemessages keeps them in the catalogs.
PHRASES = frozenset(
    {
        gettext_noop("Seat %(index)s"),
        gettext_noop("Seat %(t)s"),
        gettext_noop("seat %(seat)s"),
        gettext_noop("Clue round %(round)s, seat %(seat)s:"),
        gettext_noop("Vote %(n)s:"),
        gettext_noop("Seat %(seat)s is out."),
        gettext_noop("a guess: %(guess)s"),
    }
)


@cache
def translated(language: str | None, message: str) -> str:
    """``message`` in ``language`` (the active one, which the cache is keyed by)."""
    return gettext(message)


@register.simple_tag
def phrase(message: str, **values: Any) -> SafeString:
    if message not in PHRASES:
        raise template.TemplateSyntaxError(f"{{% phrase %}} does not know {message!r}")
    escaped = {name: conditional_escape(value) for name, value in values.items()}
    return mark_safe(translated(get_language(), message) % escaped)

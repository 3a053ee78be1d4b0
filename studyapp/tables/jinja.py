"""The Jinja2 environment of the board partials (``studyapp/tables/jinja2/``): the view of a table
that a socket pushes to each person after every move.

Every committed turn renders the board of each person at the table, so the board's template
engine is on the move path: Django's engine took 2.4 ms for an Undercover board, a quarter of a
worker's and of a daphne's CPU in ``benchmarks/ws_load.py --mode study``. Jinja2 compiles a
template to Python once. The boards it renders are byte for byte the ones Django's templates
rendered, in every language:

- output is escaped with Django's own ``conditional_escape`` (:func:`finalize`; Jinja2's
  MarkupSafe writes quotes differently), and what Django marks safe stays as it is;
- ``{% translate %}`` and ``{% blocktranslate %}`` keep Django's syntax (:class:`DjangoI18n`), so
  the message ids are the ones Django's tags give and ``manage.py makemessages`` still finds
  them in these ``.html`` files: a literal is said as is, a variable's translation and every
  placeholder's value are escaped, ``trimmed`` joins lines as Django does;
- a missing value tests as None, as in Django's ``{% if x is None %}``;
- the filters the boards use are Django's own functions (``date``, ``floatformat``,
  ``pluralize``, ``dictsort``, ``default``).

Numbers are written as ``str`` gives them (the boards were rendered with ``{% localize off %}``).
"""

from __future__ import annotations

from functools import cache
from html import escape as html_escape
from typing import Any

from django.template import defaultfilters
from django.urls import get_script_prefix, reverse
from django.utils.safestring import SafeString
from django.utils.timezone import template_localtime
from django.utils.translation import gettext, gettext_noop, ngettext, override, trim_whitespace
from jinja2 import ChainableUndefined, Environment, nodes, pass_context
from jinja2.ext import Extension
from jinja2.parser import Parser
from jinja2.runtime import Context

# The short phrases a board says once per seat, clue or ballot ({{ "..."|phrase(...) }}), marked here
# so that makemessages keeps them in the catalogs.
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


def escaped(value: Any) -> Any:
    """``value`` as Django's templates write it: escaped with Django's ``conditional_escape``
    (``&quot;`` and ``&#x27;``, where Jinja2's MarkupSafe writes ``&#34;`` and ``&#39;``),
    unless it is already safe (Django's ``SafeString``, Jinja2's ``Markup``). A number needs no
    escaping at all."""
    if type(value) is int or hasattr(value, "__html__"):
        return value
    return SafeString(html_escape(str(value)))  # Django's escape, without its lazy wrapper


def finalize(value: Any) -> Any:
    """What ``{{ value }}`` hands Jinja2's autoescape. A string without a quote, an int and what
    is safe already go as they are: MarkupSafe escapes ``&``, ``<`` and ``>`` exactly as Django
    does. Anything else is escaped here as Django escapes it (:func:`escaped`): a string with a
    quote, and any other value, whose ``str()`` may hold one (a lazy translation, a ``str``
    subclass such as an enum's member), which MarkupSafe would write as ``&#34;``."""
    if type(value) is str and "'" not in value and '"' not in value:
        return value
    return escaped(value)


def is_none(value: Any) -> bool:
    """Django's templates read a missing variable as None in ``{% if x is None %}``."""
    return value is None or isinstance(value, ChainableUndefined)


@cache
def translated(language: str, message: str) -> str:
    """``message`` in ``language``: a board says the same few dozen messages on every move, and
    Django's ``gettext`` looks each up anew (the active language is an asgiref ``Local``)."""
    with override(language):
        return gettext(message)


@cache
def literal_translation(language: str, message: str) -> SafeString:
    """A literal's translation, template text that is not escaped. ``message`` is the message id
    as Django's tag and ``makemessages`` write it (each ``%`` doubled, :meth:`DjangoI18n.parse`);
    the text says each ``%%`` as ``%``, as Django's tag does."""
    return SafeString(translated(language, message).replace("%%", "%"))


@pass_context
def translate_literal(context: Context, message: str) -> SafeString:
    """``{% translate "..." %}``."""
    return literal_translation(context["language_code"], message)


@pass_context
def translate_value(context: Context, message: Any) -> str:
    """``{% translate variable %}``: the translation of a value, escaped on output."""
    return translated(context["language_code"], str(message))


@pass_context
def phrase(context: Context, message: str, **values: Any) -> SafeString:
    """``{{ "Seat %(index)s"|phrase(index=s.index) }}`` says what ``{% blocktranslate trimmed
    with index=s.index %}Seat {{ index }}{% endblocktranslate %}`` says, for the short phrases
    of :data:`PHRASES`, said once per seat, clue or ballot."""
    if message not in PHRASES:
        raise ValueError(f"phrase does not know {message!r}")
    values = {name: escaped(value) for name, value in values.items()}
    return SafeString(translated(context["language_code"], message) % values)


@pass_context
def block(
    context: Context, singular: str, plural: str | None, count: Any, values: dict[str, Any]
) -> SafeString:
    """``{% blocktranslate %}``: the message (or its plural form for ``count``) with its values
    escaped into it, as Django's tag renders it."""
    language = context["language_code"]
    if plural is None:
        message = translated(language, singular)
    else:
        message = translated_plural(language, singular, plural, count)
    values = {name: escaped(value) for name, value in values.items()}
    try:
        return SafeString(message % values)
    except (KeyError, ValueError):
        # A translation whose placeholders are not the message's: Django's tag says the
        # message untranslated, and so does this one, rather than fail the whole board.
        with override(None):
            message = gettext(singular) if plural is None else ngettext(singular, plural, count)
        return SafeString(message % values)


@cache
def translated_plural(language: str, singular: str, plural: str, count: int) -> str:
    with override(language):
        return ngettext(singular, plural, count)


def date(value: Any, arg: str) -> str:
    """Django's ``date`` filter, on the value in the current time zone as Django's templates
    hand it over."""
    return defaultfilters.date(template_localtime(value), arg)


def default(value: Any, arg: Any) -> Any:
    """Django's ``default``: ``arg`` for any false value (Jinja2's is for undefined ones)."""
    return value or arg


def url(name: str, *args: Any) -> str:
    """``{% url %}``: the same few addresses on every board, reversed once per process (and
    script prefix)."""
    return reversed_url(get_script_prefix(), name, args)


@cache
def reversed_url(prefix: str, name: str, args: tuple) -> str:
    return reverse(name, args=args)


class BoardEnvironment(Environment):
    """Jinja2's environment, with Django's lookup order for ``a.b``: a dict's key first (the
    boards read dicts: an observation, a seat, a vote), then an attribute. Jinja2 tries the
    attribute first, which costs a raised AttributeError for every key read from a dict."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


class DjangoI18n(Extension):
    """Django's ``{% translate %}`` and ``{% blocktranslate %}`` tags, as the boards use them:
    ``{% translate "literal" %}``, ``{% translate variable %}`` and ``{% blocktranslate
    [trimmed] [with name=value ...] [count name=value] %}text {{ name }}[{% plural %}...]
    {% endblocktranslate %}``."""

    tags = {"translate", "blocktranslate"}

    def parse(self, parser: Parser) -> nodes.Node:
        token = next(parser.stream)
        if token.value == "translate":
            message = parser.parse_expression()
            call = "translate_value"
            if isinstance(message, nodes.Const) and isinstance(message.value, str):
                # A literal's message id has each % doubled, as Django's tag looks it up and
                # makemessages writes it.
                call = "translate_literal"
                message = nodes.Const(message.value.replace("%", "%%"), lineno=message.lineno)
            return nodes.Output([nodes.Filter(message, call, [], [], None, None)])
        return self.block(parser, token.lineno)

    def block(self, parser: Parser, lineno: int) -> nodes.Node:
        trimmed, values, counter = False, {}, None
        stream = parser.stream
        while stream.current.type != "block_end":
            if stream.skip_if("name:trimmed"):
                trimmed = True
            elif stream.skip_if("name:with"):
                while stream.current.type == "name" and stream.look().type == "assign":
                    name = next(stream).value
                    stream.expect("assign")
                    values[name] = parser.parse_expression()
            elif stream.skip_if("name:count"):
                counter = stream.expect("name").value
                stream.expect("assign")
                values[counter] = parser.parse_expression()
            else:
                parser.fail("blocktranslate takes trimmed, with name=value and count", lineno)
        stream.expect("block_end")
        singular, names = self.body(parser, ("plural", "endblocktranslate"), trimmed)
        plural = None
        if stream.skip_if("name:plural"):
            stream.expect("block_end")
            plural, more = self.body(parser, ("endblocktranslate",), trimmed)
            names += more
        stream.expect("name:endblocktranslate")
        if (plural is None) != (counter is None):
            parser.fail("a plural form needs count name=value, and count a plural form", lineno)
        pairs = [
            nodes.Pair(nodes.Const(name), values.get(name, nodes.Name(name, "load")))
            for name in dict.fromkeys(names)
        ]
        count = values[counter] if counter else nodes.Const(None)
        args = [nodes.Const(plural), count, nodes.Dict(pairs)]
        call = nodes.Filter(nodes.Const(singular), "blocktranslate", args, [], None, None)
        return nodes.Output([call], lineno=lineno)

    @staticmethod
    def body(parser: Parser, ends: tuple[str, ...], trimmed: bool) -> tuple[str, list[str]]:
        """The message id of a block's text, as Django writes it (``%(name)s`` for each
        ``{{ name }}``, ``%%`` for ``%``), and the names it says. Stops before the end tag's
        name."""
        stream, parts, names = parser.stream, [], []
        while True:
            token = stream.current
            if token.type == "data":
                parts.append(token.value.replace("%", "%%"))
                next(stream)
            elif token.type == "variable_begin":
                next(stream)
                name = stream.expect("name").value
                stream.expect("variable_end")
                parts.append(f"%({name})s")
                names.append(name)
            elif token.type == "block_begin":
                next(stream)
                if stream.current.type == "name" and stream.current.value in ends:
                    break
                parser.fail("a blocktranslate holds only text and {{ name }}", token.lineno)
            else:
                parser.fail("blocktranslate is not closed", token.lineno)
        message = "".join(parts)
        return (trim_whitespace(message) if trimmed else message), names


def environment(**options: Any) -> Environment:
    """The environment of Django's Jinja2 backend (settings.TEMPLATES). A board's context
    names its language (``language_code``, :func:`studyapp.tables.rendering.board_html`)."""
    options.update(
        finalize=finalize,
        undefined=ChainableUndefined,
        keep_trailing_newline=True,  # Django's templates keep it; the boards end with one
        extensions=[DjangoI18n],
    )
    env = BoardEnvironment(**options)
    env.globals.update(url=url)
    # Filters, not functions: Jinja2 calls a filter directly, a function through Context.call
    # (about a third of a board's render time when the translations were functions).
    env.filters.update(
        phrase=phrase,
        translate_literal=translate_literal,
        translate_value=translate_value,
        blocktranslate=block,
        date=date,
        floatformat=defaultfilters.floatformat,
        pluralize=defaultfilters.pluralize,
        dictsort=defaultfilters.dictsort,
        default=default,
    )
    env.tests["none"] = is_none
    return env

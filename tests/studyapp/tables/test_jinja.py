"""The board partials' Jinja2 environment (studyapp.tables.jinja) says what Django's templates
said: the same escaping, Django's {% translate %} and {% blocktranslate %} with the same message
ids, a missing value that tests as None, Django's lookups and filters. Snippets are rendered by
both engines and compared byte for byte, in English and German, and the board templates' message
ids are checked against the German catalog that makemessages keeps."""

from __future__ import annotations

import ast
import datetime
import re
from enum import StrEnum
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template, engines
from django.utils import translation
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy, templatize
from jinja2 import TemplateSyntaxError, nodes
from markupsafe import Markup

from studyapp.tables import jinja

BOARDS = Path(jinja.__file__).parent / "jinja2"
BOARD_TEMPLATES = [
    "tables/_board.html",
    "tables/_spectator.html",
    "tables/undercover/_board.html",
    "tables/twenty_questions/_board.html",
]
CATALOG = Path(settings.BASE_DIR) / "locale" / "de" / "LC_MESSAGES" / "django.po"

# A clue as a person may type it: every character that HTML escaping changes.
CLUE = """He said "no" & it's <b>big</b>"""
ESCAPED_CLUE = "He said &quot;no&quot; &amp; it&#x27;s &lt;b&gt;big&lt;/b&gt;"

# The agents' count in the lobby, as the board says it (a plural in the catalog).
AGENTS = (
    "{% blocktranslate trimmed count counter=n %}(agents play the other {{ counter }} seat)"
    "{% plural %}(agents play the other {{ counter }} seats){% endblocktranslate %}"
)


def render_jinja(source: str, language: str = "en", **context: object) -> str:
    """``source`` as the boards' Jinja2 engine renders it in ``language``."""
    template = engines["jinja2"].from_string(source)
    with translation.override(language):  # Django's filters (floatformat) read the active one
        return template.render({"language_code": language, **context})


def render_django(source: str, language: str = "en", **context: object) -> str:
    """``source`` as Django's engine rendered the boards: i18n loaded, numbers not localized."""
    template = Template("{% load i18n l10n %}{% localize off %}" + source + "{% endlocalize %}")
    with translation.override(language):
        return template.render(Context(context))


def test_escaping_is_djangos() -> None:
    assert escape(CLUE) == ESCAPED_CLUE  # Django's quotes, not MarkupSafe's &#34; and &#39;
    assert render_jinja("<span>{{ c.text }}</span>", c={"text": CLUE}) == (
        f"<span>{ESCAPED_CLUE}</span>"
    )
    assert render_jinja("{{ t }}", t="a < b & c") == "a &lt; b &amp; c"
    block = "{% blocktranslate with x=c.text %}Clue: {{ x }}{% endblocktranslate %}"
    assert render_jinja(block, c={"text": CLUE}) == f"Clue: {ESCAPED_CLUE}"
    # A value the block reads from the context, not from its with
    assert render_jinja("{% blocktranslate %}[{{ t }}]{% endblocktranslate %}", t=CLUE) == (
        f"[{ESCAPED_CLUE}]"
    )
    assert render_jinja('{{ "a guess: %(guess)s"|phrase(guess=g) }}', g=CLUE) == (
        f"a guess: {ESCAPED_CLUE}"
    )
    assert render_jinja('{{ "a guess: %(guess)s"|phrase(guess=g) }}', "de", g=CLUE) == (
        f"ein Tipp: {ESCAPED_CLUE}"
    )


def test_what_is_safe_is_not_escaped_twice() -> None:
    for safe in (mark_safe("<i>&amp;</i>"), escape(CLUE), Markup("<i>&amp;</i>")):
        assert render_jinja("{{ s }}", s=safe) == str(safe)
        assert render_jinja("{% blocktranslate %}{{ s }}{% endblocktranslate %}", s=safe) == (
            str(safe)
        )
        assert render_jinja('{{ "seat %(seat)s"|phrase(seat=s) }}', s=safe) == f"seat {safe}"


def test_values_that_are_not_strings_are_written_as_str_gives_them() -> None:
    block = "{% blocktranslate with x=v %}{{ x }}{% endblocktranslate %}"
    for value in (7, 0, None, True, 0.5, -3):
        assert render_jinja("{{ v }}", v=value) == str(value)
        assert render_jinja(block, v=value) == str(value)
    assert render_jinja("[{{ missing }}|{{ missing.deeper.still }}]") == "[|]"
    assert render_jinja("{% blocktranslate %}[{{ missing }}]{% endblocktranslate %}") == "[]"


class Mood(StrEnum):
    QUOTED = 'a "quoted" mood'


def test_a_lazy_translation_or_a_str_subclass_is_escaped_as_django_escapes_it() -> None:
    """MarkupSafe writes a quote in ``str()`` of anything that is not exactly a str as ``&#34;``;
    Django writes ``&quot;``."""
    lazy = gettext_lazy('It\'s "lazy"')
    assert render_jinja("{{ v }}", v=lazy) == "It&#x27;s &quot;lazy&quot;"
    assert render_jinja("{{ v }}", v=Mood.QUOTED) == "a &quot;quoted&quot; mood"
    for value in (lazy, Mood.QUOTED):
        assert render_jinja("{{ v }}", v=value) == render_django("{{ v }}", v=value)


def test_translate_a_literal_is_not_escaped_and_a_variable_is() -> None:
    assert render_jinja('{% translate "it\'s <b>" %}') == "it's <b>"
    assert render_jinja('<h2>{% translate "Waiting for players" %}</h2>', "de") == (
        "<h2>Warten auf Mitspielende</h2>"
    )
    assert render_jinja("{% translate v %}", v=CLUE) == ESCAPED_CLUE
    assert render_jinja("{% translate v %}", "de", v="Yes") == "Ja"


def test_a_literal_with_a_percent_sign_is_looked_up_by_djangos_message_id() -> None:
    """Django's tag and makemessages double a literal's ``%`` in its message id."""
    env = engines["jinja2"].env
    assert literal_ids(env.parse('{% translate "50% off" %}')) == ["50%% off"]
    assert render_jinja('{% translate "50% off" %}') == "50% off"
    assert render_jinja('{% translate "50% off" %}') == render_django('{% translate "50% off" %}')
    assert render_jinja('{% translate "50%% off" %}') == render_django('{% translate "50%% off" %}')


def test_trimmed_joins_lines_as_djangos_trim_whitespace() -> None:
    source = (
        "{% blocktranslate trimmed %}\n  Hello\n    {{ name }},   you\n\n  are here.\n"
        "{% endblocktranslate %}"
    )
    assert render_jinja(source, name="Bob") == "Hello Bob,   you are here."
    untrimmed = source.replace(" trimmed", "")
    assert render_jinja(untrimmed, name="Bob") == "\n  Hello\n    Bob,   you\n\n  are here.\n"
    for text in (source, untrimmed):
        assert render_jinja(text, name="Bob") == render_django(text, name="Bob")


@pytest.mark.parametrize(
    ("language", "n", "said"),
    [
        ("en", 1, "(agents play the other 1 seat)"),
        ("en", 3, "(agents play the other 3 seats)"),
        ("en", 0, "(agents play the other 0 seats)"),
        ("de", 1, "(Agenten spielen den anderen 1 Platz)"),
        ("de", 2, "(Agenten spielen die anderen 2 Plätze)"),
    ],
)
def test_count_picks_the_plural_form_of_the_language(language: str, n: int, said: str) -> None:
    assert render_jinja(AGENTS, language, n=n) == said
    assert render_django(AGENTS, language, n=n) == said


def test_a_translation_that_does_not_fit_its_values_falls_back_to_the_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Django's tag says the message untranslated when its translation names other values; so
    does this one, rather than fail the board."""
    monkeypatch.setattr(jinja, "translated", lambda language, message: "Platz %(nummer)s")
    source = "{% blocktranslate with index=i %}Seat {{ index }}{% endblocktranslate %}"
    assert render_jinja(source, "de", i=4) == "Seat 4"


# Snippets of the boards, as Django's templates wrote them and as the Jinja2 ones do.
SAME = [
    ('<h2>{% translate "Waiting for players" %}</h2>', {}),
    ("<nav aria-label=\"{% translate 'After the game' %}\"></nav>", {}),
    ('<strong class="answer">{% translate answer %}</strong>', {"answer": "Yes"}),
    ('<strong class="answer">{% translate answer %}</strong>', {"answer": CLUE}),
    (
        "<p>{% blocktranslate trimmed with word=obs.word %}You are seat {{ seat_index }}. Your "
        'word: <span class="word" id="my-word">{{ word }}</span>{% endblocktranslate %}</p>',
        {"obs": {"word": CLUE}, "seat_index": 2},
    ),
    (
        "<p>{% blocktranslate trimmed %}Find the secret word with yes/no questions. To guess, "
        'pick a word with <strong>Guess</strong> (or ask "Is it a …?"); a wrong guess uses up a '
        "question.{% endblocktranslate %}</p>",
        {},
    ),
    (
        "{% blocktranslate trimmed %}<strong>{{ arrived }} of {{ places }}</strong> people have "
        "joined{% endblocktranslate %}; {% blocktranslate trimmed %}the game starts when all "
        "{{ places }} are here.{% endblocktranslate %}",
        {"arrived": 1, "places": 3},
    ),
    ("{% blocktranslate %}\n  An untrimmed\n  block {{ x }}\n{% endblocktranslate %}", {"x": CLUE}),
    (AGENTS, {"n": 1}),
    (AGENTS, {"n": 4}),
    (
        '<input placeholder="{% blocktranslate trimmed with n=words|length %}Type to pick one of '
        'the {{ n }} words{% endblocktranslate %}">',
        {"words": ["a", "b", "c"]},
    ),
    ('<span class="clue">{{ c.text }}</span>', {"c": {"text": CLUE}}),
    ("{{ error }}", {"error": "it is seat 1's turn to speak"}),
    ("{{ seq }} {{ nothing }} {{ flag }} {{ none }}", {"seq": 12, "flag": False, "none": None}),
    ("{{ v.items }} {{ v.round }}", {"v": {"items": "the key, not the method", "round": 2}}),
    ("{{ obs.result.role }}[{{ obs.missing.role }}]", {"obs": {"result": {"role": "normal"}}}),
]
# The same snippet, where the two engines spell it differently: (Django's, Jinja2's, context).
SPELLED = [
    (
        "{% if missing is None %}none{% endif %}{% if zero is not None %} zero{% endif %}"
        "{% if v.target is None %} abstained{% endif %}",
        "{% if missing is none %}none{% endif %}{% if zero is not none %} zero{% endif %}"
        "{% if v.target is none %} abstained{% endif %}",
        {"zero": 0, "v": {"target": None}},
    ),
    (
        "{% with winner=outcome.0.1.winner %}{{ winner }}{% endwith %}",
        "{% with winner=outcome[0][1].winner %}{{ winner }}{% endwith %}",
        {"outcome": [(0, {"winner": "normal"}), (1, {"winner": "normal"})]},
    ),
    (
        "{% for b in ballots|dictsort:'seat' %}{{ b.seat }}{% if not forloop.last %}; "
        "{% endif %}{% endfor %}",
        "{% for b in ballots|dictsort('seat') %}{{ b.seat }}{% if not loop.last %}; "
        "{% endif %}{% endfor %}",
        {"ballots": [{"seat": 2}, {"seat": 0}, {"seat": 1}]},
    ),
    (
        "{{ reward|floatformat:3 }} {{ votes|length }} vote{{ votes|length|pluralize }} "
        "{{ word|default:'—' }} <time datetime=\"{{ deadline|date:'c' }}\">",
        "{{ reward|floatformat(3) }} {{ votes|length }} vote{{ votes|length|pluralize }} "
        "{{ word|default('—') }} <time datetime=\"{{ deadline|date('c') }}\">",
        {
            "reward": 0.63092975,
            "votes": [1, 2],
            "word": "",
            "deadline": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
        },
    ),
    (
        "{% blocktranslate trimmed with index=i %}Seat {{ index }}{% endblocktranslate %}: "
        "{% blocktranslate trimmed with guess=g %}a guess: {{ guess }}{% endblocktranslate %}",
        '{{ "Seat %(index)s"|phrase(index=i) }}: {{ "a guess: %(guess)s"|phrase(guess=g) }}',
        {"i": 3, "g": CLUE},
    ),
]
SNIPPETS = [(source, source, context) for source, context in SAME] + SPELLED


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize(("django_source", "jinja_source", "context"), SNIPPETS)
def test_both_engines_render_a_snippet_byte_for_byte_alike(
    django_source: str, jinja_source: str, context: dict, language: str
) -> None:
    ours = render_jinja(jinja_source, language, **context)
    assert ours == render_django(django_source, language, **context)
    assert ours.strip()  # a snippet that says nothing compares nothing


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("{% blocktranslate %}a {% if x %}b{% endif %}{% endblocktranslate %}", "only text"),
        ("{% blocktranslate count n=x %}one{% endblocktranslate %}", "plural form needs count"),
        ("{% blocktranslate %}one{% plural %}more{% endblocktranslate %}", "plural form needs"),
        ("{% blocktranslate asvar x %}one{% endblocktranslate %}", "takes trimmed, with"),
        ('{% blocktranslate context "menu" %}one{% endblocktranslate %}', "takes trimmed, with"),
        ("{% blocktranslate %}one {{ a.b }}{% endblocktranslate %}", "expected token"),
        ("{% blocktranslate %}never closed", "not closed"),
    ],
)
def test_bad_i18n_syntax_is_refused(source: str, says: str) -> None:
    with pytest.raises(TemplateSyntaxError, match=says):
        engines["jinja2"].from_string(source)


def test_phrase_says_only_the_phrases_the_catalog_keeps() -> None:
    with pytest.raises(ValueError, match="does not know"):
        render_jinja('{{ "Row %(n)s"|phrase(n=1) }}')


def literal_ids(tree: nodes.Template) -> list[str]:
    return [
        found.node.value
        for found in tree.find_all(nodes.Filter)
        if found.name == "translate_literal"
    ]


def jinja_message_ids(source: str) -> set[tuple[str, str | None]]:
    """The ``(message id, plural id)`` the Jinja2 templates look up, from their compiled filters
    (translations and phrases are filters: :mod:`studyapp.tables.jinja`)."""
    ids = set()
    for found in engines["jinja2"].env.parse(source).find_all(nodes.Filter):
        if found.name in ("translate_literal", "phrase"):
            ids.add((found.node.value, None))
        elif found.name == "blocktranslate":
            ids.add((found.node.value, found.args[0].value))
    return ids


def makemessages_ids(source: str) -> set[tuple[str, str | None]]:
    """The ``(message id, plural id)`` Django's ``templatize`` hands xgettext for a template, as
    ``manage.py makemessages`` reads an ``.html`` file."""
    text = templatize(source)
    literal = r"""u?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
    ids = {(ast.literal_eval(m), None) for m in re.findall(rf" gettext\(({literal})\) ", text)}
    for singular, plural in re.findall(rf" ngettext\(({literal}), ({literal}), count\) ", text):
        ids.add((ast.literal_eval(singular), ast.literal_eval(plural)))
    return ids


def catalog(path: Path) -> dict[str, dict[str, str]]:
    """A ``.po`` file's entries that are in use (not obsolete), by message id."""
    entries, entry, key = {}, {}, ""
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if "msgid" in entry:
                entries[entry["msgid"]] = entry
            entry, key = {}, ""
        elif line.startswith("#,") and "fuzzy" in line:
            entry["fuzzy"] = "yes"
        elif match := re.match(r'(msgid|msgid_plural|msgstr(?:\[\d\])?) (".*")$', line):
            key = match[1]
            entry[key] = ast.literal_eval(match[2])
        elif line.startswith('"'):
            entry[key] += ast.literal_eval(line)
    return entries


def test_the_templates_and_makemessages_agree_on_the_message_ids() -> None:
    for name in BOARD_TEMPLATES:
        source = (BOARDS / name).read_text(encoding="utf-8")
        looked_up = jinja_message_ids(source)
        phrases = {(message, None) for message in jinja.PHRASES}
        assert looked_up - phrases == makemessages_ids(source), name


def test_every_board_message_is_translated_in_the_german_catalog() -> None:
    entries = catalog(CATALOG)
    assert len(entries) > 100  # the parser read the catalog
    sources = [(BOARDS / name).read_text(encoding="utf-8") for name in BOARD_TEMPLATES]
    ids = set().union(*(jinja_message_ids(source) for source in sources))
    assert len(ids) > 100
    assert {(message, None) for message in jinja.PHRASES} <= ids  # each phrase is on a board
    for message, plural in sorted(ids, key=str):
        entry = entries.get(message)
        assert entry is not None, f"not in {CATALOG.name}: {message!r}"
        assert "fuzzy" not in entry, message
        assert entry.get("msgid_plural") == plural, message
        with translation.override("de"):  # and the compiled catalog says what the .po says
            if plural is None:
                assert entry["msgstr"] and translation.gettext(message) == entry["msgstr"]
            else:
                assert entry["msgstr[0]"] and entry["msgstr[1]"]
                assert translation.ngettext(message, plural, 1) == entry["msgstr[0]"]
                assert translation.ngettext(message, plural, 2) == entry["msgstr[1]"]

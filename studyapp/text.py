"""The rule for text people type, shared by every app that takes it (a move at a table, a
participant's advice): what cannot be stored on both databases, or would show its readers
something else than was typed."""

from __future__ import annotations

import re
import unicodedata

# Text that cannot be stored or shown: unpaired surrogates, and control characters other than
# tab, newline and carriage return (NUL among them), including DEL and the C1 controls.
UNSTORABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

# Text that can be stored but misleads whoever reads it: Unicode's format characters, which are
# invisible and change how the text around them is shown (bidirectional overrides and isolates
# that show a move reversed to staff and other players, zero-width spaces, the byte-order mark),
# except the joiners that emoji and some scripts need and the tags of subdivision flags; and the
# replacement character, which stands for bytes that were not text (a form posted in another
# encoding, or broken UTF-8 that the server decoded with replacement).
KEPT_FORMAT = frozenset("\u200c\u200d") | frozenset(map(chr, range(0xE0020, 0xE0080)))
REPLACEMENT = "\ufffd"


def character_problem(text: str) -> str | None:
    """Why a character of ``text`` cannot be stored, or would mislead its readers, or None."""
    bad = UNSTORABLE.search(text)
    if bad is not None:
        code = ord(bad.group())
        if 0xD800 <= code <= 0xDFFF:
            return (
                f"it contains a broken character (U+{code:04X}, half of a pair); please retype it"
            )
        return f"it contains an invisible control character (U+{code:04X}); please remove it"
    return None if text.isascii() else misleading(text)


def misleading(text: str) -> str | None:
    """Why storable ``text`` would still mislead its readers, or None (see ``KEPT_FORMAT``)."""
    for char in text:
        if char == REPLACEMENT:
            return "it contains a character that could not be read (U+FFFD); please retype it"
        if unicodedata.category(char) == "Cf" and char not in KEPT_FORMAT:
            return (
                f"it contains an invisible formatting character (U+{ord(char):04X}) that changes "
                "how the text is shown; please remove it"
            )
    return None

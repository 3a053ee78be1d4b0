"""What the tables app announces to whoever runs studies on it (the participants app listens,
studyapp/participants/receivers.py): the tables app itself knows nothing of studies."""

from __future__ import annotations

import logging
from typing import Any

from django.dispatch import Signal

from studyapp.tables.models import Table

log = logging.getLogger(__name__)


def announce(signal: Signal, **facts: Any) -> list[Any]:
    """Send ``signal`` where the table has already moved on (a turn committed, a sweep under way):
    a receiver that fails is logged with its traceback and left out, and the rest of the move or
    the sweep goes on. Returns the other receivers' answers."""
    answers = []
    for receiver, answer in signal.send_robust(sender=Table, **facts):
        if isinstance(answer, Exception):
            log.error(
                "%s receiver %s failed",
                facts,
                getattr(receiver, "__qualname__", receiver),
                exc_info=answer,
            )
        else:
            answers.append(answer)
    return answers


# A study's group lobby is full, or its wait has run out: the group forms (its condition is
# drawn and its people seated). Sent with ``table_id``; a receiver returns what happened
# ("formed", "full", "empty", "not a lobby"), which the sender reports.
group_lobby_closing = Signal()

# A person gave a lobby place back before the game started. Sent with ``table_id`` and ``seat``
# (the index), inside the transaction that frees the place.
lobby_place_left = Signal()

# A table's game has just ended (its last turn committed, before the boards go out). Sent with
# ``table``; whoever runs a study on it books the rounds played there, so the end screen shows
# the running total with this game in it.
game_over = Signal()

# A lobby's wait ran out and its people were released with a paid exit code (the table is
# aborted before any game). Sent with ``table``; whoever runs a study on it settles those people
# at once (a study: its lobby-timeout code, paid for the rounds played), not on their next page.
lobby_released = Signal()

# A person has kept a table waiting longer than its idle limit. Sent with ``table_id`` and
# ``seat``; a receiver that takes the person out (a study marks them dropped, which applies the
# table's dropout policy to the seat) returns True. With no such receiver the table applies its
# dropout policy to the seat itself.
seat_idle = Signal()

# The periodic sweep has gone over the tables. Sent with ``now``; receivers run their own
# periodic checks (a study drops people idle between rounds) and return ``{what: how many}`` for
# the sweep's report.
swept = Signal()

# A table's whole page is being rendered for a browser (not the board alone). Sent with ``table``
# and ``request``; a receiver returns the parts it adds to the page as a dict: ``title``, shown in
# place of the site's name, and ``bar``, HTML above the board (a study: the game's number, the
# running total and a way out), or {} for a table that is not its.
table_page = Signal()

# A board is being rendered for a seat of a study table (``options["study"]``) whose game is over,
# to be pushed to that seat's socket. Sent with ``table`` and ``seat`` (the index); a receiver
# returns HTML to push along with the board (a study: its bar's running total, swapped into the
# page by id), or "" when it has nothing for that seat.
final_board = Signal()

"""What the tables app announces to whoever runs studies on it (the participants app listens,
studyapp/participants/receivers.py): the tables app itself knows nothing of studies. These are
announcements only; where the tables need an answer they ask studyapp.tables.hooks."""

from __future__ import annotations

import logging
from typing import Any

from django.dispatch import Signal

from studyapp.tables.models import Table

log = logging.getLogger(__name__)


def announce(signal: Signal, **facts: Any) -> None:
    """Send ``signal`` where the table has already moved on (a turn committed, a sweep under way):
    a receiver that fails is logged with its traceback and left out, and the rest of the move or
    the sweep goes on. The line names the facts, not their values: a finished table's state holds
    its secret words."""
    for receiver, answer in signal.send_robust(sender=Table, **facts):
        if isinstance(answer, Exception):
            table = facts.get("table")
            log.error(
                "receiver %s failed (table %s; facts %s)",
                getattr(receiver, "__qualname__", receiver),
                getattr(table, "pk", facts.get("table_id", "?")),
                ", ".join(sorted(facts)),
                exc_info=answer,
            )


# A person gave a lobby place back before the game started. Sent with ``table_id`` and ``seat``
# (the index), inside the transaction that frees the place.
lobby_place_left = Signal()

# A table's game has just ended (its last turn committed, before the boards go out). Sent with
# ``table`` and ``snap``, the finished table (a TableState), so that whoever runs a study on it
# books the rounds played there from it, without replaying the log, and the end screen shows the
# running total with this game in it.
game_over = Signal()

# A lobby's wait ran out and its people were released with a paid exit code (the table is
# aborted before any game). Sent with ``table``; whoever runs a study on it settles those people
# at once (a study: its lobby-timeout code, paid for the rounds played), not on their next page.
lobby_released = Signal()

"""What the table socket tells a page outside its board: the connection status line
(``#socket-status``, swapped in by htmx) and the messages it carries (studyapp.tables.consumers).
A few bytes each: no database read and no board rendered."""

from __future__ import annotations

from html import escape

from django.utils.translation import gettext_lazy

SEAT_TAKEN_MESSAGE = (
    "This seat is now open in another browser or tab, so this page stopped sending moves. "
    "Go on in the other one."
)
TOO_LARGE_MESSAGE = (
    "That message was too large for the table, so the connection was closed. "
    "Reload the page to go on."
)
# A database call that fails for a moment (PostgreSQL restarting, a connection cut, no pooled
# connection free within DB_SOCKET_WAIT): reads are tried again (studyapp.retry.DATABASE_PAUSES);
# then the socket stays open with a notice, and the next heartbeat or move tries again.
UNAVAILABLE_MESSAGE = (
    "The table could not be reached for a moment. Your last move may not have been saved: if "
    "the board does not show it within a few seconds, send it again."
)
# Shown in the board, rendered in the table's language (gettext_lazy, translated at render time).
UNREADABLE_MESSAGE = gettext_lazy("That move could not be read; please use the form on this page.")
RESEND_MESSAGE = gettext_lazy(
    "Your move was not saved: the table could not be reached for a moment. It is sent again "
    "automatically in a few seconds; keep this page open."
)


def resend_notice() -> str:
    """The status line telling the page its last move was not saved and to send it again."""
    return (
        '<p id="socket-status" class="notice" role="status" data-resend="1">'
        f"{escape(str(RESEND_MESSAGE))}</p>"
    )


def alert(message: str) -> str:
    """The connection status line carrying a refusal (a move too fast, a frame that is not a
    move): a few bytes, no database read and no board rendered; the form keeps what was typed."""
    return f'<p id="socket-status" class="notice error" role="alert">{escape(message)}</p>'


def notice(message: str) -> str:
    """The page's connection status line (``#socket-status``), swapped in by htmx, saying
    ``message``."""
    return f'<p id="socket-status" class="notice" role="status">{escape(message)}</p>'

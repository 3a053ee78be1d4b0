"""A board pushed in the moment its page went away: daphne refuses the send (autobahn's
``Disconnected: Attempt to send on a closed protocol``), and the site drops that message instead
of ending the consumer with a traceback (studyapp.asgi.while_open); other errors still rise."""

from __future__ import annotations

import pytest
from autobahn.exception import Disconnected

from studyapp.asgi import while_open


async def test_a_send_after_the_browser_closed_is_dropped_quietly() -> None:
    sent: list[dict] = []

    async def daphne_send(message: dict) -> None:
        if sent:  # the browser has gone after the first frame
            raise Disconnected("Attempt to send on a closed protocol")
        sent.append(message)

    send = while_open(daphne_send)
    await send({"type": "websocket.send", "text": "board 1"})
    await send({"type": "websocket.send", "text": "board 2"})
    assert sent == [{"type": "websocket.send", "text": "board 1"}]


async def test_any_other_failure_of_a_send_still_rises() -> None:
    async def broken(message: dict) -> None:
        raise ValueError("not a closed socket")

    with pytest.raises(ValueError):
        await while_open(broken)({"type": "websocket.send", "text": "x"})

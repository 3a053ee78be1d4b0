"""The pilot bot at a table that refuses a move at the door (too many moves at once): it sends the
same move again a second later, as a person does after reading the alert, and plays on. A
scripted Twenty Questions guesser answers each board within milliseconds, faster than a socket's
move allowance (SOCKET_MOVE_BURST, then SOCKET_MOVES_PER_SECOND), so on a real site its sixth
guess is refused; before, the bot waited for a board that never came until the round's timeout.
The table here is a small WebSocket server speaking the table socket's frames."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
from aiohttp import web

from studyapp.participants.pilot_bot import REFUSED_PAUSE, PilotBot
from studyapp.tables.socket_limits import TOO_FAST
from studyapp.tables.socket_status import alert


def board(seq: int, status: str = "playing") -> str:
    """A questioner's board as the table pushes it: the question form and the candidate words."""
    return (
        f'<section id="board" data-seq="{seq}" data-status="{status}">'
        f'<form><input type="hidden" name="type" value="question"><span id="question-{seq}">'
        '</span></form><details id="candidates"><summary>Words</summary> <p>Apple, Pear, Plum'
        "</p></details></section>"
    )


async def play_against(refuse: set[int]) -> tuple[bool, PilotBot, list[tuple[float, dict]]]:
    """A table that refuses the moves whose numbers (from 1) are in ``refuse`` and finishes after
    three accepted moves; the bot's result and every frame the table received, with its time."""
    received: list[tuple[float, dict]] = []

    async def table(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        seq = 0
        await socket.send_str(board(seq))
        async for message in socket:
            move = json.loads(message.data)
            if move.get("type") == "heartbeat":
                continue
            received.append((time.monotonic(), move))
            if len(received) in refuse:
                await socket.send_str(alert(str(TOO_FAST)))
                continue
            seq += 1
            await socket.send_str(board(seq, "finished" if seq == 3 else "playing"))
        return socket

    app = web.Application()
    app.router.add_get("/ws/tables/{table}/", table)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    bot = PilotBot(f"http://127.0.0.1:{port}", "demo", 1, token="", answers=[])
    try:
        async with aiohttp.ClientSession() as bot.session:
            ended = await asyncio.wait_for(
                bot.play_socket(
                    f"ws://127.0.0.1:{port}/ws/tables/7/", 7, 30.0, time.monotonic() + 30
                ),
                timeout=20,
            )
    finally:
        await runner.cleanup()
    return ended, bot, received


def test_a_refused_move_is_sent_again_a_second_later_and_the_round_goes_on() -> None:
    ended, bot, received = asyncio.run(play_against(refuse={2}))
    assert ended  # the round finished instead of waiting for a board that never comes
    moves = [move for _, move in received]
    assert len(moves) == 4 and moves[1] == moves[2]  # the refused guess, then the same again
    assert received[2][0] - received[1][0] >= REFUSED_PAUSE - 0.05
    assert bot.result.refused == 1 and bot.result.resends == 0
    assert bot.result.moves == 3


def test_a_table_that_keeps_refusing_ends_the_bot_with_the_reason() -> None:
    try:
        asyncio.run(play_against(refuse=set(range(2, 20))))
    except RuntimeError as err:
        assert "the table kept refusing a move" in str(err)
    else:
        raise AssertionError("a table refusing every move must end the bot")

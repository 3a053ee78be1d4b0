"""Pilots rehearse a person who looks away once (``manage.py pilot --idle-once N``): the bot lets
its first turn with a deadline pass, plays on once the table has passed that turn, and the
pilot's report names a bot the study did not keep, or one whose board never said so. The table
here is a small WebSocket server speaking the table socket's frames."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest
from aiohttp import web
from participant_helpers import get_ready, page, win_round

from studyapp.participants import pilots
from studyapp.participants.management.commands.pilot import pilot_report
from studyapp.participants.pilot_bot import BotResult, PilotBot

PASS_AFTER = 0.8  # the table's turn deadline here, in seconds


def board(seq: int, *, status: str = "playing", missed: bool = False) -> str:
    """A questioner's board with its countdown, and after a missed turn the notice."""
    notice = '<p class="notice" id="missed-turn">You keep your seat.</p>' if missed else ""
    return (
        f'<section id="board" data-seq="{seq}" data-status="{status}">{notice}'
        '<p class="notice" id="turn-deadline">Your turn: <time>1 s</time> left.</p>'
        f'<form><input type="hidden" name="type" value="question"><span id="question-{seq}">'
        "</span></form></section>"
    )


async def idle_once_against_a_table() -> tuple[bool, PilotBot, list[tuple[float, dict]]]:
    received: list[tuple[float, dict]] = []
    opened = time.monotonic()

    async def table(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        seq = 0
        await socket.send_str(board(seq))
        while True:
            try:
                message = await socket.receive(timeout=PASS_AFTER)
            except TimeoutError:  # the deadline: the table passes the turn, the seat stays
                seq += 2  # the passed question and the oracle's answer
                await socket.send_str(board(seq, missed=True))
                continue
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            move = json.loads(message.data)
            if move.get("type") == "heartbeat":
                continue
            received.append((time.monotonic() - opened, move))
            seq += 2
            await socket.send_str(board(seq, status="finished" if len(received) == 2 else ""))
        return socket

    app = web.Application()
    app.router.add_get("/ws/tables/{table}/", table)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    bot = PilotBot(f"http://127.0.0.1:{port}", "demo", 1, token="", answers=[], idle_once=True)
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


def test_a_bot_that_idles_once_lets_one_deadline_pass_and_plays_on() -> None:
    ended, bot, received = asyncio.run(idle_once_against_a_table())
    assert ended
    assert bot.result.idled == 1 and bot.result.told_missed
    assert len(received) == 2 and received[0][0] >= PASS_AFTER - 0.05  # only after the pass
    assert bot.result.moves == 2


@pytest.mark.django_db
def test_the_report_names_an_idle_bot_the_study_did_not_keep(study, alice) -> None:
    participant = get_ready(alice, study, f"?pilot={pilots.pilot_token(study.slug)}")
    win_round(alice, participant)
    win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Halve the candidates."})
    participant.refresh_from_db()
    result = BotResult(index=1, pid="PILOT1", public_id=participant.public_id, idle_once=True)
    result.status, result.code = participant.status, participant.completion_code
    report = pilot_report(study, [result])
    assert any("no turn of its had a deadline" in p for p in report["problems"])
    result.idled, result.told_missed = 1, True
    assert pilot_report(study, [result])["problems"] == []
    participant.status = "dropped"
    participant.save(update_fields=["status"])
    result.told_missed = False
    problems = pilot_report(study, [result])["problems"]
    assert any("ended dropped, not finished" in p for p in problems)
    assert any("never said the turn was passed" in p for p in problems)

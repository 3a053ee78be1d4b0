"""Simulated participants that take a study through its real link, over HTTP and the WebSocket.

A bot is one browser: its own cookie jar (so its own Django session), the study link with a
Prolific-style ID and the staff-issued pilot token, the consent form, the comprehension checks,
then every round: it starts the round on the play page (in a group design's first round, it waits
in the group lobby until its group forms, then starts again), opens the table's socket and answers each
board the server pushes with a scripted move, and goes back to the play page when the game is
over. It reads only what a person's browser gets (pages and the boards pushed to its seat), so a
pilot tests exactly what participants will meet.

Scripted behaviour: a Twenty Questions questioner guesses the candidate words with the Guess
control in the order the board lists them (so the round ends when it finds the word or runs out
of questions); an oracle answers "No"; an Undercover player gives a new plain sentence in each
clue round and votes for the first seat the ballot offers. The questionnaire is answered from
its page (:func:`questionnaire_answers`), its attention checks as the study expects (or, for the
bots asked to, wrongly), the debrief read.

Faults as a browser meets them: a request that fails (the connection refused or cut, a 429 or
a 5xx answer) is tried again after the table page's pause, and a failed form post is followed by
a fresh look at the page (a person reloads, then goes on from wherever the site says they are);
the table socket sends the page's heartbeat, is opened again after a close the page reconnects
after (1006, 1011, 1012, 1013, or the connection cut) with the page's backoff (static/js/table.js:
0.5-1 s, then 1-2 s, then 2-4 s at most, with jitter), takes the board the server sends on connecting
as the page does (a move it had sent and never saw land is made again; the table refuses a
duplicate by turn order), and sends its last move again when told it was not saved
(``data-resend``, at most three times, after 2, 4 and 6 s, as static/js/table.js). A move the
table refuses at the door (the alert "too many moves at once": a scripted guesser answers each
board within milliseconds, faster than the socket's move allowance) is sent again after a
second, as a person tries again after reading it. What a bot met is counted in its result
(``reconnects``, ``resends``, ``refused``, ``retries``, ``interruptions``), so a
pilot through a fault measures what a person would lose, not what a bot without a page's script
would.

What a bot reads on a page (the forms' tokens, the board's state, the questionnaire's fields) is
:mod:`studyapp.participants.pilot_pages`.

No Django import here: the management command ``pilot`` gives the bots what they need (the
study's check answers and the pilot token) and reads the results from the database.
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp

from studyapp.participants.pilot_pages import (
    ANSWER_RE,
    CANDIDATES_RE,
    CODE_RE,
    CSRF_RE,
    HEARTBEAT_RE,
    PUBLIC_ID_RE,
    SEQ_RE,
    STATUS_RE,
    TABLE_RE,
    TARGET_RE,
    VERSION_RE,
    questionnaire_answers,
)

ROUND_TIMEOUT_SECONDS = 900
# The page's socket (htmx's ws extension) reconnects after these close codes, or a connection
# that broke without one; after any other (the server's 44xx, a normal close) it does not.
RECONNECT_CODES = frozenset({1006, 1011, 1012, 1013})
# How long a bot keeps trying before it gives up, as a patient person would: consecutive failed
# tries of one request or one socket (their pauses add up to about 2 minutes at most).
MAX_TRIES = 40
# Answers a person meets by reloading the page: too many requests, the site's errors.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RESEND_PAUSES = (2.0, 4.0, 6.0)  # static/js/table.js: 2000 * resends ms, three times at most
# A move refused at the door (role="alert": too many moves at once) is sent again after this,
# at most REFUSED_TRIES times in a row; the socket's allowance refills faster (2 moves a second).
REFUSED_PAUSE = 1.0
REFUSED_TRIES = 12
KEEP_INTERRUPTIONS = 20


def reconnect_delay(retries: int) -> float:
    """The page's pause before its next try (static/js/table.js sets the ws extension's): 1 s
    doubled per consecutive failure, at most 4 s, of which a random half or more."""
    cap = min(4.0, 2.0 ** max(0, retries))
    return cap / 2 + random.random() * cap / 2


class Unreachable(Exception):
    """A request or a socket that failed as a fault does (tried again), not as a refusal."""


@dataclass
class BotResult:
    """What one simulated participant went through."""

    index: int
    pid: str
    public_id: str = ""
    status: str = ""
    code: str = ""
    rounds: int = 0
    tables: list[int] = field(default_factory=list)
    moves: int = 0
    error: str = ""
    reconnects: int = 0  # table sockets opened again after they broke
    resends: int = 0  # moves sent again after the site said they were not saved
    refused: int = 0  # moves the table refused as too many at once, sent again a second later
    retries: int = 0  # requests tried again after a failure
    interruptions: list[str] = field(default_factory=list)  # what failed, the first few
    told: str = ""  # the last page's text, as the person would read it (tags and spaces gone)
    idle_once: bool = False  # to let one turn's deadline pass, as a person who looked away
    idled: int = 0  # turns it let pass on purpose
    told_missed: bool = False  # a board then said the turn was passed and the seat kept


class PilotBot:
    def __init__(
        self,
        base: str,
        slug: str,
        index: int,
        *,
        token: str,
        answers: list[str],
        policy: str = "Ask broad questions first, then narrow down.",
        prefix: str = "PILOT",
        on_round: Callable[[], Any] | None = None,
        checks: dict[str, Any] | None = None,
        fail_checks: bool = False,
        idle_once: bool = False,
    ) -> None:
        self.checks = checks or {}
        self.fail_checks = fail_checks
        self.base = base.rstrip("/")
        self.slug = slug
        self.token = token
        self.answers = answers
        self.policy = policy
        self.result = BotResult(index=index, pid=f"{prefix}{index:04d}", idle_once=idle_once)
        self.session: aiohttp.ClientSession | None = None
        self.said: set[str] = set()
        self.on_round = on_round  # called after each round the bot finishes (a progress bar)

    # --- HTTP -----------------------------------------------------------------------------

    async def get(self, path: str) -> tuple[str, str]:
        """The page at ``path``, tried again as a person reloads while it fails."""
        return await self.with_retries(f"GET {path}", lambda: self._get(path))

    async def _get(self, path: str) -> tuple[str, str]:
        assert self.session is not None
        async with self.session.get(self._url(path)) as response:
            text = await response.text()
            if response.status in RETRY_STATUSES:
                raise Unreachable(f"GET {path} answered {response.status}")
            return str(response.url), text

    async def post(self, path: str, page: str, data: dict[str, Any]) -> tuple[str, str]:
        """Submit a form of ``page`` (its CSRF token included), following redirects. When the
        post fails as a fault does, the form may or may not have been taken: the bot looks at
        ``path`` again and goes on from the page it gets (a person reloading)."""
        try:
            return await self._post(path, page, data)
        except Unreachable as err:
            self.interrupted(str(err))
            await asyncio.sleep(reconnect_delay(0))
            return await self.get(path)

    async def _post(self, path: str, page: str, data: dict[str, Any]) -> tuple[str, str]:
        assert self.session is not None
        found = CSRF_RE.search(page)
        form = {"csrfmiddlewaretoken": found.group(1) if found else "", **data}
        headers = {"Referer": self._url(path)}
        try:
            async with self.session.post(self._url(path), data=form, headers=headers) as response:
                text = await response.text()
        except (TimeoutError, aiohttp.ClientError) as err:
            raise Unreachable(f"POST {path}: {type(err).__name__}: {err}") from err
        if response.status in RETRY_STATUSES:
            raise Unreachable(f"POST {path} answered {response.status}")
        if response.status >= 400:
            raise RuntimeError(f"POST {path} answered {response.status}")
        return str(response.url), text

    async def with_retries(self, what: str, call: Callable[[], Any]) -> Any:
        """``call()``, tried again after the page's pause while it fails as a fault does (the
        connection refused or cut, a 429 or 5xx), at most MAX_TRIES times in a row."""
        for tries in range(MAX_TRIES):
            try:
                return await call()
            except (TimeoutError, Unreachable, aiohttp.ClientError) as err:
                if tries == MAX_TRIES - 1:
                    raise
                self.interrupted(f"{what}: {type(err).__name__}: {err}")
                self.result.retries += 1
                await asyncio.sleep(reconnect_delay(tries))
        raise AssertionError("unreachable")

    def interrupted(self, what: str) -> None:
        if len(self.result.interruptions) < KEEP_INTERRUPTIONS:
            self.result.interruptions.append(f"{time.strftime('%H:%M:%S')} {what}"[:300])

    def _url(self, path: str) -> str:
        return path if path.startswith("http") else self.base + path

    # --- the path ---------------------------------------------------------------------------

    async def run(self) -> BotResult:
        jar = aiohttp.CookieJar(unsafe=True)  # cookies for a plain IP address such as 127.0.0.1
        timeout = aiohttp.ClientTimeout(total=60)
        try:
            async with aiohttp.ClientSession(cookie_jar=jar, timeout=timeout) as self.session:
                await self.walk()
        except Exception as err:  # a pilot reports what went wrong for each participant
            self.result.error = f"{type(err).__name__}: {err}"
        return self.result

    async def walk(self) -> None:
        query = urlencode(
            {
                "PROLIFIC_PID": self.result.pid,
                "STUDY_ID": "PILOT",
                "SESSION_ID": f"S{self.result.index}",
                "pilot": self.token,
            }
        )
        link = f"/s/{self.slug}/?{query}"
        url, page = await self.get(link)
        if 'id="study-full"' in page:
            self.result.status = "full"
            return
        url, page = await self.post(link, page, {})
        for _ in range(10_000):
            if urlsplit(url).path.rstrip("/") == f"/s/{self.slug}":  # the start, again
                url, page = await self.post(link, page, {})
                continue
            step = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
            found = PUBLIC_ID_RE.search(urlsplit(url).path)
            if found:
                self.result.public_id = found.group(1)
            if step == "consent":
                version = VERSION_RE.search(page)
                data = {"version": version.group(1) if version else "", "agree": "on"}
                url, page = await self.post(url, page, data)
            elif step == "instructions":
                data = {f"check_{i}": answer for i, answer in enumerate(self.answers)}
                url, page = await self.post(url, page, data)
            elif step == "play":
                url, page = await self.post(url, page, {})
                table = TABLE_RE.search(urlsplit(url).path)
                if table is None:
                    continue  # sent back to the right step
                every = HEARTBEAT_RE.search(page)
                beat = float(every.group(1)) if every else 15.0
                if await self.play_table(int(table.group(1)), beat):
                    self.result.rounds += 1
                    if self.on_round is not None:
                        self.on_round()
                url, page = await self.get(f"/p/{self.result.public_id}/")
            elif step == "policy":
                url, page = await self.post(url, page, {"policy": self.policy})
            elif step == "questionnaire":
                answers = questionnaire_answers(
                    page, self.result.index, self.checks, self.fail_checks
                )
                url, page = await self.post(url, page, answers)
            elif step == "debrief":
                url, page = await self.post(url, page, {})
            elif step == "done":
                code = CODE_RE.search(page)
                self.result.code = html.unescape(code.group(1)) if code else ""
                section = re.search(r"<section[^>]*>(.*?)</section>", page, re.S)
                words = re.sub(r"<[^>]+>", " ", section.group(1) if section else page)
                self.result.told = " ".join(html.unescape(words).split())[:2000]
                status = re.search(r'data-status="(\w+)"', page)
                self.result.status = status.group(1) if status else "done"
                return
            else:
                raise RuntimeError(f"unexpected page {url}")
        raise RuntimeError("too many steps")

    # --- a table ----------------------------------------------------------------------------

    async def play_table(self, table_id: int, heartbeat_seconds: float = 15.0) -> bool:
        """Play a table to its end (True), or wait in a group lobby until the group forms and
        the lobby closes (False: the group's own table comes next, from the play page). A socket
        that breaks is opened again as the page does (see the module)."""
        self.result.tables.append(table_id)
        parts = urlsplit(self.base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        ws_url = f"{scheme}://{parts.netloc}/ws/tables/{table_id}/"
        deadline = time.monotonic() + ROUND_TIMEOUT_SECONDS
        failures = 0  # consecutive tries that did not open (the page's retryCount)
        while True:
            try:
                ended = await self.play_socket(ws_url, table_id, heartbeat_seconds, deadline)
            except Unreachable as err:
                opened = str(err).startswith("socket opened")
                failures = 0 if opened else failures + 1  # the page's pause: d(0), d(1), ...
                if failures >= MAX_TRIES or time.monotonic() > deadline:
                    raise RuntimeError(f"the table socket stayed away: {err}") from err
                self.interrupted(str(err))
                await asyncio.sleep(reconnect_delay(failures))
                self.result.reconnects += 1
                continue
            return ended

    async def play_socket(
        self, ws_url: str, table_id: int, heartbeat_seconds: float, deadline: float
    ) -> bool:
        """One socket's life at the table: True when the game is over, False for a closed group
        lobby; :class:`Unreachable` when it broke (its message says whether it had opened)."""
        assert self.session is not None
        acted: set[int] = set()  # each connect sends the board: a fresh page, as a reload
        last_move: dict[str, Any] | None = None
        resends = refusals = 0  # in a row: a board that comes resets both
        resend_at: float | None = None
        refused = False  # sending last_move again at resend_at follows a refusal, not "not saved"
        next_beat = time.monotonic() + heartbeat_seconds
        try:
            socket = await self.session.ws_connect(
                ws_url, headers={"Origin": self.base}, heartbeat=20
            )
        except aiohttp.WSServerHandshakeError as err:
            raise Unreachable(f"socket refused ({err.status})") from err
        except (TimeoutError, aiohttp.ClientError, OSError) as err:
            raise Unreachable(f"socket not opened: {type(err).__name__}: {err}") from err
        async with socket:
            while True:
                now = time.monotonic()
                if now > deadline:
                    raise RuntimeError("the round did not end in time")
                wake = min(next_beat, resend_at if resend_at is not None else next_beat)
                try:
                    message = await socket.receive(timeout=max(0.05, wake - now))
                except TimeoutError:
                    message = None
                except (aiohttp.ClientError, OSError) as err:
                    raise Unreachable(f"socket opened, then broke: {err}") from err
                now = time.monotonic()
                if message is None:
                    if resend_at is not None and now >= resend_at and last_move is not None:
                        resend_at = None
                        if refused:
                            self.result.refused += 1
                        else:
                            self.result.resends += 1
                        await self.send(socket, last_move)
                    if now >= next_beat:
                        next_beat = now + heartbeat_seconds
                        await self.send(socket, {"type": "heartbeat"})
                    continue
                if message.type == aiohttp.WSMsgType.CLOSE:  # the server closed it, with a code
                    if message.data in RECONNECT_CODES:
                        raise Unreachable(f"socket opened, then closed ({message.data})")
                    raise RuntimeError(f"the table socket closed ({message.data} {message.extra})")
                if message.type != aiohttp.WSMsgType.TEXT:  # broke without a close: 1006
                    raise Unreachable(f"socket opened, then broke ({message.type.name})")
                board = message.data
                if 'id="socket-status"' in board and 'id="board"' not in board:
                    # the status line: the move was not saved (resend it), or a notice
                    if 'data-resend="1"' in board and last_move is not None and resends < 3:
                        resend_at = time.monotonic() + RESEND_PAUSES[resends]
                        resends += 1
                        refused = False
                    elif 'role="alert"' in board and last_move is not None:
                        if refusals >= REFUSED_TRIES:
                            raise RuntimeError(f"the table kept refusing a move: {board}")
                        resend_at = time.monotonic() + REFUSED_PAUSE
                        refusals += 1
                        refused = True
                    continue
                resends = refusals = 0  # a board came: the table answers again
                if 'id="missed-turn"' in board:
                    self.result.told_missed = True
                if 'id="group-formed"' in board:
                    self.result.tables.remove(table_id)  # a lobby, never played
                    return False
                status = STATUS_RE.search(board)
                if status and status.group(1) in ("finished", "aborted"):
                    return True
                if 'id="after-game"' in board:
                    return True
                seq_found = SEQ_RE.search(board)
                seq = int(seq_found.group(1)) if seq_found else -1
                move = self.move(board)
                if move is None or (seq in acted and 'id="move-error"' not in board):
                    continue
                acted.add(seq)
                if (
                    self.result.idle_once
                    and not self.result.idled
                    and 'id="turn-deadline"' in board
                ):
                    self.result.idled += 1  # looks away: this turn's deadline passes
                    continue
                self.result.moves += 1
                last_move = move
                await self.send(socket, move)

    @staticmethod
    async def send(socket: aiohttp.ClientWebSocketResponse, frame: dict[str, Any]) -> None:
        try:
            await socket.send_str(json.dumps(frame))
        except (aiohttp.ClientError, ConnectionError, RuntimeError) as err:
            raise Unreachable(f"socket opened, then broke on sending: {err}") from err

    def move(self, board: str) -> dict[str, Any] | None:
        """The scripted move for this board, or None when it is not this seat's turn."""
        if 'id="clue-text"' in board:
            n = len(self.said) + 1
            text = f"Pilot {self.result.index} offers plain idea number {n} about it."
            self.said.add(text)
            return {"type": "clue", "text": text}
        if 'id="cast-vote"' in board:
            targets = TARGET_RE.findall(board)
            return {"type": "vote", "target": int(targets[0]) if targets else None}
        if 'name="type" value="question"' in board:
            asked = int(re.search(r'id="question-(\d+)"', board).group(1))
            words = self.candidates(board)
            if not words:
                return {"type": "question", "text": "Is it a dog?"}
            return {"type": "question", "guess": words[asked % len(words)]}  # the Guess control
        if 'name="type" value="answer"' in board:
            answers = ANSWER_RE.findall(board)
            return {"type": "answer", "answer": "No" if "No" in answers else answers[0]}
        return None

    @staticmethod
    def candidates(board: str) -> list[str]:
        found = CANDIDATES_RE.search(board)
        if not found:
            return []
        return [w.strip() for w in html.unescape(found.group(1)).split(",") if w.strip()]


async def run_bots(
    base: str,
    slug: str,
    count: int,
    *,
    token: str,
    answers: list[str],
    prefix: str = "PILOT",
    on_round: Callable[[], Any] | None = None,
    checks: dict[str, Any] | None = None,
    fail_checks: int = 0,
    idle_once: int = 0,
) -> list[BotResult]:
    """Run ``count`` bots at once; the first ``fail_checks`` of them miss the attention checks
    (``checks``: field name -> expected answer) on purpose, the others answer them as asked; the
    last ``idle_once`` let their first turn with a deadline pass, as a person who looked away
    once (the study keeps them: a missed turn is not a departure)."""
    bots = [
        PilotBot(
            base,
            slug,
            index,
            token=token,
            answers=answers,
            prefix=prefix,
            on_round=on_round,
            checks=checks,
            fail_checks=index <= fail_checks,
            idle_once=index > count - idle_once,
        )
        for index in range(1, count + 1)
    ]
    return list(await asyncio.gather(*(bot.run() for bot in bots)))

"""The pilot's bots meet a broken connection as a person's page does: a real daphne (embedded
defaults) behind a loopback TCP relay that the test cuts (every connection reset, new ones
refused for a few seconds) while the bots are at their tables. The pilot (``manage.py pilot``, its
own process) must still finish every person, with the sockets opened again and counted."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.e2e.site import ROOT, LiveSite


class Relay:
    """A TCP relay on a free loopback port to ``port``. ``cut(seconds)`` resets every open
    connection (an RST, as a process that died or a network that broke) and resets new ones
    for ``seconds``. ``frames`` counts what the clients sent on table sockets after their
    handshake (moves, heartbeats)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        self.refuse_until = 0.0
        self.frames = 0
        self.cuts = 0
        threading.Thread(target=self.accept, daemon=True).start()

    @staticmethod
    def reset(sock: socket.socket) -> None:
        try:
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            sock.close()
        except OSError:
            pass

    def accept(self) -> None:
        while True:
            client, _ = self.server.accept()
            if time.monotonic() < self.refuse_until:
                self.reset(client)
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.open.update((client, upstream))
            threading.Thread(target=self.pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self.pipe, args=(upstream, client, False), daemon=True).start()

    def pipe(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        table_socket = False
        try:
            while data := source.recv(65536):
                if from_client and data.startswith(b"GET /ws/tables/"):
                    table_socket = True
                elif from_client and table_socket:
                    with self.lock:
                        self.frames += 1
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self.lock:
                self.open.discard(source)
                self.open.discard(sink)
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.close()

    def cut(self, seconds: float) -> int:
        with self.lock:
            self.refuse_until = time.monotonic() + seconds
            cut = list(self.open)
            self.open.clear()
            self.cuts += 1
        for sock in cut:
            self.reset(sock)
        return len(cut)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    site = LiveSite(
        tmp_path_factory.mktemp("pilot-faults"),
        AGENT_DELAY_SECONDS="0.1",
        LOBBY_WAIT_SECONDS="3",
        HEARTBEAT_SECONDS="2",
    )
    site.start()
    site.manage("seed_demo")
    yield site
    site.stop()


def test_a_pilot_whose_connections_are_cut_mid_game_reconnects_and_finishes(site):
    relay = Relay(site.port)
    pilot = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "pilot",
            "demo-undercover",
            "--participants",
            "2",
            "--base",
            f"http://127.0.0.1:{relay.port}",
            "--quiet",
        ],
        cwd=ROOT,
        env={**site.env, "DJANGO_SETTINGS_MODULE": "studyapp.settings"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while relay.frames < 2 and time.monotonic() < deadline:  # both at their tables, moving
        time.sleep(0.05)
    assert relay.frames >= 2, "the bots never moved"
    assert relay.cut(3.0) >= 2  # their sockets (and any request under way) reset
    time.sleep(8)
    relay.cut(1.0)  # once more, in another moment of the game
    out, err = pilot.communicate(timeout=240)
    assert pilot.returncode == 0, err[-2000:] + out[-2000:]
    report = json.loads(out[out.index("{") :])
    assert report["ok"] and report["finished"] == 2, report["problems"]
    assert {p["status"] for p in report["people"]} == {"finished"}
    assert all(t["status"] == "finished" for t in report["tables"])
    assert report["reconnects"] >= 2  # each bot's socket was opened again at least once
    assert all(p["interruptions"] for p in report["people"])  # and each says what it met

"""A real HTTP server on 127.0.0.1 that takes what sentry-sdk's own transport sends (envelopes
posted to ``/api/<project>/envelope/``, gzip or brotli or plain) and keeps every item, so tests
read what would have left the site.

    with FakeSentry() as sentry:
        sentry_sdk.init(dsn=sentry.dsn, ...)
        ...
        sentry_sdk.flush()
        sentry.events()   # the "event" items, parsed
        sentry.raw        # every request body as received, decompressed
"""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "br":
            import brotli

            body = brotli.decompress(body)
        self.server.fake.keep(self.path, body)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def parse_envelope(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """An envelope's items: a header line, then each item's header line and payload (``length``
    bytes when the header says so, else up to the next newline)."""
    items = []
    pos = body.find(b"\n") + 1 if b"\n" in body else len(body)
    while pos < len(body):
        end = body.find(b"\n", pos)
        end = len(body) if end == -1 else end
        line, pos = body[pos:end], end + 1
        if not line.strip():
            continue
        header = json.loads(line)
        length = header.get("length")
        if length is None:
            end = body.find(b"\n", pos)
            end = len(body) if end == -1 else end
            payload, pos = body[pos:end], end + 1
        else:
            payload, pos = body[pos : pos + length], pos + length + 1
        items.append((header, payload))
    return items


class FakeSentry:
    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def dsn(self) -> str:
        return f"http://publickey@127.0.0.1:{self._server.server_address[1]}/1"

    def keep(self, path: str, body: bytes) -> None:
        with self._lock:
            self.paths.append(path)
            self.raw.append(body)

    def items(self) -> list[tuple[dict[str, Any], bytes]]:
        """Every envelope item as (item header, payload)."""
        return [item for body in self.raw for item in parse_envelope(body)]

    def events(self) -> list[dict[str, Any]]:
        return [
            json.loads(payload) for header, payload in self.items() if header["type"] == "event"
        ]

    def __enter__(self) -> FakeSentry:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

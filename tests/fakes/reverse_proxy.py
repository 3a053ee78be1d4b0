"""A tiny real reverse proxy on 127.0.0.1 for tests of the site behind a proxy: each request is
sent on to ``upstream`` (a daphne) with the client's address appended to ``X-Forwarded-For``, as
nginx's ``proxy_add_x_forwarded_for`` does, and the answer is passed back unchanged. HTTP only,
one request per connection; the proxy connects to the upstream from 127.0.0.1."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"}


class ReverseProxy:
    def __init__(self, upstream_port: int, host: str = "127.0.0.1") -> None:
        self.upstream_port = upstream_port
        self.forwarded: list[str] = []  # the X-Forwarded-For sent upstream, per request
        self._server = ThreadingHTTPServer((host, 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def __enter__(self) -> ReverseProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in HOP_BY_HOP and k.lower() != "x-forwarded-for"
                }
                prior = self.headers.get("X-Forwarded-For")
                peer = self.client_address[0]
                headers["X-Forwarded-For"] = f"{prior}, {peer}" if prior else peer
                proxy.forwarded.append(headers["X-Forwarded-For"])
                upstream = http.client.HTTPConnection(
                    "127.0.0.1", proxy.upstream_port, timeout=30, source_address=("127.0.0.1", 0)
                )
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    payload = answer.read()
                except OSError:
                    self.send_error(502)
                    return
                finally:
                    upstream.close()
                self.send_response(answer.status, answer.reason)
                for key, value in answer.getheaders():
                    if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_HEAD = _forward

        return Handler

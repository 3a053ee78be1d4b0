"""A real HTTP server on 127.0.0.1 that speaks the OpenAI and Anthropic wire formats.

Tests drive the official SDKs against it, so the retries, timeouts and parsing under test are the
SDKs' own, never a patched method. It is threaded (one thread per connection, keep-alive), so
dozens of concurrent clients can hold calls open at once, as in the runner benchmark.

API::

    from tests.fakes.llm_server import FakeLLMServer, prompt_text

    def responder(body: dict) -> str:          # request JSON -> reply text (any thread)
        return "Thinking... <answer>Yes</answer>"

    with FakeLLMServer(responder, latency=0.05, rate_limit_share=0.2) as server:
        openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test")      # /v1/chat/completions
        anthropic.AsyncAnthropic(base_url=server.anthropic_base_url, api_key="test")  # /v1/messages
        ...
        server.requests        # every request, in arrival order: RecordedRequest(path, body, headers, fault)
        images_in(server.requests[0].body)  # [(media_type, bytes)] of the images it carried
        server.faults()        # Counter of faults served: {"429": 3, "500": 1, "timeout": 1, "no-tag": 2}

Knobs (constructor keywords, also plain attributes you may change while it runs):

- ``responder``: ``body -> str``; the default answers ``<answer>ok</answer>``. It gets the parsed
  JSON of either format; :func:`prompt_text` and :func:`last_user_text` read both, and
  :func:`images_in` decodes the images a request carried in either wire format (OpenAI
  ``image_url`` parts with a base64 data URL, Anthropic ``image`` blocks with a base64 source).
- ``latency``: seconds every answered call waits before replying (fixed, per call).
- ``rate_limit_share``: share of calls answered 429 with a ``Retry-After: retry_after`` header.
- ``server_error_share``: share of calls answered 500 (also with ``Retry-After``, so tests stay fast).
- ``timeout_share``: share of calls that sleep ``hang_s`` seconds before answering; set the
  client's timeout below ``hang_s`` so the client gives up and retries.
- ``no_tag_share``: share of replies whose ``<answer>`` tags are stripped from the reply text.
- ``script``: a list of faults (``"429"``, ``"500"``, ``"timeout"``, ``"no-tag"`` or None) served to
  the next requests in order before any random draw, for tests that need an exact sequence.
- ``honour_max_tokens``: (default True) a reply longer than the request's output limit
  (``max_tokens``, ``max_completion_tokens``; one token counted per ``CHARS_PER_TOKEN``
  characters) is cut to it and ends with the provider's finish reason for a cut reply
  (OpenAI ``finish_reason: "length"``, Anthropic ``stop_reason: "max_tokens"``), as a real model
  stops at its limit; a whole reply ends ``"stop"`` / ``"end_turn"``.
- ``reasoning_tokens``: (default 0) when set, OpenAI-format usage reports this many
  ``completion_tokens_details.reasoning_tokens``, as a thinking model's does.
- ``seed``: faults are drawn from ``random.Random(seed)``, so a run's fault pattern is repeatable
  up to thread scheduling.
- ``openai_prefix``: the path the OpenAI wire format is served under (``/v1``; a Gemini-style
  server's is ``/v1beta/openai``); a chat completion posted elsewhere is answered 404.
- ``api_key``: when set, an OpenAI-format request without ``Authorization: Bearer <api_key>`` is
  answered 401.
- ``image_types``: when set, the OpenAI-format image parts are checked on the wire: a part that is
  not ``{"type": "image_url", "image_url": {"url": "data:<type>;base64,<data>"}}`` with valid
  base64, or whose media type is not listed, is answered 400, as Gemini's endpoint refuses them.

``FakeLLMServer.gemini_style(responder, api_key="...")`` is a server with the last three set as
Gemini's OpenAI-compatible endpoint has them (``GEMINI_IMAGE_TYPES``); its ``openai_base_url``
ends in ``/v1beta/openai``.

The pytest fixture ``llm_server`` in ``tests/conftest.py`` yields a started server with the default
knobs and stops it after the test.
"""

from __future__ import annotations

import base64
import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], str]

# The fake's token: this many characters (its usage counts and its output limit both use it).
CHARS_PER_TOKEN = 4
_TAGS = re.compile(r"<\s*/?\s*answer\s*>", re.IGNORECASE)
# The image types Gemini's API reads (PNG, JPEG, WebP, HEIC, HEIF): a GIF is refused.
GEMINI_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")


def wire_image_problem(body: dict[str, Any], allowed: tuple[str, ...]) -> str | None:
    """Why an OpenAI-format request's image parts would be refused, or None when they are fine:
    each must be an ``image_url`` part holding a base64 data URL of an allowed media type."""
    for message in body.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if kind != "image_url" or not isinstance(part.get("image_url"), dict):
                return f"unsupported content part {part!r:.60}"
            url = part["image_url"].get("url", "")
            header, _, data = url.partition(",")
            if not (header.startswith("data:") and header.endswith(";base64")):
                return f"not a base64 data URL: {url[:40]!r}"
            if header[5:-7] not in allowed:
                return f"unsupported image type {header[5:-7]!r}"
            try:
                base64.b64decode(data, validate=True)
            except ValueError:
                return "image data is not valid base64"
    return None


@dataclass
class RecordedRequest:
    """One request as received; ``fault`` is what the server did to it (None = normal answer)."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    fault: str | None


def default_responder(body: dict[str, Any]) -> str:
    return "<answer>ok</answer>"


def content_text(content: Any) -> str:
    """Message content as text: a string, or a list of blocks (Anthropic and OpenAI parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def images_in(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Every image in a request, in order, as ``(media_type, bytes)``, read from the OpenAI
    (``{"type": "image_url", "image_url": {"url": "data:<type>;base64,..."}}``) or Anthropic
    (``{"type": "image", "source": {"type": "base64", "media_type", "data"}}``) wire format.
    A part in neither format raises, so a malformed request fails the test that sent it."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                header, _, data = url.partition(",")
                if not (header.startswith("data:") and header.endswith(";base64")):
                    raise ValueError(f"not a base64 data URL: {url[:40]!r}")
                found.append((header[5:-7], base64.b64decode(data, validate=True)))
            elif part.get("type") == "image":
                source = part["source"]
                if source.get("type") != "base64":
                    raise ValueError(f"not a base64 image source: {source!r}")
                found.append(
                    (source["media_type"], base64.b64decode(source["data"], validate=True))
                )
            elif part.get("type") != "text":
                raise ValueError(f"unknown content part {part.get('type')!r}")
    return found


def prompt_text(body: dict[str, Any]) -> str:
    """Everything the model was shown (system text and every message), in order, as one string."""
    parts = [content_text(body.get("system", ""))]
    parts += [content_text(m.get("content")) for m in body.get("messages", [])]
    return "\n".join(p for p in parts if p)


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return content_text(users[-1]["content"]) if users else ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    # Buffer the reply so headers and body leave in one write (the handler flushes after each
    # request); two small writes hit Nagle plus delayed ACK and add ~40 ms to every call.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.endswith("/chat/completions"):
            wire = "openai"
            refusal = fake._openai_refusal(self.path, dict(self.headers), body)
            if refusal is not None:
                fake._record(RecordedRequest(self.path, body, dict(self.headers), refusal[1]))
                self._send(refusal[0], {"error": {"message": refusal[1], "code": refusal[0]}})
                return
        elif self.path.endswith("/messages"):
            wire = "anthropic"
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        fault = fake._draw_fault()
        fake._record(RecordedRequest(self.path, body, dict(self.headers), fault))
        if fault == "429":
            error = {"type": "rate_limit_error", "message": "slow down"}
            self._send(429, {"error": error}, {"retry-after": str(fake.retry_after)})
            return
        if fault == "500":
            error = {"type": "api_error", "message": "fake outage"}
            self._send(500, {"error": error}, {"retry-after": str(fake.retry_after)})
            return
        if fault == "timeout":
            time.sleep(fake.hang_s)
        else:
            time.sleep(fake.latency)
        text = fake.responder(body)
        if fault == "no-tag":
            text = _TAGS.sub("", text)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        cut = bool(fake.honour_max_tokens and limit and len(text) > limit * CHARS_PER_TOKEN)
        if cut:
            text = text[: limit * CHARS_PER_TOKEN]
        input_tokens = len(prompt_text(body)) // CHARS_PER_TOKEN + 1
        output_tokens = len(text) // CHARS_PER_TOKEN + 1
        model = body.get("model", "fake")
        if wire == "openai":
            reply = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "length" if cut else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": input_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": input_tokens + output_tokens,
                    **(
                        {"completion_tokens_details": {"reasoning_tokens": fake.reasoning_tokens}}
                        if fake.reasoning_tokens
                        else {}
                    ),
                },
            }
        else:
            reply = {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "max_tokens" if cut else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
            }
        self._send(200, reply)

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout fault): nothing to deliver


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many clients connect at once in the concurrency benchmark
    fake: FakeLLMServer


class FakeLLMServer:
    """See the module docstring for the API and the knobs."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        rate_limit_share: float = 0.0,
        server_error_share: float = 0.0,
        timeout_share: float = 0.0,
        no_tag_share: float = 0.0,
        retry_after: float = 0.01,
        hang_s: float = 2.0,
        seed: int = 0,
        openai_prefix: str = "/v1",
        api_key: str | None = None,
        image_types: tuple[str, ...] | None = None,
        honour_max_tokens: bool = True,
        reasoning_tokens: int = 0,
    ) -> None:
        self.honour_max_tokens = honour_max_tokens
        self.reasoning_tokens = reasoning_tokens
        self.openai_prefix = openai_prefix
        self.api_key = api_key
        self.image_types = image_types
        self.responder = responder or default_responder
        self.latency = latency
        self.rate_limit_share = rate_limit_share
        self.server_error_share = server_error_share
        self.timeout_share = timeout_share
        self.no_tag_share = no_tag_share
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.script: list[str | None] = []
        self.requests: list[RecordedRequest] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}{self.openai_prefix}"

    @classmethod
    def gemini_style(cls, responder: Responder | None = None, *, api_key: str) -> FakeLLMServer:
        """A server speaking as Gemini's OpenAI-compatible endpoint does: chat completions under
        ``/v1beta/openai``, a bearer key required, images only as base64 data URLs of the types
        Gemini reads."""
        return cls(
            responder,
            openai_prefix="/v1beta/openai",
            api_key=api_key,
            image_types=GEMINI_IMAGE_TYPES,
        )

    def _openai_refusal(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, str] | None:
        """(status, reason) when an OpenAI-format request breaks this server's rules, else None."""
        if self.openai_prefix != "/v1" and path != f"{self.openai_prefix}/chat/completions":
            return 404, f"no route {path}"
        if self.api_key is not None:
            sent = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
            if sent != f"Bearer {self.api_key}":
                return 401, "missing or wrong API key"
        if self.image_types is not None:
            problem = wire_image_problem(body, self.image_types)
            if problem is not None:
                return 400, problem
        return None

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def start(self) -> FakeLLMServer:
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def faults(self) -> Counter[str]:
        """How many requests got each fault."""
        with self._lock:
            return Counter(r.fault for r in self.requests if r.fault)

    def _draw_fault(self) -> str | None:
        with self._lock:
            if self.script:
                return self.script.pop(0)
            draw = self._rng.random()
            tag_draw = self._rng.random()
        for fault, share in (
            ("429", self.rate_limit_share),
            ("500", self.server_error_share),
            ("timeout", self.timeout_share),
        ):
            if draw < share:
                return fault
            draw -= share
        return "no-tag" if tag_draw < self.no_tag_share else None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

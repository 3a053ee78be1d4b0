"""Named OpenAI-compatible servers (``COMPATIBLE_SERVERS``): parsing, and where each one's key
lives. Apart from the providers so that the settings module reads them without loading an SDK."""

from __future__ import annotations

import re

SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def parse_servers(text: str) -> dict[str, str]:
    """``COMPATIBLE_SERVERS``: ``name=url`` pairs separated by commas, as a dict.

    >>> parse_servers("vllm=http://127.0.0.1:8000/v1, ollama=http://127.0.0.1:11434/v1")
    {'vllm': 'http://127.0.0.1:8000/v1', 'ollama': 'http://127.0.0.1:11434/v1'}
    """
    servers: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, url = (piece.strip() for piece in item.partition("="))
        if not sep or not SERVER_NAME.match(name) or not url.startswith(("http://", "https://")):
            raise ValueError(
                f"COMPATIBLE_SERVERS entry {item!r} must be name=http(s)://host:port/v1 "
                "(name: lowercase letters, digits, - or _)"
            )
        servers[name] = url
    return servers


def server_key_name(server: str) -> str:
    """The variable holding a named server's key: ``vllm`` -> ``OPENAI_COMPATIBLE_API_KEY_VLLM``."""
    return "OPENAI_COMPATIBLE_API_KEY_" + re.sub(r"[^A-Z0-9]", "_", server.upper())

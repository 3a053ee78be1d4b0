"""The messages a provider sends: text, or text and image parts for vision models, with the
cost measure every provider shares (:func:`prompt_chars`) and the form a request takes in the
response cache's key (:func:`keyed_messages`)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

# A message's content is a string, or a list of parts for a message that carries images:
# ``{"type": "text", "text": ...}`` and ``{"type": "image", "media_type": "image/png", "data":
# <base64>}``. The parts are the project's own; each provider writes them in its wire format
# (OpenAI: ``image_url`` parts with a data URL; Anthropic: ``image`` blocks with a base64 source).
Message = dict[str, Any]

# The image types Gemini models read, through Google's API or its OpenAI-compatible endpoint.
GEMINI_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(data: bytes) -> str:
    """The media type of image bytes, from their first bytes (PNG, JPEG, GIF, WebP).

    >>> image_media_type(b"\\x89PNG\\r\\n\\x1a\\n...")
    'image/png'
    """
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("not a PNG, JPEG, GIF or WebP image (the formats vision APIs take)")


def image_part(data: bytes, media_type: str | None = None) -> dict[str, str]:
    """A message part carrying an image (base64), for a vision model."""
    return {
        "type": "image",
        "media_type": media_type or image_media_type(data),
        "data": base64.b64encode(data).decode("ascii"),
    }


def text_part(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def content_text(content: str | list[dict[str, str]]) -> str:
    """The text of a message's content (image parts contribute nothing)."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def has_images(messages: list[Message]) -> bool:
    return any(
        not isinstance(m["content"], str) and any(p.get("type") == "image" for p in m["content"])
        for m in messages
    )


def keyed_messages(messages: list[Message]) -> list[Message]:
    """Messages for the cache key: each image stands as its media type and the sha256 of its
    bytes, so two images never share an answer and the key stays small."""
    out = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            content = [
                {
                    "type": "image",
                    "media_type": p["media_type"],
                    "sha256": hashlib.sha256(base64.b64decode(p["data"])).hexdigest(),
                }
                if p.get("type") == "image"
                else p
                for p in content
            ]
        out.append({**message, "content": content})
    return out


def prompt_chars(messages: list[Message], system: str | None) -> int:
    """Characters sent in one call (system text plus every message's text; images count no
    characters): the cost measure of LWE and of the usage columns, the same for every provider."""
    return len(system or "") + sum(len(content_text(m["content"])) for m in messages)

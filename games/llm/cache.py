"""A response cache on disk, so that rerunning an experiment is free and gives identical games.

The key is a hash of the whole request (model spec, system text, messages, temperature, token
limit) plus the sample index: the sample index is what lets K repeats of the same prompt at
temperature 1 differ from each other while each repeat stays reproducible. SQLite keeps it in one
file that several processes can share; a write is one small transaction.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any


def request_key(request: dict[str, Any], sample: int) -> str:
    """A stable hash of a request and its sample index (key order inside dicts does not matter)."""
    blob = json.dumps({"request": request, "sample": sample}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Maps request keys to stored replies (``{"text", "input_tokens", "output_tokens"}``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, reply TEXT NOT NULL)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT reply FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, reply: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, reply) VALUES (?, ?)",
            (key, json.dumps(reply, ensure_ascii=False)),
        )
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()

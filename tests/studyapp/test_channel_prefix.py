"""Two sites on one Redis server never hear each other's broadcasts: Redis pub/sub ignores the
database number, so each site's channel layer has a prefix of its own (settings.CHANNEL_PREFIX)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from channels_redis.pubsub import RedisPubSubChannelLayer

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("REDIS_URL", "")
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="needs Redis (REDIS_URL)")
BASE = REDIS_URL.rsplit("/", 1)[0] if REDIS_URL.count("/") > 2 else REDIS_URL


def layer_config(tmp_path: Path, **env: str) -> dict:
    """The channel layer's settings of a site started with ``env``, as its processes see them."""
    code = (
        "from django.conf import settings; import json; print(json.dumps(settings.CHANNEL_LAYERS))"
    )
    base = {"PATH": "/usr/bin:/bin", "VAR_DIR": str(tmp_path), "SECRET_KEY": "x" * 60}
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "studyapp.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout)["default"]["CONFIG"]


def site(tmp_path: Path, db: int, name: str) -> dict:
    return layer_config(
        tmp_path, REDIS_URL=f"{BASE}/{db}", DATABASE_URL=f"postgres://u@127.0.0.1:5432/{name}"
    )


def test_each_site_has_a_prefix_of_its_own_and_every_process_of_a_site_the_same(tmp_path):
    live = site(tmp_path, 3, "study")
    assert site(tmp_path, 3, "study")["prefix"] == live["prefix"]  # another process, same site
    assert site(tmp_path, 4, "study")["prefix"] != live["prefix"]  # another Redis database
    assert site(tmp_path, 3, "staging")["prefix"] != live["prefix"]  # another database
    chosen = layer_config(tmp_path, REDIS_URL=f"{BASE}/3", CHANNEL_PREFIX="mine")
    assert chosen["prefix"] == "mine"


def test_a_broadcast_of_one_site_does_not_reach_a_socket_of_another(tmp_path):
    """Real layers on the one Redis server: a table's group of the same id on both sites."""
    live, staging = site(tmp_path, 3, "study"), site(tmp_path, 4, "study")

    async def exchange() -> tuple[list, list]:
        layers = [RedisPubSubChannelLayer(**config) for config in (live, staging)]
        channels = [await layer.new_channel() for layer in layers]
        for layer, channel in zip(layers, channels, strict=True):
            await layer.group_add("table-1", channel)
        await layers[1].group_send("table-1", {"type": "table.update", "seq": 9})
        got: list[list] = [[], []]
        for i, (layer, channel) in enumerate(zip(layers, channels, strict=True)):
            with contextlib.suppress(TimeoutError):
                got[i].append(await asyncio.wait_for(layer.receive(channel), 1.0))
        for layer in layers:
            await layer.flush()
        return got[0], got[1]

    on_live, on_staging = asyncio.run(exchange())
    assert on_staging == [{"type": "table.update", "seq": 9}]  # the layer works
    assert on_live == []  # and the other site heard nothing

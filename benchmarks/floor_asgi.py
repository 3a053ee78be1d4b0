"""The floor of the move path, for ``benchmarks/ws_load.py --mode study``: a Channels consumer that
does what any design of this kind must do per move, and nothing else: one INSERT into PostgreSQL
and one group send through the Redis channel layer, on the same daphne. Two sockets share a room
and take turns; every frame says the room's ``seq`` and whose turn it is.

    daphne benchmarks.floor_asgi:application   (with the project's DATABASE_URL and REDIS_URL)
"""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
django.setup()

from channels.db import database_sync_to_async  # noqa: E402
from channels.generic.websocket import AsyncJsonWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.db import connection  # noqa: E402
from django.urls import path  # noqa: E402

TABLE = "bench_floor_move"


def create_table() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id bigserial PRIMARY KEY, room integer NOT NULL,"
            " seq integer NOT NULL, body text NOT NULL, UNIQUE (room, seq))"
        )


def frame(seq: int, turn: int) -> str:
    return f'<section id="board" data-seq="{seq}" data-turn="{turn}"></section>'


class FloorConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.room = int(self.scope["url_route"]["kwargs"]["room"])
        self.group = f"floor-{self.room}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=frame(*await self.position()))

    async def receive_json(self, content: dict, **kwargs: object) -> None:
        seq = int(content["seq"])
        await self.insert(seq, str(content.get("text", ""))[:300])
        await self.channel_layer.group_send(self.group, {"type": "moved", "seq": seq + 1})

    async def moved(self, message: dict) -> None:
        await self.send(text_data=frame(message["seq"], message["seq"] % 2))

    @database_sync_to_async
    def insert(self, seq: int, body: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (room, seq, body) VALUES (%s, %s, %s)",
                [self.room, seq, body],
            )

    @database_sync_to_async
    def position(self) -> tuple[int, int]:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {TABLE} WHERE room = %s", [self.room])
            seq = cursor.fetchone()[0]
        return seq, seq % 2


application = ProtocolTypeRouter(
    {"websocket": URLRouter([path("floor/<int:room>/", FloorConsumer.as_asgi())])}
)

# The same process tuning as the project's daphne (studyapp/asgi.py): a floor is the design's
# least work per move, not an untuned process.
from studyapp.heap import freeze_startup  # noqa: E402

freeze_startup()

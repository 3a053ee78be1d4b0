"""Plain helpers for table tests: a browser session, a staff login, a socket on the real ASGI app."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from games.llm.providers import close_clients
from studyapp.asgi import application
from studyapp.background import run_async


def new_session_key() -> str:
    session = SessionStore()
    session.create()
    return session.session_key


def staff_session_key() -> str:
    user = get_user_model().objects.create_user("watcher", password="x", is_staff=True)
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def socket(table_id: int, session_key: str | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    return WebsocketCommunicator(application, f"/ws/tables/{table_id}/", headers=headers)


@pytest.fixture
def session_key(transactional_db: None) -> str:
    return new_session_key()


make_session = database_sync_to_async(new_session_key)
make_staff_session = database_sync_to_async(staff_session_key)


@pytest.fixture
def close_model_clients() -> Iterator[None]:
    """For tests whose agents call a model: agent turns run inline on this thread's event loop
    (studyapp.background.run_async), so their SDK clients are closed on it afterwards."""
    yield
    run_async(close_clients())

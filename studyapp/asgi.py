"""ASGI entry point: HTTP through Django, WebSockets through Channels (served by daphne)."""

import contextlib
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
django_asgi_app = get_asgi_application()

from typing import Any  # noqa: E402

from autobahn.exception import Disconnected  # noqa: E402
from channels.auth import AuthMiddleware, get_user  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from channels.sessions import CookieMiddleware, SessionMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import AnonymousUser  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.core.exceptions import SuspiciousOperation  # noqa: E402
from django.core.handlers.exception import response_for_exception  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from studyapp import dispatch  # noqa: E402
from studyapp.background import in_server  # noqa: E402
from studyapp.db import TRANSIENT  # noqa: E402
from studyapp.heap import freeze_startup  # noqa: E402
from studyapp.middleware import with_security_headers  # noqa: E402
from studyapp.proxy import ForwardedFor  # noqa: E402
from studyapp.tables.routing import websocket_urlpatterns  # noqa: E402
from studyapp.tables.socket_db import db_read  # noqa: E402


class StaticFiles(ASGIStaticFilesHandler):
    """Django's static files handler, except that a path climbing out of the static folder
    (``/static/../settings.py``, ``/static/%2e%2e/...``) gets Django's 400 page and one line in
    the security log (the handler only turns a missing file into a response, and let this one
    through as an unhandled error: daphne's bare 500, a traceback per probe), and that every
    answer carries the site's Content-Security-Policy and ``nosniff``, as pages do."""

    def serve(self, request: HttpRequest) -> HttpResponse:
        try:
            return super().serve(request)
        except SuspiciousOperation as err:
            return response_for_exception(request, err)

    async def get_response_async(self, request: HttpRequest) -> HttpResponse:
        # The site's middleware never sees these (a file, its 404 or 400): the headers every
        # response carries, here too.
        return with_security_headers(await super().get_response_async(request))


class SocketUser(AuthMiddleware):
    """Channels' AuthMiddleware, except that the database connection it loads the session's user
    with goes back to the pool afterwards (studyapp.db.returning_connections): Channels' own
    clean-up misses it under asgiref 3.13, and each daphne process kept one checked out. The
    load is a socket's read like the table's own (studyapp.tables.socket_db.db_read): a short wait for a pooled
    connection, tried again after the database pauses."""

    async def resolve_scope(self, scope: dict) -> None:
        load = db_read(get_user.func)
        try:
            scope["user"]._wrapped = await load(scope)
        except TRANSIENT as err:  # the consumer refuses the socket; the page tries again
            scope["user"]._wrapped = AnonymousUser()
            scope["database_error"] = err


# daphne serves /static/ too (htmx and its ws extension from django-htmx, found by the staticfiles
# finders), DEBUG or not, so `make run` needs nothing else; SERVE_STATIC=0 when a proxy serves the
# collected files instead.
http_app = StaticFiles(django_asgi_app) if settings.SERVE_STATIC else django_asgi_app

router = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(
            CookieMiddleware(SessionMiddleware(SocketUser(URLRouter(websocket_urlpatterns))))
        ),
    }
)


# Behind a reverse proxy the client's address is the one a trusted proxy forwarded
# (studyapp.proxy, TRUSTED_PROXIES): the rate limits and logs count people, not the proxy.
site = ForwardedFor(router, settings.TRUSTED_PROXIES)


async def application(scope: dict, receive: object, send: object) -> None:
    """The site. In the embedded mode the first request or socket after a start also starts the
    periodic tasks on the server's loop (:func:`studyapp.dispatch.start_beat`), so a lobby or a
    deadline that fell due while the server was down is handled without waiting for a socket."""
    with in_server():  # its sync threads find this loop (studyapp.background.server_loop)
        dispatch.start_beat()
        if scope["type"] == "websocket":
            send = while_open(send)
        await site(scope, receive, send)


def while_open(send: Any) -> Any:
    """A socket's ``send`` that drops a message once the browser's side has closed: a board
    pushed in the moment a page goes away (a reload, a burst that cut it off) met daphne's
    ``Disconnected: Attempt to send on a closed protocol`` and ended the consumer with a
    traceback. The page that comes back gets the table as it is then."""

    async def sending(message: dict) -> None:
        with contextlib.suppress(Disconnected):
            await send(message)

    return sending


# The HTTP URLconf, loaded now: the board templates reverse URLs, and the URLconf imports every
# app (the dashboard's plotting stack among them), seconds of work that would otherwise run inside
# the first socket's render and stall every socket of the process at once.
get_resolver().url_patterns  # noqa: B018
freeze_startup()  # the loaded app stays out of the garbage collector's full scans

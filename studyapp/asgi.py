"""ASGI entry point: HTTP through Django, WebSockets through Channels (served by daphne)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from studyapp.heap import freeze_startup  # noqa: E402
from studyapp.tables.routing import websocket_urlpatterns  # noqa: E402

# daphne serves /static/ too (htmx and its ws extension from django-htmx, found by the staticfiles
# finders), DEBUG or not, so `make run` needs nothing else; SERVE_STATIC=0 when a proxy serves the
# collected files instead.
http_app = ASGIStaticFilesHandler(django_asgi_app) if settings.SERVE_STATIC else django_asgi_app

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
freeze_startup()  # the loaded app stays out of the garbage collector's full scans

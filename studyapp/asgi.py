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

from studyapp.tables.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # With DEBUG, daphne serves /static/ too (htmx and its ws extension from django-htmx),
        # so `make run` needs nothing else; production collects static files for a web server.
        "http": ASGIStaticFilesHandler(django_asgi_app) if settings.DEBUG else django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)

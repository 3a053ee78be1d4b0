"""The table socket's URL. Loading this module (daphne does, at start) also loads the HTTP
URLconf: the board templates reverse URLs, and the URLconf imports the dashboard's plotting
stack, seconds of work that would otherwise run inside the first socket's render and stall
every socket of the process at once."""

from django.urls import get_resolver, path, re_path

from studyapp.tables.consumers import NotFoundConsumer, TableConsumer

websocket_urlpatterns = [
    path("ws/tables/<int:table_id>/", TableConsumer.as_asgi()),
    re_path(r"", NotFoundConsumer.as_asgi()),  # anything else: closed with 4404, no traceback
]

get_resolver().url_patterns  # noqa: B018 (loaded now, see above)

"""The table socket's URL."""

from django.urls import path, re_path

from studyapp.tables.consumers import NotFoundConsumer, TableConsumer

websocket_urlpatterns = [
    path("ws/tables/<int:table_id>/", TableConsumer.as_asgi()),
    re_path(r"", NotFoundConsumer.as_asgi()),  # anything else: closed with 4404, no traceback
]

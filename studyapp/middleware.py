"""Requests refused before any view: a URL that cannot name anything on this site."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


class RefuseNulMiddleware:
    """A NUL byte (``%00``) in the path or query string names nothing here, and PostgreSQL
    refuses it in any lookup (a 500 deep in a view). Refuse it at the door with a 400."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or "\x00" in unquote(query):
            return HttpResponseBadRequest(
                "This address contains a character that no page here uses. Please check the link.",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)

"""Requests refused before any view (a URL that cannot name anything on this site), and requests
that meet a database that is away for a moment."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from urllib.parse import unquote

from django.core.signals import got_request_exception
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render

log = logging.getLogger(__name__)


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


class RetryTransientDatabaseErrors:
    """A database that cannot be reached for a moment (PostgreSQL restarting, a connection cut,
    no pooled connection free within DB_POOL_TIMEOUT) is not a 500 with a traceback per request.

    A GET or HEAD is run again, after a short pause, on a fresh connection: reading twice is
    harmless. Anything else (a POST may already have written) and a GET that keeps failing get
    a 503 page that says to try again, and one log line each. Outermost but for the security
    middleware, so that a retry runs the whole request again (session and user included)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        got_request_exception.connect(mark_transient, dispatch_uid="studyapp.mark_transient")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from studyapp.db import PAGE, TRANSIENT, is_pool_timeout, working_on
        from studyapp.retry import DATABASE_PAUSES, retry

        def attempt() -> HttpResponse:
            request._transient_db_error = None
            response = self.get_response(request)
            if request._transient_db_error is not None:
                raise request._transient_db_error  # the error Django turned into a response
            return response

        safe = request.method in ("GET", "HEAD")
        try:
            with working_on(PAGE):  # the pages' share of the pool (studyapp.db.current_share)
                return retry(
                    attempt,
                    retry_on=TRANSIENT,
                    pauses=DATABASE_PAUSES if safe else (),
                    give_up=is_pool_timeout,
                    before_retry=drop_unusable_connections,
                )
        except TRANSIENT as err:
            error = err
        log.warning(
            "database unavailable, %s %s answered 503: %s: %s",
            request.method,
            request.path,
            type(error).__name__,
            str(error).strip().splitlines()[0] if str(error).strip() else "",
            extra={"fault_error": error},  # one line per fault, not per request (studyapp.logs)
        )
        response = render(request, "503.html", {"safe": safe}, status=503)
        response["Retry-After"] = "5"
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """The view's error: marked, and a stand-in response that __call__ replaces (Django
        logs nothing for it)."""
        from studyapp.db import TRANSIENT

        if isinstance(exception, TRANSIENT):
            request._transient_db_error = exception
            return HttpResponse(status=503)
        return None


def mark_transient(sender: object = None, request: HttpRequest | None = None, **_: object) -> None:
    """A middleware's error (a session saved, a user loaded): Django has made it a 500 and logged
    it (one line, settings.LOGGING); marked here so that the request is tried again or answered
    with the 503 page."""
    from studyapp.db import TRANSIENT

    error = sys.exc_info()[1]
    if request is not None and isinstance(error, TRANSIENT):
        request._transient_db_error = error


def drop_unusable_connections() -> None:
    """Before a request is run again: a connection that broke goes (back to the pool, which drops
    it), so the next try opens a fresh one."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        conn.close_if_unusable_or_obsolete()


class SecureCookiesOverHTTPS:
    """The session and CSRF cookies are Secure whenever the request came over HTTPS: directly,
    or through a trusted proxy's ``X-Forwarded-Proto: https`` (studyapp.proxy), not only when
    ``HTTPS=true`` sets ``SESSION_COOKIE_SECURE``. A browser then never sends them over plain
    HTTP, where anyone on the way could read the session. Outside the session and CSRF
    middleware, so that it sees the cookies they set."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from django.conf import settings

        response = self.get_response(request)
        if request.is_secure():
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
                if name in response.cookies:
                    response.cookies[name]["secure"] = True
        return response


class ContentSecurityPolicy:
    """``Content-Security-Policy`` on every response (``settings.CONTENT_SECURITY_POLICY``; empty
    sends none): the pages load scripts, styles, images and sockets from this site only, so a
    participant's or an agent's words that slipped past escaping could run nothing. The pages
    have no inline script or style (static/js, static/css)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        from django.conf import settings

        self.get_response = get_response
        self.policy = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response


def with_security_headers(response: HttpResponse) -> HttpResponse:
    """The headers the middleware gives every page, for a response that bypasses it (the static
    files daphne serves): the Content-Security-Policy and, as Django's SecurityMiddleware sends
    it, ``X-Content-Type-Options: nosniff``."""
    from django.conf import settings

    policy = settings.CONTENT_SECURITY_POLICY
    if policy and "Content-Security-Policy" not in response:
        response["Content-Security-Policy"] = policy
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
    return response

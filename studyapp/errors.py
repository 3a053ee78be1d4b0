"""Error reporting to Sentry (or any server speaking its protocol, e.g. GlitchTip), on only when
``SENTRY_DSN`` is set: unhandled errors of requests (Django), of tasks (Celery) and error-level log
lines reach the lab, which otherwise learns of a 500 during a paid session from a process's stderr.

What leaves the site is scrubbed by :func:`scrub_event`, a plain function: no request body, no
cookie or credential header, no query-string value (``PROLIFIC_PID``, ``SESSION_ID``, ``STUDY_ID``,
resume and pilot tokens), no invite token in a path, no local variables of stack frames (a word,
a move, a socket frame), no breadcrumb text, and quoted text in messages replaced. The only user
a report names is a participant's pseudonym (``public_id``), set by
:class:`ParticipantUserMiddleware` when a participant's request fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from studyapp.logs import SECRET_PATH

FILTERED = "[Filtered]"
# Headers that carry credentials or a whole address with its query string.
DROPPED_HEADERS = {"cookie", "authorization", "x-csrftoken", "proxy-authorization", "referer"}
# Quoted text in a message: a repr of a word, a move or an answer (``'apple'``, ``"a bird"``).
QUOTED = re.compile(r"""(['"])(?:(?!\1)[^\n]){1,200}?\1""")


def mask_text(text: Any) -> Any:
    """``text`` with invite tokens in paths and every quoted passage replaced."""
    if not isinstance(text, str):
        return text
    return QUOTED.sub(lambda m: f"{m[1]}{FILTERED}{m[1]}", SECRET_PATH.sub("/i/…", text))


def mask_query(query: Any) -> Any:
    """A query string (or Sentry's list of pairs) with every value replaced, names kept."""
    if isinstance(query, str):
        pairs = parse_qsl(query, keep_blank_values=True)
        return urlencode([(name, FILTERED) for name, _ in pairs], safe="[]")
    if isinstance(query, list):
        return [[pair[0], FILTERED] for pair in query if isinstance(pair, list | tuple) and pair]
    return None


def mask_url(url: Any) -> Any:
    if not isinstance(url, str):
        return url
    parts = urlsplit(url)
    path = SECRET_PATH.sub("/i/…", parts.path)
    return urlunsplit((parts.scheme, parts.netloc, path, mask_query(parts.query) or "", ""))


def _scrub_frames(container: Any) -> None:
    """Drop local variables (and masked source lines stay) from every stack frame."""
    for value in (container or {}).get("values", []) or []:
        for frame in (value.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
        if "value" in value:
            value["value"] = mask_text(value["value"])


def scrub_event(event: dict[str, Any], hint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Sentry's ``before_send``: the event without participants' words or IDs (see the module).
    Changes ``event`` in place and returns it."""
    request = event.get("request")
    if isinstance(request, dict):
        request.pop("data", None)
        request.pop("cookies", None)
        request.pop("env", None)
        if "query_string" in request:
            request["query_string"] = mask_query(request["query_string"])
        request["url"] = mask_url(request.get("url"))
        headers = request.get("headers")
        if isinstance(headers, dict):
            request["headers"] = {
                name: value
                for name, value in headers.items()
                if name.lower() not in DROPPED_HEADERS
            }
    user = event.get("user")
    if isinstance(user, dict):
        # Only the pseudonym set by ParticipantUserMiddleware (or a staff user's id) stays.
        event["user"] = {"id": user["id"]} if user.get("id") else {}
    _scrub_frames(event.get("exception"))
    _scrub_frames(event.get("threads"))
    logentry = event.get("logentry")
    if isinstance(logentry, dict):
        logentry["message"] = mask_text(logentry.get("message"))
        logentry.pop("params", None)
        logentry["formatted"] = mask_text(logentry.get("formatted"))
    if "message" in event:
        event["message"] = mask_text(event["message"])
    breadcrumbs = event.get("breadcrumbs")
    crumbs = breadcrumbs.get("values") if isinstance(breadcrumbs, dict) else breadcrumbs
    for crumb in crumbs or []:
        crumb.pop("data", None)
        if "message" in crumb:
            crumb["message"] = mask_text(crumb["message"])
    event.pop("extra", None)
    return event


def init_sentry(dsn: str, *, environment: str, release: str | None, **options: Any) -> None:
    """Turn reporting on (called by the settings module when ``SENTRY_DSN`` is set)."""
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=release,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        include_local_variables=False,
        max_request_body_size="never",
        before_send=scrub_event,
        before_send_transaction=scrub_event,
        **options,
    )


def report_participant(public_id: str) -> None:
    """Name the current scope's user by the participant's pseudonym (nothing else about them)."""
    import sentry_sdk

    sentry_sdk.get_isolation_scope().set_user({"id": public_id})


class ParticipantUserMiddleware:
    """When a request of a participant fails, its report names that participant's pseudonym
    (``public_id``). Looks the participant up only then, so working requests cost nothing; sync
    and async alike, so it adds no thread switch under daphne."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: Any) -> Any:
        return self.get_response(request)

    def process_exception(self, request: Any, exception: Exception) -> None:
        from studyapp.participants.identity import SESSION_KEY
        from studyapp.participants.models import Participant

        session = getattr(request, "session", None)
        owned = list((session.get(SESSION_KEY, {}) if session is not None else {}).values())
        if not owned:
            return None
        public_id = (
            Participant.objects.filter(pk__in=owned).order_by("-pk")
            .values_list("public_id", flat=True).first()
        )  # fmt: skip
        if public_id:
            report_participant(public_id)
        return None

"""``settings.LOGGING``: the formatters, filters and handlers of studyapp.logs, put together for
a log format (text or json) and a root level that settings.py read from the environment."""

from __future__ import annotations

from typing import Any


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "text": {"()": "studyapp.logs.LineFormatter"},
            "json": {"()": "studyapp.logs.JSONFormatter"},
        },
        "filters": {
            "without_traceback": {"()": "studyapp.logs.WithoutTraceback"},
            "without_secret_paths": {"()": "studyapp.logs.WithoutSecretPaths"},
            "brief_database_errors": {"()": "studyapp.logs.BriefDatabaseErrors"},
            "without_answered_503": {"()": "studyapp.logs.WithoutAnswered503"},
            # Redis or the database away: a line when it goes (its cause), one per kind of failure
            # while it is away, and a line when it answers again; repeats counted, no tracebacks.
            "once_per_fault": {"()": "studyapp.logs.once_per_fault"},
            # 429s (refused starts, throttled posts, fast moves): one line a minute sums them up.
            "summed_refusals": {"()": "studyapp.logs.SummedRefusals"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "filters": ["without_secret_paths", "once_per_fault", "brief_database_errors"],
                "formatter": log_format,
            },
            "brief": {
                "class": "logging.StreamHandler",
                "filters": ["without_traceback", "without_secret_paths", "once_per_fault"],
                "formatter": log_format,
            },
        },
        "root": {"handlers": ["console"], "level": level},
        # Refused requests (bad Host, oversized bodies): one line each, not a stack.
        "loggers": {
            "django.security": {"handlers": ["brief"], "propagate": False},
            "django.request": {"filters": ["without_answered_503", "summed_refusals"]},
        },
    }

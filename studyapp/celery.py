"""Celery app. With no broker configured, tasks run eagerly in the calling process."""

import logging
import os

from celery import Celery
from celery.signals import (
    after_setup_logger,
    after_setup_task_logger,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")

app = Celery("studyapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def close_old_connections(task: object = None, **_: object) -> None:
    """Around each task on a worker, what Django does around each request: drop a database
    connection that is broken or older than CONN_MAX_AGE, keep the rest (CELERY_DB_REUSE_MAX keeps
    Celery from closing every connection after every task). An eager task runs inside its
    caller's request or transaction, which owns the connection."""
    if getattr(getattr(task, "request", None), "is_eager", False):
        return
    from django.db import close_old_connections as close

    close()


@worker_init.connect
@worker_process_init.connect
def freeze_startup(**_: object) -> None:
    """A worker, and each process of its pool, keeps what it loaded at startup out of the garbage
    collector's full scans (studyapp.heap)."""
    from studyapp.heap import freeze_startup as freeze

    freeze()


@after_setup_logger.connect
@after_setup_task_logger.connect
def site_log_format(logger: logging.Logger | None = None, **_: object) -> None:
    """With ``LOG_FORMAT=json`` a worker's and beat's lines are JSON too, like the web processes'
    (Celery's own text lines already carry time and level, and the task's name and id)."""
    from django.conf import settings

    if logger is None or settings.LOG_FORMAT != "json":
        return
    from studyapp.logs import JSONFormatter

    for handler in logger.handlers:
        handler.setFormatter(JSONFormatter())

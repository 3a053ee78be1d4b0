"""Celery app. With no broker configured, tasks run eagerly in the calling process."""

import logging
import os
import warnings

from celery import Celery
from celery.signals import (
    after_setup_logger,
    after_setup_task_logger,
    beat_init,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from studyapp import db  # a forked pool process opens its own database connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")

app = Celery("studyapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def without_connection_loss_notice(**_: object) -> None:
    """Every lost broker connection made the worker print Celery 5.1's nine-line notice that a
    future version may cancel running late-acknowledged tasks on connection loss: the site keeps
    them running (their leases and the visibility timeout cover a lost ack), and a Redis fault is
    meant to be a few lines (studyapp.logs.OncePerFault). Installed once the worker is ready:
    Celery's log setup turns its own warnings to "always" before that."""
    warnings.filterwarnings(
        "ignore", message=r"\s*In Celery 5\.1 we introduced an optional breaking change"
    )


@task_prerun.connect
@task_postrun.connect
def close_old_connections(task: object = None, **_: object) -> None:
    """Around each task on a worker, what Django does around each request (drop a connection that
    is broken or older than DB_CONN_MAX_AGE), except that a pooled connection still good is kept
    for the process's next task (:func:`studyapp.db.between_tasks`). An eager task runs inside
    its caller's request or transaction, which owns the connection."""
    if getattr(getattr(task, "request", None), "is_eager", False):
        return
    db.between_tasks()


@worker_init.connect
@worker_process_init.connect
def freeze_startup(**_: object) -> None:
    """A worker, and each process of its pool, keeps what it loaded at startup out of the garbage
    collector's full scans (studyapp.heap)."""
    from studyapp.heap import freeze_startup as freeze

    freeze()


@worker_init.connect
def size_worker_pool(sender: object = None, **_: object) -> None:
    """A worker's database pool (settings.DB_POOL_SIZE is daphne's). With the prefork pool the
    main process only runs the startup checks (one connection) and each pool process sizes its
    own (:func:`size_pool_process`); with threads, the main process runs every task."""
    from django.conf import settings

    pool_cls = getattr(sender, "pool_cls", "prefork")
    name = pool_cls if isinstance(pool_cls, str) else getattr(pool_cls, "__module__", "")
    if "prefork" in name:
        db.size_pool(1)
        return
    concurrency = getattr(sender, "concurrency", 1)
    threads = concurrency if isinstance(concurrency, int) and concurrency > 0 else os.cpu_count()
    db.size_pool((threads or 1) * settings.WORKER_DB_POOL_SIZE)


@worker_process_init.connect
def size_pool_process(**_: object) -> None:
    """Each prefork pool process runs one task at a time: its own thread and the thread its
    database calls are handed to (WORKER_DB_POOL_SIZE, default 2)."""
    from django.conf import settings

    db.size_pool(settings.WORKER_DB_POOL_SIZE)


@beat_init.connect
def size_beat_pool(**_: object) -> None:
    """Beat only sends tasks; one connection is plenty if anything of it reads the database."""
    db.size_pool(1)


@after_setup_logger.connect
@after_setup_task_logger.connect
def site_log_format(logger: logging.Logger | None = None, **_: object) -> None:
    """With ``LOG_FORMAT=json`` a worker's and beat's lines are JSON too, like the web processes'
    (Celery's own text lines already carry time and level, and the task's name and id). Celery's
    handlers replace the site's, so they get its one-line-per-fault filter here (Redis away:
    beat's SchedulingError, a worker's "Couldn't ack", studyapp.logs.OncePerFault)."""
    from django.conf import settings

    if logger is None:
        return
    from studyapp.logs import JSONFormatter, once_per_fault

    for handler in logger.handlers:
        if once_per_fault() not in handler.filters:
            handler.addFilter(once_per_fault())
        if settings.LOG_FORMAT == "json":
            handler.setFormatter(JSONFormatter())


@worker_process_shutdown.connect
@worker_shutdown.connect
def close_model_clients(**_: object) -> None:
    """A worker (and each process of its prefork pool, which leaves by ``os._exit`` and runs no
    exit hooks) closes the model SDK clients its threads' loops opened while it can still log:
    left to the garbage collector, each printed "Unclosed client session" at shutdown
    (:func:`studyapp.background.close_kept_loops`, also run at exit)."""
    from studyapp.background import close_kept_loops

    close_kept_loops()

"""Celery app. With no broker configured, tasks run eagerly in the calling process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")

app = Celery("studyapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

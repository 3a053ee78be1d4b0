"""The Django project: participants, tables, pipelines and the researchers' dashboard."""

from studyapp.celery import app as celery_app

__all__ = ["celery_app"]

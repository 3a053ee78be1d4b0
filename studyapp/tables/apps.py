from django.apps import AppConfig


class TablesConfig(AppConfig):
    name = "studyapp.tables"
    label = "tables"

    def ready(self) -> None:
        # The tables' tasks register the jobs the scheduler sends (scheduling.JOBS).
        from studyapp.tables import tasks  # noqa: F401

from django.apps import AppConfig


class TablesConfig(AppConfig):
    name = "studyapp.tables"
    label = "tables"

    def ready(self) -> None:
        # The tables' steps register with the executor (studyapp.steps) what the scheduler sends.
        from studyapp.tables import steps, tasks  # noqa: F401

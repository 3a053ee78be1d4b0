from django.apps import AppConfig


class ParticipantsConfig(AppConfig):
    name = "studyapp.participants"
    label = "participants"

    def ready(self) -> None:
        # Listen to what the tables app announces (studyapp/participants/receivers.py).
        from studyapp.participants import receivers  # noqa: F401

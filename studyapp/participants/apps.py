from django.apps import AppConfig


class ParticipantsConfig(AppConfig):
    name = "studyapp.participants"
    label = "participants"

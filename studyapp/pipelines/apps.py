from django.apps import AppConfig


class PipelinesConfig(AppConfig):
    name = "studyapp.pipelines"
    label = "pipelines"

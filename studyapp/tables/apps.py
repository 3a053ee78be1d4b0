from django.apps import AppConfig


class TablesConfig(AppConfig):
    name = "studyapp.tables"
    label = "tables"

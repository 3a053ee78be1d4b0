from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "studyapp.dashboard"
    label = "dashboard"

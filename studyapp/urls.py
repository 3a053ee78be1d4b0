from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("studyapp.participants.urls")),
    path("", include("studyapp.tables.urls")),
    path("dashboard/jobs/", include("studyapp.pipelines.urls")),
    path("dashboard/", include("studyapp.dashboard.urls")),
]

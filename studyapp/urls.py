from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from studyapp import health

urlpatterns = [
    # For monitors and load balancers: no login, no slash (studyapp/health.py).
    path("healthz", health.healthz, name="healthz"),
    # Pages that do not link the icon themselves (the admin) still get it, without a 404.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("", include("studyapp.participants.urls")),
    path("", include("studyapp.tables.urls")),
    path("dashboard/jobs/", include("studyapp.pipelines.urls")),
    path("dashboard/", include("studyapp.dashboard.urls")),
]

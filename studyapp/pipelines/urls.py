from django.urls import path

from studyapp.pipelines import views

app_name = "pipelines"

urlpatterns = [
    path("", views.job_list, name="list"),
    path("new/", views.job_new, name="new"),
    path("<int:job_id>/", views.job_detail, name="detail"),
    path("<int:job_id>/cancel/", views.job_cancel, name="cancel"),
    path("<int:job_id>/rerun/", views.job_rerun, name="rerun"),
    path("<int:job_id>/resume/", views.job_resume, name="resume"),
    path("<int:job_id>/files/<path:name>", views.job_artifact, name="artifact"),
]

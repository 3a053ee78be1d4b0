from django.urls import path

from studyapp.dashboard.views import analysis, home, tables

app_name = "dashboard"

urlpatterns = [
    path("", home.home, name="home"),
    path("tables/", tables.table_list, name="tables"),
    path("tables/<int:table_id>/", tables.watch, name="watch"),
    path("tables/<int:table_id>/resume/", tables.resume, name="resume_table"),
    path("analysis/", analysis.index, name="analysis"),
    path("analysis/tables/", analysis.page, name="analysis_tables"),
    path("analysis/tables/file/<str:name>", analysis.figure, name="analysis_tables_figure"),
    path(
        "analysis/tables/download/<str:format>.zip",
        analysis.download,
        name="analysis_tables_download",
    ),
    path("analysis/study/<slug:slug>/", analysis.page, name="analysis_study"),
    path(
        "analysis/study/<slug:slug>/file/<str:name>", analysis.figure, name="analysis_study_figure"
    ),
    path(
        "analysis/study/<slug:slug>/model-arm/", analysis.model_arm, name="analysis_study_model_arm"
    ),
    path(
        "analysis/study/<slug:slug>/model-arm/jobs/",
        analysis.arm_jobs,
        name="analysis_study_jobs",
    ),
    path(
        "analysis/study/<slug:slug>/download/<str:format>.zip",
        analysis.download,
        name="analysis_study_download",
    ),
]

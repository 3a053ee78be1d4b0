from django.urls import path

from studyapp.dashboard.views import analysis, home, tables

app_name = "dashboard"

urlpatterns = [
    path("", home.home, name="home"),
    path("tables/", tables.table_list, name="tables"),
    path("tables/<int:table_id>/", tables.watch, name="watch"),
    path("analysis/", analysis.index, name="analysis"),
    path("analysis/tables/", analysis.page, name="analysis_tables"),
    path(
        "analysis/tables/figure/<str:kind>/<str:game>.<str:ext>",
        analysis.figure,
        name="analysis_tables_figure",
    ),
    path(
        "analysis/tables/download/<str:format>.zip",
        analysis.download,
        name="analysis_tables_download",
    ),
    path("analysis/study/<slug:slug>/", analysis.page, name="analysis_study"),
    path(
        "analysis/study/<slug:slug>/figure/<str:kind>/<str:game>.<str:ext>",
        analysis.figure,
        name="analysis_study_figure",
    ),
    path(
        "analysis/study/<slug:slug>/download/<str:format>.zip",
        analysis.download,
        name="analysis_study_download",
    ),
]

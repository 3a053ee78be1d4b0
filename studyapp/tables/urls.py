from django.urls import path

from studyapp.tables import views

app_name = "tables"

urlpatterns = [
    path("", views.home, name="home"),
    path("play/twenty-questions/", views.play_twenty_questions, name="play_twenty_questions"),
    path("play/undercover/", views.play_undercover, name="play_undercover"),
    path("tables/<int:table_id>/", views.table_page, name="table"),
    path("tables/<int:table_id>/move/", views.move, name="move"),
    path("tables/<int:table_id>/leave/", views.leave, name="leave"),
]

"""Recruitment links (/s/, /i/) and the participant's own pages (/p/<public id>/)."""

from django.urls import path

from studyapp.participants import views

app_name = "participants"

urlpatterns = [
    path("s/<slug:slug>/", views.study_link, name="study_link"),
    path("s/<slug:slug>/complete/", views.recruiter_return, name="recruiter_return"),
    path("s/<slug:slug>/continue/", views.continue_study, name="continue"),
    path("i/<str:token>/", views.invite_link, name="invite_link"),
    path("p/<str:public_id>/", views.resume, name="resume"),
    path("p/<str:public_id>/consent/", views.consent, name="consent"),
    path("p/<str:public_id>/instructions/", views.instructions, name="instructions"),
    path("p/<str:public_id>/play/", views.play, name="play"),
    path("p/<str:public_id>/policy/", views.policy, name="policy"),
    path("p/<str:public_id>/questionnaire/", views.questionnaire_page, name="questionnaire"),
    path("p/<str:public_id>/debrief/", views.debrief, name="debrief"),
    path("p/<str:public_id>/done/", views.done, name="done"),
    path("p/<str:public_id>/withdraw/", views.withdraw, name="withdraw"),
    path("p/<str:public_id>/alive/", views.alive, name="alive"),
]

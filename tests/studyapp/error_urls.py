"""A URL whose view fails with the participant's own words in its message and locals: what error
reporting must never send (tests/studyapp/test_errors.py)."""

from django.http import HttpRequest
from django.urls import path


def fail(request: HttpRequest):
    word = request.POST.get("word", "")
    raise ValueError(f"no such move: {word!r}")


urlpatterns = [path("fail/", fail)]

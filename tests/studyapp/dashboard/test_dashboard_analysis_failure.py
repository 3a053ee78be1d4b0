"""An analysis that cannot be written (the media folder unwritable) is shown as failed, with the
reason, and not queued again on every visit: only new data, or ten minutes, tries again."""

from __future__ import annotations

import pytest
from analysis_db_helpers import make_study
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from studyapp.dashboard import analysis_job
from studyapp.dashboard.models import AnalysisResult

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


def test_an_unwritable_media_folder_is_shown_failed_not_queued_forever(
    staff, settings, tmp_path, monkeypatch
):
    make_study()
    blocked = tmp_path / "media"
    blocked.write_text("a file where the media folder should be")  # nothing can go under it
    settings.MEDIA_ROOT = str(blocked)
    url = reverse("dashboard:analysis_study", kwargs={"slug": "tq-study"})

    page = staff.get(url).content.decode()
    result = AnalysisResult.objects.get(scope="study:tq-study")
    assert result.status == "failed" and "NotADirectoryError" in result.message
    assert 'id="analysis-failed"' in page and "NotADirectoryError" in page
    assert "updating (queued)" not in page and 'hx-trigger="every' not in page

    computed = []
    monkeypatch.setattr(analysis_job, "enqueue", lambda scope, version: computed.append(version))
    for _ in range(3):
        page = staff.get(url).content.decode()
    assert computed == []  # the same data is not queued again on each visit
    assert "The analysis failed" in page or "The last update failed" in page

    # Ten minutes later it is tried again.
    later = result.updated_at.timestamp() + settings.ANALYSIS_STALE_SECONDS + 1
    monkeypatch.setattr(analysis_job.time, "time", lambda: later)
    staff.get(url)
    assert len(computed) == 1

"""What a study hands its researcher, end to end: a Twenty Questions study of two conditions (no
policy, a human policy) piloted through its link by ``manage.py pilot`` against the served site,
its model arm run, then ``manage.py export_study``: the figure's CSV gives both conditions with
their n, the figure draws them apart, and the export's tables load as they are."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from analysis.plots import CONDITION_COLOURS
from tests.e2e.site import ROOT, LiveSite

pytestmark = pytest.mark.e2e

SLUG = "tq-two"
SETUP = f"""
from django.contrib.auth.models import User
from studyapp.participants.models import Condition, Study
User.objects.create_superuser("staff", "staff@example.org", "staff-pass-123")
study = Study.objects.create(slug="{SLUG}", title="Two conditions", game="twenty-questions",
    rounds=2, seed=3, consent_text="Recorded for research.",
    completion_url="https://app.prolific.com/x", code_finished="TQDONE")
Condition.objects.create(study=study, name="no-policy", quota=2, position=0)
Condition.objects.create(study=study, name="human-policy", quota=2, position=1,
    overrides={{"shown_policy": "Ask whether it is alive first, then narrow by category."}})
"""
MODEL_ARM = f"""
from studyapp.dashboard.views.analysis import arm_parameters
from studyapp.participants.models import Study
from studyapp.pipelines.jobs import start_job
study = Study.objects.get(slug="{SLUG}")
jobs = [start_job("experiment", arm_parameters(study, "offline:infogain", s, 2))
        for s in ("none", "cumulative")]
for job in jobs:
    job.refresh_from_db()
print("JOBS", [job.status for job in jobs])
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    server = LiveSite(tmp_path_factory.mktemp("study-results"), AGENT_DELAY_SECONDS="0")
    server.start(SETUP)
    yield server
    server.stop()


def colour_pixels(path: Path, colour: str) -> int:
    """Pixels of the PNG within a small distance of ``colour`` (a condition's mean line)."""
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=int)
    target = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(rgb - target).sum(axis=2) < 30).sum())


def test_a_piloted_two_condition_study_exports_a_figure_per_condition(site, tmp_path, browser):
    pilot = subprocess.run(
        [sys.executable, "manage.py", "pilot", SLUG, "--participants", "4", "--base", site.url],
        cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert pilot.returncode == 0, pilot.stderr[-3000:] + pilot.stdout[-3000:]
    report = json.loads(pilot.stdout)
    assert report["ok"], report["problems"]
    assert report["conditions"] == {"no-policy": 2, "human-policy": 2}
    arm = site.manage("shell", "-c", MODEL_ARM)
    assert "JOBS ['succeeded', 'succeeded']" in arm, arm
    out = tmp_path / "export"
    site.manage("export_study", SLUG, "--out", str(out), "--include-pilots", "--check")

    drawn = pd.read_csv(out / "analysis" / "study-twenty-questions.csv")
    assert {"condition", "series", "t", "mean", "low", "high", "n"} <= set(drawn.columns)
    means = drawn[drawn["kind"] == "mean"]
    assert set(means["condition"]) == {"no-policy", "human-policy"}
    assert means.groupby("condition")["n"].max().to_dict() == {"no-policy": 2, "human-policy": 2}
    assert means.groupby("condition")["t"].max().to_dict() == {"no-policy": 2, "human-policy": 2}
    models = drawn[drawn["kind"] == "normal"]
    assert set(models["series"]) == {"offline:infogain, w/o Policy",
                                     "offline:infogain, w/ Cumulative Policy"}  # fmt: skip
    assert set(models["n"]) == {2}  # two samples per model curve
    # The figure draws each condition in its own colour (the first two of the palette).
    png = out / "analysis" / "study-twenty-questions.png"
    for colour in CONDITION_COLOURS[:2]:
        assert colour_pixels(png, colour) > 200, colour
    # The export's tables load as they are.
    turns = pd.read_csv(out / "turns.csv")
    for column in ("seq", "seat", "chars", "duration_s"):
        assert pd.api.types.is_numeric_dtype(turns[column]), column
    assert not turns.duplicated(["table", "seq"]).any()
    people = pd.read_csv(out / "participants.csv")
    assert set(people["payment_status"]) == {"pilot"} and people["base_pay"].isna().all()

    # The study page counts as the files do: its analysis leaves the pilots out, and says how
    # many (the four pilots who played), and draws the model arm, which played the study's games.
    from playwright.sync_api import expect

    staff = browser.new_context().new_page()
    staff.set_default_timeout(30_000)
    staff.goto(f"{site.url}/admin/login/?next=/dashboard/analysis/study/{SLUG}/")
    staff.fill("#id_username", "staff")
    staff.fill("#id_password", "staff-pass-123")
    staff.click("input[type=submit]")
    expect(staff.locator("#people-left-out")).to_contain_text("4 pilot", timeout=120_000)
    expect(staff.locator("#not-comparable")).to_have_count(0)
    expect(staff.locator("body")).to_contain_text("Each condition gets its own jobs")

"""On the production topology, through the study's real link (HTTP and the table's WebSocket, the
pilot bot's client with no pilot token, so an ordinary participant): a person who misses an
attention check under ``attention_failure = "screen"`` is told so, with what is paid and what is
kept, and is in every file of the export with the failed check (``export_study --check`` passes);
a study file applied without its keys loses them, or, once people took part, is refused with the
reason; a negative payment is refused."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tomllib

import pandas as pd
import pytest
import tomli_w

from studyapp.participants.pilot_bot import PilotBot
from tests.production.topology import ROOT, Topology

pytestmark = pytest.mark.production

SLUG = "screen-prod"
STUDY = f"""
slug = "{SLUG}"
title = "Screening on the production topology"
game = "twenty-questions"
rounds = 1
seed = 3
consent_text = "You play one game. If you miss an attention check, the study ends and is not paid."
policy_question = "What would you advise a newcomer?"
attention_failure = "screen"
debrief_text = "Thank you: the study compares people with language models."
completion_url = "https://app.prolific.com/submissions/complete"
code_finished = "PRODFIN"
code_dropped = "PRODDRP"
code_screened = "PRODSCR"
payment_amount = "3.00"
currency = "GBP"

[[checks]]
question = "Which answers can the oracle give?"
options = ["Any sentence", "Yes, No or Invalid"]
answer = "Yes, No or Invalid"

[[questionnaire]]
id = "hard"
question = "The game was hard."
kind = "likert"

[[questionnaire]]
id = "attention"
question = "To show that you read this, choose 'Often'."
kind = "choice"
options = ["Never", "Sometimes", "Often"]
expected = "Often"
"""


def manage(site: Topology, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``manage.py`` with the site's settings; the result whatever its exit status."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=site.env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def person(site: Topology, index: int, fail: bool) -> PilotBot:
    """A browser through the study link without a pilot token: an ordinary participant with a
    Prolific-form ID, answering the checks, playing its game and the questionnaire."""
    return PilotBot(
        f"http://127.0.0.1:{site.ports[0]}",
        SLUG,
        index,
        token="",
        answers=["Yes, No or Invalid"],
        prefix="0" * 20,
        checks={"q_attention": "Often"},
        fail_checks=fail,
    )


async def take_part(site: Topology) -> list:
    bots = [person(site, 1, fail=True), person(site, 2, fail=False)]
    return list(await asyncio.gather(*(bot.run() for bot in bots)))


def test_a_screened_person_is_told_the_truth_and_is_in_every_file(topology, tmp_path):
    applied = manage(topology, "study", "apply", "-", stdin=STUDY)
    assert applied.returncode == 0, applied.stderr
    screened, finished = asyncio.run(take_part(topology))
    assert not screened.error and not finished.error, (screened.error, finished.error)
    assert screened.status == "screened" and screened.code == "PRODSCR"
    told = screened.told
    assert "An attention check in the questionnaire was not answered as it asked" in told
    assert "To show that you read this, choose 'Often'." in told
    assert "does not pay people in this case" in told and "is kept for the research" in told
    assert "You chose not to take part" not in told
    assert finished.status == "finished" and finished.code == "PRODFIN"

    out = tmp_path / "export"
    exported = manage(
        topology, "export_study", SLUG, "--out", str(out), "--format", "csv", "--quiet", "--check"
    )
    assert exported.returncode == 0, exported.stderr
    assert "check: the files agree" in exported.stdout
    people = pd.read_csv(out / "participants.csv", keep_default_na=False).set_index("player")
    row = people.loc[screened.public_id]
    assert row["status"] == "screened" and row["attention_failed"] == "attention"
    assert row["reason"].startswith("attention check failed: attention")
    assert people.loc[finished.public_id, "status"] == "finished"
    games = pd.read_csv(out / "games.csv", keep_default_na=False)
    assert screened.public_id in set(games["player"])
    turns = pd.read_csv(out / "turns.csv", keep_default_na=False)
    assert screened.public_id in set(turns["player"])
    answers = pd.read_csv(out / "questionnaire.csv", keep_default_na=False)
    mine = answers[(answers["player"] == screened.public_id) & (answers["item"] == "attention")]
    assert list(mine["answer"]) == ["Never"] and list(mine["passed"].astype(str)) == ["False"]
    versions = pd.read_csv(out / "consent_versions.csv", keep_default_na=False)
    assert list(versions["participants"]) == [2]

    # Once people took part, a file that drops what they read is refused, naming it.
    data = tomllib.loads(STUDY)
    shorter = tomli_w.dumps({k: v for k, v in data.items() if k not in ("questionnaire",)})
    refused = manage(topology, "study", "apply", "-", stdin=shorter)
    assert refused.returncode != 0 and "changing questionnaire" in refused.stderr
    assert "Traceback" not in refused.stderr

    # A study nobody took part in becomes what its file says: the keys left out are gone.
    fresh = tomli_w.dumps({**data, "slug": "screen-prod-fresh"})
    assert manage(topology, "study", "apply", "-", stdin=fresh).returncode == 0
    without = {
        k: v
        for k, v in {**data, "slug": "screen-prod-fresh"}.items()
        if k not in ("questionnaire", "debrief_text", "code_screened", "attention_failure")
    }
    changed = manage(topology, "study", "apply", "-", stdin=tomli_w.dumps(without))
    assert changed.returncode == 0, changed.stderr
    for key in ("questionnaire", "debrief_text", "code_screened", "attention_failure"):
        assert f"  {key}: " in changed.stdout, changed.stdout
    shown = manage(topology, "study", "export", "screen-prod-fresh").stdout
    assert "[[questionnaire]]" not in shown and 'debrief_text = ""' in shown

    # A negative payment is refused with the reason, and nothing is saved.
    negative = tomli_w.dumps({**data, "slug": "screen-prod-negative", "payment_amount": "-4.50"})
    refused = manage(topology, "study", "apply", "-", stdin=negative)
    assert refused.returncode != 0
    assert "payment_amount: An amount cannot be below zero" in refused.stderr
    assert "screen-prod-negative" not in manage(topology, "shell", "-c", LIST_SLUGS).stdout


LIST_SLUGS = (
    "from studyapp.participants.models import Study; "
    "print(list(Study.objects.values_list('slug', flat=True)))"
)

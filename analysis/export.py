"""Frames to files and back, losslessly, described by a Frictionless ``datapackage.json``.

Every export is a data package (https://specs.frictionlessdata.io/data-package/): one resource per
file, each with a Table Schema naming every column, its type (``string``, ``integer``, ``number``,
``boolean``), its meaning and the missing-value marker, so a collaborator can read the files with
any Frictionless tool, or none, without our code. ``README.md`` says the same for people.

CSV writes a missing value as an empty cell (declared as the ``missingValues`` of every schema), so
``pandas.read_csv`` or any spreadsheet reads numeric columns as numbers without options; an empty
text is a missing value too (a passed clue has no text). Floats keep every digit. Text cells pass the project's one CSV guard (:mod:`analysis.safe_csv`: a cell a
spreadsheet would run as a formula gets a leading apostrophe), and :func:`read_frames` takes the
apostrophe off again. Parquet files carry their own types.

Frames can be written whole (:func:`export_frames`) or chunk by chunk (:class:`FrameWriter`), which
is how ``export_study`` streams a study of any size without holding it in memory.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analysis.safe_csv import restore_cell, safe_cell
from analysis.safe_frames import safe_frame

NEEDS_QUOTES = re.compile(r'[",\r\n]')  # csv.QUOTE_MINIMAL: the delimiter, quote or line end
TEXT = pa.large_string()

FORMATS = ("csv", "parquet")
NA = ""
EOL = "\r\n"  # RFC 4180; it also makes the writer quote a field holding a lone carriage return
# pandas dtype -> Frictionless Table Schema type
FIELD_TYPES = {"Int64": "integer", "float64": "number", "boolean": "boolean", "string": "string"}


def field_type(dtype: Any) -> str:
    return FIELD_TYPES.get(str(dtype), "string")


def csv_rows(frame: pd.DataFrame) -> str:
    """The rows ``frame.to_csv(header=False, index=False, na_rep=NA, lineterminator=EOL)`` writes,
    formatted a column at a time with pyarrow rather than a cell at a time (a million turns in
    seconds). Guard the frame first (:func:`analysis.safe_frames.safe_frame`)."""
    if frame.empty:
        return ""
    cells = [_csv_cells(frame[column]) for column in frame.columns]
    rows = pc.binary_join_element_wise(*cells, pa.scalar(",", TEXT))
    lines = pc.binary_join_element_wise(rows, pa.scalar("", TEXT), pa.scalar(EOL, TEXT))
    # The lines lie one after another in the array's data buffer: no Python string per row.
    bounds = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset :][[0, len(lines)]]
    data = lines.buffers()[2].slice(int(bounds[0]), int(bounds[1] - bounds[0]))
    return data.to_pybytes().decode("utf-8")


def _csv_cells(column: pd.Series) -> pa.Array:
    """One column's CSV fields as pandas writes them, each distinct value formatted once."""
    if column.dtype == "float64":  # told apart by their bits: 0.0 and -0.0 print differently
        codes, bits = pd.factorize(column.to_numpy().view("int64"))
        values = bits.view("float64")
    elif column.dtype == object:  # 1, 1.0 and True are one key to factorize, three to print
        codes, values = np.arange(len(column)), column.to_numpy()
    else:
        codes, values = pd.factorize(column)
    fields = [_csv_field(value) for value in values]
    codes[column.isna().to_numpy()] = len(fields)
    return pa.array([*fields, NA], type=TEXT).take(pa.array(codes))


def _csv_field(value: Any) -> str:
    """A value as ``to_csv`` writes it: floats as numpy prints them, integers and booleans as
    ``str``, text quoted only where it must be (csv.QUOTE_MINIMAL)."""
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"' if NEEDS_QUOTES.search(value) else value
    return str(value)


class FrameWriter:
    """Appends chunks of one frame to ``<out>/<name>.<format>``; every chunk has the same columns
    and dtypes. Use as a context manager or call :meth:`close`."""

    def __init__(self, out: str | Path, name: str, format: str) -> None:
        if format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
        self.path = Path(out) / f"{name}.{format}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.name, self.format = name, format
        self.rows = 0
        self.dtypes: dict[str, str] | None = None
        self._handle: Any = None
        self._parquet: Any = None

    def write(self, frame: pd.DataFrame) -> None:
        if self.dtypes is None:
            self.dtypes = {c: str(t) for c, t in frame.dtypes.items()}
        if self.format == "csv":
            frame = safe_frame(frame)
            if self._handle is None:
                self._handle = self.path.open("w", encoding="utf-8", newline="")
                csv.writer(self._handle, lineterminator=EOL).writerow(frame.columns)
            self._handle.write(csv_rows(frame))
        else:
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self.path, table.schema)
            self._parquet.write_table(table.cast(self._parquet.schema))
        self.rows += len(frame)

    def close(self, empty: pd.DataFrame | None = None) -> None:
        """Finish the file; ``empty`` (a frame with the columns and no rows) is written first when
        no chunk ever came, so an empty export still has its header."""
        if self.dtypes is None and empty is not None:
            self.write(empty)
        if self._handle is not None:
            self._handle.close()
        if self._parquet is not None:
            self._parquet.close()
        self._handle = self._parquet = None  # what is left pickles (a writer from a process)

    def __enter__(self) -> FrameWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resource(writer: FrameWriter, docs: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """The data package resource of a written file: path, format and Table Schema."""
    docs = docs or {}
    fields = []
    for column, dtype in (writer.dtypes or {}).items():
        field: dict[str, Any] = {"name": column, "type": field_type(dtype), "pandas:dtype": dtype}
        if docs.get(column, ("", ""))[1]:
            field["description"] = docs[column][1]
        if field["type"] == "boolean":
            field |= {"trueValues": ["True"], "falseValues": ["False"]}
        fields.append(field)
    described: dict[str, Any] = {
        "name": writer.name.replace("_", "-"),
        "path": writer.path.name,
        "format": writer.format,
        "profile": "tabular-data-resource",
        "schema": {"fields": fields, "missingValues": [NA]},
        "rows": writer.rows,
    }
    if writer.format == "csv":
        described |= {"mediatype": "text/csv", "encoding": "utf-8"}
    return described


def write_datapackage(
    out: str | Path,
    resources: list[dict[str, Any]],
    title: str,
    name: str = "export",
    provenance: dict[str, Any] | None = None,
) -> Path:
    """``datapackage.json``; ``provenance`` (games.provenance) goes in as a custom property."""
    path = Path(out) / "datapackage.json"
    package = {
        "profile": "tabular-data-package",
        "name": "".join(c if c.isalnum() or c in "-._" else "-" for c in name.lower()),
        "title": title,
        "resources": resources,
    }
    if provenance is not None:
        package["provenance"] = provenance
    path.write_text(json.dumps(package, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def export_frames(
    frames: dict[str, pd.DataFrame],
    out: str | Path,
    format: str = "csv",
    docs: dict[str, dict[str, tuple[str, str]]] | None = None,
    title: str = "Exported frames",
) -> list[Path]:
    """Write each frame as ``<name>.csv`` or ``<name>.parquet`` plus ``datapackage.json`` and
    ``README.md``. ``docs`` maps a frame name to its column docs (``{column: (dtype, text)}``).
    ``format`` may also be ``both``: CSV and parquet side by side."""
    formats = FORMATS if format == "both" else (format,)
    if any(f not in FORMATS for f in formats):
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    docs = docs or {}
    written, resources = [], []
    for name, frame in frames.items():
        for fmt in formats:
            with FrameWriter(out, name, fmt) as writer:
                writer.write(frame)
            written.append(writer.path)
            resources.append(resource(writer, docs.get(name)))
    written.append(write_datapackage(out, resources, title))
    (out / "README.md").write_text(readme(resources, title), encoding="utf-8")
    return [*written, out / "README.md"]


def read_frames(folder: str | Path, format: str | None = None) -> dict[str, pd.DataFrame]:
    """Read back what :func:`export_frames` wrote, with the same columns, dtypes and values. With
    both formats present, ``format`` picks one (parquet by default)."""
    folder = Path(folder)
    package = json.loads((folder / "datapackage.json").read_text(encoding="utf-8"))
    present = {r["format"] for r in package["resources"]}
    chosen = format or ("parquet" if "parquet" in present else "csv")
    frames = {}
    for item in package["resources"]:
        if item["format"] != chosen:
            continue
        name = Path(item["path"]).stem
        fields = item["schema"]["fields"]
        dtypes = {f["name"]: f.get("pandas:dtype") or "string" for f in fields}
        path = folder / item["path"]
        if chosen == "parquet":
            frames[name] = pd.read_parquet(path).astype(dtypes)
            continue
        raw = pd.read_csv(path, dtype=object, na_values=[NA], keep_default_na=False, header=0)
        raw.columns = [restore_cell(c) for c in raw.columns]
        frame = pd.DataFrame(index=raw.index)
        for column, dtype in dtypes.items():
            values = raw[column]
            if dtype == "boolean":
                frame[column] = values.map({"True": True, "False": False}).astype("boolean")
            elif dtype == "Int64":
                frame[column] = pd.to_numeric(values).astype("Int64")
            elif dtype == "float64":
                frame[column] = pd.to_numeric(values).astype("float64")
            else:
                frame[column] = values.map(restore_cell, na_action="ignore").astype(dtype)
        frames[name] = frame
    return frames


def readme(resources: list[dict[str, Any]], title: str) -> str:
    """A Markdown page naming each file, its row count and every column with type and meaning."""
    parts = [
        f"# {title}\n\n",
        "`datapackage.json` describes every file and column (Frictionless Table Schema). In CSV "
        "files a missing value is an empty cell (an empty text reads as missing too), so "
        "`pandas.read_csv(path)` reads the numeric columns as numbers, and a text cell that a "
        "spreadsheet would run as a formula starts with an apostrophe.\n",
    ]
    for item in resources:
        parts.append(f"\n## {item['path']} ({item['rows']} rows)\n\n")
        parts.append("| column | dtype | meaning |\n| --- | --- | --- |\n")
        for field in item["schema"]["fields"]:
            parts.append(
                f"| {field['name']} | {field['pandas:dtype']} | {field.get('description', '')} |\n"
            )
    return "".join(parts)


__all__ = ["FORMATS", "NA", "FrameWriter", "export_frames", "read_frames", "safe_cell"]

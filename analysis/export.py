"""Frames to files and back, losslessly, with a README a collaborator can read without our code.

Next to the data go ``schema.json`` (the dtype of every column, so a CSV reads back with the same
types) and ``README.md`` (every column described). CSV writes missing values as ``\\N`` so an empty
string and a missing value stay different; floats keep every digit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

FORMATS = ("csv", "parquet")
NA = "\\N"


def export_frames(
    frames: dict[str, pd.DataFrame],
    out: str | Path,
    format: str = "csv",
    docs: dict[str, dict[str, tuple[str, str]]] | None = None,
    title: str = "Exported frames",
) -> list[Path]:
    """Write each frame as ``<name>.csv`` or ``<name>.parquet`` plus ``schema.json`` and
    ``README.md``. ``docs`` maps a frame name to its column docs (``{column: (dtype, text)}``)."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in frames.items():
        path = out / f"{name}.{format}"
        if format == "csv":
            frame.to_csv(path, index=False, na_rep=NA)
        else:
            frame.to_parquet(path, index=False)
        written.append(path)
    schema = {
        "format": format,
        "frames": {name: {c: str(t) for c, t in f.dtypes.items()} for name, f in frames.items()},
    }
    (out / "schema.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(readme(frames, format, docs or {}, title), encoding="utf-8")
    return [*written, out / "schema.json", out / "README.md"]


def read_frames(folder: str | Path) -> dict[str, pd.DataFrame]:
    """Read back what :func:`export_frames` wrote, with the same columns, dtypes and values."""
    folder = Path(folder)
    schema = json.loads((folder / "schema.json").read_text(encoding="utf-8"))
    frames = {}
    for name, dtypes in schema["frames"].items():
        path = folder / f"{name}.{schema['format']}"
        if schema["format"] == "csv":
            frame = pd.read_csv(
                path,
                dtype=dtypes,
                na_values=[NA],
                keep_default_na=False,
            )
        else:
            frame = pd.read_parquet(path).astype(dtypes)
        frames[name] = frame
    return frames


def readme(
    frames: dict[str, pd.DataFrame],
    format: str,
    docs: dict[str, dict[str, tuple[str, str]]],
    title: str,
) -> str:
    """A Markdown page naming each file, its row count and every column with dtype and meaning."""
    parts = [f"# {title}\n"]
    if format == "csv":
        parts.append(
            f"CSV files with a header row; a missing value is written `{NA}` (an empty field is an "
            "empty string). `schema.json` holds the dtype of every column.\n"
        )
    else:
        parts.append("Parquet files; `schema.json` holds the pandas dtype of every column.\n")
    for name, frame in frames.items():
        described = docs.get(name, {})
        parts.append(f"\n## {name}.{format} ({len(frame)} rows)\n\n")
        parts.append("| column | dtype | meaning |\n| --- | --- | --- |\n")
        for column, dtype in frame.dtypes.items():
            meaning = described.get(column, ("", ""))[1]
            parts.append(f"| {column} | {dtype} | {meaning} |\n")
    return "".join(parts)

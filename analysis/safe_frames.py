"""The CSV guard of :mod:`analysis.safe_csv` over whole pandas frames: :func:`safe_frame` before
``frame.to_csv``, :func:`restore_frame` after reading such a file back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from analysis.safe_csv import restore_cell, safe_cell


def map_text(column: pd.Series, cell: Callable[[Any], Any]) -> pd.Series:
    """``cell`` applied to every text value of ``column``, keeping its dtype; other columns
    (numbers, booleans, times) are returned as they are."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return column.cat.rename_categories(cell)  # both guards are one-to-one
    if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype):
        return column.map(cell, na_action="ignore").astype(dtype)
    return column


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns are guarded, for ``frame.to_csv``; numbers untouched.

    Column names are guarded too: they come from our code today, but a pivot over participants'
    text would put their words in the header. :func:`safe_cell` is called only on the cells a
    vectorised filter (:data:`RISKY`) flags, so a million cells cost a pass of pyarrow, not a
    million Python calls.
    """
    guarded = frame.copy()
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if isinstance(values.dtype, pd.CategoricalDtype):
            guarded.isetitem(position, map_text(values, safe_cell))
            continue
        if not (
            pd.api.types.is_object_dtype(values.dtype) or isinstance(values.dtype, pd.StringDtype)
        ):
            continue
        risky = _risky(values)
        if risky.any():
            changed = values.copy()
            changed[risky] = values[risky].map(safe_cell)
            guarded.isetitem(position, changed)
    guarded.columns = [safe_cell(c) for c in guarded.columns]
    return guarded


# Cells that could need the guard: apostrophes and any whitespace Python's str.strip() removes,
# then a formula start. RE2's \s is ASCII only, hence the other spaces by hand (a superset of what
# safe_cell guards; it decides for each flagged cell).
RISKY = r"^['\s\x0b\x1c-\x1f\x85\pZ]*[=+\-@\t\r]"


def _risky(column: pd.Series) -> Any:
    """Which cells of a text column :data:`RISKY` flags, as a boolean array (pyarrow, RE2)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(column.dtype, pd.StringDtype):
        column = column.map(str, na_action="ignore")
    text = pa.array(column, type=pa.large_string(), from_pandas=True)
    flagged = pc.match_substring_regex(text, RISKY).fill_null(False)
    return np.asarray(flagged.to_numpy(zero_copy_only=False), dtype=bool)


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The inverse of :func:`safe_frame`, for reading back a CSV that it wrote."""
    restored = frame.copy()
    for column in restored.columns:
        restored[column] = map_text(restored[column], restore_cell)
    restored.columns = [restore_cell(c) for c in restored.columns]
    return restored

"""Whole numbers read from a study file: TOML reads ``inf``, ``nan``, ``1e400`` (infinity once
read) and ``2.7`` as floats, and a model's integer field would turn them into an
``OverflowError`` traceback, a ``ValueError``, or silently 2. Every whole-number field of a study
file (the study's own, a condition's, a design's) is read through :func:`whole_number`, which
names the field and the reason instead."""

from __future__ import annotations

import math

LARGEST = 2**31 - 1  # PostgreSQL's integer; a small integer field passes its own maximum


class NotAWholeNumber(ValueError):
    """A value that is not a whole number in range; the message names the field and why."""


def whole_number(value: object, name: str, *, minimum: int = 0, maximum: int = LARGEST) -> int:
    """``value`` as an int, or :class:`NotAWholeNumber` naming ``name`` and the reason. A float
    with no fraction (``3.0``, ``1e3``) is that whole number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotAWholeNumber(f"{name} must be a whole number, not {value!r}")
    if isinstance(value, float):
        if math.isnan(value):
            raise NotAWholeNumber(f"{name} must be a whole number, not nan (not a number)")
        if math.isinf(value):
            raise NotAWholeNumber(
                f"{name} must be a whole number, not infinity (a number as large as 1e400 reads "
                "as infinity)"
            )
        if not value.is_integer():
            raise NotAWholeNumber(
                f"{name} must be a whole number, not {value!r} (it has a fraction)"
            )
    number = int(value)
    if number < minimum:
        raise NotAWholeNumber(f"{name} must be at least {minimum}, not {number}")
    if number > maximum:
        raise NotAWholeNumber(f"{name} must be at most {maximum}, not {number}")
    return number

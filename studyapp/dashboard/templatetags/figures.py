"""Number formatting for the analysis pages' tables."""

from __future__ import annotations

import math
from typing import Any

from django import template

register = template.Library()


@register.filter
def decimals(value: Any, places: int = 4) -> str:
    """``value`` with ``places`` decimals, or "" when it has none. Django's ``floatformat`` goes
    through Decimal and the locale machinery: on a study page of 5,000 participants (20,000
    numbers) it was most of the time to first byte.

    >>> decimals(0.123456), decimals(2, 2), decimals(None), decimals(float("nan"))
    ('0.1235', '2.00', '', '')
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(number) else f"{number:.{int(places)}f}"

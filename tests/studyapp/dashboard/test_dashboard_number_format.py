"""The analysis pages' number filter: what floatformat showed, without its cost."""

from __future__ import annotations

import math

from django.template import Context, Template
from django.template.defaultfilters import floatformat

from studyapp.dashboard.templatetags.figures import decimals


def test_it_shows_what_floatformat_showed_for_the_pages_numbers() -> None:
    for value in (0.0, 0.5, 1 / 3, 2.0, 0.12344, 12.5, 1 / math.log2(5), 3):
        assert decimals(value, 4) == floatformat(value, 4)


def test_missing_numbers_are_blank_and_the_filter_loads_in_templates() -> None:
    assert decimals(None) == decimals(float("nan")) == decimals("n/a") == ""
    rendered = Template("{% load figures %}{{ x|decimals:2 }}|{{ y|decimals:4 }}").render(
        Context({"x": 0.125001, "y": None})
    )
    assert rendered == "0.13|"

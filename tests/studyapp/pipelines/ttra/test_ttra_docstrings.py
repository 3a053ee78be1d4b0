"""The docstring examples of the light modules run and hold."""

import doctest

import pytest

from studyapp.pipelines.ttra import answers, collapse, rewards, tasks


@pytest.mark.parametrize("module", [answers, collapse, rewards, tasks])
def test_the_docstring_examples_hold(module):
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0

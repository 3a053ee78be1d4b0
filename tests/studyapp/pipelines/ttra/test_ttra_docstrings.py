"""The docstring examples of the light modules run and hold."""

import doctest

import pytest

from studyapp.pipelines.ttra import answers, collapse, rewards, tasks


@pytest.mark.parametrize("module", [answers, collapse, rewards, tasks])
def test_the_docstring_examples_hold(module):
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0


def test_the_algorithm_code_imports_no_django():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import studyapp.pipelines.ttra.__main__, studyapp.pipelines.ttra.evaluate\n"
        "import studyapp.pipelines.ttra.local\n"
        "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    )
    pytest.importorskip("trl")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""The docstring examples of the light modules run and hold."""

import doctest

import pytest

from studyapp.pipelines.ttra import answers, collapse, config, harmonize, rewards, tasks, timing


@pytest.mark.parametrize("module", [answers, collapse, rewards, tasks, timing, harmonize, config])
def test_the_docstring_examples_hold(module):
    if module is harmonize:
        pytest.importorskip("scipy")
    if module is rewards:
        pytest.importorskip("math_verify")  # correctness_reward's example compares 1/2 and 0.5
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0


@pytest.mark.ttra
@pytest.mark.parametrize("name", ["evaluate", "sampling", "train"])
def test_the_docstring_examples_of_the_torch_modules_hold(name):
    pytest.importorskip("trl")
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(f"studyapp.pipelines.ttra.{name}"))
    assert tried > 0
    assert failures == 0


def test_the_algorithm_code_imports_no_django():
    """Statically: no module of the package imports Django or another studyapp app.

    (Importing any ``studyapp.*`` module runs ``studyapp/__init__.py``, which loads the Celery app;
    that is the parent package's business, and it works without Django settings.)
    """
    import ast
    from pathlib import Path

    package = Path(answers.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert not name.startswith("django"), (path.name, name)
                if name.startswith("studyapp"):
                    assert name.startswith("studyapp.pipelines.ttra"), (path.name, name)

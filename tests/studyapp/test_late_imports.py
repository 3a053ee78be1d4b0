"""Every import of the project's own modules made inside a function in the participants,
pipelines and dashboard apps is one of the justified few (docs/architecture.md, "Imports inside a
function"): a new one is either moved to the top of its module or justified there and here. The
model providers' SDKs are the other way round: imported inside the function that first needs them
and nowhere at the top of a module, so a process that never calls a model never loads them."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("participants", "pipelines", "dashboard")
OWN = ("games", "analysis", "studyapp")
SDKS = ("openai", "anthropic", "google")

# (module, function, imported module): the reason is in docs/architecture.md.
JUSTIFIED = {
    # Celery's pattern: the tasks module imports the job's code (the allowed circles)
    ("studyapp.pipelines.jobs", "enqueue", "studyapp.pipelines.tasks"),
    ("studyapp.dashboard.analysis_job", "enqueue", "studyapp.dashboard.tasks"),
    # Django's place to connect signal receivers, once the apps are loaded
    ("studyapp.participants.apps", "ready", "studyapp.participants"),
    # torch and transformers (the ttra extra) load only when a TTRA run starts
    ("studyapp.pipelines.runners.ttra", "run", "studyapp.pipelines.ttra.evaluate"),
    ("studyapp.pipelines.ttra.__main__", "main", "studyapp.pipelines.ttra.evaluate"),
    ("studyapp.pipelines.ttra.__main__", "main", "studyapp.pipelines.ttra.train"),
    ("studyapp.pipelines.ttra.harmonize", "run_one", "studyapp.pipelines.ttra.evaluate"),
    ("studyapp.pipelines.ttra.harmonize", "main", "studyapp.pipelines.ttra.train"),
    # trl loads only for the SFT baseline
    ("studyapp.pipelines.ttra.evaluate", "run_experiment", "studyapp.pipelines.ttra.sft"),
    ("studyapp.pipelines.ttra.sft_subsets", "sample_subsets", "studyapp.pipelines.ttra.sft"),
    # matplotlib loads only when a figure is drawn
    ("studyapp.pipelines.ttra.rank_figures", "draw", "analysis.plots"),
    ("studyapp.pipelines.ttra.figure_drawing", "save", "analysis.plots"),
    ("studyapp.pipelines.ttra.harmonize", "main", "studyapp.pipelines.ttra.paper_figures"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def late_imports(source: str, module: str, is_package: bool = False) -> list[tuple[str, str, str]]:
    """``(module, function, imported)`` for each import of the project's own modules inside a
    function of ``source`` (relative imports resolved against ``module``)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join([*base, target] if target else base)
                names = [target]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [(module, function.name, n) for n in names if n.split(".")[0] in OWN]
    return found


def test_every_late_import_of_the_project_is_justified():
    found = set()
    for app in APPS:
        for path in sorted((ROOT / "studyapp" / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found |= set(
                late_imports(path.read_text(), module_name(path), path.name == "__init__.py")
            )
    assert found - JUSTIFIED == set(), "move these to the top, or justify them (see the doc)"
    assert JUSTIFIED - found == set(), "these are gone: delete them from JUSTIFIED and the doc"


def test_the_reader_finds_imports_inside_functions_only():
    source = (
        "import os\nfrom studyapp import claims\n"
        "def f():\n    from .tasks import run_job\n    import json\n"
        "async def g():\n    from games.llm import providers\n"
    )
    assert late_imports(source, "studyapp.pipelines.jobs") == [
        ("studyapp.pipelines.jobs", "f", "studyapp.pipelines.tasks"),
        ("studyapp.pipelines.jobs", "g", "games.llm"),
    ]


# (module, function, SDK): where each provider SDK is imported, late on purpose.
SDK_IMPORTS = {
    # the SDK loads on a provider's first call (SDKProvider._sdk): seconds of import (2.6 s of an
    # idle manage.py start, both SDKs) that a daphne, a worker or manage.py calling no model skip
    ("games.llm.providers.openai_provider", "_sdk", "openai"),
    ("games.llm.providers.anthropic_provider", "_sdk", "anthropic"),
}


def sdk_imports(source: str, module: str) -> tuple[set, set]:
    """Imports of a provider SDK in ``source``: ``(module, function, sdk)`` for those inside a
    function, and ``(module, sdk)`` for those run when the module loads (an ``if
    TYPE_CHECKING:`` block is only read by type checkers, and left out)."""
    tree = ast.parse(source)
    checking = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING")
        for node in ast.walk(block)
    }
    inside = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    late, top = set(), set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            late |= {(module, function.name, sdk) for sdk in _sdks(function, within=True)}
    for node in ast.walk(tree):
        if id(node) in checking or id(node) in inside:
            continue
        top |= {(module, sdk) for sdk in _sdks(node)}
    return late, top


def _sdks(node: ast.AST, within: bool = False) -> set[str]:
    """The SDKs ``node`` imports (``within``: any import inside it)."""
    nodes = ast.walk(node) if within else [node]
    found = set()
    for each in nodes:
        if isinstance(each, ast.Import):
            found |= {alias.name.split(".")[0] for alias in each.names}
        elif isinstance(each, ast.ImportFrom) and not each.level:
            found.add((each.module or "").split(".")[0])
    return found & set(SDKS)


def test_the_provider_sdks_are_imported_only_where_a_call_first_needs_them():
    late, top = set(), set()
    for package in OWN:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found = sdk_imports(path.read_text(), module_name(path))
            late |= found[0]
            top |= found[1]
    assert top == set(), "import these SDKs where a call first needs them (see SDK_IMPORTS)"
    assert late == SDK_IMPORTS


def test_the_sdk_reader_tells_a_late_import_from_a_top_one():
    source = (
        "import openai\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    import anthropic\ndef f():\n    from openai.types import chat\n"
    )
    assert sdk_imports(source, "m") == ({("m", "f", "openai")}, {("m", "openai")})


# What each of the site's processes loads before its first request or task: daphne's application
# and every URL's view, a worker's tasks, the steps executor's command, and Django's checks.
SITE_START = """
import json, sys
import django
django.setup()
import studyapp.asgi
from django.core.management import call_command, load_command_class
from django.urls import get_resolver
from studyapp.celery import app
get_resolver().url_patterns
app.loader.import_default_modules()
load_command_class("studyapp.tables", "run_steps")
call_command("check")
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in SDKS)))
"""


def test_a_site_process_that_calls_no_model_loads_no_sdk():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "PYTHONPATH": str(ROOT)}
    started = subprocess.run(
        [sys.executable, "-c", f"SDKS = {SDKS!r}\n{SITE_START}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(started.stdout.splitlines()[-1]) == []

"""Every import of the project's own modules made inside a function in the participants,
pipelines and dashboard apps is one of the justified few (docs/architecture.md, "Imports inside a
function"): a new one is either moved to the top of its module or justified there and here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("participants", "pipelines", "dashboard")
OWN = ("games", "analysis", "studyapp")

# (module, function, imported module): the reason is in docs/architecture.md.
JUSTIFIED = {
    # Celery's pattern: the tasks module imports the job's code (the allowed circles)
    ("studyapp.pipelines.jobs", "enqueue", "studyapp.pipelines.tasks"),
    ("studyapp.dashboard.analysis_job", "enqueue", "studyapp.dashboard.tasks"),
    # Django's place to connect signal receivers, once the apps are loaded
    ("studyapp.participants.apps", "ready", "studyapp.participants"),
    # the model SDKs load only for a seat an export cannot place
    ("studyapp.dashboard.records.shaping", "_who", "studyapp.tables.seat_agents"),
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

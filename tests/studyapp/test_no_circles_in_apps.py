"""No import circle inside an app, read from grimp's graph (the one ``lint-imports`` builds: imports
inside functions count), and none either when type-only imports (under ``TYPE_CHECKING``) count
too: a type-only circle is harmless at run time, but it says two modules each read the other's
insides (issue 52: the tables' options validated think times through a module that read whole
tables; think times are now validated where they live, and a table's state is read above the
log store, by ``pace`` and ``dues``).

A circle is a strongly connected set of modules of one app: each reaches every other by imports.
Three patterns are allowed, by name and exactly (a circle that is one of them plus any other
module fails):

- ``studyapp.pipelines.jobs`` and ``studyapp.pipelines.tasks``: Celery's pattern (the task calls
  the job's code; ``jobs.enqueue`` sends the task, importing it inside the function);
- ``studyapp.dashboard.analysis_job`` and ``studyapp.dashboard.tasks``: the same for the analysis;
- any set of modules inside the ``studyapp.participants.models`` package (one package of models
  that name each other).

A circle listed in ``KNOWN`` is reported as a warning, not failed, until the work that removes it
lands; when it is gone the warning says to delete its entry. See docs/architecture.md
("Dependencies")."""

from __future__ import annotations

import warnings

import grimp
import pytest

APPS = ("tables", "participants", "pipelines", "dashboard")

ALLOWED = {
    frozenset({"studyapp.pipelines.jobs", "studyapp.pipelines.tasks"}),
    frozenset({"studyapp.dashboard.analysis_job", "studyapp.dashboard.tasks"}),
}
INSIDE_ONE_PACKAGE = ("studyapp.participants.models",)

# Known circles, each to be removed by named work (none now: the tables' rendering no longer asks
# agent_turns what a waiting board shows; live_turn_seconds lives in timing.py).
KNOWN: set[frozenset[str]] = set()


def circles(graph: grimp.ImportGraph, package: str) -> list[frozenset[str]]:
    """The circles among ``package``'s modules: strongly connected sets of two or more
    (Tarjan's algorithm, written without recursion)."""
    nodes = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(nodes)
    edges = {
        m: sorted(t for t in graph.find_modules_directly_imported_by(m) if t in inside and t != m)
        for m in nodes
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, at = work.pop()
            if at == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            for position in range(at, len(edges[node])):
                target = edges[node][position]
                if target not in index:
                    work.append((node, position + 1))
                    work.append((target, 0))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    members = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.add(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(frozenset(members))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return found


def allowed(circle: frozenset[str]) -> bool:
    if circle in ALLOWED:
        return True
    return any(all(m.startswith(package + ".") for m in circle) for package in INSIDE_ONE_PACKAGE)


def unexpected(graph: grimp.ImportGraph) -> tuple[list[list[str]], set[frozenset[str]]]:
    """The circles inside the apps that are neither allowed nor known, and the known ones seen."""
    bad, seen = [], set()
    for app in APPS:
        for circle in circles(graph, f"studyapp.{app}"):
            if circle in KNOWN:
                seen.add(circle)
            elif not allowed(circle):
                bad.append(sorted(circle))
    return bad, seen


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        "studyapp",
        include_external_packages=False,
        exclude_type_checking_imports=True,  # as [tool.importlinter] reads the code
        cache_dir=None,
    )


@pytest.fixture(scope="module")
def typed_graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        "studyapp",
        include_external_packages=False,
        exclude_type_checking_imports=False,  # a type-only import counts as an import
        cache_dir=None,
    )


def test_no_circle_inside_an_app_even_counting_type_only_imports(typed_graph):
    bad, seen = unexpected(typed_graph)
    assert bad == [] and seen == set(), "type-only import circles inside an app"


def test_the_typed_graph_reads_type_only_imports(graph, typed_graph):
    """The check counts what it claims to: an import made only for types is an edge of the typed
    graph and not of the run-time one (the tables' due times read the log store's state type)."""
    run_time = graph.find_modules_directly_imported_by("studyapp.dashboard.views.tables")
    typed = typed_graph.find_modules_directly_imported_by("studyapp.dashboard.views.tables")
    assert run_time <= typed
    only_typed = [
        (importer, imported)
        for importer in typed_graph.modules
        if importer.startswith("studyapp.")
        for imported in typed_graph.find_modules_directly_imported_by(importer)
        if imported not in graph.find_modules_directly_imported_by(importer)
    ]
    assert only_typed, "no type-only import found: the typed graph reads none"


def test_no_circle_inside_an_app_beyond_the_allowed_patterns(graph):
    bad, seen = unexpected(graph)
    for circle in seen:
        warnings.warn(f"known import circle, to be removed: {sorted(circle)}", stacklevel=1)
    for circle in KNOWN - seen:
        warnings.warn(
            f"the known circle {sorted(circle)} is gone: delete it from KNOWN", stacklevel=1
        )
    assert bad == [], "import circles inside an app (break them; see docs/architecture.md)"


def test_the_patterns_are_read_from_the_code(graph):
    """The allowed pairs are real (so their names stay true), and each app is in the graph."""
    for app in APPS:
        assert f"studyapp.{app}" in graph.modules
    for pair in ALLOWED:
        app = next(iter(pair)).rsplit(".", 1)[0]
        assert pair in circles(graph, app)


def fake_graph(imports: list[tuple[str, str]]) -> grimp.ImportGraph:
    fake = grimp.ImportGraph()
    for importer, imported in imports:
        fake.add_import(importer=importer, imported=imported)
    return fake


def test_a_new_circle_fails_and_the_patterns_pass_only_exactly():
    """The check itself: a new circle is caught; an allowed pair with a third module is not
    allowed; modules inside the models package may import each other."""
    fine = fake_graph(
        [
            ("studyapp.pipelines.jobs", "studyapp.pipelines.tasks"),
            ("studyapp.pipelines.tasks", "studyapp.pipelines.jobs"),
            ("studyapp.participants.models.studies", "studyapp.participants.models.people"),
            ("studyapp.participants.models.people", "studyapp.participants.models.studies"),
        ]
    )
    assert unexpected(fine) == ([], set())
    new = fake_graph(
        [
            ("studyapp.participants.groups", "studyapp.participants.rounds"),
            ("studyapp.participants.rounds", "studyapp.participants.study_tables"),
            ("studyapp.participants.study_tables", "studyapp.participants.groups"),
            ("studyapp.participants.steps", "studyapp.participants.groups"),
        ]
    )
    assert unexpected(new)[0] == [
        [
            "studyapp.participants.groups",
            "studyapp.participants.rounds",
            "studyapp.participants.study_tables",
        ]
    ]
    widened = fake_graph(
        [
            ("studyapp.pipelines.jobs", "studyapp.pipelines.tasks"),
            ("studyapp.pipelines.tasks", "studyapp.pipelines.views"),
            ("studyapp.pipelines.views", "studyapp.pipelines.jobs"),
        ]
    )
    assert len(unexpected(widened)[0]) == 1
    escaped = fake_graph(
        [
            ("studyapp.participants.models.studies", "studyapp.participants.design"),
            ("studyapp.participants.design", "studyapp.participants.models.studies"),
        ]
    )
    assert len(unexpected(escaped)[0]) == 1

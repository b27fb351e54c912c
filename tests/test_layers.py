"""Imports flow one way (house style section 2): the domain never imports the edges, only registry/store.py
talks to libgit2, the pages never reach into the registry, no module imports another that imports it back,
and no import runs up the floors of the house (`FLOORS`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT

REGISTRY = PROJECT_ROOT / "registry"
EDGES = {"api", "strawberry", "starlette", "uvicorn"}
GIT_BINDING_HOME = REGISTRY / "git_binding.py"


def _imported_modules(path: Path) -> set[str]:
    """Top-level names of every module a file imports, at any depth of the file (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value.split(".")[0])
    return found


REGISTRY_FILES = sorted(REGISTRY.rglob("*.py"))


def test_the_walk_sees_the_registry() -> None:
    names = {p.relative_to(REGISTRY).as_posix() for p in REGISTRY_FILES}
    assert {"store.py", "canonical.py", "kinds/__init__.py", "importers/kernelindex_export.py"} <= names


@pytest.mark.parametrize("path", REGISTRY_FILES, ids=lambda p: p.relative_to(REGISTRY).as_posix())
def test_registry_never_imports_the_edges(path: Path) -> None:
    assert not _imported_modules(path) & EDGES


@pytest.mark.parametrize("path", REGISTRY_FILES, ids=lambda p: p.relative_to(REGISTRY).as_posix())
def test_only_the_git_binding_imports_pygit2(path: Path) -> None:
    if path != GIT_BINDING_HOME:
        assert "pygit2" not in _imported_modules(path)


def test_the_checker_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import api.cli\n"
        "from starlette.routing import Route\n"
        "def late():\n"
        "    import strawberry\n"
        "    importlib.import_module('uvicorn.main')\n"
        "from . import sibling\n"
    )
    assert _imported_modules(sample) == {"api", "starlette", "strawberry", "uvicorn"}


WEB_FILES = sorted((PROJECT_ROOT / "web").rglob("*.py"))


@pytest.mark.parametrize("path", WEB_FILES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_the_pages_never_import_the_registry(path: Path) -> None:
    """The HTML layer is a frontend of the schema, never of registry/ internals (nor of git)."""
    assert not _imported_modules(path) & {"registry", "pygit2"}


def test_the_walk_sees_the_pages() -> None:
    assert {p.name for p in WEB_FILES} >= {"render.py", "run_pages.py", "catalog_pages.py", "documents.py"}


# The floors of the house, and the arrows between modules ---------------------------------------------

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the registry", (r"registry(\..+)?",)),
    (
        "the API's parts",
        (
            r"api",
            r"api\.(settings|codes|errors|negotiation|compression|cache|urls|previews|context|cost|pipeline|execution|compiled)",
            r"api\.(freshness|follow|graphql_http|graphiql|feeds|wellknown|dossier|mcp_documents|handover|hostile|coalesce|memory)",
            r"api\.(read_documents|json_text)",
        ),
    ),
    ("the GraphQL types", (r"api\.types(\..+)?", r"api\.leaderboard")),
    ("the schema", (r"api\.schema",)),
    ("the query service and the server", (r"api\.direct", r"api\.service", r"api\.server")),
    ("the HTTP and MCP edges", (r"api\.http(\..+)?", r"api\.mcp_server", r"api\.mcp_lazy")),
    ("the pages", (r"web(\..+)?",)),
    ("the application, which composes", (r"api\.app", r"api\.routes", r"api\.process")),
    ("the command line", (r"api\.cli(\..+)?",)),
)
"""Every module of api/, web/ and registry/ on one floor, the ground first: a module imports its own floor
and the floors below, never one above (`api.app` composes the pages and the HTTP edges; the pages use the
query service, never the application). A new module is placed here, or this test fails."""

TREES = ("api", "web", "registry")


def _modules() -> dict[str, Path]:
    found = {}
    for tree in TREES:
        for path in sorted((PROJECT_ROOT / tree).rglob("*.py")):
            parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterable[ast.AST]:
    """Every node of a module except those under `if TYPE_CHECKING:` (what the type checker alone reads:
    `strawberry.lazy` types name their modules there, and nothing is imported when the program runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _project_module(name: str) -> str | None:
    """The module of the project a dotted name is, or is in (`api.types.Run` -> `api.types`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """The project's modules `module` imports when it runs, at any depth (functions too), by any form."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        for name in names:
            target = _project_module(name)
            if target is not None and target != module:
                found.add(target)
    return found


def _floor(module: str) -> int | None:
    for number, (_, patterns) in enumerate(FLOORS):
        if any(re.fullmatch(pattern, module) for pattern in patterns):
            return number
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_scan_sees_the_edges() -> None:
    assert {"api.app", "api.routes", "api.service", "api.http.graphql", "web.render", "registry.store"} <= set(MODULES)
    assert {"api.routes", "api.server"} <= GRAPH["api.app"]
    assert "api.service" in GRAPH["web.render"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_floor(module: str) -> None:
    assert _floor(module) is not None, f"{module}: place it on a floor of FLOORS"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_up_the_floors(module: str) -> None:
    floor = _floor(module)
    assert floor is not None
    upward = sorted(
        f"{target} ({FLOORS[_floor(target) or 0][0]})" for target in GRAPH[module] if (_floor(target) or 0) > floor
    )
    assert not upward, f"{module} ({FLOORS[floor][0]}) imports from above: {', '.join(upward)}"


def test_no_modules_import_each_other() -> None:
    """No cycle of imports, of any length, among the modules of api/, web/ and registry/."""
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_scan_ignores_what_only_the_type_checker_reads(tmp_path: Path) -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from api.types.runs import Run\n"
        "else:\n"
        "    import api.context\n"
        "def f():\n"
        "    import api.cache\n"
    )
    names = {
        alias.name if isinstance(node, ast.Import) else str(node.module)
        for node in _runtime_nodes(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert names == {"typing", "api.context", "api.cache"}

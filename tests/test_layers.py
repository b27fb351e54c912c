"""Imports flow one way: the domain never imports the edges, only registry/git_binding.py loads libgit2, the pages
never reach into the registry, no module or floor imports another that imports it back, no import runs up the
floors of the house (`kernelindex.FLOORS`, one folder each), and everything imports the project by one name,
`kernelindex`."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT

from kernelindex import FLOORS

REGISTRY = PROJECT_ROOT / "registry"
EDGES = {"strawberry", "starlette", "uvicorn"}
"""What the domain never imports, besides every floor of the package above it."""
GIT_BINDING_HOME = REGISTRY / "git_binding.py"


def _imported_modules(path: Path) -> set[str]:
    """Top-level names of every module a file imports, at any depth of the file (functions too)."""
    return {name.split(".")[0] for name in _imported_names(path)}


def _imported_names(path: Path) -> set[str]:
    """The dotted names of every module a file imports absolutely, at any depth of the file (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


REGISTRY_FILES = sorted(REGISTRY.rglob("*.py"))


def test_the_walk_sees_the_registry() -> None:
    names = {p.relative_to(REGISTRY).as_posix() for p in REGISTRY_FILES}
    assert {"store.py", "canonical.py", "kinds/__init__.py", "importers/kernelindex_export.py"} <= names


@pytest.mark.parametrize("path", REGISTRY_FILES, ids=lambda p: p.relative_to(REGISTRY).as_posix())
def test_registry_never_imports_the_edges(path: Path) -> None:
    assert not _imported_modules(path) & EDGES
    edges = {name for name in _imported_names(path) if name.startswith("kernelindex.")}
    assert {name for name in edges if not name.startswith("kernelindex.registry")} == set()


@pytest.mark.parametrize("path", REGISTRY_FILES, ids=lambda p: p.relative_to(REGISTRY).as_posix())
def test_only_the_git_binding_imports_pygit2(path: Path) -> None:
    if path != GIT_BINDING_HOME:
        assert "pygit2" not in _imported_modules(path)


def test_the_checker_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import kernelindex.cli\n"
        "from starlette.routing import Route\n"
        "def late():\n"
        "    import strawberry\n"
        "    importlib.import_module('uvicorn.main')\n"
        "from . import sibling\n"
    )
    assert _imported_modules(sample) == {"kernelindex", "starlette", "strawberry", "uvicorn"}


OLD_NAMES = {"api", "web", "registry", "bench"}
"""Top-level names the project's code once had: an import of one would find another project's package."""
PROJECT_PYTHON = sorted(
    path
    for tree in ("registry", "api", "web", "kernelindex", "tests", "bench")
    for path in (PROJECT_ROOT / tree).rglob("*.py")
    if "node_modules" not in path.parts
)


@pytest.mark.parametrize("path", PROJECT_PYTHON, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_the_project_is_imported_by_one_name(path: Path) -> None:
    """Code imports the project as `kernelindex.*`, never by a folder's name (`bench` is the repository's own tool,
    imported by its own modules and tests only)."""
    names = _imported_modules(path) & OLD_NAMES
    if path.parts[len(PROJECT_ROOT.parts)] in ("bench", "tests"):
        names -= {"bench"}
    assert not names


WEB_FILES = sorted((PROJECT_ROOT / "web").rglob("*.py"))


@pytest.mark.parametrize("path", WEB_FILES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_the_pages_never_import_the_registry(path: Path) -> None:
    """The HTML layer is a frontend of the schema, never of registry/ internals (nor of git)."""
    assert not _imported_modules(path) & {"registry", "pygit2"}


def test_the_walk_sees_the_pages() -> None:
    assert {p.name for p in WEB_FILES} >= {"render.py", "run_pages.py", "catalog_pages.py", "documents.py"}


# The floors of the house, and the arrows between modules ---------------------------------------------

PACKAGE = PROJECT_ROOT / "kernelindex"
"""The one import package: a module's floor is the subpackage (the folder) it lives in."""


def _modules() -> dict[str, Path]:
    """Every module of the package, by its dotted name, read from the folder tree (the subpackages are
    symbolic links to the repository's folders, which the walk follows as the package finder does)."""
    found = {}
    for folder, _, files in os.walk(PACKAGE, followlinks=True):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = Path(folder, name)
            parts = ["kernelindex", *path.relative_to(PACKAGE).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()
SUBPACKAGES = sorted(entry.name for entry in PACKAGE.iterdir() if entry.is_dir() and (entry / "__init__.py").is_file())


def test_every_folder_is_a_floor() -> None:
    """The floors' order (`kernelindex.FLOORS`) names every subpackage once: a new folder is placed there."""
    assert sorted(FLOORS) == SUBPACKAGES
    assert len(set(FLOORS)) == len(FLOORS)


def test_each_floor_is_a_link_to_a_folder_of_the_repository() -> None:
    """The repository keeps its folders (registry/, api/, web/); the package names them by relative links, so a
    clone moved elsewhere still imports, and nothing under kernelindex/ but its root is a copy."""
    for name in FLOORS:
        link = PACKAGE / name
        assert link.is_symlink(), name
        target = Path(os.readlink(link))
        assert not target.is_absolute(), f"{name} -> {target}"
        assert link.resolve().parent in {PROJECT_ROOT, PROJECT_ROOT / "api"}, f"{name} -> {link.resolve()}"
    assert not (PROJECT_ROOT / "api" / "__init__.py").exists(), "api/ holds floors; it is no package of its own"


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
    """The module of the project a dotted name is, or is in (`kernelindex.schema.types.Run` -> `kernelindex.schema.types`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, *, typed: bool = False) -> set[str]:
    """The project's modules `module` imports when it runs, at any depth (functions too), by any form; `typed`:
    also those only the type checker reads (under `if TYPE_CHECKING:`)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree) if typed else _runtime_nodes(tree):
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


def _floor(module: str) -> int:
    """The floor of a module: its subpackage's place in `FLOORS`; the package's root sits below them all and its
    `__main__` (`python -m kernelindex`, the command) above them all."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    if parts[1] == "__main__":
        return len(FLOORS)
    return FLOORS.index(parts[1])


def _floor_name(number: int) -> str:
    return "the package's root" if number < 0 else "__main__" if number == len(FLOORS) else FLOORS[number]


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
    assert {
        "kernelindex.app",
        "kernelindex.app.routes",
        "kernelindex.service.queries",
        "kernelindex.http.graphql",
        "kernelindex.web.render",
        "kernelindex.registry.store",
    } <= set(MODULES)
    assert {"kernelindex.app.routes", "kernelindex.service.server"} <= GRAPH["kernelindex.app"]
    assert "kernelindex.service.queries" in GRAPH["kernelindex.web.render"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_up_the_floors(module: str) -> None:
    floor = _floor(module)
    upward = sorted(f"{target} ({_floor_name(_floor(target))})" for target in GRAPH[module] if _floor(target) > floor)
    assert not upward, f"{module} ({_floor_name(floor)}) imports from above: {', '.join(upward)}"


def test_no_modules_import_each_other() -> None:
    """No cycle of imports, of any length, among the package's modules."""
    assert _cycles(GRAPH) == []


def test_no_registry_modules_import_each_other_even_for_the_type_checker() -> None:
    """The domain's modules form no cycle even counting `if TYPE_CHECKING:` imports: a cycle the type checker alone
    reads still ties two modules into one concept (the graph and its run indexes did, over `RunFacts`)."""
    registry = {module: _imports(module, typed=True) for module in MODULES if module.startswith("kernelindex.registry")}
    assert _cycles({module: targets & registry.keys() for module, targets in registry.items()}) == []


def test_the_typed_scan_sees_what_only_the_type_checker_reads() -> None:
    assert "kernelindex.schema.types.cohorts" in _imports("kernelindex.schema.types.runs", typed=True)
    assert "kernelindex.schema.types.cohorts" not in _imports("kernelindex.schema.types.runs")


def _package_graph() -> dict[str, set[str]]:
    """Which floor's modules import which other floor's: the arrows between the package's subpackages."""
    found: dict[str, set[str]] = {name: set() for name in FLOORS}
    for module, targets in GRAPH.items():
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in found:
            continue
        found[parts[1]].update(
            target.split(".")[1]
            for target in targets
            if len(target.split(".")) > 1 and target.split(".")[1] != parts[1]
        )
    return found


def test_no_package_imports_another_that_imports_it_back() -> None:
    graph = _package_graph()
    assert _cycles(graph) == []
    # The composition root sits above both the HTTP edges and the pages, and the pages use the HTTP edges.
    assert {"http", "web"} <= graph["app"]
    assert "http" in graph["web"]
    assert "app" not in graph["web"] | graph["http"]


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_scan_ignores_what_only_the_type_checker_reads(tmp_path: Path) -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from kernelindex.schema.types.runs import Run\n"
        "else:\n"
        "    import kernelindex.core.context\n"
        "def f():\n"
        "    import kernelindex.core.cache\n"
    )
    names = {
        alias.name if isinstance(node, ast.Import) else str(node.module)
        for node in _runtime_nodes(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert names == {"typing", "kernelindex.core.context", "kernelindex.core.cache"}


# The edges read the domain through `kernelindex.registry.read`, never the graph's indexes ------------------------

GRAPH_INDEXES = {
    "runs_by",
    "cohorts_by",
    "children",
    "overlays",
    "names",
    "published_in",
    "by_folder",
    "record_order",
}
"""The graph's indexes and the orders its builders keep: what `kernelindex.registry.read` answers from, and no edge
reads."""
SHARED_NAMES = {"unpublished"}
"""Indexes whose name other objects share (`Context.unpublished`): forbidden on a receiver named as a graph."""
GRAPH_VALUES = {"commit", "committed_at", "mainline", "position", "honoured_commits", "nodes", "facts", "cohorts"}
"""What a graph is, rather than how it is looked up: the edges may read these."""
EDGE_FILES = sorted(p for floor in ("api", "web") for p in (PROJECT_ROOT / floor).rglob("*.py"))


def _index_reads(tree: ast.AST) -> list[str]:
    """Each place a tree reads a graph index: `g.runs_by`, `getattr(g, "runs_by")`, `head.unpublished`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute | ast.Call):
            continue
        name: str | None = None
        receiver: ast.expr | None = None
        if isinstance(node, ast.Attribute):
            name, receiver = node.attr, node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _GETTERS:
            position = _GETTERS[node.func.id]
            argument = node.args[position] if len(node.args) > position else None
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                name, receiver = argument.value, node.args[0] if position else None
        if name in GRAPH_INDEXES or (
            name in SHARED_NAMES and receiver is not None and ast.unparse(receiver).endswith(("graph", "head"))
        ):
            found.append((node.lineno, ast.unparse(node)))
    return [f"line {line}: {text}" for line, text in sorted(found)]


_GETTERS = {"getattr": 1, "attrgetter": 0}  # where the attribute's name is among the arguments


def test_the_graphs_indexes_are_all_named() -> None:
    """Every field of a graph is either what it is or one of its indexes: a new index is placed here, and the read
    API answers from it."""
    from dataclasses import fields

    from kernelindex.registry.graph import Graph

    assert {f.name for f in fields(Graph)} == GRAPH_VALUES | (GRAPH_INDEXES - {"names"}) | SHARED_NAMES | {"names"}


def test_the_walk_sees_the_edges() -> None:
    names = {p.relative_to(PROJECT_ROOT).as_posix() for p in EDGE_FILES}
    assert {"api/schema/root.py", "api/service/feeds.py", "api/http/permalinks.py", "web/render.py"} <= names
    assert not any(name.startswith("registry/") for name in names)


@pytest.mark.parametrize("path", EDGE_FILES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_no_edge_reads_the_graphs_indexes(path: Path) -> None:
    found = _index_reads(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    assert not found, f"{path.name} reads the graph's indexes (ask kernelindex.registry.read): {found}"


def test_the_index_check_sees_every_form() -> None:
    tree = ast.parse(
        "graph.runs_by['operation']\n"
        "self._graph.cohorts_by\n"
        "getattr(graph, 'overlays')\n"
        "attrgetter('published_in')\n"
        "head.unpublished\n"
        "context.unpublished\n"  # a Context's flag, not the graph's set
        "graph.nodes[d]\n"
        "read.runs_with(graph, read.RunIndex.OPERATION, d)\n"
    )
    assert [line.split(":")[0] for line in _index_reads(tree)] == ["line 1", "line 2", "line 3", "line 4", "line 5"]

"""Imports flow one way (house style section 2): the domain never imports the edges, and only
registry/store.py talks to libgit2."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT

REGISTRY = PROJECT_ROOT / "registry"
EDGES = {"api", "strawberry", "starlette", "uvicorn"}
GIT_BINDING_HOME = REGISTRY / "store.py"


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
def test_only_the_store_imports_pygit2(path: Path) -> None:
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
    """Issue 10: the HTML layer is a frontend of the schema, never of registry/ internals (nor of git)."""
    assert not _imported_modules(path) & {"registry", "pygit2"}


def test_the_walk_sees_the_pages() -> None:
    assert {p.name for p in WEB_FILES} >= {"render.py", "run_pages.py", "catalog_pages.py", "documents.py"}

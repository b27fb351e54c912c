"""The dependency window cannot drift silently: constraints/lowest.txt pins every runtime dependency of
pyproject.toml at exactly its declared lower bound (so the fast tier CI runs there proves the lower bounds), each
dependency whose internals the code leans on has an upper bound, the newest release tested, and every
third-party module the package imports is a declared dependency (graphql-core and MarkupSafe were imported,
internals included, without being declared)."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT
from packaging.requirements import Requirement
from packaging.specifiers import Specifier
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from kernelindex import FLOORS

PYPROJECT = PROJECT_ROOT / "pyproject.toml"
LOWEST = PROJECT_ROOT / "constraints" / "lowest.txt"
CI = PROJECT_ROOT / ".ci" / "run"
TESTING = PROJECT_ROOT / "docs" / "testing.md"
LOWEST_COMMAND = (
    "pip install -c constraints/lowest.txt -e '.[test]' && mypy && pytest -q -m \"not slow\" -n 2"
    " --deselect tests/test_docs_site.py::test_the_site_builds_strictly"
)
"""How CI tests the lowest end, in the second environment it makes: the page on testing shows the same line."""

WINDOW = frozenset(
    canonicalize_name(name)
    for name in (
        "strawberry-graphql",  # the executors: resolver closures by name, schema._schema, the execution context
        "graphql-core",  # collect_fields, FieldDetailsList, CollectedErrors, ExecutionContext's methods
        "starlette",  # CORSMiddleware.send of a second instance (api/http/fastlane.py)
        "uvicorn",  # HttpToolsProtocol subclassed (api/serving/wire.py), Server and Config overridden
        "mcp",  # the server's private _lowlevel_server (api/http/mcp_server.py)
        "jinja2",  # compiled templates' `escape` global replaced, Environment.getattr (web/environment.py)
        "markupsafe",  # markupsafe._speedups._escape_inner (web/environment.py)
        "ruamel.yaml",  # VersionedResolver subclassed, composer nodes read (registry/parse.py)
        "orjson",  # how it prints floats, which canonical JSON repairs (registry/canonical.py)
        "zstandard",  # the bytes of the exports, whose digests the API publishes
    )
)
"""The runtime dependencies whose internals (or undocumented output) the code leans on; pyproject.toml says how."""

UNDECLARED = {"pydantic_core": "pydantic"}
"""Modules imported without their distribution declared, each with the dependency that pins it to one release."""


def _dependencies() -> dict[NormalizedName, Requirement]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(line) for line in project["dependencies"]]
    found = {canonicalize_name(r.name): r for r in requirements}
    assert len(found) == len(requirements), "a dependency is declared twice"
    return found


def _pins() -> dict[NormalizedName, Requirement]:
    lines = [line.strip() for line in LOWEST.read_text(encoding="utf-8").splitlines()]
    requirements = [Requirement(line) for line in lines if line and not line.startswith("#")]
    found = {canonicalize_name(r.name): r for r in requirements}
    assert len(found) == len(requirements), "a dependency is pinned twice"
    return found


def _only(requirement: Requirement, operator: str) -> Specifier | None:
    """The one specifier of `requirement` with `operator`, or None when it has none."""
    found = [s for s in requirement.specifier if s.operator == operator]
    assert len(found) <= 1, f"{requirement}: more than one {operator}"
    return found[0] if found else None


def _lower(requirement: Requirement) -> Version:
    bound = _only(requirement, ">=")
    assert bound is not None, f"{requirement} has no lower bound (>=)"
    return Version(bound.version)


DEPENDENCIES = _dependencies()
PINS = _pins()


def test_the_lowest_constraints_name_exactly_the_runtime_dependencies() -> None:
    assert sorted(PINS) == sorted(DEPENDENCIES)


@pytest.mark.parametrize("name", sorted(DEPENDENCIES))
def test_each_runtime_dependency_is_pinned_at_exactly_its_lower_bound(name: NormalizedName) -> None:
    pin = PINS[name]
    (specifier,) = pin.specifier  # one specifier: `==version`, nothing else
    assert specifier.operator == "==" and "*" not in specifier.version, pin
    assert pin.marker is None and not pin.extras, pin
    assert Version(specifier.version) == _lower(DEPENDENCIES[name])


def test_ci_installs_the_lowest_constraints_and_runs_the_fast_tier_as_the_docs_say() -> None:
    assert LOWEST_COMMAND in [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    assert LOWEST_COMMAND in TESTING.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("name", sorted(WINDOW))
def test_each_dependency_whose_internals_we_touch_has_an_upper_bound_within_the_window(name: NormalizedName) -> None:
    requirement = DEPENDENCIES[name]
    upper = _only(requirement, "<=")
    assert upper is not None, f"{requirement}: no upper bound (<=, the newest release tested)"
    assert Version(upper.version) >= _lower(requirement)
    assert _only(requirement, "<") is None, f"{requirement}: the window's upper bound is `<=` the newest tested"


def test_only_the_window_has_upper_bounds_at_a_release() -> None:
    """A `<=` outside the list above is a dependency whose reason this test does not know yet (or a stale list)."""
    bounded = {name for name, requirement in DEPENDENCIES.items() if _only(requirement, "<=") is not None}
    assert bounded == WINDOW


def _package_files() -> list[Path]:
    package = PROJECT_ROOT / "kernelindex"
    files = sorted(package.glob("*.py"))
    for floor in FLOORS:
        files += sorted((package / floor).resolve().rglob("*.py"))
    return files


def _imported_modules() -> dict[str, set[str]]:
    """The dotted names of every module the package imports absolutely (functions too), by the file's path."""
    found: dict[str, set[str]] = {}
    for path in _package_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                found.setdefault(name, set()).add(path.relative_to(PROJECT_ROOT).as_posix())
    return found


IMPORTED = _imported_modules()
THIRD_PARTY = sorted(
    {name.split(".")[0] for name in IMPORTED} - set(sys.stdlib_module_names) - {"kernelindex", "__future__"}
)


def test_the_walk_sees_the_package() -> None:
    assert {"strawberry", "graphql", "starlette", "uvicorn", "markupsafe", "PIL", "ruamel"} <= set(THIRD_PARTY)
    assert "graphql.execution.collect_fields" in IMPORTED


def _distributions(module: str) -> set[NormalizedName]:
    return {canonicalize_name(d) for d in packages_distributions().get(module, [])}


@pytest.mark.parametrize("module", THIRD_PARTY)
def test_every_module_the_package_imports_comes_from_a_declared_dependency(module: str) -> None:
    distributions = _distributions(module)
    assert distributions, f"{module} is imported but no installed distribution provides it"
    if module in UNDECLARED:
        assert canonicalize_name(UNDECLARED[module]) in DEPENDENCIES
        assert not distributions & set(DEPENDENCIES), f"{module} is declared now: drop it from UNDECLARED"
    else:
        assert distributions & set(DEPENDENCIES), f"{module} ({sorted(distributions)}) is imported, not declared"


def test_a_private_module_imported_is_from_the_window() -> None:
    """An import of a private module (a dotted part starting with `_`) leans on internals: its distribution
    must be bounded above."""
    private = sorted(
        name
        for name in IMPORTED
        if name.split(".")[0] not in ("kernelindex", "__future__")
        and any(part.startswith("_") for part in name.split("."))
    )
    assert private, "the walk found no private import (markupsafe._speedups is one)"
    for name in private:
        assert _distributions(name.split(".")[0]) & WINDOW, f"{name} ({sorted(IMPORTED[name])}) is outside the window"

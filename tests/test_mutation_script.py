"""scripts/mutation stays true to the code it mutates: every module, function, test file, hand mutant
and equivalent mutant it names exists, so the runner cannot rot into checking nothing."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import PROJECT_ROOT

SCRIPTS = PROJECT_ROOT / "scripts"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("mutation_script", str(SCRIPTS / "mutation"))
    spec = importlib.util.spec_from_loader("mutation_script", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_script"] = module  # dataclasses look their module up while it loads
    loader.exec_module(module)
    return module


MUTATION = _script()


def _mangled_functions(path: Path) -> set[str]:
    """mutmut's names for the functions of a module: `x_name` and `xǁClassǁmethod`."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"xǁ{node.name}ǁ{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return names


@pytest.mark.parametrize("name", list(MUTATION.MODULES))
def test_each_module_names_real_files_functions_and_tests(name: str) -> None:
    target = MUTATION.MODULES[name]
    functions: set[str] = set()
    for path in target.files:
        assert (PROJECT_ROOT / path).is_file(), path
        functions |= _mangled_functions(PROJECT_ROOT / path)
    wanted = [f for f in target.functions if f != "*"]
    assert set(wanted) <= functions, set(wanted) - functions
    for test in [*target.tests, *target.deselect]:
        assert (PROJECT_ROOT / test.split("::")[0]).is_file(), test
    for node in target.deselect:
        function = node.split("::")[1]
        assert f"def {function}(" in (PROJECT_ROOT / node.split("::")[0]).read_text(), node


def test_the_issue_modules_are_all_covered() -> None:
    """The modules that carry the guarantees: identity, ranking and cohorts, signatures and the PR check, the store's write path,
    pagination in the API."""
    files = {path for target in MUTATION.MODULES.values() for path in target.files}
    assert files >= {
        "registry/canonical.py",
        "registry/normalize.py",
        "registry/cohorts.py",
        "registry/signatures.py",
        "registry/trust.py",
        "registry/review.py",
        "registry/store.py",
        "api/schema/types/pages.py",
    }


def _toml(name: str) -> dict[str, Any]:
    return tomllib.loads((SCRIPTS / name).read_text())


def test_each_hand_mutant_applies_to_exactly_one_place() -> None:
    mutants = _toml("mutation-hand.toml")["mutant"]
    assert len({m["name"] for m in mutants}) == len(mutants)
    for mutant in mutants:
        text = (PROJECT_ROOT / mutant["file"]).read_text()
        assert text.count(mutant["find"]) == 1, mutant["name"]
        assert mutant["find"] != mutant["replace"]
        assert all((PROJECT_ROOT / test).is_file() for test in mutant["tests"]), mutant["name"]


def test_each_equivalent_mutant_still_describes_the_code() -> None:
    """An entry names a function that exists and lines that are still in its module; a stale entry
    (the code changed) fails here rather than excusing a different mutant."""
    entries = _toml("mutation-equivalent.toml")["equivalent"]
    for entry in entries:
        target = MUTATION.MODULES[entry["module"]]
        module, _, mangled = entry["function"].rpartition(".")
        path = PROJECT_ROOT / (module.replace(".", "/") + ".py")
        assert str(path.relative_to(PROJECT_ROOT)) in target.files, entry
        assert mangled in _mangled_functions(path), entry
        source = {line.strip() for line in path.read_text().splitlines()}
        removed = [line[1:] for line in entry["change"] if line.startswith("-")]
        assert all(line in source for line in removed), entry
        assert all(line[:1] in "+-" for line in entry["change"]) and entry["change"], entry
        assert len(entry["reason"]) > 20, entry


def test_a_survivor_is_matched_by_its_lines_not_its_number() -> None:
    diff = "--- registry/x.py\n+++ registry/x.py\n@@ -1,3 +1,3 @@\n def f():\n-    return a < b\n+    return a <= b\n"
    assert MUTATION.changed_lines(diff) == ["-return a < b", "+return a <= b"]
    entry = {
        "function": "kernelindex.registry.x.x_f",
        "change": ["-return a < b", "+return a <= b"],
        "reason": "because",
    }
    assert MUTATION.equivalent_reason("kernelindex.registry.x.x_f__mutmut_7", diff, [entry]) == "because"
    assert MUTATION.equivalent_reason("kernelindex.registry.x.x_g__mutmut_7", diff, [entry]) is None
    other = diff.replace("<= b", ">= b")
    assert MUTATION.equivalent_reason("kernelindex.registry.x.x_f__mutmut_8", other, [entry]) is None

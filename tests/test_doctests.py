"""The examples in the package's docstrings run as tests, in every floor (`python -m doctest` would not find
the package's modules under their installed names; pytest's `--doctest-modules` imports them by file path, as
a second copy under another name).

Each module is imported by its dotted name, as an installed package is, and its examples run as doctest runs
them; a module without examples has no case here.
"""

from __future__ import annotations

import doctest
import importlib
import os
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "kernelindex"
SCRIPTS = {"kernelindex.__main__", "kernelindex.cli.__main__"}
"""Modules that run the command when imported."""


def _module_names() -> list[str]:
    names: list[str] = []
    for folder, _, files in os.walk(PACKAGE, followlinks=True):
        for name in files:
            if name.endswith(".py"):
                parts = ["kernelindex", *Path(folder, name).relative_to(PACKAGE).with_suffix("").parts]
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(set(names) - SCRIPTS)


def _examples() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    finder = doctest.DocTestFinder(exclude_empty=True)
    for name in _module_names():
        module = importlib.import_module(name)
        found.extend((name, test.name) for test in finder.find(module, name) if test.examples)
    return found


EXAMPLES = _examples()


def test_the_walk_finds_examples_in_every_tree() -> None:
    modules = {module for module, _ in EXAMPLES}
    assert {"kernelindex.registry.kernel_query", "kernelindex.core.urls"} <= modules
    assert any(module.startswith("kernelindex.web.") for module in modules)


@pytest.mark.parametrize(("module", "name"), EXAMPLES, ids=[name for _, name in EXAMPLES])
def test_docstring_examples(module: str, name: str) -> None:
    finder = doctest.DocTestFinder(exclude_empty=True)
    (test,) = [found for found in finder.find(importlib.import_module(module), module) if found.name == name]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    result = runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))
    assert result.failed == 0

"""The command line as a package (api/cli): `main` only dispatches, each family of commands is a module, and
every `kernelindex import <source>` takes the same import options, in the same order, as one value."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import typer.main
from helpers import PROJECT_ROOT

from kernelindex.cli import app
from kernelindex.cli.importing import ImportOptions

CLI = PROJECT_ROOT / "api" / "cli"
SHARED = [field.name for field in dataclasses.fields(ImportOptions)]


def _command(*path: str) -> Any:
    """The click command typer makes of `kernelindex <path>`."""
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


IMPORTS = sorted(_command("import").commands)


def test_the_command_line_is_every_command() -> None:
    assert list(_command().commands) == [
        "init", "workflows", "schema", "new", "digest", "validate", "add", "show", "log", "search", "runs", "records",
        "compare", "changes", "gpus", "models", "serve", "export", "mcp", "cite", "verify", "version", "import", "lookup",
        "serving", "resolve",
    ]  # fmt: skip
    assert sorted(_command("lookup").commands) == ["cohort", "operation"]
    assert sorted(_command("serving").commands) == ["cohorts", "resolve", "runs"]
    assert sorted(_command("resolve").commands) == ["kernel"]
    assert (
        sorted(
            [
                "kernelindex-export",
                "kernelindex-seeds",
                "liger",
                "sol-execbench",
                "gpumode",
                "flashinfer-bench",
                "mlperf",
            ]
        )
        == IMPORTS
    )


@pytest.mark.parametrize("name", sorted(set(IMPORTS) - {"kernelindex-export", "kernelindex-seeds"}))
def test_every_source_ends_with_the_import_options(name: str) -> None:
    params = [param.name for param in _command("import", name).params]
    assert params[-len(SHARED) :] == SHARED
    assert not set(params[: -len(SHARED)]) & set(SHARED)


MODULES = sorted(CLI.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_module_reaches_into_anothers_private_names(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reached = [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("api")
        for alias in node.names
        if alias.name.startswith("_")
    ]
    assert not reached


def test_main_only_parses_and_dispatches() -> None:
    tree = ast.parse((CLI / "main.py").read_text(encoding="utf-8"))
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert defined == ["main"]

"""A read-only server imports only what serving needs (its memory is a benchmark target): the MCP SDK loads on
the first `/mcp` request, the source importers only for `kernelindex import`, the manifest models
(pydantic) when a manifest is first validated, the pages' templates (jinja2) when a page is first drawn."""

from __future__ import annotations

import subprocess
import sys

from helpers import PROJECT_ROOT

PROBE = """
import sys
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
import kernelindex.cli
create_app(Settings())
print(sorted(m for m in sys.modules if m in ('mcp', 'pydantic', 'kernelindex.http.mcp_server', 'kernelindex.registry.importers', 'jinja2')
             or m.startswith(('kernelindex.registry.kinds.', 'kernelindex.registry.importers.'))))
"""
VALIDATES = """
import sys
from kernelindex import registry
assert "pydantic" not in sys.modules
info = registry.KINDS["OperationSpec"]
try:
    registry.manifest_from_document({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "OperationSpec",
                            "metadata": {"name": "x"}, "spec": {}}, "x.json")
except registry.InvalidManifest as exc:
    print(len(exc.problems) > 0, info.model.__name__, "pydantic" in sys.modules)
"""


def test_a_server_imports_neither_the_mcp_sdk_nor_the_importers_nor_the_models_nor_jinja2() -> None:
    found = subprocess.run([sys.executable, "-c", PROBE], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", found.stdout


def test_the_import_command_still_finds_its_importers() -> None:
    listed = subprocess.run(
        [sys.executable, "-c", "from kernelindex.cli import main; main()", "import", "--help"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0 and "kernelindex-export" in listed.stdout and "liger" in listed.stdout


def test_the_models_load_when_a_manifest_is_first_validated() -> None:
    found = subprocess.run(
        [sys.executable, "-c", VALIDATES], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    assert found.stdout.split() == ["True", "OperationSpec", "True"]

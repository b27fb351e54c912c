"""A read-only server imports only what serving needs (issue 14: memory at 1x): the MCP SDK loads on
the first `/mcp` request, the source importers only for `kernelindex import`."""

from __future__ import annotations

import subprocess
import sys

from helpers import PROJECT_ROOT

PROBE = """
import sys
from api.app import create_app
from api.settings import Settings
import api.cli
create_app(Settings())
print(sorted({m.split('.')[0] + ('.' + m.split('.')[1] if m.startswith('registry.') and '.' in m else '')
              for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'registry.importers', 'api.mcp_server'))}))
"""


def test_a_server_imports_neither_the_mcp_sdk_nor_the_importers() -> None:
    found = subprocess.run([sys.executable, "-c", PROBE], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", found.stdout


def test_the_import_command_still_finds_its_importers() -> None:
    listed = subprocess.run(
        [sys.executable, "-c", "from api.cli import main; main()", "import", "--help"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0 and "kernelindex-export" in listed.stdout and "liger" in listed.stdout

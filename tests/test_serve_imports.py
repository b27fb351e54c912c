"""What `kernelindex serve` keeps out of its serving process until something asks for it: every module a
process imports stays resident for its life, so the command line's own (typer, pydantic, the other
commands) are left behind when `serve` becomes the serving process, and one that only a rarely asked answer
needs (a preview image) or that no route uses (a WebSocket library) is imported on first use, or never.

Observed on a real server process from outside: Python's `-X importtime` writes one line on stderr for every
module the process imports, in order, and the serving process keeps the option; what it imports is what
follows the command's "serving ... on" line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx
import pytest
from helpers import basic_scenario, commit_manifests, digest_of
from load import server_process

from kernelindex import registry

NOT_BEFORE_ASKED = ("PIL", "websockets", "mcp", "typer", "pydantic", "kernelindex.cli")
"""Modules that a serving process which has answered GraphQL, a page and its health has not imported: Pillow
(preview images), a WebSocket library (no route is one), the MCP SDK (the first /mcp request), and the command
line's parser (typer; uvicorn brings click) and commands. urllib's HTTP client is no longer among them:
prometheus_client, which every server imports for /metrics, imports it (for its push gateway)."""

BANNER = re.compile(r"^kernelindex: serving .* on http://\S+ \(SIGHUP: hand over\)$", re.MULTILINE)

_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)\s*$", re.MULTILINE)


def _imported(log: Path) -> set[str]:
    """Every module the serving process has imported so far (what follows the command's banner), and each
    package above one (`PIL` for `PIL.Image`)."""
    text = log.read_text(errors="replace")
    banner = BANNER.search(text)
    assert banner is not None, text[-2000:]
    names = set(_IMPORTED.findall(text, banner.end()))
    return names | {".".join(name.split(".")[:i]) for name in names for i in range(1, name.count(".") + 1)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a server process in its own session (POSIX)")
def test_the_serving_process_imports_what_it_serves_with_and_the_rest_when_first_asked(
    store: registry.GitStore, tmp_path: Path
) -> None:
    head = commit_manifests(store, basic_scenario().docs)
    run = digest_of(basic_scenario().runs[0])
    log = tmp_path / "imports.log"
    with (
        server_process(store.path, interpreter=["-X", "importtime"], log=log) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        answer = client.post("/graphql", json={"query": f'{{ run(id: "{run}") {{ permalink }} }}'})
        assert answer.status_code == 200 and answer.json()["data"]["run"]["permalink"], answer.text
        # A server that has answered GraphQL only has not loaded the pages' templates (jinja2: ~2 MB resident),
        # nor the decompressor of KernelIndex's run ids (a run page's).
        assert not _imported(log) & {"jinja2", "markupsafe", "starlette.templating", "zstandard"}
        page = client.get(f"/at/{head}/runs/{run}", headers={"accept": "text/html"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        imported = _imported(log)
        assert {
            "uvicorn",
            "strawberry",
            "kernelindex.registry.graph",
            "kernelindex.app",
            "kernelindex.web.render",
            "jinja2",
        } <= imported  # read right
        assert not imported & set(NOT_BEFORE_ASKED), sorted(imported & set(NOT_BEFORE_ASKED))
        # Asked for, a preview image is drawn as before, with Pillow imported then.
        card = client.get(f"/at/{head}/runs/{run}/card.png")
        assert card.status_code == 200 and card.headers["content-type"] == "image/png"
        assert card.content.startswith(b"\x89PNG\r\n\x1a\n")
        assert "PIL" in _imported(log)

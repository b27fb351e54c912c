"""What standard JavaScript clients see of a served registry: graphql-http's server audit and
Apollo Client 3 (default InMemoryCache, persisted queries, BatchHttpLink), run with Node against a real
server on loopback. `.ci/run` installs them (`npm ci` in tests/js/)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from server import Running, serve

from api.settings import EMBEDDED_REPO

pytestmark = pytest.mark.slow

JS = Path(__file__).parent / "js"
SEEDS = "314f4d24fd889fc1048942a520881d7750ef542c"
COHORT = "92bc0be5b5ce9f52"  # 2 runs at the head, 1 at SEEDS


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    assert shutil.which("node"), "Node.js is needed for the client tests (.ci/run checks it)"
    assert (JS / "node_modules" / "graphql-http").is_dir(), "run `npm ci` in tests/js/ (.ci/run does)"
    with serve(EMBEDDED_REPO) as running:
        yield running


def _node(script: str, *args: str) -> dict[str, object]:
    done = subprocess.run(["node", script, *args], cwd=JS, capture_output=True, text=True, timeout=300, check=False)
    assert done.stdout.strip(), done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    print(script, report)
    assert done.returncode == 0, report
    return report


def test_the_graphql_http_server_audit_passes_with_no_warning(api: Running) -> None:
    report = _node("audit.mjs", f"{api.url}/graphql")
    counts = report["counts"]
    assert isinstance(counts, dict) and counts["warn"] == 0 and counts["error"] == 0 and counts["ok"] > 40


def test_apollo_client_caches_each_snapshot_apart_persists_queries_and_batches(api: Running) -> None:
    report = _node("apollo.mjs", f"{api.url}/graphql", COHORT, SEEDS)
    assert report["sizes"] == {"head": 2, "pinned": 1, "readBack": 2}
    assert report["apqRequests"] == ["POST", "POST+document", "GET"]
    assert report["batches"] == 1

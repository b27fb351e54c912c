"""What standard JavaScript clients see of a served registry: graphql-http's server audit, Apollo Client 4
(default InMemoryCache, persisted queries, BatchHttpLink), and the API guide's paging recipes for Apollo Client
4 (relayStylePagination) and urql with Graphcache (relayPagination), typed by graphql-codegen and checked by
`tsc --strict`, paging the largest cohort while a commit lands. Run with Node against a real server on
loopback; `.ci/run` installs the packages (`npm ci` in tests/js/)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import commit_meta, to_manifest
from server import Running, serve

from kernelindex import registry
from kernelindex.core.settings import EMBEDDED_REPO

pytestmark = pytest.mark.slow

JS = Path(__file__).parent / "js"
SEEDS = "314f4d24fd889fc1048942a520881d7750ef542c"
COHORT = "92bc0be5b5ce9f52"  # 2 runs at the head, 1 at SEEDS
LARGEST = "39d43c1992795178"  # 260 runs (docs/api.md)
SEED_RUN = "sol-submission-6709"  # seed 000, in COHORT
DOCS = Path(__file__).parent.parent / "docs" / "api.md"


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


def _npx(*args: str) -> None:
    done = subprocess.run(
        ["npx", "--no-install", *args], cwd=JS, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def typed() -> Path:
    """The recipes typed by graphql-codegen from the SDL snapshot, checked by `tsc --strict`, compiled."""
    shutil.rmtree(JS / "generated", ignore_errors=True)
    shutil.rmtree(JS / "out", ignore_errors=True)
    _npx("graphql-codegen", "--config", "codegen.ts")
    _npx("tsc", "--noEmit", "--strict", "-p", "tsconfig.json")
    _npx("tsc", "-p", "tsconfig.json")
    return JS / "out"


def test_codegen_types_the_schema_strictly_with_the_datetime_scalar_mapped(typed: Path) -> None:
    generated = (JS / "generated" / "graphql.ts").read_text()
    # strictScalars: codegen fails on a custom scalar the config does not map, so this typed at all only
    # because DateTime (and JSON) are mapped; a timestamp is a string to TypeScript, never `any`.
    config = (JS / "codegen.ts").read_text()
    assert 'DateTime: "string"' in config and "strictScalars: true" in config
    assert "observedAt: string" in generated and not re.search(r": any[;,}\s]", generated)
    documents = json.loads((JS / "generated" / "persisted-documents.json").read_text())
    assert documents and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in documents)


def test_the_api_guide_shows_the_recipes_the_clients_run() -> None:
    """The guide's TypeScript is the tests' own: a change to either shows here."""
    guide = DOCS.read_text()
    blocks = re.findall(r"```ts\n(.*?)```", guide, re.DOTALL)
    for name in ("leaderboard.ts", "apollo.ts", "urql.ts"):
        assert (JS / "recipes" / name).read_text() in blocks, f"docs/api.md shows recipes/{name} as it is"


def _new_run(running: Running) -> dict[str, Any]:
    """A run for the largest cohort: a copy of its 50th entry measured a day later (a new digest, the same
    value: it ties with the copy and ranks before it, pushing every later entry one place down)."""
    query = "query($key: String!) { cohort(key: $key) { entries(first: 50) { edges { node { run { manifest } } } } } }"
    edges = running.graphql(query, {"key": LARGEST}).json()["data"]["cohort"]["entries"]["edges"]
    document: dict[str, Any] = edges[-1]["node"]["run"]["manifest"]
    document["metadata"] = {"name": "paging-probe", "title": "A run added while clients page"}
    document["spec"]["observedAt"] = "2026-09-01T00:00:00Z"
    return document


def test_both_caches_page_the_largest_cohort_whole_while_a_commit_lands(typed: Path, tmp_path: Path) -> None:
    repo = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, repo)
    with serve(repo, hook_secret="s3cret") as running:
        node = subprocess.Popen(
            ["node", str(typed / "paging.js"), f"{running.url}/graphql", LARGEST, COHORT, SEED_RUN],
            cwd=JS,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert node.stdin is not None and node.stdout is not None
        try:
            pause = json.loads(node.stdout.readline() or "{}")
            assert pause == {"pause": "after page 2", "apollo": 200, "urql": 200}, (
                node.stderr.read() if node.stderr else ""
            )
            store = registry.GitStore(repo)
            first = store.head()
            store.add([to_manifest(_new_run(running))], commit_meta(1_790_000_000, subject="Add a run mid-paging"))
            second = store.head()
            refreshed = running.client.post("/hooks/refresh", headers={"authorization": "Bearer s3cret"})
            assert refreshed.status_code == 200 and running.service.snapshots.head.commit == second != first
            node.stdin.write("go\n")
            node.stdin.flush()
            out, err = node.communicate(timeout=300)
        finally:
            node.kill()
    assert node.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    print(json.dumps(report, indent=1))
    for client in ("apollo", "urql"):
        paged, restarted = report["paged"][client], report["restarted"][client]
        # Every entry once, from one commit (the first page's), under the cohort as that commit had it.
        assert (paged["entries"], paged["distinctRuns"], paged["totalCount"], paged["size"]) == (260, 260, 260, 260)
        assert paged["commits"] == [first] and paged["pageCommit"] == first and paged["ranksInOrder"]
        assert paged["id"] == report["before"]["touched"] and not paged["hasNextPage"]
        # From the first page again: the new head, under the cohort's new id.
        assert (restarted["size"], restarted["totalCount"], restarted["entries"]) == (261, 261, 100)
        assert restarted["commits"] == [second] and restarted["id"] == report["between"]["touched"] != paged["id"]
    before, between = report["before"], report["between"]
    assert (before["commit"], between["commit"]) == (first, second)
    assert between["run"] == before["run"] and between["other"] == before["other"]  # untouched: same ids
    assert between["touched"] != before["touched"]  # the cohort that grew: a new id
    assert before["pinnedRun"] != before["run"] and between["pinnedRun"] not in (before["pinnedRun"], between["run"])
    assert report["oldCohortKept"] and report["invalidKeyWarnings"] == 0, report["warnings"]
    assert report["documentId"]["size"] == 261 and report["documentId"]["errors"] is None

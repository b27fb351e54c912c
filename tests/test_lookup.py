"""`kernelindex lookup cohort|operation`: the workloads, protocols and environments a contributor reuses, with their
digests, names and run counts; read through the query service, locally or from a served registry (`--api`), with
the same answer either way.

The registry is built here: one operation, two workloads, two protocols, two environments and seven runs spread
over them, so every count below is counted from the documents themselves."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    DATA,
    EMBEDDED_REPO,
    commit_manifests,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
)
from server import Running, serve
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app

OPERATION = make_operation("softmax-w8192", family="softmax")
WORKLOADS = [make_workload(OPERATION, tokens=t, name=f"softmax-t{t}") for t in (1024, 4096)]
PROTOCOLS = [make_protocol("harness-a"), make_protocol("harness-b")]
ENVIRONMENTS = [make_environment("env-h100", product="NVIDIA H100", architecture="sm_90"), make_environment()]
IMPLEMENTATION = make_implementation(OPERATION, "softmax-kernel")
# (workload, protocol, environment) of each run, by index
PLACES = [(0, 0, 0), (0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 1, 1), (1, 1, 1), (1, 1, 1)]
RUNS = [
    make_run(IMPLEMENTATION, WORKLOADS[w], PROTOCOLS[p], ENVIRONMENTS[e], 5000 + i, name=f"run-{i}")
    for i, (w, p, e) in enumerate(PLACES)
]
OTHER = make_operation("unrelated-op")


def _run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = registry.GitStore.init(tmp_path_factory.mktemp("lookup") / "manifests.git")
    docs = [OPERATION, OTHER, *WORKLOADS, *PROTOCOLS, *ENVIRONMENTS, IMPLEMENTATION, *RUNS]
    commit_manifests(store, docs)
    return store.path


@pytest.fixture(scope="module")
def api(repo: Path) -> Iterator[Running]:
    with serve(repo) as running:
        yield running


def _expected(index: int, documents: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    """(digest, name, runs, cohorts) of each document at place `index` of PLACES, most runs first, then name."""
    runs = Counter(place[index] for place in PLACES)
    cohorts = Counter(place[index] for place in set(PLACES))  # a cohort is a distinct (workload, protocol, env)
    rows = [(digest_of(documents[i]), documents[i]["metadata"]["name"], runs[i], cohorts[i]) for i in runs]
    return sorted(rows, key=lambda row: (-row[2], row[1]))


def _rows(found: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    return [(row["digest"], row["name"], row["runs"], row["cohorts"]) for row in found]


def test_an_operation_lists_what_its_cohorts_compare_under(runner: CliRunner, repo: Path) -> None:
    result = _run(runner, "lookup", "operation", "softmax-w8192", "--repo", repo, "--json")
    assert result.exit_code == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["operation"]["digest"] == digest_of(OPERATION) and found["operation"]["runCount"] == len(RUNS)
    assert found["cohorts"] == len(set(PLACES))
    assert found["commit"] == registry.GitStore(repo).head()
    assert _rows(found["workloads"]) == _expected(0, WORKLOADS)
    assert _rows(found["protocols"]) == _expected(1, PROTOCOLS)
    assert _rows(found["environments"]) == _expected(2, ENVIRONMENTS)
    assert [row["gpu"] for row in found["environments"]] == ["NVIDIA B200 (sm_100)", "NVIDIA H100 (sm_90)"]
    by_digest = _run(runner, "lookup", "operation", digest_of(OPERATION)[:19], "--repo", repo, "--json").stdout
    assert json.loads(by_digest) == found


def test_the_table_shows_full_digests_and_counts(runner: CliRunner, repo: Path) -> None:
    lines = _run(runner, "lookup", "operation", "softmax-w8192", "--repo", repo).stdout.splitlines()
    assert lines[0] == (
        f"operation softmax-w8192 ({digest_of(OPERATION)}): 7 runs in 4 cohorts, at "
        f"{(registry.GitStore(repo).head() or '')[:12]}"
    )
    for title, index, documents in (("Workloads", 0, WORKLOADS), ("Environments", 2, ENVIRONMENTS)):
        at = lines.index(f"{title} (2)")
        assert lines[at + 1].split()[:2] == ["digest", "name"] and lines[at + 1].split()[-2:] == ["runs", "cohorts"]
        shown = [line.split() for line in lines[at + 2 : at + 4]]
        assert [(*row[:2], int(row[-2]), int(row[-1])) for row in shown] == _expected(index, documents)


def test_a_cohort_lists_its_one_workload_protocol_and_environment(runner: CliRunner, repo: Path, api: Running) -> None:
    answer = api.graphql('{ run(id: "run-4") { cohort { key } } }').json()["data"]["run"]["cohort"][
        "key"
    ]  # the cohort of runs 4 to 6: (workload 1, protocol 1, environment 1)
    found = json.loads(_run(runner, "lookup", "cohort", answer[7:23], "--repo", repo, "--json").stdout)
    assert found["cohort"]["key"] == answer and found["cohort"]["size"] == 3
    assert found["operation"]["digest"] == digest_of(OPERATION)
    assert _rows(found["workloads"]) == [(digest_of(WORKLOADS[1]), "softmax-t4096", 3, 1)]
    assert _rows(found["protocols"]) == [(digest_of(PROTOCOLS[1]), "harness-b", 3, 1)]
    assert _rows(found["environments"]) == [(digest_of(ENVIRONMENTS[1]), "test-b200", 3, 1)]
    # The table heads with the operation's digest, which the next manifest (an implementation of it) names.
    table = _run(runner, "lookup", "cohort", answer[7:23], "--repo", repo).stdout.splitlines()
    assert table[0].startswith(f"cohort {answer}: 3 runs (3 ranked) of softmax-w8192 ({digest_of(OPERATION)}), ")


@pytest.mark.parametrize(("command", "ident"), [("operation", "softmax-w8192"), ("cohort", "")])
def test_a_served_registry_answers_the_same(
    runner: CliRunner, repo: Path, api: Running, command: str, ident: str
) -> None:
    if command == "cohort":
        ident = api.graphql('{ run(id: "run-0") { cohort { key } } }').json()["data"]["run"]["cohort"]["key"]
    local = _run(runner, "lookup", command, ident, "--repo", repo, "--json")
    remote = _run(runner, "lookup", command, ident, "--api", api.url, "--json")
    assert remote.exit_code == 0, remote.stderr
    assert json.loads(remote.stdout) == json.loads(local.stdout)


def test_what_is_not_there_is_said_with_what_is_near(runner: CliRunner, repo: Path) -> None:
    missing = _run(runner, "lookup", "operation", "softmax", "--repo", repo)
    assert missing.exit_code == 1
    assert missing.stderr.startswith("kernelindex: no operation 'softmax' at ")
    assert missing.stderr.rstrip().endswith("; operations matching it: softmax-w8192")
    cohort = _run(runner, "lookup", "cohort", "ab" * 8, "--repo", repo)
    assert cohort.exit_code == 1 and "no cohort 'abababababababab'" in cohort.stderr
    revision = _run(runner, "lookup", "operation", "softmax-w8192", "--repo", repo, "--at", "no-such-branch")
    assert revision.exit_code == 1
    assert (
        revision.stderr
        == "kernelindex: revision not found: 'no-such-branch': no such commit, branch or tag (REVISION_NOT_FOUND)\n"
    )


def test_an_api_that_does_not_answer_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    result = _run(runner, "lookup", "operation", "x", "--api", f"http://127.0.0.1:{port}")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"kernelindex: http://127.0.0.1:{port}/graphql: cannot connect: ")
    assert "Traceback" not in result.stderr
    usage = _run(runner, "lookup", "operation", "x", "--api", "file:///etc/passwd")
    assert usage.exit_code == 2 and "expected an http(s) URL" in usage.stderr


def test_an_api_that_is_not_a_registry_is_said_so(runner: CliRunner) -> None:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>a web page</html>")

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{site.server_address[1]}"
        result = _run(runner, "lookup", "operation", "x", "--api", url)
        site.shutdown()
    assert result.exit_code == 1
    assert result.stderr == (
        f"kernelindex: {url}/graphql: the answer is not JSON (is this a KernelIndex registry's URL?)\n"
    )


@pytest.mark.slow  # the embedded registry's graph
def test_the_readme_runs_cohort_in_the_embedded_registry(runner: CliRunner) -> None:
    """The seed record's cohort: its workload, protocol and environment are the ones its run manifest names."""
    run = json.loads(next((DATA / "seeds" / "manifests").glob("000_*.bundle.json")).read_text())["run"]
    key = "sha256:92bc0be5b5ce9f523be5faba2a4e34c39837aab389f3cfd25189af326e2daae0"  # README's query answer
    found = json.loads(_run(runner, "lookup", "cohort", key, "--repo", EMBEDDED_REPO, "--json").stdout)
    assert found["cohort"]["size"] == 2
    assert [row["digest"] for row in found["workloads"]] == [run["spec"]["workloadDigest"]]
    assert [row["digest"] for row in found["protocols"]] == [run["spec"]["protocolDigest"]]
    assert [row["digest"] for row in found["environments"]] == [run["spec"]["environmentDigest"]]

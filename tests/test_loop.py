"""The event loop runs no query: what execution costs is charged before it runs (sorting, filtering and
scanning by the items touched), a batch's cost says what it will take, an MCP client's manifest is parsed off the
loop and too-deep nesting is refused where it starts, and /healthz is answered while the worst batch runs."""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any, Literal

import anyio
import httpx
import pytest
from helpers import EMBEDDED_REPO
from server import serve

from kernelindex.core.context import StoredObjects
from kernelindex.http.mcp_server import Backend, Tools
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import LIMITS
from kernelindex.service.queries import QueryService

SORT = "{{ runs(first: 1, order: {order}) {{ edges {{ node {{ digest }} }} }} }}"
"""One run, after sorting every run: 4 fields and the sort."""


def _runs_at_head() -> int:
    """The runs at the embedded registry's head, counted by git (not by the graph under test)."""
    listed = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "ls-tree", "-r", "--name-only", "main", "--", "benchmark-runs/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sum(1 for line in listed.splitlines() if line.endswith(".json"))


@pytest.fixture(scope="module")
def service() -> QueryService:
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    return QueryService(snapshots, StoredObjects(snapshots), "")


def _cost(service: QueryService, query: str, variables: dict[str, Any] | None = None, budget: int | None = None) -> Any:
    return anyio.run(lambda: service.answer(query, variables, budget=budget))


def test_a_sort_costs_every_run_it_touches_not_the_page(service: QueryService) -> None:
    """The reproduction: `runs(first: 1, order: ...)` cost 4 and sorted every run."""
    runs = _runs_at_head()
    assert runs > 9_000
    for order in ("LOWEST_VALUE", "NEWEST_PUBLISHED"):
        answer = _cost(service, SORT.format(order=order))
        assert answer.extensions["cost"]["requested"] == 4 + runs
    filtered = '{ runs(first: 1, filter: {gpu: "nvidia"}) { edges { node { digest } } } }'
    assert _cost(service, filtered).extensions["cost"]["requested"] == 4 + runs
    # The default order of every run is the graph's own, kept: only the page is paid for.
    assert _cost(service, "{ runs(first: 1) { edges { node { digest } } } }").extensions["cost"]["requested"] == 4


def test_a_scan_argument_counts_when_given_null_does_not(service: QueryService) -> None:
    runs = _runs_at_head()
    query = (
        "query($order: RunOrder, $filter: RunFilter) { runs(first: 1, order: $order, filter: $filter) { totalCount } }"
    )
    assert _cost(service, query, {}).extensions["cost"]["requested"] == 2
    assert _cost(service, query, {"filter": None}).extensions["cost"]["requested"] == 2
    assert _cost(service, query, {"order": "LOWEST_VALUE"}).extensions["cost"]["requested"] == 2 + runs
    assert _cost(service, query, {"filter": {"source": "x"}}).extensions["cost"]["requested"] == 2 + runs


def test_an_operation_at_its_budget_runs_and_one_past_is_refused(service: QueryService) -> None:
    """A batch's later operation gets what the earlier ones left: the sort at exactly its cost runs, one less refused."""
    runs = _runs_at_head()
    query = SORT.format(order="LOWEST_VALUE")
    assert not _cost(service, query, budget=4 + runs).errors
    refused = _cost(service, query, budget=3 + runs)
    assert refused.codes == ["QUERY_TOO_COMPLEX"] and refused.request_error


@pytest.mark.parametrize("depth", [64, 65])
@pytest.mark.parametrize("format", ["yaml", "json"])
def test_validate_manifest_refuses_too_deep_nesting_where_it_starts_off_the_loop(
    service: QueryService, depth: int, format: Literal["yaml", "json"]
) -> None:
    """The reproduction: 4 KB of nested brackets blocked the loop and ended in RecursionError. The limit is 64
    levels below the document (registry/parse.py: MAX_DEPTH); 4,096 brackets are refused at the 66th."""
    tools = Tools(Backend(service))
    threads: set[str] = set()
    original = service.workers.run

    async def spy(function: Any, *args: Any) -> Any:
        def where() -> Any:
            threads.add(threading.current_thread().name)
            return function(*args)

        return await original(where)

    service.workers.run = spy  # type: ignore[method-assign]
    try:
        nested = '{"spec": ' + "[" * depth + "]" * depth + "}"
        found = json.loads(anyio.run(lambda: tools.validate_manifest(nested, format)))
        errors = " ".join(e["reason"] for e in found["errors"])
        assert ("nesting deeper than 64 levels" in errors) is (depth == 65)
        hostile = json.loads(anyio.run(lambda: tools.validate_manifest("[" * 4096, format)))
    finally:
        del service.workers.run
    assert hostile["valid"] is False
    assert hostile["errors"] == [
        {"path": "$[0][0][0][0][0][0]...(depth 65)", "reason": "nesting deeper than 64 levels (line 1, column 66)"}
    ]
    assert threads == {"kernelindex executor"}


@pytest.mark.slow
def test_healthz_is_answered_while_the_worst_batch_runs() -> None:
    """The reproduction: a batch ran every operation on the loop without yielding, and /healthz waited for all
    of it. Its worst members now: two sorts of every run (the third is over what the batch has left), each
    operation then filtering every run too."""
    worst = "{ a: runs(first: 1, order: LOWEST_VALUE, filter: {minTrust: REPORTED}) { edges { node { digest } } } }"
    batch = [{"query": worst.replace("a:", f"a{i}:")} for i in range(10)]
    with serve(EMBEDDED_REPO) as running:
        done = threading.Event()
        answers: list[Any] = []

        def send() -> None:
            with httpx.Client(base_url=running.url, timeout=120) as client:
                answers.append(client.post("/graphql", json=batch).json())
            done.set()

        before = running.service.queries.executions
        sender = threading.Thread(target=send)
        sender.start()
        # Until the batch's second operation is executing: the first waits on a task of its own (it may be shared
        # with other requests), which let the loop breathe once; the ones after it ran inline without yielding.
        while running.service.queries.executions < before + 2 and not done.is_set():
            threading.Event().wait(0.001)
        health = running.client.get("/healthz")
        answered_first = not done.is_set()
        sender.join(120)
    assert health.status_code == 200
    assert answered_first  # /healthz came back while the batch was still executing
    runs = _runs_at_head()
    costs = [item.get("extensions", {}).get("cost", {}) for item in answers[0]]
    assert [c.get("requested") for c in costs[:2]] == [4 + runs, 4 + runs]
    assert all(item["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX" for item in answers[0][2:])
    assert 2 * (4 + runs) <= LIMITS["max_cost"] < 3 * (4 + runs)

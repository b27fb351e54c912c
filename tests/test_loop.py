"""The event loop runs no query: what execution costs is charged before it runs (sorting, filtering and
scanning by the items touched), a batch's cost says what it will take, an MCP client's manifest is parsed off the
loop and too-deep nesting is refused where it starts, and /healthz is answered while the worst batch runs."""

from __future__ import annotations

import json
import subprocess
import threading
from collections import Counter
from typing import Any, Literal

import anyio
import httpx
import pytest
from helpers import EMBEDDED_REPO
from server import serve

from kernelindex.core.context import StoredObjects
from kernelindex.http.mcp_server import Backend, Tools
from kernelindex.registry import read
from kernelindex.registry.nodes import Workload
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


def _filtering(runs: int) -> int:
    """What judging every run costs: a quarter of a field a run (~1 us of a field's ~4), rounded up."""
    return -(-runs // 4)


def test_a_filter_costs_the_runs_it_judges_and_an_order_its_page(service: QueryService) -> None:
    """The reproduction: `runs(first: 1, order: ..., filter: ...)` cost 4, and sorted and judged every run each
    time. Orders are now the graph's, sorted once; a filter still judges every run, and is charged for it."""
    runs = _runs_at_head()
    assert runs > 9_000
    for order in ("LOWEST_VALUE", "NEWEST_PUBLISHED", "NEWEST_OBSERVED"):
        assert _cost(service, SORT.format(order=order)).extensions["cost"]["requested"] == 4
    for where in ('{gpu: "nvidia"}', "{minTrust: REPORTED}", '{source: "sol-execbench"}'):
        filtered = f"{{ runs(first: 1, order: LOWEST_VALUE, filter: {where}) {{ edges {{ node {{ digest }} }} }} }}"
        assert _cost(service, filtered).extensions["cost"]["requested"] == 4 + _filtering(runs)
    # An order is kept once a graph: asked again, the same list (not a new sort).
    graph = service.snapshots.head
    lowest = read.runs(graph, None, read.RunOrder.LOWEST_VALUE)
    assert read.runs(graph, None, read.RunOrder.LOWEST_VALUE) is lowest
    assert list(lowest) == read.ordered_runs(graph, list(graph.facts), read.RunOrder.LOWEST_VALUE)


def test_a_scan_argument_counts_when_given_null_does_not(service: QueryService) -> None:
    runs = _runs_at_head()
    query = (
        "query($order: RunOrder, $filter: RunFilter) { runs(first: 1, order: $order, filter: $filter) { totalCount } }"
    )
    assert _cost(service, query, {}).extensions["cost"]["requested"] == 2
    assert _cost(service, query, {"filter": None}).extensions["cost"]["requested"] == 2
    assert _cost(service, query, {"order": "LOWEST_VALUE"}).extensions["cost"]["requested"] == 2
    assert _cost(service, query, {"filter": {"source": "x"}}).extensions["cost"]["requested"] == 2 + _filtering(runs)


def test_an_operation_at_its_budget_runs_and_one_past_is_refused(service: QueryService) -> None:
    """A batch's later operation gets what the earlier ones left: the filter at exactly its cost runs, one less
    refused."""
    cost = 4 + _filtering(_runs_at_head())
    query = "{ runs(first: 1, filter: {minTrust: REPORTED}) { edges { node { digest } } } }"
    assert not _cost(service, query, budget=cost).errors
    refused = _cost(service, query, budget=cost - 1)
    assert refused.codes == ["QUERY_TOO_COMPLEX"] and refused.request_error


def test_an_operations_runs_in_a_list_cost_at_most_every_run_once(service: QueryService) -> None:
    """An operation's runs are sorted once a graph, so 100 operations' runs cost their largest part 100 times only
    while that is under every run of the commit: a project page's implementations stay under the limit."""
    runs = _runs_at_head()
    graph = service.snapshots.head
    operation_of = {d: n.operation for d, n in graph.nodes.items() if isinstance(n, Workload)}
    largest = max(Counter(operation_of[graph.nodes[d].workload] for d in graph.facts).values())  # type: ignore[union-attr]
    assert 100 * largest > runs > largest  # the cap is reached at 100 and not at 1
    plain = "{{ operations(first: {n}) {{ edges {{ node {{ digest }} }} }} }}"
    nested = "{{ operations(first: {n}) {{ edges {{ node {{ runs(first: 1) {{ edges {{ cursor }} }} }} }} }} }}"
    for n, scan in ((1, largest), (100, runs)):
        with_runs = _cost(service, nested.format(n=n)).extensions["cost"]["requested"]
        without = _cost(service, plain.format(n=n)).extensions["cost"]["requested"]
        assert with_runs - without == 2 * n + scan  # runs, edges and cursor in place of digest, and the sorting
    # Each operation's runs are the graph's, sorted once: the same tuple the second time, in order.
    some = next(iter(operation_of.values()))
    first = read.ordered_runs_with(graph, read.RunIndex.OPERATION, some)
    assert read.ordered_runs_with(graph, read.RunIndex.OPERATION, some) is first
    assert list(first) == read.ordered_runs(graph, read.runs_with(graph, read.RunIndex.OPERATION, some))


def test_a_connection_asked_for_its_count_alone_sorts_nothing_and_costs_no_scan(service: QueryService) -> None:
    """A project page asks each of 100 implementations for `runs(first: 1) { totalCount }`: it cost every run of
    the commit (10,521 at 9,508 runs, growing with the registry), and sorted each implementation's runs. Counted,
    not sorted: its runs and totalCount only, and the graph keeps no new order."""
    graph = service.snapshots.head
    plain = "{ operations(first: 100) { edges { node { digest } } } }"
    counted = "{ operations(first: 100) { edges { node { runs(first: 1) { totalCount __typename } } } } }"
    graph.__dict__.pop("_kept_orders", None)  # what the graph has sorted so far: nothing
    answer = _cost(service, counted)
    without = _cost(service, plain).extensions["cost"]["requested"]
    assert not answer.errors and answer.extensions["cost"]["requested"] - without == 2 * 100
    assert graph.__dict__.get("_kept_orders", {}) == {}
    # The same counts as the sorted pages give (their page info asked: a page is cut), for every operation,
    # implementation and the first 100 cohorts; the window is refused alike.
    both = "a: runs {{ totalCount }} b: runs(first: 0) {{ totalCount pageInfo {{ hasNextPage }} }}"
    for root, first in (("operations", 100), ("implementations", 100), ("cohorts", 100)):
        after, largest = None, 0
        while True:
            page = _cost(
                service,
                f"query($after: String) {{ {root}(first: {first}, after: $after) {{ pageInfo {{ hasNextPage endCursor }} "
                f"edges {{ node {{ {both.format()} }} }} }} }}",
                {"after": after},
            )
            assert not page.errors, page.errors
            nodes = [edge["node"] for edge in page.data[root]["edges"]]
            assert nodes and all(n["a"]["totalCount"] == n["b"]["totalCount"] for n in nodes)
            largest = max(largest, *(n["a"]["totalCount"] for n in nodes))
            info = page.data[root]["pageInfo"]
            if root == "cohorts" or not info["hasNextPage"]:
                break
            after = info["endCursor"]
        assert largest > 1  # counts that a wrong one could differ from
    for window in ("first: -1", "first: 1, last: 1", 'after: "nonsense"'):
        one = "{{ operations(first: 1) {{ edges {{ node {{ runs({w}) {{ {f} }} }} }} }} }}"
        errors = [
            _cost(service, one.format(w=window, f=f)).errors for f in ("totalCount", "totalCount edges { cursor }")
        ]
        assert errors[0] and [e["message"] for e in errors[0]] == [e["message"] for e in errors[1]]


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
    of it. Each operation of the batch is held in its worker thread here until /healthz has answered: on the loop,
    the hold would have held /healthz too. Its worst members filter every run twice; what the batch has left
    runs five of them and refuses the rest."""
    worst = (
        "{ a: runs(first: 1, order: LOWEST_VALUE, filter: {minTrust: REPORTED}) { edges { node { digest } } } "
        "b: runs(first: 1, order: NEWEST_PUBLISHED, filter: {minTrust: REPORTED}) { edges { node { digest } } } }"
    )
    batch = [{"query": worst.replace("a:", f"a{i}:")} for i in range(10)]
    with serve(EMBEDDED_REPO) as running:
        queries = running.service.queries
        original = queries.workers.run
        executing, release = threading.Event(), threading.Event()

        async def held(function: Any, *args: Any) -> Any:
            def hold() -> Any:
                executing.set()
                release.wait(60)
                return function(*args)

            return await original(hold)

        queries.workers.run = held  # type: ignore[method-assign]
        answers: list[Any] = []

        def send() -> None:
            with httpx.Client(base_url=running.url, timeout=120) as client:
                answers.append(client.post("/graphql", json=batch).json())

        sender = threading.Thread(target=send)
        sender.start()
        try:
            assert executing.wait(60)
            health = httpx.get(running.url + "/healthz", timeout=10)
        finally:
            release.set()
            sender.join(120)
            del queries.workers.run
    assert health.status_code == 200
    each = 2 * (4 + _filtering(_runs_at_head()))
    costs = [item.get("extensions", {}).get("cost", {}) for item in answers[0]]
    assert [c.get("requested") for c in costs[:5]] == [each] * 5
    assert all(item["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX" for item in answers[0][5:])
    assert 5 * each <= LIMITS["max_cost"] < 6 * each


@pytest.mark.slow
def test_pages_and_their_other_formats_are_made_in_the_worker_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's HTML (a template over up to 100 rows of contributors' text) and its other formats (a card, a
    compare export) are made in the query service's threads, never on the event loop that answers sockets."""
    from kernelindex.web import card_pages, cards, render

    made: dict[str, str] = {}

    def spy(name: str, function: Any) -> Any:
        def where(*args: Any) -> Any:
            made[name] = threading.current_thread().name
            return function(*args)

        return where

    monkeypatch.setattr(render, "_html", spy("html", render._html))
    monkeypatch.setattr(card_pages, "drawn", spy("card", cards.drawn))
    with serve(EMBEDDED_REPO) as running:
        graph = running.service.snapshots.head
        run = next(iter(graph.facts))
        page = running.client.get(f"/runs/{run}", headers={"accept": "text/html"}, follow_redirects=True)
        card = running.client.get(f"/at/{graph.commit}/runs/{run}/card.png")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert card.status_code == 200 and card.headers["content-type"] == "image/png"
    assert made == {"html": "kernelindex executor", "card": "kernelindex executor"}

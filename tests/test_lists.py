"""The lists a frontend needs, on a registry built here, against orders worked out by hand: `order` on runs,
entries and records, the records filters, a cohort's events paged and its title, leaderboard rows whose cursor
continues with `entries`, `SearchResult.runs` paged by its own arguments, and refused arguments that null only
their own field."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from helpers import (
    basic_scenario,
    commit_manifests,
    digest_of,
    make_implementation,
    make_operation,
    make_run,
    make_workload,
)

from kernelindex import registry
from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

S = basic_scenario()  # rmsnorm: run-a1 8120 ns (Aug 1), run-a2 7.9 µs (Aug 2), run-b1 9000 ns (Aug 3)
NORM = make_operation("layernorm-h4096", family="layernorm")
NORM_WORKLOAD = make_workload(NORM, name="layernorm-t2048")
NORM_KERNEL = make_implementation(NORM, "kernel-c")
C1 = make_run(NORM_KERNEL, NORM_WORKLOAD, S.protocol, S.environment, 5000, "2026-07-30T00:00:00Z", name="run-c1",
              source_native="other-source")  # fmt: skip
SCORE = {"measurements": [{"metric": "score", "unit": "s", "statistic": "mean", "value": 0.000001}]}
D1 = make_run(
    NORM_KERNEL, NORM_WORKLOAD, S.protocol, S.environment, None, "2026-07-31T00:00:00Z", name="run-d1", extra_spec=SCORE
)  # fmt: skip  (its own cohort: another metric; 1 µs as a score in seconds)
NONE = make_run(NORM_KERNEL, NORM_WORKLOAD, S.protocol, S.environment, None, "2026-07-29T00:00:00Z", name="run-e1")
T0 = 1_700_000_000
RUNS = {"run-c1": C1, "run-d1": D1}


@pytest.fixture
def snapshots(store: registry.GitStore) -> Snapshots:
    commit_manifests(store, S.docs, T0)  # the rmsnorm runs are published first...
    commit_manifests(store, [NORM, NORM_WORKLOAD, NORM_KERNEL, C1, D1, NONE], T0 + 86_400, source="other-source")
    found = Snapshots(store.path)
    found.load()
    return found


def ask(snapshots: Snapshots, query: str, **variables: Any) -> tuple[dict[str, Any] | None, list[str]]:
    context = Context(snapshots, StoredObjects(snapshots), "", dt.date(2026, 11, 29), snapshots.head)
    result = asyncio.run(schema.execute(query, variable_values=variables, context_value=context, root_value=Query()))
    return result.data, [str((e.extensions or {}).get("code")) for e in result.errors or ()]


def data(snapshots: Snapshots, query: str, **variables: Any) -> dict[str, Any]:
    found, errors = ask(snapshots, query, **variables)
    assert not errors and found is not None, errors
    return found


def names(connection: dict[str, Any]) -> list[str]:
    return [edge["node"]["name"] for edge in connection["edges"]]


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("NEWEST_OBSERVED", ["run-b1", "run-a2", "run-a1", "run-d1", "run-c1", "run-e1"]),
        ("OLDEST_OBSERVED", ["run-e1", "run-c1", "run-d1", "run-a1", "run-a2", "run-b1"]),
        # ...the layernorm runs a day later; within a commit, newest observation first
        ("NEWEST_PUBLISHED", ["run-d1", "run-c1", "run-e1", "run-b1", "run-a2", "run-a1"]),
        ("OLDEST_PUBLISHED", ["run-b1", "run-a2", "run-a1", "run-d1", "run-c1", "run-e1"]),
        # time units compare as times: the score of 1e-6 s is 1000 ns; runs without a value last
        ("LOWEST_VALUE", ["run-d1", "run-c1", "run-a2", "run-a1", "run-b1", "run-e1"]),
        ("HIGHEST_VALUE", ["run-b1", "run-a1", "run-a2", "run-c1", "run-d1", "run-e1"]),
    ],
)
def test_runs_in_each_order(snapshots: Snapshots, order: str, expected: list[str]) -> None:
    found = data(snapshots, "query($o: RunOrder!) { runs(order: $o) { edges { node { name } } } }", o=order)
    assert names(found["runs"]) == expected


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("RANK", ["run-a2", "run-a1", "run-b1"]),
        ("RANK_REVERSED", ["run-b1", "run-a1", "run-a2"]),
        ("NEWEST_OBSERVED", ["run-b1", "run-a2", "run-a1"]),
        ("NEWEST_PUBLISHED", ["run-b1", "run-a2", "run-a1"]),  # one commit: then newest observation
    ],
)
def test_entries_in_each_order_keep_their_ranks(snapshots: Snapshots, order: str, expected: list[str]) -> None:
    query = """query($o: EntryOrder!) { run(id: "run-a1") { cohort { entries(order: $o) {
      edges { node { rank run { name } } } } } } }"""
    edges = data(snapshots, query, o=order)["run"]["cohort"]["entries"]["edges"]
    assert [e["node"]["run"]["name"] for e in edges] == expected
    assert {e["node"]["run"]["name"]: e["node"]["rank"] for e in edges} == {"run-a2": 1, "run-a1": 2, "run-b1": 3}


RECORDS = """query($f: RecordFilter, $o: RecordOrder) { records(filter: $f, order: $o) {
  totalCount edges { node { since holder { name } cohort { size } } } } }"""


@pytest.mark.parametrize(
    ("where", "order", "holders"),
    [
        (None, None, ["run-a2", "run-d1", "run-c1"]),  # newest holder first: Aug 2, Jul 31, Jul 30
        (None, "OLDEST", ["run-c1", "run-d1", "run-a2"]),
        (None, "NEWEST_PUBLISHED", ["<c1 and d1 by cohort key>", "run-a2"]),  # the layernorm commit first
        (None, "LARGEST_COHORT", ["run-a2", "run-c1", "run-d1"]),  # 3 runs, then 2 (c1, e1), then 1
        ({"operation": "layernorm-h4096"}, None, ["run-d1", "run-c1"]),
        ({"gpu": "b200"}, None, ["run-a2", "run-d1", "run-c1"]),
        ({"gpu": "h100"}, None, []),
        ({"source": "other-source"}, None, ["run-d1", "run-c1"]),  # c1 by sourceNative, d1 by its commit
        ({"since": "2026-07-31T00:00:00Z"}, None, ["run-a2", "run-d1"]),  # at the limit: kept
        ({"since": "2026-07-31T00:00:00.001Z"}, None, ["run-a2"]),  # one past: not
        ({"since": "2026-07-31T02:00:00+02:00"}, None, ["run-a2", "run-d1"]),  # an offset: the same instant
    ],
)
def test_records_filtered_and_ordered(
    snapshots: Snapshots, where: dict[str, str] | None, order: str | None, holders: list[str]
) -> None:
    given = {k: v for k, v in {"f": where, "o": order}.items() if v is not None}  # an explicit null is refused
    found = data(snapshots, RECORDS, **given)["records"]
    if holders and holders[0].startswith("<"):  # two published by one commit: then by cohort key
        tied = sorted(("run-c1", "run-d1"), key=lambda n: snapshots.head.facts[digest_of(RUNS[n])].cohort or "")
        holders = [*tied, *holders[1:]]
    assert [e["node"]["holder"]["name"] for e in found["edges"]] == holders and found["totalCount"] == len(holders)


def test_a_cohorts_events_page_and_its_title_names_it(snapshots: Snapshots) -> None:
    query = """query($after: String) { run(id: "run-a1") { cohort { title history { run { name } }
      events(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor }
        edges { node { cause run { name } previousRun { name } } } } } } }"""
    first = data(snapshots, query)["run"]["cohort"]
    # ranked by value, replayed by observation: a1 (Aug 1) holds it, then a2 (Aug 2) beats it; b1 never does
    # the operation's title (the helper writes "Operation <name>"), the workload's label, the GPU
    assert first["title"] == "Operation rmsnorm-h4096 · hidden = 4096 · tokens = 2048 · bf16 · NVIDIA B200"
    assert [e["run"]["name"] for e in first["history"]] == ["run-a1", "run-a2"]
    assert first["events"]["totalCount"] == 2 and first["events"]["pageInfo"]["hasNextPage"]
    second = data(snapshots, query, after=first["events"]["pageInfo"]["endCursor"])["run"]["cohort"]["events"]
    assert [(e["node"]["run"]["name"], e["node"]["previousRun"]["name"]) for e in second["edges"]] == [
        ("run-a2", "run-a1")
    ]
    assert not second["pageInfo"]["hasNextPage"]


def test_a_leaderboard_rows_cursor_continues_with_entries(snapshots: Snapshots) -> None:
    query = """query($after: String) { run(id: "run-a1") { cohort {
      leaderboard(first: 1) { name cursor } entries(first: 5, after: $after) { edges { cursor node { run { name } } } } } } }"""
    row = data(snapshots, query)["run"]["cohort"]["leaderboard"][0]
    after = data(snapshots, query, after=row["cursor"])["run"]["cohort"]["entries"]["edges"]
    assert row["name"] == "run-a2" and [e["node"]["run"]["name"] for e in after] == ["run-a1", "run-b1"]
    everything = data(snapshots, query)["run"]["cohort"]["entries"]["edges"]
    assert everything[0]["cursor"] == row["cursor"]  # the same cursor as the entry's own edge


def test_search_results_page_by_their_own_arguments_and_the_old_ones_still_work(snapshots: Snapshots) -> None:
    new = data(snapshots, '{ search(query: "kernel") { runs(first: 2) { totalCount edges { node { name } } } } }')
    old = data(snapshots, '{ search(query: "kernel", first: 2) { runs { totalCount edges { node { name } } } } }')
    assert new == old and new["search"]["runs"]["totalCount"] == 6 and len(new["search"]["runs"]["edges"]) == 2
    cursor = data(snapshots, '{ search(query: "kernel") { runs(first: 2) { pageInfo { endCursor } } } }')
    after = cursor["search"]["runs"]["pageInfo"]["endCursor"]
    rest = data(snapshots, 'query($a: String) { search(query: "kernel") { runs(after: $a) { edges { node { name } } } } }',
                a=after)  # fmt: skip
    assert len(rest["search"]["runs"]["edges"]) == 4


@pytest.mark.parametrize(
    ("query", "expected", "code"),
    [
        ("{ commit { shortId } records(first: -1) { totalCount } }", {"records": None}, "PAGE_SIZE_ERROR"),
        ("{ commit { shortId } records(first: 101) { totalCount } }", {"records": None}, "PAGE_SIZE_ERROR"),
        (
            '{ commit { shortId } run(id: "run-a1") { name citation(accessed: "yesterday") } }',
            {"run": {"name": "run-a1", "citation": None}},
            "BAD_USER_INPUT",
        ),
    ],
)
def test_a_refused_argument_nulls_only_its_own_field(
    snapshots: Snapshots, query: str, expected: dict[str, Any], code: str
) -> None:
    found, errors = ask(snapshots, query)
    assert errors == [code] and found is not None
    assert found.pop("commit")["shortId"] == snapshots.head.commit[:12]
    assert found == expected


def test_records_at_a_hundred_are_fine(snapshots: Snapshots) -> None:
    assert data(snapshots, "{ records(first: 100) { totalCount } }")["records"]["totalCount"] == 3

"""Leaderboards paged to the end, and filtered by evidence, against answers worked out by hand or from
upstream's data: ranks run on without a gap across page boundaries, `hasNextPage` is false exactly at
the last page, and `minTrust` keeps exactly the runs at or above a level, ranks unchanged."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
from collections import defaultdict
from itertools import pairwise
from typing import Any

import pytest
import zstandard
from helpers import (
    DATA,
    EMBEDDED_REPO,
    TEST_DATA,
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_verification,
    make_workload,
    to_manifest,
)
from signing import T0, Key

from kernelindex import registry
from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

TODAY = dt.date(2026, 11, 29)
PINNED = "e775d39b6768675ff8eb086da76420493425c1a4"  # the embedded registry with the seed records
BEFORE_SEEDS = "314f4d24fd889fc1048942a520881d7750ef542c"  # the corpus alone (docs/api.md, "Pinning")
LARGEST = "39d43c1992795178"  # the largest corpus cohort (docs/api.md: 260 runs)

ENTRIES = """query($key: String!, $first: Int!, $after: String, $min: Trust, $at: String) {
  registry(at: $at) { cohort(key: $key) { entries(first: $first, after: $after, minTrust: $min) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { rank tiedWithPrevious run { name digest trust } } } } } } }"""


def _execute(snapshots: Snapshots, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    context = Context(snapshots, StoredObjects(snapshots), "http://test", TODAY, snapshots.head)
    result = asyncio.run(schema.execute(query, variable_values=variables, context_value=context, root_value=Query()))
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def _walk(snapshots: Snapshots, key: str, first: int, **variables: Any) -> list[dict[str, Any]]:
    """Every page of a cohort's leaderboard, following endCursor; the pages as answered."""
    pages: list[dict[str, Any]] = []
    after = None
    while True:
        data = _execute(snapshots, ENTRIES, {"key": key, "first": first, "after": after, **variables})
        page = data["registry"]["cohort"]["entries"]
        pages.append(page)
        if not page["pageInfo"]["hasNextPage"]:
            return pages
        assert len(pages) < 100, "the walk does not end"
        after = page["pageInfo"]["endCursor"]


def _rows(pages: list[dict[str, Any]]) -> list[tuple[str, int, bool]]:
    return [
        (edge["node"]["run"]["name"], edge["node"]["rank"], edge["node"]["tiedWithPrevious"])
        for page in pages
        for edge in page["edges"]
    ]


def _assert_page_shapes(pages: list[dict[str, Any]], first: int, total: int) -> None:
    """Full pages but the last, which holds the rest; the flags and cursors that say so."""
    sizes = [len(page["edges"]) for page in pages]
    assert sizes == [first] * (total // first) + ([total % first] if total % first else []) or sizes == [0]
    for number, page in enumerate(pages):
        info = page["pageInfo"]
        assert page["totalCount"] == total
        assert info["hasNextPage"] == (number < len(pages) - 1)
        assert info["hasPreviousPage"] == (number > 0)
        if page["edges"]:
            assert info["startCursor"] == page["edges"][0]["cursor"]
            assert info["endCursor"] == page["edges"][-1]["cursor"]
    cursors = [edge["cursor"] for page in pages for edge in page["edges"]]
    assert len(set(cursors)) == len(cursors) == total


# A cohort worked out by hand ----------------------------------------------------------------------

OPERATION = make_operation("paging-op")
WORKLOAD = make_workload(OPERATION, name="paging-workload")
OPEN = make_implementation(OPERATION, "open-kernel")  # public source: with raw evidence, REPRODUCIBLE
CLOSED = make_implementation(OPERATION, "closed-kernel", repository=None)
PROTOCOL = make_protocol()
ENVIRONMENT = make_environment()


def _run(name: str, latency: int, day: int, *, implementation: dict[str, Any] = CLOSED, raw: bool = False) -> Any:
    return make_run(
        implementation,
        WORKLOAD,
        PROTOCOL,
        ENVIRONMENT,
        latency,
        f"2026-08-{day:02d}T00:00:00Z",
        raw_samples=raw,
        name=name,
    )


RUNS = {
    run["metadata"]["name"]: run
    for run in (
        _run("replicated", 5000, 1),
        _run("verified", 6000, 2),
        _run("reproducible", 7000, 3, implementation=OPEN, raw=True),
        _run("reported-open", 7000, 4, implementation=OPEN),  # same value, newer, weaker evidence
        _run("reported-raw", 8000, 5, raw=True),  # raw evidence without public source
        _run("rerun-a", 9000, 6),
        _run("rerun-b", 9100, 7),
        _run("rerun-c", 9200, 8),
    )
}

# By hand (ranking-v1): dense ranks by value; within the 7000 tie, higher trust first.
LEADERBOARD = [
    ("replicated", 1, False, "REPLICATED"),
    ("verified", 2, False, "VERIFIED"),
    ("reproducible", 3, False, "REPRODUCIBLE"),
    ("reported-open", 3, True, "REPORTED"),
    ("reported-raw", 4, False, "REPORTED"),
    ("rerun-a", 5, False, "REPORTED"),
    ("rerun-b", 6, False, "REPORTED"),
    ("rerun-c", 7, False, "REPORTED"),
]
LEVELS = ["REPORTED", "REPRODUCIBLE", "VERIFIED", "REPLICATED"]


@pytest.fixture
def mixed(store: registry.GitStore, keys: dict[str, Key]) -> tuple[Snapshots, str]:
    """The cohort above in a registry governed by alice: verifications signed by her count; one
    signed by bob (not a maintainer) and one unsigned do not."""
    alice = keys["alice"]
    docs = [OPERATION, WORKLOAD, OPEN, CLOSED, PROTOCOL, ENVIRONMENT, *RUNS.values()]
    store.add(
        [to_manifest(d) for d in docs],
        commit_meta(T0, subject="Initial policy and data"),
        extra_files={POLICY_PATH: alice.allowed_signer},
        sign=ssh_signer(alice.private),
    )

    def verify(run: str, rerun: str, runner: str, signer: Key | None, when: int) -> None:
        overlay = make_verification(RUNS[run], RUNS[rerun], runner=runner)
        sign = ssh_signer(signer.private) if signer else None
        store.add([to_manifest(overlay)], commit_meta(when, subject="Verify"), sign=sign)

    verify("replicated", "rerun-a", "runner-a", alice, T0 + 100)
    verify("replicated", "rerun-b", "runner-b", alice, T0 + 200)
    verify("verified", "rerun-c", "runner-a", alice, T0 + 300)
    verify("reported-open", "rerun-a", "runner-a", keys["bob"], T0 + 400)  # not a maintainer
    verify("reported-raw", "rerun-b", "runner-a", None, T0 + 500)  # unsigned
    snapshots = Snapshots(store.path)
    snapshots.load()
    key = snapshots.head.facts[digest_of(RUNS["replicated"])].cohort
    assert key is not None
    return snapshots, key


@pytest.mark.parametrize("first", [1, 2, 3, 4, 7, 8, 9, 100])
def test_a_cohort_paged_to_the_end(mixed: tuple[Snapshots, str], first: int) -> None:
    """Every page size, including ones that divide the 8 entries exactly (1, 2, 4, 8): the last
    page is the one without a next page, never an empty page after it."""
    snapshots, key = mixed
    pages = _walk(snapshots, key, first)
    _assert_page_shapes(pages, first, len(LEADERBOARD))
    assert _rows(pages) == [(name, rank, tied) for name, rank, tied, _ in LEADERBOARD]
    assert [edge["node"]["run"]["trust"] for page in pages for edge in page["edges"]] == [
        trust for *_, trust in LEADERBOARD
    ]


@pytest.mark.parametrize("level", LEVELS)
def test_min_trust_keeps_exactly_the_runs_at_or_above_it(mixed: tuple[Snapshots, str], level: str) -> None:
    snapshots, key = mixed
    expected = [(name, rank) for name, rank, _, trust in LEADERBOARD if LEVELS.index(trust) >= LEVELS.index(level)]
    assert len(expected) == {"REPORTED": 8, "REPRODUCIBLE": 3, "VERIFIED": 2, "REPLICATED": 1}[level]  # by hand
    pages = _walk(snapshots, key, 2, min=level)
    _assert_page_shapes(pages, 2, len(expected))
    assert [(name, rank) for name, rank, _ in _rows(pages)] == expected  # ranks stay the whole cohort's
    runs = _execute(
        snapshots,
        "query($key: String!, $min: Trust) { runs(filter: {cohort: $key, minTrust: $min}, first: 100) "
        "{ totalCount edges { node { name } } } }",
        {"key": key, "min": level},
    )["runs"]
    assert runs["totalCount"] == len(expected)
    assert sorted(edge["node"]["name"] for edge in runs["edges"]) == sorted(name for name, _ in expected)


def test_a_page_past_the_end_is_empty(mixed: tuple[Snapshots, str]) -> None:
    snapshots, key = mixed
    last = _walk(snapshots, key, 8)[-1]
    after = _execute(snapshots, ENTRIES, {"key": key, "first": 8, "after": last["pageInfo"]["endCursor"]})
    page = after["registry"]["cohort"]["entries"]
    assert page["edges"] == [] and page["totalCount"] == 8
    assert page["pageInfo"] == {
        "hasNextPage": False,
        "hasPreviousPage": True,
        "startCursor": None,
        "endCursor": None,
    }
    empty = _execute(snapshots, ENTRIES, {"key": key, "first": 0})["registry"]["cohort"]["entries"]
    assert empty["edges"] == [] and empty["pageInfo"]["hasNextPage"] is True  # 8 entries lie ahead


# The largest corpus cohort, against upstream's export ----------------------------------------------


def _upstream_cohort(prefix: str) -> dict[str, float]:
    """Run digest -> primary value of upstream's passed runs whose comparison key starts with `prefix`."""
    export = sorted((DATA / "corpus").glob("kernelindex-catalog-*.jsonl.zst"))[0]
    found: dict[str, float] = {}
    with export.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
        for line in io.TextIOWrapper(stream, encoding="utf-8"):
            if '"benchmark_runs"' not in line[:40]:
                continue
            row = json.loads(line)["row"]
            if row["comparisonKey"].removeprefix("sha256:").startswith(prefix) and row["status"] == "passed":
                found[row["runDigest"]] = float(row["primaryValue"])
    return found


@pytest.mark.slow
def test_the_largest_corpus_cohort_paged_to_the_end() -> None:
    """260 runs in pages of 100: 100, 100, 60; dense ranks without a gap, each rank holding exactly the
    runs upstream gives that value (the cohort is source-native: only equal values tie)."""
    upstream = _upstream_cohort(LARGEST)
    assert len(upstream) == 260
    values = sorted(set(upstream.values()))
    expected_rank = {digest: values.index(value) + 1 for digest, value in upstream.items()}
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    pages = _walk(snapshots, LARGEST, 100, at=PINNED)
    _assert_page_shapes(pages, 100, 260)
    assert [len(page["edges"]) for page in pages] == [100, 100, 60]
    nodes = [edge["node"] for page in pages for edge in page["edges"]]
    ranks = [node["rank"] for node in nodes]
    assert ranks[0] == 1 and all(b - a in (0, 1) for a, b in pairwise(ranks))
    assert all(node["tiedWithPrevious"] == (i > 0 and ranks[i - 1] == node["rank"]) for i, node in enumerate(nodes))
    by_rank: dict[int, set[str]] = defaultdict(set)
    for node in nodes:
        by_rank[node["rank"]].add(node["run"]["digest"])
    expected: dict[int, set[str]] = defaultdict(set)
    for digest, rank in expected_rank.items():
        expected[rank].add(digest)
    assert by_rank == expected
    assert ranks[-1] == len(values)


RECORDS = """query($first: Int!, $after: String, $at: String) { registry(at: $at) { records(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  edges { cursor node { since cohort { key } holder { digest } } } } } }"""


@pytest.mark.slow
def test_the_records_ledger_paged_to_the_end_is_upstreams() -> None:
    """Before the seed records (commit 314f4d2) the registry is upstream's corpus: its ledger is one
    entry per cohort of upstream's record_events table, held by the cohort's last event, since then."""
    raw = (TEST_DATA / "upstream" / "expectations.json.zst").read_bytes()
    events = json.loads(zstandard.ZstdDecompressor().stream_reader(raw).read())["recordEvents"]
    last: dict[str, tuple[str, str]] = {}
    for key, run, _previous, _cause, at in sorted(events, key=lambda e: e[4]):
        last[key] = (run, at)
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    pages: list[dict[str, Any]] = []
    after = None
    while not pages or pages[-1]["pageInfo"]["hasNextPage"]:
        answer = _execute(snapshots, RECORDS, {"first": 100, "after": after, "at": BEFORE_SEEDS})
        pages.append(answer["registry"]["records"])
        after = pages[-1]["pageInfo"]["endCursor"]
    assert len(last) == 1828
    _assert_page_shapes(pages, 100, len(last))
    nodes = [edge["node"] for page in pages for edge in page["edges"]]
    assert {n["cohort"]["key"]: (n["holder"]["digest"], n["since"]) for n in nodes} == last
    since = [n["since"] for n in nodes]
    assert since == sorted(since, reverse=True)  # newest holder first


@pytest.mark.parametrize(
    ("condition", "cohorts", "runs"),
    [
        ('{operation: "paging-op"}', 1, 8),
        ('{operation: "no-such-op"}', 0, 0),
        ('{gpu: "NVIDIA B200"}', 1, 8),
        ('{gpu: " nvidia b200 "}', 1, 8),  # trimmed, any case
        ('{gpu: "sm_100"}', 1, 8),
        ('{gpu: "NVIDIA H100"}', 0, 0),
        ('{workload: "paging-workload"}', 1, 8),
        ('{operation: "paging-op", gpu: "sm_100"}', 1, 8),
        ('{operation: "paging-op", gpu: "sm_90"}', 0, 0),  # every condition must hold
        ('{operation: "no-such-op", gpu: "sm_100"}', 0, 0),
    ],
)
def test_filters_narrow_cohorts_and_runs(mixed: tuple[Snapshots, str], condition: str, cohorts: int, runs: int) -> None:
    """The cohort above is the registry's only one: one operation, workload and GPU (NVIDIA B200, sm_100)."""
    snapshots, key = mixed
    found = _execute(
        snapshots,
        f"{{ cohorts(filter: {condition}) {{ totalCount edges {{ node {{ key }} }} }} "
        f"runs(filter: {condition}, first: 100) {{ totalCount }} }}",
        {},
    )
    assert found["cohorts"]["totalCount"] == cohorts
    assert [edge["node"]["key"] for edge in found["cohorts"]["edges"]] == [key] * cohorts
    assert found["runs"]["totalCount"] == runs


@pytest.mark.parametrize(("size", "count"), [(7, 1), (8, 1), (9, 0)])
def test_min_size_keeps_cohorts_of_at_least_that_many_runs(mixed: tuple[Snapshots, str], size: int, count: int) -> None:
    snapshots, _ = mixed
    found = _execute(snapshots, "query($n: Int) { cohorts(filter: {minSize: $n}) { totalCount } }", {"n": size})
    assert found["cohorts"]["totalCount"] == count  # the cohort has 8 runs


def test_the_trust_filter_keeps_exactly_the_runs_at_each_level(mixed: tuple[Snapshots, str]) -> None:
    """`trust: [LEVEL]` (not a minimum): each level alone, over the whole registry, so that every run is
    looked at and a run of another level never ends the search early."""
    snapshots, _ = mixed
    for level in LEVELS:
        expected = sorted(name for name, *_, trust in LEADERBOARD if trust == level)
        assert len(expected) == {"REPORTED": 5, "REPRODUCIBLE": 1, "VERIFIED": 1, "REPLICATED": 1}[level]  # by hand
        found = _execute(
            snapshots, f"{{ runs(filter: {{trust: [{level}]}}, first: 100) {{ edges {{ node {{ name }} }} }} }}", {}
        )
        assert sorted(edge["node"]["name"] for edge in found["runs"]["edges"]) == expected, level

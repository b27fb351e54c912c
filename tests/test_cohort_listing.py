"""The `cohorts` list in each order and the filters of `cohorts` and `runs` on a registry of several
cohorts, worked out by hand: three GPUs with 3, 2 and 2 runs (one timed out) of one workload case, one run on a
workload suite, an operation and a workload that exist but have no runs (docs/api.md:
`cohorts(order: LARGEST | NEWEST_RECORD | KEY)`; LARGEST is the default, largest first then key)."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
    make_workload_suite,
    to_manifest,
)
from signing import T0

from kernelindex import registry
from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

TODAY = dt.date(2026, 11, 29)
OPERATION = make_operation("listing-op")
IDLE_OPERATION = make_operation("idle-op")  # published, never run
CASE = make_workload(OPERATION, name="listing-case")
IDLE_CASE = make_workload(OPERATION, tokens=4096, name="idle-case")  # published, never run
SUITE = make_workload_suite(OPERATION, name="listing-suite")
KERNEL = make_implementation(OPERATION, "listing-kernel")
IDLE_KERNEL = make_implementation(OPERATION, "idle-kernel")  # published, never run
PROTOCOL = make_protocol()
B200 = make_environment("b200")
H100 = make_environment("h100", product="NVIDIA H100", architecture="sm_90")
A100 = make_environment("a100", product="NVIDIA A100", architecture="sm_80")


def _run(
    environment: dict[str, Any],
    latency: int,
    day: int,
    name: str,
    workload: dict[str, Any] = CASE,
    status: str = "passed",
) -> Any:
    observed = f"2026-09-{day:02d}T00:00:00Z"
    return make_run(KERNEL, workload, PROTOCOL, environment, latency, observed, name=name, status=status)


# Each cohort's record is set when its fastest run is published; the commits below publish the
# cohorts oldest first: A100 (day 1), B200 (day 2), the suite (day 3), H100 (day 4).
RUNS = {
    "a100": [_run(A100, 9000, 1, "a100-1"), _run(A100, 9100, 1, "a100-2")],
    "b200": [_run(B200, 5000, 2, "b200-1"), _run(B200, 5100, 2, "b200-2"), _run(B200, 5200, 2, "b200-3")],
    "suite": [_run(B200, 4000, 3, "suite-1", SUITE)],
    # a timed-out run is a member of its cohort (same comparison key) but never eligible, never a record
    "h100": [_run(H100, 7000, 4, "h100-1"), _run(H100, 6000, 5, "h100-timeout", status="timeout")],
}


@pytest.fixture(scope="module")
def listing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshots, dict[str, str]]:
    store = registry.GitStore.init(tmp_path_factory.mktemp("listing") / "manifests.git")
    base = [OPERATION, IDLE_OPERATION, CASE, IDLE_CASE, SUITE, KERNEL, IDLE_KERNEL, PROTOCOL, B200, H100, A100]
    store.add([to_manifest(d) for d in base], commit_meta(T0, subject="Definitions"))
    for hour, group in enumerate(("a100", "b200", "suite", "h100"), start=1):
        source = "other-lab" if group == "h100" else "test"  # the `Source:` trailer of the commit
        store.add([to_manifest(d) for d in RUNS[group]], commit_meta(T0 + 3600 * hour, subject=group, source=source))
    snapshots = Snapshots(store.path)
    snapshots.load()
    facts = snapshots.head.facts
    keys = {group: facts[digest_of(runs[0])].cohort for group, runs in RUNS.items()}
    assert all(keys.values()) and len(set(keys.values())) == 4  # four cohorts
    return snapshots, {group: key for group, key in keys.items() if key is not None}


def _execute(snapshots: Snapshots, query: str) -> dict[str, Any]:
    context = Context(snapshots, StoredObjects(snapshots), "http://test", TODAY, snapshots.head)
    result = asyncio.run(schema.execute(query, context_value=context, root_value=Query()))
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def _cohorts(snapshots: Snapshots, arguments: str) -> list[str]:
    found = _execute(snapshots, f"{{ cohorts({arguments}) {{ totalCount edges {{ node {{ key }} }} }} }}")["cohorts"]
    keys = [edge["node"]["key"] for edge in found["edges"]]
    assert found["totalCount"] == len(keys)
    return keys


def test_each_order_of_the_cohorts(listing: tuple[Snapshots, dict[str, str]]) -> None:
    snapshots, keys = listing
    by_size = [keys["b200"], *sorted([keys["a100"], keys["h100"]]), keys["suite"]]  # 3, two of 2 by key, 1
    assert _cohorts(snapshots, "first: 20") == by_size
    assert _cohorts(snapshots, "order: LARGEST") == by_size
    assert _cohorts(snapshots, "order: KEY") == sorted(keys.values())
    # At least n runs: a prefix of the largest-first order, cut exactly at n (sizes 3, 2, 2, 1).
    for least, kept in ((0, 4), (1, 4), (2, 3), (3, 1), (4, 0), (-1, 4)):
        assert _cohorts(snapshots, f"filter: {{minSize: {least}}}") == by_size[:kept], least
    assert _cohorts(snapshots, 'filter: {minSize: 2, gpu: "b200"}') == [keys["b200"]]
    newest = [keys["h100"], keys["suite"], keys["b200"], keys["a100"]]  # the records, newest first
    assert _cohorts(snapshots, "order: NEWEST_RECORD") == newest
    assert _cohorts(snapshots, 'order: NEWEST_RECORD, filter: {gpu: "b200"}') == [keys["suite"], keys["b200"]]


@pytest.mark.parametrize(
    ("condition", "cohorts", "runs"),
    [
        ('{operation: "listing-op"}', ["b200", "a100", "h100", "suite"], 8),
        ('{operation: "idle-op"}', [], 0),  # published, no runs
        ('{workload: "listing-case"}', ["b200", "a100", "h100"], 7),
        ('{workload: "listing-suite"}', ["suite"], 1),  # a suite is a workload too
        ('{workload: "idle-case"}', [], 0),  # published, no runs
        ('{workload: "no-such-workload"}', [], 0),
        ('{gpu: "sm_90"}', ["h100"], 2),
        ('{gpu: "b200"}', ["b200", "suite"], 4),
    ],
)
def test_filters_on_several_cohorts(
    listing: tuple[Snapshots, dict[str, str]], condition: str, cohorts: list[str], runs: int
) -> None:
    snapshots, keys = listing
    found = _cohorts(snapshots, f"filter: {condition}")
    assert sorted(found) == sorted(keys[group] for group in cohorts)
    assert _execute(snapshots, f"{{ runs(filter: {condition}, first: 100) {{ totalCount }} }}")["runs"] == {
        "totalCount": runs
    }


def test_every_run_without_a_filter(listing: tuple[Snapshots, dict[str, str]]) -> None:
    snapshots, _ = listing
    found = _execute(snapshots, "{ runs(first: 100) { totalCount edges { node { name } } } }")["runs"]
    names = sorted(edge["node"]["name"] for edge in found["edges"])
    assert found["totalCount"] == 8
    assert names == sorted(run["metadata"]["name"] for group in RUNS.values() for run in group)


@pytest.mark.parametrize(
    ("condition", "count"),
    [
        ('{implementation: "listing-kernel"}', 8),
        ('{implementation: "idle-kernel"}', 0),  # published, no runs
        ('{implementation: "no-such-kernel"}', 0),
        ('{source: "test"}', 6),
        ('{source: " other-lab "}', 2),  # trimmed
        ('{source: "nobody"}', 0),
        ('{observedSince: "2026-09-02T00:00:00Z"}', 6),  # the B200 runs observed at exactly that instant count
        ('{observedSince: "2026-09-02T00:00:01Z"}', 3),
        ('{observedSince: "2026-09-04T00:00:00Z", gpu: "sm_90"}', 2),
        ('{observedSince: "2026-09-04T00:00:01Z", gpu: "sm_90"}', 1),
        ("{status: [PASSED]}", 7),
        ("{status: [TIMEOUT, COMPILE_ERROR]}", 1),
        ("{status: [COMPILE_ERROR]}", 0),
        ("{eligibleOnly: true}", 7),  # all but the timed-out run
        ("{eligibleOnly: false}", 8),
        ("{trust: [REPORTED, REPRODUCIBLE]}", 8),  # nothing here is verified
        ("{trust: [VERIFIED, REPLICATED]}", 0),
        ('{cohort: "sha256:000000000000"}', 0),  # a well-formed key of no cohort (a malformed one is refused)
    ],
)
def test_run_filters(listing: tuple[Snapshots, dict[str, str]], condition: str, count: int) -> None:
    snapshots, _ = listing
    found = _execute(snapshots, f"{{ runs(filter: {condition}, first: 100) {{ totalCount }} }}")["runs"]
    assert found == {"totalCount": count}


def test_runs_of_one_cohort(listing: tuple[Snapshots, dict[str, str]]) -> None:
    snapshots, keys = listing
    for group, runs in RUNS.items():
        query = f'{{ runs(filter: {{cohort: "{keys[group]}"}}, first: 100) {{ edges {{ node {{ name }} }} }} }}'
        names = sorted(edge["node"]["name"] for edge in _execute(snapshots, query)["runs"]["edges"])
        assert names == sorted(run["metadata"]["name"] for run in runs), group


def test_the_largest_first_order_follows_a_refresh(tmp_path: Path) -> None:
    """A commit that makes the smallest cohort the largest: the refreshed head lists it first (an order
    kept from the graph before would not), and the graph before still lists as it did."""
    store = registry.GitStore.init(tmp_path / "manifests.git")
    base = [OPERATION, CASE, SUITE, KERNEL, PROTOCOL, B200, A100]
    store.add([to_manifest(d) for d in [*base, *RUNS["a100"], *RUNS["suite"]]], commit_meta(T0, subject="two"))
    snapshots = Snapshots(store.path)
    snapshots.load()
    facts = snapshots.head.facts
    a100, suite = (facts[digest_of(RUNS[group][0])].cohort for group in ("a100", "suite"))
    before = snapshots.head
    assert _cohorts(snapshots, "first: 20") == [a100, suite]  # 2 runs, then 1
    more = [_run(B200, 4100 + i, 6, f"suite-more-{i}", SUITE) for i in range(2)]
    store.add([to_manifest(d) for d in more], commit_meta(T0 + 3600, subject="more"))
    snapshots.refresh()
    assert snapshots.head is not before
    assert _cohorts(snapshots, "first: 20") == [suite, a100]  # 3 runs, then 2
    assert before.cohorts_largest_first == (a100, suite)

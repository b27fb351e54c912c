"""ranking-v1 and the records ledger at their edges, with every expected value worked out by hand:
closed intervals that touch, bounds that are missing, a source-native cohort, ties in time between an
observation and a retraction, and whole `RecordEvent`s (every field), not just who and why.
The cohort key of a whole run is checked against upstream's export."""

from __future__ import annotations

import hashlib
import io
import json
import uuid
from typing import Any

import pytest
import zstandard
from helpers import DATA, EMBEDDED_REPO

from kernelindex import registry
from kernelindex.registry.cohorts import (
    Candidate,
    Primary,
    Ranked,
    RankInput,
    RecordEvent,
    cohort_key_of,
    correctness_key,
    primary_of,
    rank_cohort,
    record_events,
    tied,
)


def run(id: str, value: float, low: float | None = None, high: float | None = None, trust: int = 1) -> RankInput:
    return RankInput(id, value, low, high, trust, 0)


# tied and rank_cohort ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "source_native", "expected"),
    [
        (run("a", 10), run("b", 10), False, True),  # equal values tie, intervals or not
        (run("a", 10, 50, 60), run("b", 10, 1, 2), False, True),  # even when the intervals do not overlap
        (run("a", 10), run("b", 10), True, True),
        (run("a", 25, 20, 30), run("b", 15, 10, 20), False, True),  # closed intervals touching at 20 tie
        (run("a", 15, 10, 20), run("b", 25, 20, 30), False, True),  # in either order
        (run("a", 15, 10, 19), run("b", 25, 20, 30), False, False),  # a gap of one: no tie
        (run("a", 15, 10, 20), run("b", 25, 20, 30), True, False),  # source-native: only equal values tie
        (run("a", 15, 10, 20), run("b", 16), False, False),  # b has no interval
        (run("a", 15, 10, 20), run("b", 16, 10, None), False, False),  # b's interval is open above
        (run("a", 15, 10, 20), run("b", 16, None, 20), False, False),  # b's interval is open below
        (run("a", 15, 10, None), run("b", 16, 10, 20), False, False),  # a's interval is open above
        (run("a", 15, None, 20), run("b", 16, 10, 20), False, False),  # a's interval is open below
    ],
)
def test_tied(a: RankInput, b: RankInput, source_native: bool, expected: bool) -> None:
    assert tied(a, b, source_native) is expected


def test_a_source_native_cohort_ties_only_equal_values_even_with_intervals() -> None:
    inputs = [run("x", 10, 5, 30), run("y", 12, 5, 30), run("z", 12, 5, 30, trust=3)]
    assert rank_cohort(inputs, source_native=True) == [
        Ranked("x", 1, False),
        Ranked("z", 2, False),  # the 12s tie; higher trust first
        Ranked("y", 2, True),
    ]
    assert rank_cohort(inputs, source_native=False) == [  # all three intervals overlap: one chain
        Ranked("z", 1, False),
        Ranked("x", 1, True),
        Ranked("y", 1, True),
    ]


# primary_of fallbacks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "latency", "expected_value", "used"),
    [
        ("p95", {"mean": 4, "median": 3}, 3.0, "median"),  # anything but the mean: the median first
        ("mean", {"median": 7, "p95": 9}, 7.0, "median"),
        ("minimum", {"mean": 4}, 4.0, "mean"),  # then the mean
    ],
)
def test_a_fallback_primary_is_whole(declared: str, latency: dict[str, int], expected_value: float, used: str) -> None:
    spec = {"timing": {"primaryStatistic": declared, "latencyNs": {**latency, "confidence95": [1, 20]}}}
    note = f"primary statistic {declared!r} is not reported; its value is the {used}"
    assert primary_of(spec) == Primary("latency", declared, "ns", expected_value, 1.0, 20.0, note)


# correctness_key: a value never seen before ---------------------------------------------------------


def test_the_correctness_key_of_a_new_policy_is_its_digest() -> None:
    """A description no earlier call can have cached; the digest of its JCS text, written by hand."""
    tag = uuid.uuid4().hex
    policy = {"description": tag, "comparator": "allclose"}
    text = f'{{"correctness":{{"comparator":"allclose","description":"{tag}"}}}}'
    expected = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert correctness_key(policy) == expected
    assert correctness_key({"comparator": "allclose", "description": tag}) == expected  # key order is not identity


# cohort_key_of against upstream -----------------------------------------------------------------------


def _upstream_runs(limit: int) -> list[tuple[str, str]]:
    """(run digest, upstream comparisonKey) of the first `limit` runs of each source in the export."""
    export = sorted((DATA / "corpus").glob("kernelindex-catalog-*.jsonl.zst"))[0]
    by_source: dict[str, list[tuple[str, str]]] = {}
    with export.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
        for line in io.TextIOWrapper(stream, encoding="utf-8"):
            if '"benchmark_runs"' not in line[:40]:
                continue
            row = json.loads(line)["row"]
            found = by_source.setdefault(row["sourceId"], [])
            if len(found) < limit:
                found.append((row["runDigest"], row["comparisonKey"]))
    return [pair for pairs in by_source.values() for pair in pairs]


def test_cohort_key_of_a_run_is_upstreams_comparison_key() -> None:
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    checked = 0
    for digest, expected in _upstream_runs(5):
        document = store.read_document(head, digest, ("BenchmarkRun",))
        assert document is not None, digest
        workload = store.read_document(head, document["spec"]["workloadDigest"], ("WorkloadCase", "WorkloadSuite"))
        assert workload is not None
        assert cohort_key_of(document["spec"], workload) == expected, digest
        checked += 1
    assert checked == 15  # five runs from each of the three sources that publish kernel runs


# record_events: whole events --------------------------------------------------------------------------


def c(id: str, value: float, observed: int, withdrawn: int | None = None) -> Candidate:
    """A candidate observed at second `observed` (and withdrawn at second `withdrawn`) of 2026-01-01."""
    return Candidate(
        id,
        value,
        f"observed@{observed}",
        observed * 10**9,
        None if withdrawn is None else f"withdrawn@{withdrawn}",
        None if withdrawn is None else withdrawn * 10**9,
    )


def event(run: str, previous: str | None, cause: str, at: str, value: float, previous_value: float | None) -> Any:
    at_ns = int(at.split("@")[1]) * 10**9
    return RecordEvent("k", run, previous, cause, at, at_ns, value, previous_value)


def test_every_field_of_new_run_and_retraction_events() -> None:
    events = record_events("k", [c("a", 100, 1), c("r", 50, 2, withdrawn=10), c("b", 70, 3)])
    assert events == [
        event("a", None, "new_run", "observed@1", 100, None),
        event("r", "a", "new_run", "observed@2", 50, 100),
        event("b", "r", "retraction", "withdrawn@10", 70, 50),
    ]


def test_when_every_run_is_retracted_the_record_passes_down_then_lapses() -> None:
    events = record_events("k", [c("a", 100, 1, withdrawn=20), c("b", 50, 2, withdrawn=10)])
    assert events == [
        event("a", None, "new_run", "observed@1", 100, None),
        event("b", "a", "new_run", "observed@2", 50, 100),
        event("a", "b", "retraction", "withdrawn@10", 100, 50),
    ]  # a's own retraction at 20 leaves nobody: no event, no holder


def test_a_retraction_at_the_instant_of_observation_means_the_run_never_competed() -> None:
    events = record_events("k", [c("early", 1, 5, withdrawn=5), c("a", 100, 1), c("b", 90, 7)])
    assert events == [  # `early` is first in the input, and skipping it must not stop the others
        event("a", None, "new_run", "observed@1", 100, None),
        event("b", "a", "new_run", "observed@7", 90, 100),
    ]


def test_an_observation_and_a_retraction_at_the_same_instant_observe_first() -> None:
    """At second 10, `b` is observed and `a` (the holder) withdrawn: b has already arrived and takes over
    (by a retraction event), whatever the order of their ids."""
    events = record_events("k", [c("a", 100, 1, withdrawn=10), c("b", 150, 10)])
    assert events == [
        event("a", None, "new_run", "observed@1", 100, None),
        event("b", "a", "retraction", "withdrawn@10", 150, 100),
    ]


def test_an_equal_value_never_takes_the_record() -> None:
    events = record_events("k", [c("a", 100, 1), c("b", 100, 2), c("r", 200, 3, withdrawn=4)])
    assert events == [event("a", None, "new_run", "observed@1", 100, None)]


def test_after_a_handover_only_a_better_run_takes_the_record() -> None:
    events = record_events(
        "k",
        [c("a", 100, 1), c("r", 50, 2, withdrawn=5), c("other", 300, 3, withdrawn=4), c("slow", 120, 6), c("x", 90, 7)],
    )
    assert events == [
        event("a", None, "new_run", "observed@1", 100, None),
        event("r", "a", "new_run", "observed@2", 50, 100),
        event("a", "r", "retraction", "withdrawn@5", 100, 50),  # `other` withdrawn at 4 held nothing
        event("x", "a", "new_run", "observed@7", 90, 100),  # 120 is not better than 100; 90 is
    ]

"""ranking-v1, eligibility, trust, primary values, cohort keys and the records ledger, as tables."""

from __future__ import annotations

import contextlib
import random
import re
import string
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelindex.registry.canonical import json_digest
from kernelindex.registry.cohorts import (
    Candidate,
    Primary,
    RankInput,
    Trust,
    comparison_key,
    eligibility_reasons,
    metric_key,
    primary_of,
    rank_cohort,
    record_events,
    trust_of,
)
from kernelindex.registry.nodes import instant_ns

NOW = instant_ns("2026-08-01T00:00:00Z")


def run(
    id: str,
    value: float,
    interval: tuple[float, float] | None = None,
    trust: Trust = Trust.REPRODUCIBLE,
    observed: str = "2026-08-01T00:00:00Z",
) -> RankInput:
    low, high = interval if interval else (None, None)
    return RankInput(id, value, low, high, trust, instant_ns(observed))


# Upstream's ranking test vectors (apps/web/src/server/policy/ranking.test.ts), plus the flags
# its algorithm gives where upstream asserts only ranks and order.
RANKING_VECTORS: list[tuple[str, bool, list[RankInput], list[tuple[str, int, bool]]]] = [
    (
        "dense ranks, overlapping intervals tie",
        False,
        [
            run("a", 7810, (7788, 7841)),
            run("b", 8120, (8095, 8151)),
            run("c", 8138, (8092, 8177)),
            run("d", 9480, (9433, 9542)),
        ],
        [("a", 1, False), ("b", 2, False), ("c", 2, True), ("d", 3, False)],
    ),
    (
        "no tie when either interval is missing and values differ",
        False,
        [run("a", 100), run("b", 101, (95, 108))],
        [("a", 1, False), ("b", 2, False)],
    ),
    (
        "equal values tie even without intervals",
        False,
        [run("a", 100), run("b", 100)],
        [("a", 1, False), ("b", 1, True)],
    ),
    (
        "source-native cohorts are strict unless values are equal",
        True,
        [run("a", 100, (90, 130)), run("b", 101, (95, 140))],
        [("a", 1, False), ("b", 2, False)],
    ),
    (
        "inside a chain: trust, then recency, then id",
        False,
        [
            run("newer", 100, (95, 105), Trust.REPORTED, "2026-08-02T00:00:00Z"),
            run("older", 101, (96, 106), Trust.REPORTED, "2026-08-01T00:00:00Z"),
            run("trusted", 102, (97, 107), Trust.VERIFIED, "2026-07-01T00:00:00Z"),
        ],
        [("trusted", 1, False), ("newer", 1, True), ("older", 1, True)],
    ),
    (
        "no transitive chaining: c overlaps b but not a",
        False,
        [run("a", 100, (98, 103)), run("b", 103, (101, 106)), run("c", 106, (104, 109))],
        [("a", 1, False), ("b", 1, True), ("c", 2, False)],
    ),
    (
        "touching intervals overlap (closed bounds)",
        False,
        [run("a", 100, (90, 105)), run("b", 110, (105, 115))],
        [("a", 1, False), ("b", 1, True)],
    ),
    (
        "equal values, then id breaks the tie",
        True,
        [run("z", 5), run("m", 5), run("a", 5)],
        [("a", 1, False), ("m", 1, True), ("z", 1, True)],
    ),
    ("an empty cohort ranks nothing", False, [], []),
]


@pytest.mark.parametrize(
    ("name", "source_native", "inputs", "expected"), RANKING_VECTORS, ids=[v[0] for v in RANKING_VECTORS]
)
def test_ranking_v1_vectors(
    name: str, source_native: bool, inputs: list[RankInput], expected: list[tuple[str, int, bool]]
) -> None:
    ranked = rank_cohort(inputs, source_native)
    assert [(r.id, r.rank, r.tied_with_previous) for r in ranked] == expected


def test_ranking_does_not_depend_on_input_order() -> None:
    inputs = RANKING_VECTORS[0][2] + RANKING_VECTORS[5][2]
    expected = rank_cohort(inputs, False)
    shuffled = list(inputs)
    for seed in range(20):
        random.Random(seed).shuffle(shuffled)
        assert rank_cohort(shuffled, False) == expected


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({}, ()),
        (
            {"status": "runtime_error", "retracted": True, "has_primary": False},
            ("STATUS_RUNTIME_ERROR", "RETRACTED", "MISSING_PRIMARY_METRIC"),
        ),
        ({"superseded": True}, ("SUPERSEDED",)),
        ({"published": False, "status": "suspected_reward_hack"}, ("UNPUBLISHED", "STATUS_SUSPECTED_REWARD_HACK")),
        (
            {"published": False, "status": "timeout", "retracted": True, "superseded": True, "has_primary": False},
            ("UNPUBLISHED", "STATUS_TIMEOUT", "RETRACTED", "SUPERSEDED", "MISSING_PRIMARY_METRIC"),
        ),
    ],
)
def test_eligibility_reasons_in_upstream_order(facts: dict[str, Any], expected: tuple[str, ...]) -> None:
    base = {"published": True, "status": "passed", "retracted": False, "superseded": False, "has_primary": True}
    assert eligibility_reasons(**{**base, **facts}) == expected


@pytest.mark.parametrize(
    ("verifications", "source", "raw", "expected"),
    [
        (0, True, True, Trust.REPRODUCIBLE),
        (0, False, True, Trust.REPORTED),
        (0, True, False, Trust.REPORTED),
        (1, False, False, Trust.VERIFIED),
        (2, True, True, Trust.REPLICATED),
        (3, False, False, Trust.REPLICATED),
    ],
)
def test_trust(verifications: int, source: bool, raw: bool, expected: Trust) -> None:
    assert trust_of(independent_verifications=verifications, source_available=source, raw_evidence=raw) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"timing": {"primaryStatistic": "mean", "latencyNs": {"mean": 144571}}},
            Primary("latency", "mean", "ns", 144571.0),
        ),
        (
            {"timing": {"primaryStatistic": "median", "latencyNs": {"median": 8120, "confidence95": [8095, 8151]}}},
            Primary("latency", "median", "ns", 8120.0, 8095.0, 8151.0),
        ),
        (
            {"timing": {"primaryStatistic": "p95", "latencyNs": {"median": 10, "p95": 12}}},
            Primary("latency", "p95", "ns", 12.0),
        ),
        (
            {
                "measurements": [
                    {"metric": "score", "statistic": "geomean", "unit": "s", "value": 1e-5},
                    {"metric": "other", "statistic": "x", "unit": "y", "value": 2},
                ]
            },
            Primary("score", "geomean", "s", 1e-5),
        ),
        ({}, None),
        ({"measurements": []}, None),
    ],
)
def test_primary_of(spec: dict[str, Any], expected: Primary | None) -> None:
    assert primary_of(spec) == expected


@pytest.mark.parametrize(
    ("declared", "latency", "value", "used"),
    [
        ("mean", {"median": 7}, 7.0, "median"),
        ("median", {"mean": 9}, 9.0, "mean"),
        ("p95", {"median": 3}, 3.0, "median"),
        ("minimum", {"mean": 4}, 4.0, "mean"),
    ],
)
def test_primary_falls_back_like_upstream_and_says_so(
    declared: str, latency: dict[str, int], value: float, used: str
) -> None:
    primary = primary_of({"timing": {"primaryStatistic": declared, "latencyNs": latency}})
    assert primary is not None
    assert (primary.statistic, primary.value) == (declared, value)  # upstream keeps the declared label
    assert primary.note is not None and used in primary.note


def test_metric_key() -> None:
    assert metric_key(None) == "none"
    assert metric_key(Primary("score", "geomean", "s", 1.0)) == "score:geomean:s"


def _digest_like(rng: random.Random) -> str:
    return "sha256:" + "".join(rng.choice("0123456789abcdef") for _ in range(64))


def test_comparison_key_fast_path_equals_jcs() -> None:
    """The directly written canonical bytes give exactly the RFC 8785 digest."""
    rng = random.Random(7)
    for _ in range(500):
        values = [_digest_like(rng) for _ in range(5)]
        metric = rng.choice(["latency:mean:ns", "score:geomean:s", "none", "x_1:y_2:z_3"])
        operation, workload, protocol, environment, correctness = values
        key = comparison_key(operation, workload, protocol, environment, correctness, metric)
        assert key == json_digest(
            {
                "v": 1,
                "operation": operation,
                "workload": workload,
                "protocol": protocol,
                "environment": environment,
                "correctness": correctness,
                "metric": metric,
            }
        )


@given(st.lists(st.text(alphabet=string.printable + 'µ·\u2028"\\', max_size=20), min_size=6, max_size=6))
def test_comparison_key_any_text_equals_jcs(values: list[str]) -> None:
    operation, workload, protocol, environment, correctness, metric = values
    assert comparison_key(operation, workload, protocol, environment, correctness, metric) == json_digest(
        {
            "v": 1,
            "operation": operation,
            "workload": workload,
            "protocol": protocol,
            "environment": environment,
            "correctness": correctness,
            "metric": metric,
        }
    )


def candidate(id: str, value: float, observed: str, withdrawn: str | None = None) -> Candidate:
    return Candidate(id, value, observed, instant_ns(observed), withdrawn, instant_ns(withdrawn) if withdrawn else None)


def test_record_events_are_strict_improvements_in_time_order() -> None:
    events = record_events(
        "k",
        [
            candidate("b", 90, "2026-01-02T00:00:00Z"),
            candidate("a", 100, "2026-01-01T00:00:00Z"),
            candidate("c", 90, "2026-01-03T00:00:00Z"),  # equal to the record: not a new one
            candidate("d", 80, "2026-01-04T00:00:00Z"),
        ],
    )
    assert [(e.run, e.previous_run, e.cause, e.value, e.previous_value) for e in events] == [
        ("a", None, "new_run", 100, None),
        ("b", "a", "new_run", 90, 100),
        ("d", "b", "new_run", 80, 90),
    ]
    assert [e.at for e in events] == ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z"]


def test_same_instant_breaks_ties_by_id() -> None:
    events = record_events("k", [candidate("b", 5, "2026-01-01T00:00:00Z"), candidate("a", 7, "2026-01-01T00:00:00Z")])
    assert [e.run for e in events] == ["a", "b"]


def test_retracting_the_holder_moves_the_record_with_a_retraction_event() -> None:
    events = record_events(
        "k",
        [
            candidate("a", 100, "2026-01-01T00:00:00Z"),
            candidate("r", 50, "2026-01-02T00:00:00Z", withdrawn="2026-02-01T00:00:00Z"),
            candidate("c", 70, "2026-01-03T00:00:00Z"),
        ],
    )
    assert [(e.run, e.previous_run, e.cause) for e in events] == [
        ("a", None, "new_run"),
        ("r", "a", "new_run"),
        ("c", "r", "retraction"),
    ]
    assert events[-1].at == "2026-02-01T00:00:00Z"


def test_retracting_a_run_that_never_held_the_record_adds_nothing() -> None:
    events = record_events(
        "k",
        [
            candidate("a", 100, "2026-01-01T00:00:00Z"),
            candidate("r", 150, "2026-01-02T00:00:00Z", "2026-02-01T00:00:00Z"),
        ],
    )
    assert [e.cause for e in events] == ["new_run"]


def test_a_retraction_published_before_the_observation_means_the_run_never_competed() -> None:
    events = record_events(
        "k",
        [
            candidate("a", 100, "2026-01-01T00:00:00Z"),
            candidate("r", 50, "2026-03-01T00:00:00Z", "2026-02-01T00:00:00Z"),
        ],
    )
    assert [(e.run, e.cause) for e in events] == [("a", "new_run")]


def test_runs_observed_after_a_retraction_compete_with_the_new_holder() -> None:
    events = record_events(
        "k",
        [
            candidate("a", 100, "2026-01-01T00:00:00Z"),
            candidate("r", 50, "2026-01-02T00:00:00Z", "2026-02-01T00:00:00Z"),
            candidate("late", 90, "2026-03-01T00:00:00Z"),
        ],
    )
    assert [(e.run, e.cause) for e in events] == [
        ("a", "new_run"),
        ("r", "new_run"),
        ("a", "retraction"),
        ("late", "new_run"),
    ]


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T00:00:01.5Z", 1_500_000_000),
        ("1970-01-01T00:00:00.000000001Z", 1),
        ("1970-01-01T00:01Z", 60_000_000_000),
        ("2026-06-07T12:03:35.566Z", 1_780_833_815_566_000_000),
    ],
)
def test_instant_ns(text: str, ns: int) -> None:
    assert instant_ns(text) == ns


def _instant_ns_by_datetime(text: str) -> int:
    """The definition instant_ns keeps: `fromisoformat` of the instant without its fraction."""
    head, dot, rest = text.rstrip("Z").partition(".")
    seconds = int(datetime.fromisoformat(head + "+00:00").timestamp())
    return seconds * 1_000_000_000 + int((rest + "000000000")[:9] if dot else "0")


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    st.sampled_from(["", ".", ".5", ".123", ".000", ".123456789", ".1234567891"]),
)
def test_instant_ns_equals_fromisoformat_on_any_instant(when: datetime, fraction: str) -> None:
    text = (
        when.strftime("%Y-%m-%dT%H:%M:%S")
        if when.year >= 1000
        else f"{when.year:04d}" + when.strftime("-%m-%dT%H:%M:%S")
    )
    text += fraction + "Z"
    # Twice: the first reading of a day remembers it, and `...SS.fffZ` with a day remembered takes
    # the short path.
    assert instant_ns(text) == instant_ns(text) == _instant_ns_by_datetime(text)


@pytest.mark.parametrize(
    "text",
    ["2026-02-30T00:00:00Z", "2026-06-07T24:00:00Z", "2026-06-07T12:60:00Z", "2026-06-07T12:00:60Z",
     "2026-06-07T1٢:00:00Z", "2026-06-07T12-00-00Z", "2026-06-07 12:00:00Z", "2026-06-07T12:00:00+02:00Z",
     "2026-06-07T24:00:00.000Z", "2026-06-07T12:60:00.000Z", "2026-06-07T12:00:60.000Z", "2026-06-07T1٢:00:00.000Z",
     "2026-06-07T12:00:00.0٢0Z", "2026-06-07T+1:00:00.000Z", "2026-06-07T12:00:00.+00Z", "2026-06-07T12:00:00. 00Z"],
)  # fmt: skip
def test_instant_ns_refuses_what_fromisoformat_refuses(text: str) -> None:
    with contextlib.suppress(ValueError):  # the day remembered: a `...SS.fffZ` form takes the short path
        instant_ns(text[:10] + "T00:00:00.000Z")
    try:
        expected = _instant_ns_by_datetime(text)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            instant_ns(text)
    else:
        assert instant_ns(text) == expected

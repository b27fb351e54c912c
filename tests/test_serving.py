"""serving-v1 as pure functions: KernelIndex's serving policy test cases as tables, and the boundaries.

The first cases of each table are upstream's (apps/web/src/server/policy/serving.test.ts in
SamMausberg/KernelIndex), with their expected values; the rest are boundaries worked out by hand.
"""

from __future__ import annotations

import math

import pytest

from kernelindex.registry import serving as s
from kernelindex.registry.errors import InvalidConstraint, UnknownMetric, UnsupportedOperator, WrongUnit

PARTS = s.CohortParts(
    model_digest="sha256:" + "a" * 64,
    tokenizer="ref-tokenizer",
    workload_digest="sha256:" + "b" * 64,
    protocol_key="mlperf-loadgen/v6.0/unspecified/streaming/open_loop",
    topology_key="nvidia/H100/8x1/unspecified",
    quality_policy="mlperf-closed-99",
    metric_set_key="output_token_throughput_tps·reported",
)


def tps(value: float) -> s.Measurement:
    return s.Measurement("output_token_throughput_tps", "reported", "tokens_s", value)


def ttft(value: float, unit: str = "ms", statistic: str = "p99") -> s.Measurement:
    return s.Measurement("ttft_ms", statistic, unit, value)


def candidate(ident: str, *measurements: s.Measurement, declared: tuple[s.Bound, ...] = ()) -> s.Candidate:
    return s.Candidate(ident, measurements, declared)


def bound(value: float, operator: str = "<=") -> s.Bound:
    return s.Bound("ttft_ms", "p99", operator, value)


# Cohort identity ----------------------------------------------------------------------------------


def test_the_cohort_key_is_stable_and_every_identity_part_separates_cohorts() -> None:
    key = s.cohort_key(PARTS)
    assert key == s.cohort_key(s.CohortParts(*PARTS))
    for name, part in zip(PARTS._fields, PARTS, strict=True):
        assert s.cohort_key(PARTS._replace(**{name: f"{part}-x"})) != key, name


def test_a_missing_tokenizer_is_null_not_absent_nor_empty() -> None:
    # upstream canonicalizes `tokenizer: null` (the model names none): an empty name is another cohort
    assert s.cohort_key(PARTS._replace(tokenizer=None)) != s.cohort_key(PARTS._replace(tokenizer=""))


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (
            [("ttft_ms", "p99"), ("output_token_throughput_tps", "reported"), ("ttft_ms", "p99")],
            "output_token_throughput_tps·reported,ttft_ms·p99",
        ),
        ([("ttft_ms", "p99"), ("ttft_ms", "p50")], "ttft_ms·p50,ttft_ms·p99"),
        ([("b", "x"), ("a", "z")], "a·z,b·x"),
        ([], ""),
    ],
)
def test_the_metric_set_key_is_sorted_and_deduplicated(pairs: list[tuple[str, str]], expected: str) -> None:
    assert s.metric_set_key(pairs) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("mlperf_loadgen", "v5.1", None, True, "open_loop"), "mlperf_loadgen/v5.1/unspecified/streaming/open_loop"),
        (("mlperf_loadgen", "v6.0", None, False, "offline"), "mlperf_loadgen/v6.0/unspecified/non_streaming/offline"),
        (("vllm_bench", "0.9", "colocated", True, "closed_loop"), "vllm_bench/0.9/colocated/streaming/closed_loop"),
    ],
)
def test_protocol_keys(args: tuple[str, str, str | None, bool, str], expected: str) -> None:
    assert s.protocol_key(*args) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("nvidia", "H100", 8, 1, None), "nvidia/H100/8x1/unspecified"),
        ((None, "NVIDIA GB200", 4, 18, "nvlink"), "unknown/NVIDIA GB200/4x18/nvlink"),
    ],
)
def test_topology_keys(args: tuple[str | None, str, int, int, str | None], expected: str) -> None:
    assert s.topology_key(*args) == expected


# Feasibility --------------------------------------------------------------------------------------

AT_MOST_500 = s.Constraint("ttft_ms", "p99", "<=", 500)


@pytest.mark.parametrize(
    ("run", "constraint", "expected"),
    [
        # upstream: measured beats declared beats unknown
        (candidate("m", ttft(450)), AT_MOST_500, s.Outcome("measured", True, observed=450)),
        (candidate("d", tps(100), declared=(bound(450),)), AT_MOST_500, s.Outcome("declared", True, bound=450)),
        (candidate("u", tps(100)), AT_MOST_500, s.Outcome("unknown", None)),
        # a measured value decides even when a declared bound would say otherwise
        (candidate("md", ttft(600), declared=(bound(450),)), AT_MOST_500, s.Outcome("measured", False, observed=600)),
        # upstream: a declared bound looser than the request does not satisfy it
        (candidate("l", tps(100), declared=(bound(2000),)), AT_MOST_500, s.Outcome("declared", False, bound=2000)),
        # boundaries of a measured value
        (candidate("e", ttft(500)), AT_MOST_500, s.Outcome("measured", True, observed=500)),
        (candidate("e", ttft(500)), AT_MOST_500._replace(operator="<"), s.Outcome("measured", False, observed=500)),
        (candidate("e", ttft(499.999)), AT_MOST_500._replace(operator="<"), s.Outcome("measured", True, observed=499.999)),
        # boundaries of a declared bound: "<= 500" guarantees "<= 500" but not "< 500"
        (candidate("b", declared=(bound(500),)), AT_MOST_500, s.Outcome("declared", True, bound=500)),
        (candidate("b", declared=(bound(500),)), AT_MOST_500._replace(operator="<"), s.Outcome("declared", False, bound=500)),
        (candidate("b", declared=(bound(500, "<"),)), AT_MOST_500._replace(operator="<"), s.Outcome("declared", True, bound=500)),
        (candidate("b", declared=(bound(500, "<"),)), AT_MOST_500, s.Outcome("declared", True, bound=500)),
        (candidate("b", declared=(bound(500.001),)), AT_MOST_500, s.Outcome("declared", False, bound=500.001)),
        # the statistic must match: a p50 says nothing about a p99 bound
        (candidate("s", ttft(100, statistic="p50")), AT_MOST_500, s.Outcome("unknown", None)),
        # a measurement in another unit is never compared (a refinement of upstream)
        (candidate("unit", ttft(0.3, unit="s")), AT_MOST_500, s.Outcome("unknown", None)),
        # throughput floors: measured decides; a declared upper bound never decides a lower bound
        (candidate("t", tps(1000)), s.Constraint("output_token_throughput_tps", "reported", ">=", 1000), s.Outcome("measured", True, observed=1000)),
        (candidate("t", tps(1000)), s.Constraint("output_token_throughput_tps", "reported", ">", 1000), s.Outcome("measured", False, observed=1000)),
        (
            candidate("t", declared=(s.Bound("output_token_throughput_tps", "reported", "<=", 5),)),
            s.Constraint("output_token_throughput_tps", "reported", ">=", 1),
            s.Outcome("unknown", None),
        ),
    ],
)  # fmt: skip
def test_constraint_outcomes(run: s.Candidate, constraint: s.Constraint, expected: s.Outcome) -> None:
    assert s.constraint_outcome(run, constraint) == expected


@pytest.mark.parametrize(
    ("run", "feasible", "reasons"),
    [
        (candidate("u", tps(100)), False, ("METRIC_NOT_REPORTED:ttft_ms",)),
        (candidate("l", tps(100), declared=(bound(2000),)), False, ("CONSTRAINT_UNSATISFIED:ttft_ms",)),
        (candidate("d", tps(100), declared=(bound(450),)), True, ()),
        (candidate("m", ttft(450), tps(100)), True, ()),
    ],
)
def test_feasibility_names_every_unmet_constraint(run: s.Candidate, feasible: bool, reasons: tuple[str, ...]) -> None:
    result = s.feasibility(run, [AT_MOST_500])
    assert (result.feasible, result.reasons) == (feasible, reasons)
    assert len(result.outcomes) == 1


def test_feasibility_reports_each_constraint_in_order() -> None:
    floor = s.Constraint("output_token_throughput_tps", "reported", ">=", 200)
    result = s.feasibility(candidate("x", tps(100)), [AT_MOST_500, floor])
    assert result.reasons == ("METRIC_NOT_REPORTED:ttft_ms", "CONSTRAINT_UNSATISFIED:output_token_throughput_tps")
    assert [o.state for o in result.outcomes] == ["unknown", "measured"]
    assert s.feasibility(candidate("x", tps(100)), []) == s.Feasibility(True, (), ())


# Checking a client's constraints --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error", "where"),
    [
        (("ttft", None, "<=", 500, None), UnknownMetric, "c.metric"),
        (("TTFT_MS", None, "<=", 500, None), UnknownMetric, "c.metric"),
        (("ttft_ms", None, "<=", 0.5, "s"), WrongUnit, "c.unit"),
        (("output_token_throughput_tps", None, ">=", 5, "req/s"), WrongUnit, "c.unit"),
        (("ttft_ms", None, ">=", 500, None), UnsupportedOperator, "c.operator"),
        (("ttft_ms", None, ">", 500, None), UnsupportedOperator, "c.operator"),
        (("ttft_ms", None, "==", 500, None), UnsupportedOperator, "c.operator"),
        (("output_token_throughput_tps", None, "<=", 5, None), UnsupportedOperator, "c.operator"),
        (("ttft_ms", None, "<=", math.inf, None), UnsupportedOperator, "c.value"),
        (("ttft_ms", None, "<=", math.nan, None), UnsupportedOperator, "c.value"),
    ],
)
def test_bad_constraints_are_refused_saying_where_and_why(
    args: tuple[str, str | None, str, float, str | None], error: type[InvalidConstraint], where: str
) -> None:
    with pytest.raises(error) as raised:
        s.check_constraint(*args, where="c")
    assert raised.value.where == where
    assert str(raised.value).startswith(f"invalid constraint: {where}: ")


@pytest.mark.parametrize(
    ("args", "measured", "expected"),
    [
        (("ttft_ms", None, "<=", 500, None), (), s.Constraint("ttft_ms", "p99", "<=", 500)),
        (("ttft_ms", None, "<", 500, "ms"), ("p50",), s.Constraint("ttft_ms", "p50", "<", 500)),
        (("ttft_ms", None, "<=", 500, None), ("p50", "p99"), s.Constraint("ttft_ms", "p99", "<=", 500)),
        (("ttft_ms", "p90", "<=", 500, None), ("p50",), s.Constraint("ttft_ms", "p90", "<=", 500)),
        (
            ("output_token_throughput_tps", None, ">=", 9, "tokens/s"),
            ("reported",),
            s.Constraint("output_token_throughput_tps", "reported", ">=", 9),
        ),
        (
            ("output_token_throughput_tps", None, ">", 9, "tokens_s"),
            (),
            s.Constraint("output_token_throughput_tps", "p99", ">", 9),
        ),
    ],
)
def test_good_constraints_take_the_cohorts_statistic_by_default(
    args: tuple[str, str | None, str, float, str | None], measured: tuple[str, ...], expected: s.Constraint
) -> None:
    assert s.check_constraint(*args, where="c", measured=measured) == expected


@pytest.mark.parametrize(
    ("args", "measured", "expected"),
    [
        (("output_token_throughput_tps", None, None), ("reported",), ("reported", "maximize")),
        (("output_token_throughput_tps", None, None), (), ("mean", "maximize")),  # upstream's default
        (("ttft_ms", None, None), (), ("p99", "minimize")),
        (("ttft_ms", "p50", "maximize"), (), ("p50", "maximize")),
    ],
)
def test_objectives_default_to_the_vocabulary(
    args: tuple[str, str | None, str | None], measured: tuple[str, ...], expected: tuple[str, str]
) -> None:
    objective = s.check_objective(*args, where="objective", measured=measured)
    assert (objective.statistic, objective.direction) == expected
    with pytest.raises(UnknownMetric, match=r"objective\.metric"):
        s.check_objective("latency", None, None, where="objective")


# Objective ranking --------------------------------------------------------------------------------


def test_upstream_ranking_dense_ranks_with_ties_and_unreported_metrics_rank_null() -> None:
    ranked = s.rank_by_objective(
        [candidate("a", tps(500)), candidate("b", tps(700)), candidate("c", tps(700)), candidate("d", ttft(100))],
        s.Objective("output_token_throughput_tps", "reported", "maximize"),
    )
    assert {r.id: r.rank for r in ranked} == {"b": 1, "c": 1, "a": 3, "d": None}
    assert [r.id for r in ranked] == ["b", "c", "a", "d"]  # presented by rank, then id; nulls last


@pytest.mark.parametrize(
    ("values", "direction", "expected"),
    [
        ({"a": 3.0, "b": 1.0, "c": 2.0}, "minimize", [("b", 1), ("c", 2), ("a", 3)]),
        ({"a": 3.0, "b": 1.0, "c": 2.0}, "maximize", [("a", 1), ("c", 2), ("b", 3)]),
        ({"a": 1.0, "b": 1.0, "c": 1.0}, "minimize", [("a", 1), ("b", 1), ("c", 1)]),
        ({"a": 1.0, "b": 2.0, "c": 2.0, "d": 3.0}, "minimize", [("a", 1), ("b", 2), ("c", 2), ("d", 4)]),
        ({"x": 1.0, "y": 1.0000001}, "minimize", [("x", 1), ("y", 2)]),
        ({}, "minimize", []),
    ],
)
def test_ranking_boundaries(values: dict[str, float], direction: str, expected: list[tuple[str, int]]) -> None:
    candidates = [candidate(k, ttft(v)) for k, v in values.items()]
    ranked = s.rank_by_objective(candidates, s.Objective("ttft_ms", "p99", direction))  # type: ignore[arg-type]
    assert [(r.id, r.rank) for r in ranked] == expected


# Pareto frontier ----------------------------------------------------------------------------------


def point(ident: str, throughput: float, latency: float) -> s.Candidate:
    return candidate(ident, tps(throughput), ttft(latency))


def test_upstream_frontier_keeps_the_non_dominated_set_over_shared_axes() -> None:
    result = s.pareto_frontier(
        [point("fast_low", 400, 100), point("slow_high", 900, 800), point("worse", 300, 900), point("mid", 600, 400)]
    )
    assert sorted(result.frontier) == ["fast_low", "mid", "slow_high"]
    assert result.dominated == ("worse",)
    assert result.axes == ("output_token_throughput_tps·reported", "ttft_ms·p99")


def test_upstream_frontier_flags_candidates_missing_axes_others_measured() -> None:
    result = s.pareto_frontier([point("full", 500, 200), candidate("throughput_only", tps(999))])
    assert "throughput_only" in result.frontier
    assert result.not_comparable == (("throughput_only", ("ttft_ms·p99",)),)
    assert result.axes == ("output_token_throughput_tps·reported",)


def test_upstream_frontier_degenerates_to_a_single_axis_best() -> None:
    assert s.pareto_frontier([candidate("a", tps(100)), candidate("b", tps(200))]).frontier == ("b",)


@pytest.mark.parametrize(
    ("points", "frontier", "dominated"),
    [
        # equal points never dominate each other: both stay
        ([("a", 500, 200), ("b", 500, 200)], ("a", "b"), ()),
        # equal on one axis and worse on the other: dominated
        ([("a", 500, 200), ("b", 500, 201)], ("a",), ("b",)),
        ([("a", 500, 200), ("b", 499, 200)], ("a",), ("b",)),
        # a tie on the single best point of a single axis keeps both
        ([("a", 5, 1), ("b", 5, 1), ("c", 4, 1)], ("a", "b"), ("c",)),
        # trade-offs: all on the frontier, best throughput first
        ([("a", 1, 1), ("b", 2, 2), ("c", 3, 3)], ("c", "b", "a"), ()),
        # one point dominating all others
        ([("a", 9, 1), ("b", 2, 2), ("c", 3, 3)], ("a",), ("c", "b")),
        ([("a", 9, 1), ("b", 2, 2), ("c", 2, 1)], ("a",), ("c", "b")),
        ([("only", 1, 1)], ("only",), ()),
    ],
)
def test_frontier_ties_and_dominated_points(
    points: list[tuple[str, float, float]], frontier: tuple[str, ...], dominated: tuple[str, ...]
) -> None:
    result = s.pareto_frontier([point(*p) for p in points])
    assert (result.frontier, result.dominated, result.not_comparable) == (frontier, dominated, ())


def test_a_latency_axis_prefers_lower_values() -> None:
    result = s.pareto_frontier([candidate("slow", ttft(300)), candidate("fast", ttft(100))])
    assert (result.frontier, result.dominated) == (("fast",), ("slow",))


def test_with_no_shared_axis_nothing_is_comparable() -> None:
    result = s.pareto_frontier([candidate("t", tps(1)), candidate("l", ttft(1))])
    assert (result.axes, result.frontier, result.dominated) == ((), (), ())
    assert result.not_comparable == (("t", ("ttft_ms·p99",)), ("l", ("output_token_throughput_tps·reported",)))
    assert s.pareto_frontier([]) == s.Frontier((), (), (), ())


def test_metrics_outside_the_vocabulary_or_in_another_unit_are_no_axis() -> None:
    result = s.pareto_frontier(
        [
            candidate("a", tps(1), s.Measurement("watts", "mean", "w", 1.0), ttft(1, unit="s")),
            candidate("b", tps(2), s.Measurement("watts", "mean", "w", 0.5), ttft(1, unit="s")),
        ]
    )
    assert (result.axes, result.frontier, result.dominated) == (
        ("output_token_throughput_tps·reported",),
        ("b",),
        ("a",),
    )

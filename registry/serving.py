"""serving-v1: how LLM-serving results compare. Cohort keys, the metric vocabulary, SLO feasibility,
ranking by an objective and the Pareto frontier. Pure functions over plain values.

These follow KernelIndex's serving policy (`apps/web/src/server/policy/serving.ts`): serving
results never share a cohort, a key or a score with kernel runs. Two serving runs compare only
inside one cohort, whose key is the digest of seven identity parts; the configuration and the
stack are what competes inside it. The cohort keys reproduce all 722 of the upstream export.

>>> protocol_key("mlperf_loadgen", "v5.1", None, True, "open_loop")
'mlperf_loadgen/v5.1/unspecified/streaming/open_loop'
>>> topology_key(None, "NVIDIA GB200", 4, 18, None)
'unknown/NVIDIA GB200/4x18/unspecified'
>>> metric_set_key([("ttft_ms", "p99"), ("output_token_throughput_tps", "reported"), ("ttft_ms", "p99")])
'output_token_throughput_tps·reported,ttft_ms·p99'

Two refinements of upstream, both stricter and both documented where they apply: a measurement
in a unit other than its metric's is shown but never compared, and a declared `<= v` bound does
not satisfy a requested `< v` (the harness guaranteed at most v, not less than v).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import Literal, NamedTuple

from kernelindex.registry.canonical import json_digest
from kernelindex.registry.errors import UnknownMetric, UnsupportedOperator, WrongUnit

__all__ = [
    "POLICY_VERSION",
    "SERVING_METRICS",
    "Bound",
    "Candidate",
    "CohortParts",
    "Constraint",
    "Feasibility",
    "Frontier",
    "Measurement",
    "MetricDefinition",
    "Objective",
    "Outcome",
    "RankedCandidate",
    "axis",
    "check_constraint",
    "check_objective",
    "cohort_key",
    "comparable",
    "constraint_outcome",
    "default_statistic",
    "feasibility",
    "metric_set_key",
    "pareto_frontier",
    "protocol_key",
    "rank_by_objective",
    "topology_key",
]

POLICY_VERSION = "serving-v1"

Direction = Literal["min", "max"]


class MetricDefinition(NamedTuple):
    """A metric of the vocabulary: its unit (upstream's spelling, and the identifier a manifest
    must use, since manifest units match `^[a-z][a-z0-9_]*$`) and which way is better."""

    unit: str
    manifest_unit: str
    direction: Direction


SERVING_METRICS: dict[str, MetricDefinition] = {
    "ttft_ms": MetricDefinition("ms", "ms", "min"),
    "tpot_ms": MetricDefinition("ms", "ms", "min"),
    "itl_ms": MetricDefinition("ms", "ms", "min"),
    "e2e_latency_ms": MetricDefinition("ms", "ms", "min"),
    "request_throughput_rps": MetricDefinition("req/s", "req_s", "max"),
    "output_token_throughput_tps": MetricDefinition("tokens/s", "tokens_s", "max"),
    "token_throughput_tps": MetricDefinition("tokens/s", "tokens_s", "max"),
    "goodput": MetricDefinition("tokens/s", "tokens_s", "max"),
    "error_rate": MetricDefinition("ratio", "ratio", "min"),
}
"""The serving-v1 metric vocabulary (upstream's, with the manifest spelling of each unit)."""

_UPPER = ("<=", "<")  # bounds a metric whose lower values are better
_LOWER = (">=", ">")  # bounds a metric whose higher values are better


# Cohort identity --------------------------------------------------------------------------------


def protocol_key(
    harness: str, harness_version: str, placement: str | None, streaming: bool, load_generation: str
) -> str:
    """Harness, its version, placement, streaming and load generation, joined by `/`."""
    mode = "streaming" if streaming else "non_streaming"
    return "/".join((harness, harness_version, placement or "unspecified", mode, load_generation))


def topology_key(vendor: str | None, accelerator: str, per_node: int, nodes: int, interconnect: str | None) -> str:
    """Accelerator vendor and model, accelerators per node x nodes, and interconnect."""
    return "/".join((vendor or "unknown", accelerator, f"{per_node}x{nodes}", interconnect or "unspecified"))


def metric_set_key(pairs: Iterable[tuple[str, str]]) -> str:
    """The distinct `metric·statistic` pairs, sorted: runs compare only when they measured the
    same things the same way. (Code-point order, as upstream's: the pairs are ASCII and `·`.)"""
    return ",".join(sorted({f"{metric}·{statistic}" for metric, statistic in pairs}))


class CohortParts(NamedTuple):
    """The seven identity parts of a serving cohort."""

    model_digest: str
    tokenizer: str | None  # the model's spec.tokenizer.name
    workload_digest: str
    protocol_key: str
    topology_key: str
    quality_policy: str
    metric_set_key: str


def cohort_key(parts: CohortParts) -> str:
    """`sha256:` + the digest of the RFC 8785 JSON of the parts, named as upstream names them.

    >>> key = cohort_key(CohortParts("sha256:" + "a" * 64, None, "sha256:" + "b" * 64, "p", "t", "q", "m"))
    >>> key[:7], len(key)
    ('sha256:', 71)
    """
    return json_digest(
        {
            "modelDigest": parts.model_digest,
            "tokenizer": parts.tokenizer,
            "workloadDigest": parts.workload_digest,
            "protocolKey": parts.protocol_key,
            "topologyKey": parts.topology_key,
            "qualityPolicy": parts.quality_policy,
            "metricSetKey": parts.metric_set_key,
        }
    )


# Candidates -------------------------------------------------------------------------------------


class Measurement(NamedTuple):
    metric: str
    statistic: str
    unit: str
    value: float


class Bound(NamedTuple):
    """A bound the workload declares its harness enforced (an SLO): cited, not measured."""

    metric: str
    statistic: str
    operator: str  # "<=" or "<" (the schema allows no other)
    value: float


class Candidate(NamedTuple):
    """A serving run as the policy sees it."""

    id: str
    measurements: tuple[Measurement, ...]
    declared: tuple[Bound, ...] = ()


def comparable(measurement: Measurement) -> bool:
    """A measurement takes part in comparisons when its metric is in the vocabulary and it is
    in the metric's unit (a refinement of upstream, which never looks at units)."""
    definition = SERVING_METRICS.get(measurement.metric)
    return definition is not None and measurement.unit in (definition.unit, definition.manifest_unit)


def axis(metric: str, statistic: str) -> str:
    return f"{metric}·{statistic}"


def _value(candidate: Candidate, metric: str, statistic: str) -> float | None:
    for m in candidate.measurements:
        if m.metric == metric and m.statistic == statistic and comparable(m):
            return m.value
    return None


def default_statistic(metric: str, measured: Collection[str], *, ranking: bool) -> str:
    """The statistic a constraint or objective means when it names none: the one the cohort
    measures for that metric when there is exactly one, else upstream's default (p99 for a
    constraint; for an objective p99 when lower is better, else mean)."""
    if len(measured) == 1:
        return next(iter(measured))
    if ranking and SERVING_METRICS[metric].direction == "max":
        return "mean"
    return "p99"


# Feasibility ------------------------------------------------------------------------------------


class Constraint(NamedTuple):
    metric: str
    statistic: str
    operator: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric} {self.statistic} {self.operator} {_number(self.value)}"


def check_constraint(
    metric: str,
    statistic: str | None,
    operator: str,
    value: float,
    unit: str | None,
    *,
    where: str,
    measured: Collection[str] = (),
) -> Constraint:
    """A constraint from a client, checked: a known metric, its unit if one is given, an operator
    that bounds the metric on its bad side (`<=`/`<` for latencies and error rates, `>=`/`>`
    for throughputs), a finite value. `measured` are the statistics the cohort measures for
    the metric (they choose the default statistic).

    Raises:
        UnknownMetric, WrongUnit, UnsupportedOperator: with `where` naming the input.
    """
    definition = SERVING_METRICS.get(metric)
    if definition is None:
        raise UnknownMetric(
            f"{where}.metric", f"unknown metric {metric!r}; expected one of {', '.join(SERVING_METRICS)}"
        )
    if unit is not None and unit not in (definition.unit, definition.manifest_unit):
        raise WrongUnit(f"{where}.unit", f"{metric} is in {definition.unit!r}, not {unit!r}")
    allowed = _UPPER if definition.direction == "min" else _LOWER
    if operator not in allowed:
        better = "lower" if definition.direction == "min" else "higher"
        raise UnsupportedOperator(
            f"{where}.operator",
            f"{operator!r} cannot bound {metric} ({better} is better): use {' or '.join(repr(o) for o in allowed)}",
        )
    if not math.isfinite(value):
        raise UnsupportedOperator(f"{where}.value", f"the bound must be a finite number (got {value!r})")
    return Constraint(metric, statistic or default_statistic(metric, measured, ranking=False), operator, value)


class Outcome(NamedTuple):
    """One constraint against one candidate: `measured` (a measured value decides), `declared`
    (a bound the harness enforced decides) or `unknown` (nothing reported: never assumed)."""

    state: Literal["measured", "declared", "unknown"]
    satisfied: bool | None  # None when unknown
    observed: float | None = None  # the measured value
    bound: float | None = None  # the declared bound


_HOLDS = {
    "<=": lambda x, v: x <= v,
    "<": lambda x, v: x < v,
    ">=": lambda x, v: x >= v,
    ">": lambda x, v: x > v,
}


def constraint_outcome(candidate: Candidate, constraint: Constraint) -> Outcome:
    """Measured beats declared beats unknown.

    A declared bound decides an upper-bound constraint: it satisfies it when the bound is at
    or under the requested one, except that a declared `<= v` does not satisfy a requested
    `< v` (upstream counts it as satisfied). A declared bound is itself an upper bound, so it
    never decides a lower bound on a throughput: that stays unknown.
    """
    observed = _value(candidate, constraint.metric, constraint.statistic)
    if observed is not None:
        return Outcome("measured", _HOLDS[constraint.operator](observed, constraint.value), observed=observed)
    if constraint.operator in _UPPER:
        for bound in candidate.declared:
            if bound.metric == constraint.metric and bound.statistic == constraint.statistic:
                strict_enough = not (bound.operator == "<=" and constraint.operator == "<")
                satisfied = bound.value < constraint.value or (bound.value == constraint.value and strict_enough)
                return Outcome("declared", satisfied, bound=bound.value)
    return Outcome("unknown", None)


class Feasibility(NamedTuple):
    feasible: bool
    reasons: tuple[str, ...]  # METRIC_NOT_REPORTED:<metric>, CONSTRAINT_UNSATISFIED:<metric>
    outcomes: tuple[Outcome, ...]  # one per constraint, in order


def feasibility(candidate: Candidate, constraints: Sequence[Constraint]) -> Feasibility:
    """Every constraint's outcome; feasible when each is satisfied (an unknown never is)."""
    outcomes = tuple(constraint_outcome(candidate, c) for c in constraints)
    reasons = []
    for constraint, outcome in zip(constraints, outcomes, strict=True):
        if outcome.state == "unknown":
            reasons.append(f"METRIC_NOT_REPORTED:{constraint.metric}")
        elif not outcome.satisfied:
            reasons.append(f"CONSTRAINT_UNSATISFIED:{constraint.metric}")
    return Feasibility(not reasons, tuple(reasons), outcomes)


# Objective ranking ------------------------------------------------------------------------------


class Objective(NamedTuple):
    metric: str
    statistic: str
    direction: Literal["maximize", "minimize"]


def check_objective(
    metric: str, statistic: str | None, direction: str | None, *, where: str, measured: Collection[str] = ()
) -> Objective:
    """An objective from a client, checked; the direction defaults to the vocabulary's.

    Raises:
        UnknownMetric: the metric is not in the vocabulary.
    """
    definition = SERVING_METRICS.get(metric)
    if definition is None:
        raise UnknownMetric(
            f"{where}.metric", f"unknown metric {metric!r}; expected one of {', '.join(SERVING_METRICS)}"
        )
    chosen = direction or ("minimize" if definition.direction == "min" else "maximize")
    if chosen not in ("maximize", "minimize"):
        raise UnsupportedOperator(f"{where}.direction", f"expected maximize or minimize, not {chosen!r}")
    return Objective(metric, statistic or default_statistic(metric, measured, ranking=True), chosen)  # type: ignore[arg-type]


class RankedCandidate(NamedTuple):
    id: str
    rank: int | None  # None: the candidate did not report the objective's metric
    value: float | None


def rank_by_objective(candidates: Sequence[Candidate], objective: Objective) -> list[RankedCandidate]:
    """Competition ranks by the objective (equal values tie and the next rank skips: 1, 1, 3, as
    upstream). Candidates missing the metric rank null and come last: never silently dropped.
    Presented by rank, then id."""
    valued = [RankedCandidate(c.id, None, _value(c, objective.metric, objective.statistic)) for c in candidates]
    sign = -1.0 if objective.direction == "maximize" else 1.0
    ordered = sorted((e for e in valued if e.value is not None), key=lambda e: (sign * e.value, e.id))  # type: ignore[operator]
    ranked: list[RankedCandidate] = []
    for index, entry in enumerate(ordered):
        tied = ranked and ranked[-1].value == entry.value
        ranked.append(entry._replace(rank=ranked[-1].rank if tied else index + 1))
    return ranked + sorted((e for e in valued if e.value is None), key=lambda e: e.id)


# Pareto frontier --------------------------------------------------------------------------------


class Frontier(NamedTuple):
    axes: tuple[str, ...]  # the axes every candidate shares, sorted
    frontier: tuple[str, ...]  # best first along the axes (in axis order), then id
    dominated: tuple[str, ...]  # likewise
    not_comparable: tuple[tuple[str, tuple[str, ...]], ...]  # (id, the axes others measured that it lacks)


def pareto_frontier(candidates: Sequence[Candidate]) -> Frontier:
    """The non-dominated set over the vocabulary axes every candidate shares, each axis turned
    to "higher is better" by its direction. A candidate dominates another when it is at least
    as good on every axis and strictly better on one: equal points never dominate each other,
    so ties stay on the frontier together. Candidates lacking an axis some other candidate
    measured are named with what they lack (and still ranked on the shared axes); with no
    shared axis nothing is comparable. O(n²), fine at cohort sizes."""
    axis_sets = [{axis(m.metric, m.statistic) for m in c.measurements if comparable(m)} for c in candidates]
    union = set().union(*axis_sets) if axis_sets else set()
    shared = sorted(set.intersection(*axis_sets)) if axis_sets else []
    not_comparable = tuple(
        (c.id, tuple(sorted(union - axes))) for c, axes in zip(candidates, axis_sets, strict=True) if union - axes
    )
    if not shared:
        return Frontier((), (), (), not_comparable)
    points: list[tuple[str, tuple[float, ...]]] = []
    for c in candidates:
        coordinates: list[float] = []
        for name in shared:
            metric, statistic = name.split("·")
            value = _value(c, metric, statistic)
            assert value is not None, "a shared axis is measured by every candidate"
            coordinates.append(value if SERVING_METRICS[metric].direction == "max" else -value)
        points.append((c.id, tuple(coordinates)))

    def dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(x >= y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))

    frontier: list[tuple[str, tuple[float, ...]]] = []
    dominated: list[tuple[str, tuple[float, ...]]] = []
    for ident, point in points:
        beaten = any(other != ident and dominates(theirs, point) for other, theirs in points)
        (dominated if beaten else frontier).append((ident, point))
    for group in (frontier, dominated):
        group.sort(key=lambda item: (tuple(-x for x in item[1]), item[0]))
    return Frontier(tuple(shared), tuple(i for i, _ in frontier), tuple(i for i, _ in dominated), not_comparable)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))

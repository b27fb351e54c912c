"""Comparison groups and what is derived inside them: keys, primary values, eligibility, ranking-v1,
record events and trust. Pure functions over plain values; the graph feeds them.

These follow upstream KernelIndex exactly (its corpus keys and record events reproduce):

>>> metric_key(Primary("latency", "mean", "ns", 144571.0))
'latency:mean:ns'
>>> eligibility_reasons(
...     published=True, status="runtime_error", retracted=True, superseded=False, has_primary=False
... )
('STATUS_RUNTIME_ERROR', 'RETRACTED', 'MISSING_PRIMARY_METRIC')
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

from kernelindex.registry.canonical import Digest, json_digest

__all__ = [
    "POLICY_VERSION",
    "Primary",
    "RankInput",
    "Ranked",
    "RecordEvent",
    "Trust",
    "cohort_key_of",
    "comparison_key",
    "correctness_key",
    "eligibility_reasons",
    "metric_key",
    "primary_from",
    "primary_of",
    "rank_cohort",
    "record_events",
    "tied",
    "trust_of",
]

POLICY_VERSION = "ranking-v1"


class Trust(IntEnum):
    """Evidence levels, weakest first; comparisons read naturally (`Trust.VERIFIED >= Trust.REPRODUCIBLE`)."""

    REPORTED = 1
    REPRODUCIBLE = 2
    VERIFIED = 3
    REPLICATED = 4


_intern = sys.intern
_new = tuple.__new__


class Primary(NamedTuple):
    """A run's primary measurement: what it is ranked by (lower is better)."""

    metric: str
    statistic: str
    unit: str
    value: float
    low: float | None = None  # the 95% confidence interval, when the run reports one
    high: float | None = None
    note: str | None = None  # why the value is not the declared statistic, when it is not


class RankInput(NamedTuple):
    id: str
    value: float
    low: float | None
    high: float | None
    trust: int
    observed_ns: int


class Ranked(NamedTuple):
    id: str
    rank: int
    tied_with_previous: bool


@dataclass(frozen=True, slots=True)
class RecordEvent:
    """A cohort's record changed hands: `run` became the holder, taking over from `previous_run`."""

    cohort: str
    run: str
    previous_run: str | None
    cause: str  # "new_run" | "retraction"
    at: str  # an ISO 8601 instant: the run's observedAt, or the retraction's publication
    at_ns: int
    value: float
    previous_value: float | None
    policy_version: str = POLICY_VERSION


_LATENCY_STATISTICS = ("median", "mean", "p05", "p95", "minimum", "maximum", "mad")


def primary_of(spec: Mapping[str, Any]) -> Primary | None:
    """The primary measurement of a BenchmarkRun spec, or None.

    Latency in ns under `timing.primaryStatistic` when the run has timing: the declared
    statistic's value, else (as upstream) the mean falls back to the median and anything
    else to the median then the mean, still labelled with the declared statistic, which
    is what upstream's comparison keys contain. Without timing, the first of
    `measurements`. Otherwise None.
    """
    timing = spec.get("timing")
    declared = None if timing is None else (timing["primaryStatistic"], timing["latencyNs"])
    return primary_from(declared, spec.get("measurements"))


def primary_from(timing: tuple[str, Mapping[str, Any]] | None, measurements: Any) -> Primary | None:
    """`primary_of` from the parts of a spec it reads: `timing` as (primaryStatistic, latencyNs)
    when the run has timing, and `measurements` (`kernelindex.registry.decode` has no spec dict to give)."""
    if timing is not None:
        statistic, latency = timing
        low = high = None
        if "confidence95" in latency:
            low, high = float(latency["confidence95"][0]), float(latency["confidence95"][1])
        statistic = _intern(statistic)  # a handful of values shared by thousands of runs
        if statistic in latency and statistic in _LATENCY_STATISTICS:
            # `tuple.__new__`, not `Primary(...)`: the named tuple's `__new__` is a Python function
            # around the same call (a cold build makes one a run: 95k at 10x).
            return _new(Primary, ("latency", statistic, "ns", float(latency[statistic]), low, high, None))
        # The declared statistic is missing here: a missing mean falls back to the median (then
        # nothing), anything else to the median, then the mean. One order serves both.
        for fallback in ("median", "mean"):
            if fallback in latency:
                note = f"primary statistic {statistic!r} is not reported; its value is the {fallback}"
                return Primary("latency", statistic, "ns", float(latency[fallback]), low, high, note)
    if measurements:
        first = measurements[0]
        return _new(
            Primary,
            (_intern(first["metric"]), _intern(first["statistic"]), _intern(first["unit"]), float(first["value"]),
             None, None, None),
        )  # fmt: skip
    return None


def metric_key(primary: Primary | None) -> str:
    # Interned: a handful of keys, one per cohort (and per record event) otherwise.
    return "none" if primary is None else sys.intern(f"{primary.metric}:{primary.statistic}:{primary.unit}")


_CORRECTNESS_CACHE: dict[str, Digest] = {}


def correctness_key(correctness: Mapping[str, Any]) -> Digest:
    """Digest of `{"correctness": <the workload's spec.correctness>}`; memoized (few distinct values)."""
    import orjson

    memo = orjson.dumps(correctness, option=orjson.OPT_SORT_KEYS).decode()
    found = _CORRECTNESS_CACHE.get(memo)
    if found is None:
        found = _CORRECTNESS_CACHE[memo] = json_digest({"correctness": correctness})
    return found


_PLAIN = re.compile(r"[A-Za-z0-9_:.+-]*")


def comparison_key(
    operation: str, workload: str, protocol: str, environment: str, correctness: str, metric: str
) -> Digest:
    """The cohort key: digest of `{"v":1, operation, workload, protocol, environment, correctness, metric}`.

    Every value is a digest or a `metric:statistic:unit` of identifier characters, which
    JCS prints verbatim, so the canonical bytes are written directly (1 us instead of 40);
    anything else takes the general path. The implementation is never part of the key.
    """
    # One match of the six together: a concatenation is of identifier characters exactly when each part is.
    if _PLAIN.fullmatch(correctness + environment + metric + operation + protocol + workload):
        # JCS key order: correctness, environment, metric, operation, protocol, v, workload.
        text = (
            f'{{"correctness":"{correctness}","environment":"{environment}","metric":"{metric}",'
            f'"operation":"{operation}","protocol":"{protocol}","v":1,"workload":"{workload}"}}'
        )
        return Digest("sha256:" + hashlib.sha256(text.encode()).hexdigest())
    return json_digest(
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


def cohort_key_of(run_spec: Mapping[str, Any], workload: Mapping[str, Any]) -> Digest:
    """The cohort key of a run from its spec and its workload's document."""
    workload_spec = workload["spec"]
    return comparison_key(
        workload_spec["operationSpecDigest"],
        run_spec["workloadDigest"],
        run_spec["protocolDigest"],
        run_spec["environmentDigest"],
        correctness_key(workload_spec["correctness"]),
        metric_key(primary_of(run_spec)),
    )


def eligibility_reasons(
    *, published: bool, status: str, retracted: bool, superseded: bool, has_primary: bool
) -> tuple[str, ...]:
    """Why a run may not be ranked, in upstream's fixed order; empty when it is eligible."""
    reasons = []
    if not published:
        reasons.append("UNPUBLISHED")
    if status != "passed":
        reasons.append("STATUS_" + status.upper())
    if retracted:
        reasons.append("RETRACTED")
    if superseded:
        reasons.append("SUPERSEDED")
    if not has_primary:
        reasons.append("MISSING_PRIMARY_METRIC")
    return tuple(reasons)


def tied(a: RankInput, b: RankInput, source_native: bool) -> bool:
    """ranking-v1's pair test: equal values tie; in a strict_exact cohort, closed 95% intervals
    that overlap tie too (both runs need one)."""
    if a.value == b.value:
        return True
    if source_native or a.low is None or b.low is None or a.high is None or b.high is None:
        return False
    return a.high >= b.low and b.high >= a.low


def rank_cohort(inputs: Iterable[RankInput], source_native: bool) -> list[Ranked]:
    """ranking-v1: ascending value, dense ranks, non-transitive tie chains.

    A run joins the current chain only if it ties with every member; inside a chain runs
    are presented by trust, then newest observation, then id. Presentation inside a tie
    is display order only, never a performance claim.
    """
    runs = sorted(inputs, key=lambda r: r.value)
    chains: list[list[RankInput]] = []
    if source_native or all(r.low is None for r in runs):
        # Only equal values tie, and equality chains transitively: a chain is a run of equal values.
        for run in runs:
            if chains and chains[-1][0].value == run.value:
                chains[-1].append(run)
            else:
                chains.append([run])
    else:
        for run in runs:
            chain = chains[-1] if chains else None
            if chain is not None and all(tied(member, run, source_native) for member in chain):
                chain.append(run)
            else:
                chains.append([run])
    ranked: list[Ranked] = []
    for rank, chain in enumerate(chains, start=1):
        if len(chain) == 1:
            ranked.append(Ranked(chain[0].id, rank, False))
            continue
        chain.sort(key=lambda r: (-r.trust, -r.observed_ns, r.id))
        ranked.extend(Ranked(run.id, rank, index > 0) for index, run in enumerate(chain))
    return ranked


class Candidate(NamedTuple):
    """A run as the records ledger sees it."""

    id: str
    value: float
    observed_at: str
    observed_ns: int
    withdrawn_at: str | None = None  # a retraction's publication instant, if the run was retracted
    withdrawn_ns: int | None = None


def record_events(cohort: str, candidates: Sequence[Candidate]) -> list[RecordEvent]:
    """The records ledger of one cohort, replayed in time.

    Each run competes from its observedAt (ties in time broken by id); an event each time
    a value is strictly below the best so far (cause `new_run`). A retracted run competes
    until its retraction is published; if it held the record then, the best remaining run
    takes over with a `retraction` event. With no retractions this is exactly upstream's
    ledger (2,948 events on the corpus).
    """
    if all(run.withdrawn_ns is None for run in candidates):
        # No retraction: one pass over the runs in time order.
        events: list[RecordEvent] = []
        best: Candidate | None = None
        for run in sorted(candidates, key=lambda c: (c.observed_ns, c.id)):
            if best is None or run.value < best.value:
                events.append(
                    RecordEvent(cohort, run.id, best.id if best else None, "new_run", run.observed_at, run.observed_ns,
                                run.value, best.value if best else None)
                )  # fmt: skip
                best = run
        return events
    timeline: list[tuple[int, int, str, Candidate]] = []
    for run in candidates:
        if run.withdrawn_ns is not None and run.withdrawn_ns <= run.observed_ns:
            continue  # retracted before the time it claims to be observed: it never competed
        timeline.append((run.observed_ns, 0, run.id, run))
        if run.withdrawn_ns is not None:
            timeline.append((run.withdrawn_ns, 1, run.id, run))
    timeline.sort(key=lambda item: (item[0], item[1], item[2]))
    events = []
    active: dict[str, Candidate] = {}
    holder: Candidate | None = None
    for at_ns, what, _, run in timeline:
        if what == 0:
            active[run.id] = run
            if holder is None or run.value < holder.value:
                events.append(
                    RecordEvent(
                        cohort,
                        run.id,
                        holder.id if holder else None,
                        "new_run",
                        run.observed_at,
                        at_ns,
                        run.value,
                        holder.value if holder else None,
                    )
                )
                holder = run
            continue
        active.pop(run.id, None)
        if holder is None or holder.id != run.id:
            continue
        successor = min(active.values(), key=lambda c: (c.value, c.observed_ns, c.id), default=None)
        if successor is not None:
            events.append(
                RecordEvent(
                    cohort,
                    successor.id,
                    run.id,
                    "retraction",
                    run.withdrawn_at or "",
                    at_ns,
                    successor.value,
                    run.value,
                )
            )
        holder = successor
    return events


def trust_of(*, independent_verifications: int, source_available: bool, raw_evidence: bool) -> Trust:
    """replicated (>= 2 independent verifications) > verified > reproducible (public source and
    raw evidence) > reported. Attestations never take part."""
    if independent_verifications >= 2:
        return Trust.REPLICATED
    if independent_verifications >= 1:
        return Trust.VERIFIED
    if source_available and raw_evidence:
        return Trust.REPRODUCIBLE
    return Trust.REPORTED

"""The serving side of one graph: each serving run's cohort and facts, the serving cohorts, the
indexes the filters use, and a cohort resolved under constraints and an objective (serving-v1).

Serving runs never enter the kernel cohorts, the records ledger or the kernel rankings (DESIGN
section 11): this index is separate and derived on first use from the graph's nodes (about a
thousand manifests in the corpus). Cohort keys are memoized by their parts across graphs, so a
refreshed graph recomputes only keys of runs it has not seen.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from kernelindex.registry import serving as policy
from kernelindex.registry.cohorts import Trust, trust_of
from kernelindex.registry.graph import Graph, find_keyed
from kernelindex.registry.nodes import Model, ServingConfiguration, ServingRun, ServingStack, ServingWorkload

__all__ = [
    "ConstraintRequest",
    "ObjectiveRequest",
    "Resolution",
    "Resolved",
    "ServingCohort",
    "ServingFacts",
    "ServingIndex",
    "serving_index",
]

_VALID = "valid"


class ServingFacts(NamedTuple):
    """What the graph derives about one serving run."""

    parts: policy.CohortParts | None  # None when its model or workload is not in the registry
    cohort: str | None
    reasons: tuple[str, ...]  # UNPUBLISHED, STATUS_<STATUS>, MISSING_REFERENCE; empty when eligible
    trust: Trust
    warnings: tuple[str, ...]
    submitter: str | None  # the stack's project name (who served it)

    @property
    def eligible(self) -> bool:
        return not self.reasons


class ServingCohort(NamedTuple):
    key: str
    parts: policy.CohortParts
    members: tuple[str, ...]  # every serving run in it, eligible or not, by digest

    def measured(self, metric: str) -> set[str]:
        """The statistics the cohort measures `metric` by (its members share the metric set)."""
        found = set()
        for pair in self.parts.metric_set_key.split(","):
            name, _, statistic = pair.partition("·")
            if name == metric:
                found.add(statistic)
        return found


class ConstraintRequest(NamedTuple):
    metric: str
    operator: str
    value: float
    statistic: str | None = None
    unit: str | None = None


class ObjectiveRequest(NamedTuple):
    metric: str
    statistic: str | None = None
    direction: str | None = None  # maximize or minimize; the vocabulary's when None


class Resolved(NamedTuple):
    """One run of a resolved cohort."""

    run: str
    eligible: bool
    feasible: bool
    reasons: tuple[str, ...]  # why it is excluded: ineligibility, then unmet constraints
    outcomes: tuple[policy.Outcome, ...]  # one per constraint, in order
    rank: int | None = None  # by the objective
    value: float | None = None  # its value of the objective
    on_frontier: bool | None = None  # without an objective
    missing: tuple[str, ...] = ()  # axes others measured that it lacks


class Resolution(NamedTuple):
    cohort: str
    constraints: tuple[policy.Constraint, ...]
    objective: policy.Objective | None
    axes: tuple[str, ...]  # the Pareto axes (without an objective)
    runs: tuple[Resolved, ...]  # the feasible eligible runs: by rank, or the frontier then the dominated, best first
    frontier: tuple[Resolved, ...] | None  # without an objective
    excluded: tuple[Resolved, ...]  # ineligible or infeasible, by digest


_KEYS: dict[policy.CohortParts, str] = {}
_KEYS_LIMIT = 200_000


def _key(parts: policy.CohortParts) -> str:
    found = _KEYS.get(parts)
    if found is None:
        if len(_KEYS) >= _KEYS_LIMIT:
            _KEYS.clear()
        found = _KEYS[parts] = policy.cohort_key(parts)
    return found


class ServingIndex:
    """Serving facts, cohorts and indexes of one graph. Immutable once built."""

    def __init__(self, graph: Graph) -> None:
        # The nodes, not the graph: the graph keeps its index (`serving_index`), never the reverse.
        self.nodes = graph.nodes
        self.facts: dict[str, ServingFacts] = {}
        self.by: dict[str, dict[str, set[str]]] = {
            k: {} for k in ("model", "accelerator", "scenario", "submitter", "quality_policy")
        }
        members: dict[str, list[str]] = {}
        parts_of: dict[str, policy.CohortParts] = {}
        for digests in graph.children["serving_runs"].values():
            for digest in digests:
                run = graph.nodes[digest]
                assert isinstance(run, ServingRun)
                facts = self._facts(graph, run)
                self.facts[digest] = facts
                self._index(run, facts)
                if facts.cohort is not None and facts.parts is not None:
                    members.setdefault(facts.cohort, []).append(digest)
                    parts_of[facts.cohort] = facts.parts
        self.cohorts = {key: ServingCohort(key, parts_of[key], tuple(sorted(d))) for key, d in members.items()}
        self.runs = self.ordered(self.facts)  # every serving run, newest observation first

    # Derivation -----------------------------------------------------------------------------------

    def _facts(self, graph: Graph, run: ServingRun) -> ServingFacts:
        nodes = self.nodes
        model, workload = nodes.get(run.model), nodes.get(run.workload)
        configuration = nodes.get(run.configuration)
        stack = nodes.get(configuration.stack) if isinstance(configuration, ServingConfiguration) else None
        warnings = []
        for role, digest, node, wanted in (
            ("model", run.model, model, Model),
            ("configuration", run.configuration, configuration, ServingConfiguration),
            ("workload", run.workload, workload, ServingWorkload),
        ):
            if not isinstance(node, wanted):
                warnings.append(f"dangling-reference: the {role} {digest} is not in the registry")
        for metric, statistic, unit, _ in run.measurements:
            definition = policy.SERVING_METRICS.get(metric)
            if definition is None:
                warnings.append(
                    f"unknown-metric: {metric} is not in {policy.POLICY_VERSION}'s vocabulary; never compared"
                )
            elif not policy.comparable(policy.Measurement(metric, statistic, unit, 0.0)):
                warnings.append(
                    f"unit-mismatch: {metric} {statistic} is in {unit!r}, {policy.POLICY_VERSION} compares it in "
                    f"{definition.unit!r} only; never compared"
                )
        parts = key = None
        if isinstance(model, Model) and isinstance(workload, ServingWorkload):
            parts = policy.CohortParts(
                run.model,
                model.tokenizer,
                run.workload,
                policy.protocol_key(
                    run.harness, run.harness_version, run.placement, workload.streaming, workload.load_generation
                ),
                policy.topology_key(
                    run.accelerator_vendor,
                    run.accelerator_model,
                    run.accelerators_per_node,
                    run.node_count,
                    run.interconnect,
                ),
                run.quality_policy,
                policy.metric_set_key((m[0], m[1]) for m in run.measurements),
            )
            key = _key(parts)
        reasons = []
        if run.digest not in graph.published_in:
            reasons.append("UNPUBLISHED")
        if run.status != _VALID:
            reasons.append(f"STATUS_{run.status.upper()}")
        if key is None:
            reasons.append("MISSING_REFERENCE")
        # Serving runs carry no raw evidence and no implementation source, and lifecycle
        # verifications name kernel runs only: by the trust rule every serving run is reported.
        trust = trust_of(independent_verifications=0, source_available=False, raw_evidence=False)
        return ServingFacts(
            parts,
            key,
            tuple(reasons),
            trust,
            tuple(warnings),
            stack.project if isinstance(stack, ServingStack) else None,
        )

    def _index(self, run: ServingRun, facts: ServingFacts) -> None:
        keys = {
            "model": [run.model],
            "accelerator": [run.accelerator_model.lower()]
            + ([run.accelerator_vendor.lower()] if run.accelerator_vendor else []),
            "scenario": [run.scenario.lower()] if run.scenario else [],
            "submitter": _submitter_keys(facts.submitter),
            "quality_policy": [run.quality_policy],
        }
        for index, values in keys.items():
            for value in values:
                self.by[index].setdefault(value, set()).add(run.digest)

    # Queries --------------------------------------------------------------------------------------

    def ordered(self, digests: Iterable[str]) -> list[str]:
        """Newest observation first, then digest: a stable order for a given commit."""
        nodes = self.nodes
        return sorted(digests, key=lambda d: (-nodes[d].observed_ns, d))  # type: ignore[union-attr]

    def filtered(
        self,
        *,
        model: str | None = None,
        accelerator: str | None = None,
        scenario: str | None = None,
        submitter: str | None = None,
        quality_policy: str | None = None,
        statuses: Iterable[str] | None = None,
        eligible_only: bool = False,
    ) -> list[str]:
        """Serving runs meeting every given condition, newest first. `model` is a digest;
        `accelerator` an accelerator model or vendor, `scenario` and `submitter` (a stack's
        project name, with or without its parenthesised note) compare without case."""
        found: set[str] | None = None
        for index, value in (
            ("model", model),
            ("accelerator", accelerator.strip().lower() if accelerator is not None else None),
            ("scenario", scenario.strip().lower() if scenario is not None else None),
            ("submitter", submitter.strip().lower() if submitter is not None else None),
            ("quality_policy", quality_policy.strip() if quality_policy is not None else None),
        ):
            if value is not None:
                matches = self.by[index].get(value, set())
                found = set(matches) if found is None else found & matches
        if found is None and statuses is None and not eligible_only:
            return self.runs
        pool = self.facts.keys() if found is None else found
        wanted = set(statuses) if statuses is not None else None
        nodes = self.nodes
        kept = [
            d
            for d in pool
            if (wanted is None or nodes[d].status in wanted)  # type: ignore[union-attr]
            and (not eligible_only or self.facts[d].eligible)
        ]
        return self.ordered(kept)

    def ordered_cohorts(self, keys: Iterable[str] | None = None) -> list[str]:
        """Largest first, then key."""
        cohorts = self.cohorts
        return sorted(cohorts if keys is None else keys, key=lambda k: (-len(cohorts[k].members), k))

    def find_cohort(self, key: str) -> ServingCohort | None:
        """A serving cohort by its key or a unique prefix of at least 12 hex digits.

        Raises:
            AmbiguousName: the prefix matches several cohorts.
        """
        return find_keyed(self.cohorts, key)

    def candidate(self, digest: str) -> policy.Candidate:
        """A serving run as the policy sees it: its measurements and its workload's declared SLOs."""
        run = self.nodes[digest]
        assert isinstance(run, ServingRun)
        workload = self.nodes.get(run.workload)
        declared = (
            tuple(
                policy.Bound(metric, statistic, operator, value)
                for metric, statistic, operator, value, _ in workload.slo
            )
            if isinstance(workload, ServingWorkload)
            else ()
        )
        return policy.Candidate(digest, tuple(policy.Measurement(*m) for m in run.measurements), declared)

    def resolve(
        self,
        cohort: ServingCohort,
        constraints: Sequence[ConstraintRequest] = (),
        objective: ObjectiveRequest | None = None,
    ) -> Resolution:
        """The cohort's eligible runs that meet every constraint, ranked by the objective, or
        (without one) its Pareto frontier over the cohort's metrics first. Every other run is
        in `excluded`, with its reasons: nothing is dropped silently.

        Raises:
            UnknownMetric, WrongUnit, UnsupportedOperator: a constraint or the objective cannot
                be evaluated (checked before anything is computed).
        """
        checked = tuple(
            policy.check_constraint(
                c.metric,
                c.statistic,
                c.operator,
                c.value,
                c.unit,
                where=f"constraints[{i}]",
                measured=cohort.measured(c.metric),
            )
            for i, c in enumerate(constraints)
        )
        goal = (
            policy.check_objective(
                objective.metric,
                objective.statistic,
                objective.direction,
                where="objective",
                measured=cohort.measured(objective.metric),
            )
            if objective is not None
            else None
        )
        kept: list[Resolved] = []
        excluded: list[Resolved] = []
        candidates: dict[str, policy.Candidate] = {}
        for digest in cohort.members:
            candidate = self.candidate(digest)
            verdict = policy.feasibility(candidate, checked)
            facts = self.facts[digest]
            entry = Resolved(
                digest, facts.eligible, verdict.feasible, facts.reasons + verdict.reasons, verdict.outcomes
            )
            if entry.reasons:
                excluded.append(entry)
            else:
                kept.append(entry)
                candidates[digest] = candidate
        by_id = {entry.run: entry for entry in kept}
        if goal is not None:
            ranked = policy.rank_by_objective(list(candidates.values()), goal)
            runs = tuple(by_id[r.id]._replace(rank=r.rank, value=r.value) for r in ranked)
            return Resolution(cohort.key, checked, goal, (), runs, None, tuple(excluded))
        frontier = policy.pareto_frontier(list(candidates.values()))
        missing = dict(frontier.not_comparable)
        on = set(frontier.frontier)
        order = [*frontier.frontier, *frontier.dominated]
        order += sorted(d for d in by_id if d not in set(order))  # nothing comparable: no shared axis
        runs = tuple(
            by_id[d]._replace(on_frontier=d in on if frontier.axes else None, missing=missing.get(d, ())) for d in order
        )
        return Resolution(
            cohort.key,
            checked,
            None,
            frontier.axes,
            runs,
            tuple(r for r in runs if r.on_frontier),
            tuple(excluded),
        )


def _submitter_keys(name: str | None) -> list[str]:
    """`AMD (MLPerf submitter)` is found as itself and as `amd`."""
    if not name:
        return []
    full = name.strip().lower()
    short = full.split(" (", 1)[0].strip()
    return [full] if short == full else [full, short]


_INDEXES: weakref.WeakKeyDictionary[Graph, ServingIndex] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def serving_index(graph: Graph) -> ServingIndex:
    """The graph's serving index, built on first use and kept as long as the graph lives."""
    with _LOCK:
        found = _INDEXES.get(graph)
    if found is None:
        found = ServingIndex(graph)
        with _LOCK:
            found = _INDEXES.setdefault(graph, found)
    return found

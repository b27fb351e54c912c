"""The GraphQL types of a serving cohort resolved under SLO constraints and an objective (serving-v1):
the inputs, each run's constraint outcomes, its rank or its place on the Pareto frontier."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated, cast

import strawberry

from kernelindex.registry import serving as policy
from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import ServingRun as ServingRunNode
from kernelindex.registry.serving_graph import Resolution, Resolved
from kernelindex.schema.types.base import build

if TYPE_CHECKING:
    from kernelindex.schema.types.serving import ServingRun

__all__ = [
    "ConstraintOutcome",
    "ConstraintState",
    "OptimizationDirection",
    "ResolutionMode",
    "ServingCandidate",
    "ServingConstraintInput",
    "ServingObjectiveInput",
    "ServingResolution",
    "direction_of",
]

ServingRunRef = Annotated["ServingRun", strawberry.lazy("kernelindex.schema.types.serving")]


@strawberry.enum(description="Which way is better for a metric, or which way an objective optimizes.")
class OptimizationDirection(enum.Enum):
    MINIMIZE = strawberry.enum_value("minimize", description="Lower is better (latencies, error rates).")
    MAXIMIZE = strawberry.enum_value("maximize", description="Higher is better (throughputs).")


@strawberry.enum(
    description="How a constraint was decided: by a measured value, by a bound the workload declares its "
    "harness enforced, or not at all (the metric was not reported: never assumed)."
)
class ConstraintState(enum.Enum):
    MEASURED = strawberry.enum_value("measured", description="The run measured the metric: `observed` is its value.")
    DECLARED = strawberry.enum_value(
        "declared", description="The workload declares its harness enforced a bound (`bound`): e.g. MLPerf's SLOs."
    )
    UNKNOWN = strawberry.enum_value(
        "unknown", description="Neither: the run is excluded (METRIC_NOT_REPORTED), never assumed to pass."
    )


@strawberry.enum(description="RANKED by an objective, or the Pareto FRONTIER when no objective is given.")
class ResolutionMode(enum.Enum):
    RANKED = strawberry.enum_value("ranked", description="Ranked by the objective given.")
    FRONTIER = strawberry.enum_value(
        "frontier", description="No objective: the Pareto frontier over the metrics the runs share."
    )


def direction_of(metric: str) -> OptimizationDirection | None:
    definition = policy.SERVING_METRICS.get(metric)
    if definition is None:
        return None
    return OptimizationDirection.MINIMIZE if definition.direction == "min" else OptimizationDirection.MAXIMIZE


@strawberry.input(description="A bound on a metric: `<=`/`<` for latencies and error rates, `>=`/`>` for throughputs.")
class ServingConstraintInput:
    metric: str = strawberry.field(description="A metric of the vocabulary (servingMetrics), e.g. ttft_ms.")
    operator: str = strawberry.field(description="<=, < (lower is better) or >=, > (higher is better)")
    value: float = strawberry.field(description="In the metric's unit.")
    statistic: str | None = strawberry.field(
        default=None, description="e.g. p99; default: the one the cohort measures, else p99."
    )
    unit: str | None = strawberry.field(
        default=None, description="If given, must be the metric's unit (ms, tokens/s...)."
    )


@strawberry.input(description="What to optimize among the feasible runs.")
class ServingObjectiveInput:
    metric: str = strawberry.field(
        description="A metric of the vocabulary (servingMetrics), e.g. output_token_throughput_tps."
    )
    direction: OptimizationDirection | None = strawberry.field(default=None, description="Default: the vocabulary's.")
    statistic: str | None = strawberry.field(
        default=None, description="Default: the one the cohort measures, else p99 (lower is better) or mean."
    )


@strawberry.type(description="A constraint as evaluated, its default statistic filled in.")
class ServingConstraint:
    metric: str = strawberry.field(description="The metric bounded.")
    statistic: str = strawberry.field(description="The statistic bounded (p99...).")
    operator: str = strawberry.field(description="<=, <, >= or >.")
    value: float = strawberry.field(description="The bound, in the metric's unit.")
    text: str = strawberry.field(description="e.g. ttft_ms p99 <= 450")


@strawberry.type(description="The objective as evaluated, its defaults filled in.")
class ServingObjective:
    metric: str = strawberry.field(description="The metric optimized.")
    statistic: str = strawberry.field(description="Its statistic.")
    direction: OptimizationDirection = strawberry.field(description="Which way is better.")


@strawberry.type(description="One constraint against one run.")
class ConstraintOutcome:
    constraint: str = strawberry.field(description="The constraint's text, e.g. ttft_ms p99 <= 450")
    state: ConstraintState = strawberry.field(description="How it was decided.")
    satisfied: bool | None = strawberry.field(description="Null when UNKNOWN.")
    observed: float | None = strawberry.field(description="The measured value (MEASURED).")
    bound: float | None = strawberry.field(description="The declared bound (DECLARED).")


@strawberry.type(description="A run of a resolved cohort: why it is in or out, its rank or frontier place.")
class ServingCandidate:
    _graph: strawberry.Private[Graph]
    _resolved: strawberry.Private[Resolved]
    _constraints: strawberry.Private[tuple[policy.Constraint, ...]]

    @strawberry.field(description="The serving run.")
    def run(self) -> ServingRunRef:
        node = self._graph.nodes[self._resolved.run]
        assert isinstance(node, ServingRunNode)
        return cast("ServingRun", build(ServingRunRef, _graph=self._graph, _node=node))

    @strawberry.field(description="Whether it can rank at all (see `ServingRun.ineligibilityReasons`).")
    def eligible(self) -> bool:
        return self._resolved.eligible

    @strawberry.field(description="Meets every constraint (an UNKNOWN outcome never does).")
    def feasible(self) -> bool:
        return self._resolved.feasible

    @strawberry.field(
        description="Why it is excluded: STATUS_..., METRIC_NOT_REPORTED:<metric>, CONSTRAINT_UNSATISFIED:<metric>."
    )
    def reasons(self) -> list[str]:
        return list(self._resolved.reasons)

    @strawberry.field(description="Each constraint's outcome, in the order given.")
    def outcomes(self) -> list[ConstraintOutcome]:
        return [
            ConstraintOutcome(
                constraint=str(c),
                state=ConstraintState(o.state),
                satisfied=o.satisfied,
                observed=o.observed,
                bound=o.bound,
            )
            for c, o in zip(self._constraints, self._resolved.outcomes, strict=True)
        ]

    @strawberry.field(description="Competition rank by the objective (ties share it: 1, 1, 3); null without one.")
    def rank(self) -> int | None:
        return self._resolved.rank

    @strawberry.field(description="Its value of the objective.")
    def value(self) -> float | None:
        return self._resolved.value

    @strawberry.field(description="On the Pareto frontier; null with an objective or without a shared axis.")
    def on_frontier(self) -> bool | None:
        return self._resolved.on_frontier

    @strawberry.field(description="Axes other runs measured that it lacks (ranked on the shared ones only).")
    def missing_axes(self) -> list[str]:
        return list(self._resolved.missing)


@strawberry.type(description="A serving cohort resolved under constraints, and an objective or the Pareto frontier.")
class ServingResolution:
    _graph: strawberry.Private[Graph]
    _resolution: strawberry.Private[Resolution]

    def _candidates(self, entries: tuple[Resolved, ...]) -> list[ServingCandidate]:
        constraints = self._resolution.constraints
        return [ServingCandidate(_graph=self._graph, _resolved=e, _constraints=constraints) for e in entries]

    @strawberry.field(description="The policy it was resolved under (`serving-v1`).")
    def policy_version(self) -> str:
        return policy.POLICY_VERSION

    @strawberry.field(description="RANKED by the objective, or the Pareto FRONTIER.")
    def mode(self) -> ResolutionMode:
        return ResolutionMode.FRONTIER if self._resolution.objective is None else ResolutionMode.RANKED

    @strawberry.field(description="The constraints as evaluated, defaults filled in.")
    def constraints(self) -> list[ServingConstraint]:
        return [
            ServingConstraint(metric=c.metric, statistic=c.statistic, operator=c.operator, value=c.value, text=str(c))
            for c in self._resolution.constraints
        ]

    @strawberry.field(description="The objective as evaluated; null for a frontier.")
    def objective(self) -> ServingObjective | None:
        o = self._resolution.objective
        if o is None:
            return None
        return ServingObjective(metric=o.metric, statistic=o.statistic, direction=OptimizationDirection(o.direction))

    @strawberry.field(description="The Pareto axes (metric·statistic) every feasible run shares; empty when ranked.")
    def axes(self) -> list[str]:
        return list(self._resolution.axes)

    @strawberry.field(
        description="The feasible eligible runs in order: by rank, or the frontier first (best along the axes)."
    )
    def runs(self) -> list[ServingCandidate]:
        return self._candidates(self._resolution.runs)

    @strawberry.field(description="The Pareto frontier of the feasible runs; null when an objective is given.")
    def frontier(self) -> list[ServingCandidate] | None:
        frontier = self._resolution.frontier
        return None if frontier is None else self._candidates(frontier)

    @strawberry.field(description="Ineligible or infeasible runs, with their reasons: nothing is dropped silently.")
    def excluded(self) -> list[ServingCandidate]:
        return self._candidates(self._resolution.excluded)

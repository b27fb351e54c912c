"""The kernel resolver's answer (`kernelindex.registry.resolve`) as GraphQL types: the cohorts that measured exactly
what was
asked, each with its leader, best verified and best deployable run and why; else the nearest measured cases
with each difference explained; or the problems with the request, with the nearest names the registry knows."""

from __future__ import annotations

import enum
import math
import re
from typing import TYPE_CHECKING, Annotated

import strawberry

from kernelindex.registry import nodes as n
from kernelindex.registry import resolve as domain
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.base import Info, build
from kernelindex.schema.types.kinds import Operation, operation_of
from kernelindex.schema.types.pages import After, Before, Connection, First, Last, Window, follows_cursor, paginate

if TYPE_CHECKING:
    from kernelindex.schema.types.cohorts import Cohort
    from kernelindex.schema.types.runs import Run

__all__ = [
    "MAX_AXES",
    "MAX_SHAPE",
    "AxisValue",
    "AxisValueInput",
    "KernelBracket",
    "KernelCohortAnswer",
    "KernelDifference",
    "KernelFacet",
    "KernelFacetValue",
    "KernelNearCase",
    "KernelPick",
    "KernelProblem",
    "KernelRequest",
    "KernelRequestPart",
    "KernelResolution",
    "KernelResolutionMode",
    "OperationMatch",
    "OperationMatchKind",
    "resolution_of",
]

RunRef = Annotated["Run", strawberry.lazy("kernelindex.schema.types.runs")]
CohortRef = Annotated["Cohort", strawberry.lazy("kernelindex.schema.types.cohorts")]

MAX_AXES = 16
"""Axis bindings a request may carry (a real case binds a handful)."""
MAX_SHAPE = 8
"""Dimensions a requested shape may have."""


@strawberry.input(description="A named axis of a workload case bound to a value: tokens = 3000.")
class AxisValueInput:
    name: str = strawberry.field(description="The axis, as workload cases name it ('tokens', 'hidden').")
    value: int = strawberry.field(description="Its value (a count: tokens, rows, a hidden size...).")


@strawberry.type(description="A named axis of a workload case bound to a value: tokens = 3000.")
class AxisValue:
    name: str = strawberry.field(description="The axis, as workload cases name it ('tokens', 'hidden').")
    value: int = strawberry.field(description="Its value.")


@strawberry.type(description="The request as the resolver was given it.")
class KernelRequest:
    operation: str = strawberry.field(description="The operation asked for: a name, title, family or digest.")
    gpu: str | None = strawberry.field(description="The GPU asked for (product or architecture); null: any.")
    dtype: str | None = strawberry.field(description="The dtype asked for, as given ('bf16', 'bfloat16'); null: any.")
    axes: list[AxisValue] = strawberry.field(description="The axis bindings asked for, by name; empty: none.")
    shape: list[int] | None = strawberry.field(description="A tensor shape asked for; null: none.")


@strawberry.enum(description="What the resolver could answer.")
class KernelResolutionMode(enum.Enum):
    EXACT = strawberry.enum_value(
        domain.EXACT, description="Cohorts measured exactly what was asked (facets left open match anything)."
    )
    NEAREST = strawberry.enum_value(
        domain.NEAREST, description="No cohort did: the nearest measured cases, with what differs, are offered."
    )
    NONE = strawberry.enum_value(
        domain.NONE, description="Nothing to offer: see `problems` (an unknown operation, nothing measured)."
    )


@strawberry.enum(description="A part of a kernel request.")
class KernelRequestPart(enum.Enum):
    OPERATION = strawberry.enum_value("operation", description="The operation.")
    GPU = strawberry.enum_value("gpu", description="The GPU.")
    DTYPE = strawberry.enum_value("dtype", description="The dtype.")
    CASE = strawberry.enum_value("case", description="The case: axis bindings and shape.")


@strawberry.enum(description="How a request named an operation (the resolver's tiers, tried in this order).")
class OperationMatchKind(enum.Enum):
    DIGEST = strawberry.enum_value("digest", description="By its digest or a unique prefix of it.")
    NAME = strawberry.enum_value("name", description="By its name (`metadata.name`), any case, `-`/`_`/spaces aside.")
    ALIAS = strawberry.enum_value("alias", description="By its title, as KernelIndex's aliases do ('RMSNorm').")
    FAMILY = strawberry.enum_value("family", description="By its family ('attention'): every operation of it.")
    BENCHMARK = strawberry.enum_value(
        "benchmark", description="By the name a source gave its benchmark ('amd-fp8-mm', a GPU MODE leaderboard)."
    )


@strawberry.enum(description="A facet of a measured case compared with the request.")
class KernelFacet(enum.Enum):
    OPERATION = strawberry.enum_value("operation", description="The operation measured.")
    GPU = strawberry.enum_value("gpu", description="The GPU it was measured on.")
    DTYPE = strawberry.enum_value("dtype", description="The dtype of its tensors.")
    SCOPE = strawberry.enum_value(
        "scope", description="What was measured: a suite aggregates many cases, never the one asked for alone."
    )
    AXIS = strawberry.enum_value("axis", description="A named axis of the case (`axis` names it).")
    SHAPE = strawberry.enum_value(
        "shape", description="A tensor's shape; with `dimension`, one dimension of it that has no axis name."
    )


@strawberry.type(description="A facet of a measured case that is what was asked.")
class KernelFacetValue:
    facet: KernelFacet = strawberry.field(description="Which facet.")
    axis: str | None = strawberry.field(description="The axis, for an AXIS facet; null otherwise.")
    value: str = strawberry.field(description="Its value, as the registry writes it ('NVIDIA B200', 'bf16', '4096').")


@strawberry.type(description="A facet where a measured case is not what was asked, and how far it is.")
class KernelDifference:
    facet: KernelFacet = strawberry.field(description="Which facet differs.")
    axis: str | None = strawberry.field(description="The axis, for an AXIS facet; null otherwise.")
    dimension: int | None = strawberry.field(
        description="For a SHAPE facet, the index of the dimension that differs (0 first); null for a shape that "
        "differs as a whole, and for other facets."
    )
    requested: str = strawberry.field(description="What was asked, as text ('3000', 'h100', 'bf16').")
    measured: str = strawberry.field(
        description="What the case measured, as text: a number, a name, or why there is nothing to compare "
        "('not an axis of this case')."
    )
    delta: float | None = strawberry.field(
        description="For two numbers, measured minus requested (in the axis's unit: a count); null otherwise."
    )
    ratio: float | None = strawberry.field(
        description="For two numbers, measured divided by requested; null otherwise (or when requested is 0)."
    )
    distance: float | None = strawberry.field(
        description="How far two numbers are: |log2 ratio| (a factor of two is 1.0); null for a difference of kind."
    )
    explanation: str = strawberry.field(description="The difference in words, as the pages say it.")


@strawberry.type(description="A run the resolver picked from a cohort, and why (or why there is none).")
class KernelPick:
    run: RunRef | None = strawberry.field(description="The run picked; null when no run qualifies (`why` says why).")
    rank: int | None = strawberry.field(description="Its rank in the cohort under ranking-v1; null with no run.")
    why: str = strawberry.field(description="Why this run, or why none, in words.")


@strawberry.type(description="A cohort that measured a request, with its three picks.")
class KernelCohortAnswer:
    cohort: CohortRef = strawberry.field(description="The cohort (comparison group).")
    ranked_count: int = strawberry.field(description="How many of its runs rank (eligible, with a value).")
    leader: KernelPick = strawberry.field(description="Its #1 under ranking-v1.")
    best_verified: KernelPick = strawberry.field(
        description="Its best-ranked run a registry-controlled rerun confirmed (VERIFIED or REPLICATED)."
    )
    best_deployable: KernelPick = strawberry.field(
        description="Its best-ranked run whose implementation is deployable under deployability-v1 (public source, "
        "an install recipe, a known licence)."
    )


@strawberry.type(description="A measured case near the request: the cohort, what differs and what is the same.")
class KernelNearCase:
    answer: KernelCohortAnswer = strawberry.field(description="The cohort and its picks.")
    differences: list[KernelDifference] = strawberry.field(
        description="What differs from the request, facet by facet (never empty: an exact case is in `exact`)."
    )
    same: list[KernelFacetValue] = strawberry.field(description="What is as asked, facet by facet.")
    distance: float | None = strawberry.field(
        description="The sum of the numeric differences' distances (|log2 ratio|); null when no difference is a "
        "number. Cases are ordered by how many facets differ, then numbers before kinds, then this."
    )


@strawberry.type(
    description="The measured cases on either side of the request along the one numeric facet that differs "
    "(KernelIndex's answer for a case nobody measured): never a claim across two differences."
)
class KernelBracket:
    facet: KernelFacet = strawberry.field(description="The facet: AXIS or SHAPE.")
    axis: str | None = strawberry.field(description="The axis, for an AXIS facet; null otherwise.")
    dimension: int | None = strawberry.field(description="The dimension, for an unnamed SHAPE dimension.")
    requested: float = strawberry.field(description="The value asked for.")
    below: float | None = strawberry.field(description="The nearest measured value below it; null: none measured.")
    above: float | None = strawberry.field(description="The nearest measured value above it; null: none measured.")
    below_cases: list[KernelNearCase] = strawberry.field(description="The cases measured at `below`.")
    above_cases: list[KernelNearCase] = strawberry.field(description="The cases measured at `above`.")


@strawberry.type(description="Why part of a request found nothing, and the names the registry has nearest to it.")
class KernelProblem:
    part: KernelRequestPart = strawberry.field(description="Which part of the request.")
    message: str = strawberry.field(description="What is wrong, in words.")
    suggestions: list[str] = strawberry.field(
        description="Names the registry knows nearest to what was asked, best first; empty when none is close."
    )


@strawberry.type(description="An operation a request named, and how it was named.")
class OperationMatch:
    operation: Operation = strawberry.field(description="The operation.")
    how: OperationMatchKind = strawberry.field(description="Which of the resolver's tiers named it.")


_AXIS = re.compile(r"axis:(.+)")
_DIMENSION = re.compile(r"shape\[(\d+)\]")


def _facet(text: str) -> tuple[KernelFacet, str | None, int | None]:
    """`axis:tokens` -> (AXIS, 'tokens', None); `shape[1]` -> (SHAPE, None, 1); `gpu` -> (GPU, None, None)."""
    axis = _AXIS.fullmatch(text)
    if axis:
        return KernelFacet.AXIS, axis.group(1), None
    dimension = _DIMENSION.fullmatch(text)
    if dimension:
        return KernelFacet.SHAPE, None, int(dimension.group(1))
    return KernelFacet(text), None, None


def _facet_name(facet: KernelFacet, axis: str | None, dimension: int | None) -> str:
    if axis is not None:
        return axis
    if dimension is not None:
        return f"dimension {dimension}"
    return facet.name.lower()


def _difference(difference: domain.Difference) -> KernelDifference:
    facet, axis, dimension = _facet(difference.facet)
    name = _facet_name(facet, axis, dimension)
    if difference.ratio is not None:
        explanation = (
            f"{name} {difference.measured} measured, {difference.requested} asked ({difference.ratio:.3g}× as much)"
        )
    elif facet == KernelFacet.SCOPE:
        explanation = f"{difference.measured}, not {difference.requested} alone"
    else:
        explanation = f"{name}: {difference.measured}, not {difference.requested}"
    return KernelDifference(
        facet=facet,
        axis=axis,
        dimension=dimension,
        requested=difference.requested,
        measured=difference.measured,
        delta=difference.delta,
        ratio=difference.ratio,
        distance=difference.distance,
        explanation=explanation,
    )


def _pick(graph: Graph, pick: domain.Pick) -> KernelPick:
    node = graph.nodes.get(pick.run) if pick.run else None
    run = build(RunRef, _graph=graph, _node=node) if isinstance(node, n.Run) else None
    return KernelPick(run=run, rank=pick.rank, why=pick.why)


def _answer(graph: Graph, answer: domain.CohortAnswer) -> KernelCohortAnswer:
    return KernelCohortAnswer(
        cohort=build(CohortRef, _graph=graph, _cohort=graph.cohorts[answer.cohort]),
        ranked_count=answer.ranked,
        leader=_pick(graph, answer.leader),
        best_verified=_pick(graph, answer.best_verified),
        best_deployable=_pick(graph, answer.best_deployable),
    )


def _near(graph: Graph, case: domain.NearCase) -> KernelNearCase:
    same = []
    for facet_text, value in case.same:
        facet, axis, _ = _facet(facet_text)
        same.append(KernelFacetValue(facet=facet, axis=axis, value=value))
    distances = [d.distance for d in case.differences if d.distance is not None]
    return KernelNearCase(
        answer=_answer(graph, case.answer),
        differences=[_difference(d) for d in case.differences],
        same=same,
        distance=math.fsum(distances) if distances else None,
    )


@strawberry.type(
    description="The kernel resolver's answer for one snapshot: the cohorts that measured exactly what was asked "
    "(`exact`), else the nearest measured cases (`nearest`, and `bracket` along one axis), else nothing with the "
    "reasons (`problems`). Runs are ranked only inside a cohort, never across cohorts."
)
class KernelResolution:
    _graph: strawberry.Private[Graph]
    _resolution: strawberry.Private[domain.Resolution]
    _document: strawberry.Private[domain.Document]

    def _at(self, graph: Graph) -> KernelResolution:
        """The same request resolved in another snapshot (a cursor's)."""
        return resolution_of(graph, self._resolution.request, self._document)

    @strawberry.field(description="The request, as given.")
    def request(self) -> KernelRequest:
        request = self._resolution.request
        return KernelRequest(
            operation=request.operation,
            gpu=request.gpu,
            dtype=request.dtype,
            axes=[AxisValue(name=name, value=value) for name, value in request.axes],
            shape=list(request.shape) if request.shape is not None else None,
        )

    @strawberry.field(description="What the resolver could answer: EXACT, NEAREST or NONE.")
    def mode(self) -> KernelResolutionMode:
        return KernelResolutionMode(self._resolution.mode)

    @strawberry.field(description="The operations the request named, by digest; empty when it named none.")
    def operations(self) -> list[OperationMatch]:
        graph = self._graph
        found = []
        for match in self._resolution.operations:
            operation = operation_of(graph, match.digest)
            if operation is not None:
                found.append(OperationMatch(operation=operation, how=OperationMatchKind(match.how)))
        return found

    @strawberry.field(
        description="The parts of the request left open (any value fits): an exact answer then covers every "
        "cohort that fits, largest first."
    )
    def open_parts(self) -> list[KernelRequestPart]:
        return [KernelRequestPart(part) for part in self._resolution.open_facets]

    @strawberry.field(description="The ranking policy the picks follow: 'ranking-v1'.")
    def policy(self) -> str:
        return self._resolution.policy

    @strawberry.field(description="How many cohorts measured exactly the request (the length of `exact`).")
    def exact_count(self) -> int:
        return len(self._resolution.exact)

    @strawberry.field(
        description="The cohorts that measured exactly the request (mode EXACT), most ranked runs first, each "
        "with its leader, best verified and best deployable run; empty otherwise."
    )
    @follows_cursor
    def exact(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[KernelCohortAnswer]:
        graph = self._graph
        return paginate(graph, self._resolution.exact, Window(first, after, last, before), lambda a: _answer(graph, a))

    @strawberry.field(
        description="When nothing measured exactly the request (mode NEAREST): every measured case of the "
        "operation with what differs, nearest first (fewest differences, numbers before kinds, then the "
        "closest); empty otherwise."
    )
    @follows_cursor
    def nearest(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[KernelNearCase]:
        graph = self._graph
        return paginate(graph, self._resolution.nearest, Window(first, after, last, before), lambda c: _near(graph, c))

    @strawberry.field(
        description="The measured cases on either side of the request along the one numeric facet that "
        "differs; null when no case differs in exactly one number, or nothing lies on either side."
    )
    def bracket(self) -> KernelBracket | None:
        found = domain.bracket(self._resolution)
        if found is None:
            return None
        facet, axis, dimension = _facet(found.facet)
        graph = self._graph
        return KernelBracket(
            facet=facet,
            axis=axis,
            dimension=dimension,
            requested=found.requested,
            below=found.below,
            above=found.above,
            below_cases=[_near(graph, c) for c in found.below_cases],
            above_cases=[_near(graph, c) for c in found.above_cases],
        )

    @strawberry.field(
        description="What in the request found nothing (an unknown operation, GPU or dtype), each with the "
        "nearest names the registry knows; empty when every part was found."
    )
    def problems(self) -> list[KernelProblem]:
        return [
            KernelProblem(part=KernelRequestPart(p.field), message=p.message, suggestions=list(p.suggestions))
            for p in self._resolution.problems
        ]

    @strawberry.field(description="The answer in one sentence, as the search page says it.")
    def summary(self) -> str:
        return _summary(self._graph, self._resolution)


def _summary(graph: Graph, resolution: domain.Resolution) -> str:
    names = sorted(
        {
            (node.title or node.name)
            for match in resolution.operations
            if isinstance(node := graph.nodes.get(match.digest), n.Operation)
        }
    )
    what = ", ".join(names) or repr(resolution.request.operation)
    if resolution.mode == domain.EXACT:
        count = len(resolution.exact)
        groups = "comparison group" if count == 1 else "comparison groups"
        opened = resolution.open_facets
        left = f" ({' and '.join(opened)} left open)" if opened else ""
        return f"{count} {groups} measured exactly this request for {what}{left}."
    if resolution.mode == domain.NEAREST:
        count = len(resolution.nearest)
        nearest = resolution.nearest[0]
        differing = "; ".join(_difference(d).explanation for d in nearest.differences)
        return (
            f"Nothing measured exactly this for {what}; the nearest of {count} measured cases differs in: {differing}."
        )
    return (
        "; ".join(p.message for p in resolution.problems) + "."
        if resolution.problems
        else f"Nothing measured for {what}."
    )


def resolution_of(graph: Graph, request: domain.KernelRequest, document: domain.Document) -> KernelResolution:
    """The resolver's answer for `request` in `graph`; `document(oid)` reads a stored manifest."""
    return KernelResolution(
        _graph=graph, _resolution=domain.resolve_kernel(graph, request, document), _document=document
    )

"""The kernel resolver: for an operation (name, alias or family), a GPU, a dtype and a case (axes or a
shape), the comparison groups that measured exactly that, each with its leader, its best verified run
and its best deployable run and why; else the nearest measured cases, each difference named.

Behaviour follows KernelIndex's resolver (`server/catalog/search-reads.ts`, `match.ts`, `chooser.ts`,
`features/search/nearest.tsx`, `api/catalog-routes.ts`):

- The request's facets are matched as upstream matches them: the GPU as a product (whole word) or an
  architecture; the dtype against the workload's tensors (the operation's declared tensors when the
  workload has none); axes against a case's `axes`; a shape against any of a case's tensors. A suite
  never answers a case exactly: it aggregates many.
- Only cohorts with a ranked run are evidence (a measured case). A cohort no facet contradicts is
  exact; a request that leaves facets open (no shape, say) has every cohort that fits as an exact
  answer, largest first (upstream picks the most measured; here all are listed, none hidden).
- Best verified = the best-ranked run at VERIFIED or above; best deployable = the best-ranked run
  whose implementation passes deployability-v1 (`kernelindex.registry.deployability`), as upstream's
  `bestVerified` / `bestDeployable`; each says why, or why there is none.
- Otherwise the nearest cases: every measured cohort of the operation with what differs (the facet,
  the requested and the measured value, and for numbers how far: the difference and the ratio) and
  what is the same: fewest differences first, numbers before other facets, then the closest
  (|log2| of the ratio). `bracket` gives upstream's answer
  for a case nobody measured: the measured cases on either side of the request along the one axis
  that differs (never a claim across two differences).

Never raises for what a request says: an unknown operation, GPU or dtype is a `Problem` in the answer,
with the nearest names the registry knows.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernelindex.registry.cohorts import POLICY_VERSION, Trust
from kernelindex.registry.deployability import implementation_facts
from kernelindex.registry.errors import AmbiguousName
from kernelindex.registry.graph import SOURCE_NATIVE, Cohort, Graph
from kernelindex.registry.names import (
    OperationMatch,
    gpu_names,
    match_gpu,
    match_operations,
    nearest,
    operation_names,
)
from kernelindex.registry.nodes import Environment, Implementation, Operation, Protocol, Workload
from kernelindex.registry.search_query import DTYPE_ALIASES

__all__ = [
    "EXACT",
    "NEAREST",
    "NONE",
    "Bracket",
    "CohortAnswer",
    "Difference",
    "KernelRequest",
    "NearCase",
    "Pick",
    "Problem",
    "Resolution",
    "bracket",
    "resolve_kernel",
]

EXACT, NEAREST, NONE = "exact", "nearest", "none"

Document = Callable[[str], Mapping[str, Any]]
"""Reads a stored manifest by its blob id (`Node.oid`)."""


@dataclass(frozen=True, slots=True)
class KernelRequest:
    """What someone asks for. `axes` binds named axes of a case (`tokens=3000`); `shape` a tensor's shape."""

    operation: str
    gpu: str | None = None
    dtype: str | None = None
    axes: tuple[tuple[str, int], ...] = ()
    shape: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """Why part of a request found nothing, and the names the registry has nearest to it."""

    field: str  # operation | gpu | dtype
    message: str
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Difference:
    """One facet where a measured case is not what was asked: `requested` against `measured`;
    for two numbers, `delta` = measured - requested and `ratio` = measured / requested."""

    facet: str  # gpu | dtype | scope | axis:<name> | shape | shape[<i>]
    requested: str
    measured: str
    delta: float | None = None
    ratio: float | None = None

    @property
    def distance(self) -> float | None:
        """How far two numbers are, |log2 ratio| (a factor of two is 1); None for a different thing."""
        if self.ratio is not None and self.ratio > 0:
            return abs(math.log2(self.ratio))
        return None


@dataclass(frozen=True, slots=True)
class Pick:
    """A run chosen from a cohort (`run` None when none qualifies), its rank and why."""

    run: str | None
    rank: int | None
    why: str


@dataclass(frozen=True, slots=True)
class CohortAnswer:
    """A cohort that measured the request, with its three picks."""

    cohort: str
    operation: str
    workload: str
    environment: str
    protocol: str
    profile: str
    ranked: int  # runs ranked in it (eligible, with a value)
    leader: Pick
    best_verified: Pick
    best_deployable: Pick


@dataclass(frozen=True, slots=True)
class NearCase:
    """A measured case near the request: the cohort, what differs and what is the same."""

    answer: CohortAnswer
    differences: tuple[Difference, ...]
    same: tuple[tuple[str, str], ...]  # (facet, value) that match the request


@dataclass(frozen=True, slots=True)
class Bracket:
    """Upstream's answer for an unmeasured case: the nearest measured values on either side of the
    requested one along the single axis that differs, with the cases measured at each."""

    facet: str
    requested: float
    below: float | None
    above: float | None
    below_cases: tuple[NearCase, ...] = ()
    above_cases: tuple[NearCase, ...] = ()


@dataclass(frozen=True, slots=True)
class Resolution:
    """The resolver's answer. `mode`: `exact` (cohorts that measured exactly the request), `nearest`
    (none did: the nearest measured cases) or `none` (nothing to offer: see `problems`)."""

    request: KernelRequest
    mode: str
    operations: tuple[OperationMatch, ...]
    exact: tuple[CohortAnswer, ...] = ()
    nearest: tuple[NearCase, ...] = ()
    problems: tuple[Problem, ...] = ()
    policy: str = POLICY_VERSION
    open_facets: tuple[str, ...] = field(default=())  # facets the request left open (any value fits)


def resolve_kernel(graph: Graph, request: KernelRequest, document: Document) -> Resolution:
    """Resolve a kernel request against one graph (one commit). `document(oid)` reads a manifest."""
    problems: list[Problem] = []
    try:
        operations = match_operations(graph, request.operation, document)
    except AmbiguousName as exc:
        problem = Problem("operation", str(exc), exc.candidates[:5])
        return Resolution(request, NONE, (), problems=(problem,))
    if not operations:
        suggestions = nearest(request.operation, operation_names(graph))
        message = f"no operation is named, titled or of the family {request.operation!r}"
        return Resolution(request, NONE, (), problems=(Problem("operation", message, suggestions),))
    gpus: frozenset[str] | None = None
    if request.gpu is not None:
        gpus = match_gpu(graph, request.gpu)
        if not gpus:
            problems.append(
                Problem(
                    "gpu",
                    f"no run in the registry was measured on a GPU named {request.gpu!r}",
                    # Few GPUs exist: when none is close, all of them are the suggestion.
                    nearest(request.gpu, gpu_names(graph)) or tuple(sorted(gpu_names(graph))),
                )
            )
    dtype = DTYPE_ALIASES.get(request.dtype.lower(), request.dtype.lower()) if request.dtype else None
    picker = _Picker(graph, document)
    operation_specs: dict[str, Mapping[str, Any]] = {}

    def operation_spec(digest: str) -> Mapping[str, Any]:
        """An operation's spec, read once per request ({} if the operation is not in the registry)."""
        found = operation_specs.get(digest)
        if found is None:
            node = graph.nodes.get(digest)
            found = operation_specs[digest] = document(node.oid)["spec"] if isinstance(node, Operation) else {}
        return found

    cases: list[NearCase] = []
    for match in operations:
        for key in sorted(graph.cohorts_by["operation"].get(match.digest, ())):
            cohort = graph.cohorts[key]
            if not cohort.ranked(graph):
                continue
            differences, same = _compare(graph, cohort, request, gpus, dtype, document, operation_spec)
            cases.append(NearCase(picker.answer(cohort), differences, same))
    open_facets = tuple(
        name
        for name, given in (("gpu", request.gpu), ("dtype", request.dtype), ("case", request.axes or request.shape))
        if not given
    )
    names = ", ".join(sorted({graph.nodes[m.digest].name for m in operations}))
    if not cases:
        message = f"no run of {names} is ranked: nothing measured to offer"
        return Resolution(request, NONE, operations, problems=(*problems, Problem("operation", message)))
    exact = [case.answer for case in cases if not case.differences]
    if exact:
        exact.sort(key=lambda a: (-a.ranked, a.cohort))
        return Resolution(request, EXACT, operations, tuple(exact), (), tuple(problems), open_facets=open_facets)
    if dtype is not None and not any(all(d.facet != "dtype" for d in c.differences) for c in cases):
        problems.append(Problem("dtype", f"no measured case of {names} is in {dtype}"))
    cases.sort(key=_nearness)
    return Resolution(request, NEAREST, operations, (), tuple(cases), tuple(problems), open_facets=open_facets)


def _nearness(case: NearCase) -> tuple[int, int, float, int, str]:
    """Fewest differences first; among as many, numbers before things of another kind (a case 3x off
    on one axis is still that measurement, a suite or another GPU is not), then the closest numbers,
    then the larger cohort."""
    distances = [d.distance for d in case.differences]
    numeric = [d for d in distances if d is not None]
    return (len(distances), len(distances) - len(numeric), sum(numeric), -case.answer.ranked, case.answer.cohort)


def bracket(resolution: Resolution) -> Bracket | None:
    """The measured cases on either side of the request along the one numeric facet that differs
    (the facet most one-difference cases vary along); None when no case differs in exactly one
    number, or when nothing lies on either side."""
    along: dict[str, list[tuple[Difference, NearCase]]] = {}
    for case in resolution.nearest:
        if len(case.differences) == 1 and case.differences[0].delta is not None:
            difference = case.differences[0]
            along.setdefault(difference.facet, []).append((difference, case))
    if not along:
        return None
    facet, found = max(along.items(), key=lambda item: (len(item[1]), item[0]))
    requested = float(found[0][0].requested)
    below = max((float(d.measured) for d, _ in found if float(d.measured) < requested), default=None)
    above = min((float(d.measured) for d, _ in found if float(d.measured) > requested), default=None)
    if below is None and above is None:
        return None
    return Bracket(
        facet,
        requested,
        below,
        above,
        tuple(c for d, c in found if below is not None and float(d.measured) == below),
        tuple(c for d, c in found if above is not None and float(d.measured) == above),
    )


# Comparing a cohort with the request ----------------------------------------------------------------


def _compare(
    graph: Graph,
    cohort: Cohort,
    request: KernelRequest,
    gpus: frozenset[str] | None,
    dtype: str | None,
    document: Document,
    operation_spec: Callable[[str], Mapping[str, Any]],
) -> tuple[tuple[Difference, ...], tuple[tuple[str, str], ...]]:
    differences: list[Difference] = []
    same: list[tuple[str, str]] = [("operation", graph.nodes[cohort.operation].name)]
    environment = graph.nodes.get(cohort.environment)
    product = environment.product if isinstance(environment, Environment) else "unknown"
    if gpus is not None:
        if gpus & set(cohort.gpu):
            same.append(("gpu", product))
        else:
            differences.append(Difference("gpu", str(request.gpu), product))
    workload = graph.nodes[cohort.workload]
    assert isinstance(workload, Workload)
    spec = document(workload.oid)["spec"]
    if dtype is not None:
        dtypes = _dtypes(spec) or _operation_dtypes(operation_spec(cohort.operation))
        if dtype in dtypes:
            same.append(("dtype", dtype))
        else:
            differences.append(Difference("dtype", dtype, "/".join(sorted(dtypes)) or "unknown"))
    if request.axes or request.shape is not None:
        if workload.suite:
            differences.append(_suite_scope(spec, request))
        else:
            differences.extend(_axis_differences(spec, request, same))
            if request.shape is not None:
                differences.extend(_shape_differences(spec, request.shape, same, operation_spec(cohort.operation)))
    return tuple(differences), tuple(same)


def _dtypes(spec: Mapping[str, Any]) -> set[str]:
    return {
        DTYPE_ALIASES.get(str(t["dtype"]).lower(), str(t["dtype"]).lower())
        for t in (spec.get("tensors") or {}).values()
    }


def _operation_dtypes(operation: Mapping[str, Any]) -> set[str]:
    """The dtypes of an operation's tensor arguments: what a workload without tensors is in."""
    arguments = [*operation.get("inputs", ()), *operation.get("outputs", ())]
    dtypes = {str(a["tensor"]["dtype"]).lower() for a in arguments if a.get("tensor")}
    return {DTYPE_ALIASES.get(d, d) for d in dtypes}


def _suite_scope(spec: Mapping[str, Any], request: KernelRequest) -> Difference:
    """A suite aggregates cases: it never measures the requested case alone."""
    wanted = dict(request.axes)
    covered = bool(wanted) and any(
        all(case.get("axes", {}).get(axis) == value for axis, value in wanted.items()) for case in spec["cases"]
    )
    requested = _case_text(request)
    where = "covered inside" if covered else "not in"
    return Difference("scope", f"the case {requested}", f"a suite of {len(spec['cases'])} cases ({where} it)")


def _case_text(request: KernelRequest) -> str:
    parts = [f"{axis}={value}" for axis, value in request.axes]
    if request.shape is not None:
        parts.append("[" + ", ".join(str(d) for d in request.shape) + "]")
    return " ".join(parts)


def _axis_differences(spec: Mapping[str, Any], request: KernelRequest, same: list[tuple[str, str]]) -> list[Difference]:
    axes = spec.get("axes") or {}
    found = []
    for axis, value in request.axes:
        measured = axes.get(axis)
        if measured == value:
            same.append((f"axis:{axis}", str(value)))
        elif isinstance(measured, int | float) and not isinstance(measured, bool):
            found.append(_numbers(f"axis:{axis}", value, measured))
        else:
            found.append(
                Difference(
                    f"axis:{axis}", str(value), "not an axis of this case" if measured is None else str(measured)
                )
            )
    return found


def _shape_differences(
    spec: Mapping[str, Any], shape: tuple[int, ...], same: list[tuple[str, str]], operation: Mapping[str, Any]
) -> list[Difference]:
    """Same shape as one of the case's tensors, or the differing dimensions of the closest tensor of
    the same rank. A dimension is named by the axis the operation declares for it (its arguments'
    symbolic shapes, `["tokens", "hidden"]`), else, as upstream names it, by the case's axis of that
    value, else by its index."""
    tensors = sorted((name, tuple(t["shape"])) for name, t in (spec.get("tensors") or {}).items())
    text = "[" + ", ".join(str(d) for d in shape) + "]"
    if any(dims == shape for _, dims in tensors):
        same.append(("shape", text))
        return []
    ranked = [(name, dims) for name, dims in tensors if len(dims) == len(shape)]
    if not ranked:
        shown = ", ".join("[" + ", ".join(str(d) for d in dims) + "]" for _, dims in tensors) or "none"
        return [Difference("shape", text, f"no tensor of rank {len(shape)} (tensors: {shown})")]
    name, closest = min(ranked, key=lambda item: sum(a != b for a, b in zip(item[1], shape, strict=True)))
    symbols = next(
        (
            argument["tensor"]["shape"]
            for argument in (*operation.get("inputs", ()), *operation.get("outputs", ()))
            if argument.get("name") == name and argument.get("tensor")
        ),
        (),
    )
    axes = spec.get("axes") or {}
    found = []
    for index, (measured, wanted) in enumerate(zip(closest, shape, strict=True)):
        if measured == wanted:
            continue
        declared = symbols[index] if index < len(symbols) else None
        named = declared if isinstance(declared, str) else next((a for a, v in axes.items() if v == measured), None)
        found.append(_numbers(f"axis:{named}" if named else f"shape[{index}]", wanted, measured))
    return found


def _numbers(facet: str, requested: float, measured: float) -> Difference:
    ratio = measured / requested if requested else None
    return Difference(facet, _plain(requested), _plain(measured), measured - requested, ratio)


def _plain(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# Picks -------------------------------------------------------------------------------------------


class _Picker:
    """Leader, best verified and best deployable of cohorts, reading each implementation once."""

    def __init__(self, graph: Graph, document: Document) -> None:
        self._graph = graph
        self._document = document

    def answer(self, cohort: Cohort) -> CohortAnswer:
        graph = self._graph
        ranked = cohort.ranked(graph)
        environment = graph.nodes.get(cohort.environment)
        protocol = graph.nodes.get(cohort.protocol)
        head = ranked[0]
        tie = (
            " (tied: runs too close to call share the rank)" if len(ranked) > 1 and ranked[1].tied_with_previous else ""
        )
        how = "the source's own metric" if cohort.profile == SOURCE_NATIVE else "latency"
        leader = Pick(
            head.id, head.rank, f"rank {head.rank} of {len(ranked)} ranked runs by {how} under {POLICY_VERSION}{tie}"
        )
        return CohortAnswer(
            cohort.key,
            cohort.operation,
            cohort.workload,
            environment.product if isinstance(environment, Environment) else cohort.environment,
            protocol.name if isinstance(protocol, Protocol) else cohort.protocol,
            cohort.profile,
            len(ranked),
            leader,
            self._verified(ranked),
            self._deployable_pick(ranked),
        )

    def _verified(self, ranked: Iterable[Any]) -> Pick:
        trusts: Counter[str] = Counter()
        for entry in ranked:
            trust = self._graph.facts[entry.id].trust
            if trust >= Trust.VERIFIED:
                return Pick(
                    entry.id,
                    entry.rank,
                    f"the best-ranked run a registry rerun confirmed ({trust.name.lower()}), at rank {entry.rank}",
                )
            trusts[trust.name.lower()] += 1
        shown = ", ".join(f"{count} {name}" for name, count in sorted(trusts.items()))
        return Pick(None, None, f"no ranked run is verified by a registry rerun ({shown})")

    def _deployable_pick(self, ranked: Iterable[Any]) -> Pick:
        reasons: Counter[str] = Counter()
        count = 0
        for entry in ranked:
            count += 1
            found = self._reasons(entry.id)
            if not found:
                return Pick(
                    entry.id,
                    entry.rank,
                    f"the best-ranked run whose implementation is deployable (public source, an install recipe, "
                    f"a known licence), at rank {entry.rank}",
                )
            reasons.update(found)
        shown = ", ".join(f"{reason} {reasons[reason]}" for reason in sorted(reasons))
        return Pick(None, None, f"no ranked run's implementation is deployable (of {count}: {shown})")

    def _reasons(self, run: str) -> tuple[str, ...]:
        node = self._graph.nodes[run]
        implementation = self._graph.nodes.get(node.implementation)  # type: ignore[union-attr]
        if not isinstance(implementation, Implementation):
            return ("IMPLEMENTATION_MISSING",)
        found = _VERDICTS.get(implementation.digest)
        if found is None:
            found = implementation_facts(implementation, self._document).deployability.reasons
            with _VERDICTS_LOCK:
                _VERDICTS[implementation.digest] = found
                while len(_VERDICTS) > _VERDICTS_KEPT:
                    _VERDICTS.pop(next(iter(_VERDICTS)))
        return found


# A verdict is a function of the implementation's manifest, which its digest names: it holds for every
# commit and every request, so it is kept across them (oldest forgotten first past 65,536, ~10 MB).
_VERDICTS: dict[str, tuple[str, ...]] = {}
_VERDICTS_KEPT = 65_536
_VERDICTS_LOCK = threading.Lock()

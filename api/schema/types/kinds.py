"""The manifest kinds a run names: operations, workloads, projects, implementations, protocols, environments."""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from kernelindex.registry import catalog, read
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.present import workload_label
from kernelindex.schema.types.base import (
    Info,
    Named,
    as_json,
    build,
    document,
    fact,
    implementation_name,
    project_of,
    text,
    typed,
)
from kernelindex.schema.types.deployment import (
    Deployability,
    InstallVariant,
    License,
    SourceCode,
    deployability_of,
    facts_of,
    install_variants_of,
    license_of,
    source_code_of,
)
from kernelindex.schema.types.enums import WorkloadKind
from kernelindex.schema.types.manifest_types import manifest_type
from kernelindex.schema.types.manifests import Manifest
from kernelindex.schema.types.pages import (
    After,
    Before,
    Connection,
    First,
    Last,
    Window,
    asks_count_only,
    counted,
    follows_cursor,
    paginate,
)
from kernelindex.schema.types.states import implementation_state, operation_state, project_state, workload_state

if TYPE_CHECKING:
    from kernelindex.schema.types.cohorts import Cohort
    from kernelindex.schema.types.runs import Run

__all__ = [
    "Environment",
    "Implementation",
    "Operation",
    "Project",
    "ProjectStanding",
    "Protocol",
    "Workload",
    "WorkloadAxis",
    "operation_of",
    "standing_order",
]

RunRef = Annotated["Run", strawberry.lazy("kernelindex.schema.types.runs")]
CohortRef = Annotated["Cohort", strawberry.lazy("kernelindex.schema.types.cohorts")]


@manifest_type
@strawberry.type(description="What is computed (OperationSpec): inputs, outputs, semantics.")
class Operation(Named):
    _node: strawberry.Private[n.Operation]

    def _state(self, info: Info) -> Hashable:
        return operation_state(self._graph, self._node)

    @strawberry.field(description="Its family (rmsnorm, gemm, attention...): a coarse grouping, for navigation.")
    def family(self) -> str:
        return self._node.family

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field(description="The workloads (inputs) defined for it, by digest.")
    @follows_cursor
    def workloads(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Workload] | None:
        digests = sorted(read.children_of(self._graph, read.ChildList.WORKLOADS, self._node.digest))
        return paginate(
            self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Workload)
        )

    @strawberry.field(description="The implementations of it, by digest.")
    @follows_cursor
    def implementations(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Implementation] | None:
        digests = sorted(read.children_of(self._graph, read.ChildList.IMPLEMENTATIONS, self._node.digest))
        return paginate(
            self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Implementation)
        )

    @strawberry.field(description="The cohorts (comparison groups) of its runs, largest first.")
    @follows_cursor
    def cohorts(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[CohortRef] | None:
        keys = self._graph.ordered_cohorts(
            read.cohorts_with(self._graph, read.CohortIndex.OPERATION, self._node.digest)
        )
        return paginate(
            self._graph,
            keys,
            Window(first, after, last, before),
            lambda k: _cohort(self._graph, k),
        )

    @strawberry.field(description="Its runs, newest measurement first, eligible or not.")
    @follows_cursor
    def runs(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[RunRef] | None:
        window = Window(first, after, last, before)
        if asks_count_only(info):
            runs = read.runs_with(self._graph, read.RunIndex.OPERATION, self._node.digest)
            return counted(self._graph, runs, window)
        digests = read.ordered_runs_with(self._graph, read.RunIndex.OPERATION, self._node.digest)
        return paginate(
            self._graph,
            digests,
            window,
            lambda d: _run(self._graph, d),
        )

    @strawberry.field(description="How many runs of it the registry holds (at this commit), eligible or not.")
    def run_count(self) -> int:
        return len(read.runs_with(self._graph, read.RunIndex.OPERATION, self._node.digest))

    @strawberry.field(
        description='The other operations of its `family` ("rmsnorm", "gemm"), by name then digest: what a '
        "reader of this operation may look at next."
    )
    @follows_cursor
    def related(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Operation] | None:
        return paginate(
            self._graph,
            _family(self._graph, self._node.family, self._node.digest),
            Window(first, after, last, before),
            lambda node: Operation(_graph=self._graph, _node=node),
        )


@strawberry.type(description="One named axis of a workload case, e.g. `m = 4096`.")
class WorkloadAxis:
    name: str = strawberry.field(description="The axis as the operation names it (`m`, `batch_size`).")
    value: str = strawberry.field(
        description="Its value, an integer, as text: exact for any value a manifest may hold (up to 2^53 - 1, past "
        "GraphQL's 32-bit Int)."
    )
    number: float = strawberry.field(description="The same value as a number, for charts and sorting.")


@manifest_type
@strawberry.type(description="The inputs a run measured: one case, or a suite of cases.")
class Workload(Named):
    _node: strawberry.Private[n.Workload]

    def _state(self, info: Info) -> Hashable:
        return workload_state(self._graph, self._node)

    @strawberry.field(description="WorkloadCase or WorkloadSuite.")
    def kind(self) -> WorkloadKind:
        return WorkloadKind(self._node.kind)

    @strawberry.field(description="How many cases it holds: 1 for a WorkloadCase.")
    def cases(self) -> int:
        return self._node.cases

    @strawberry.field(description="e.g. suite of 16 cases · mean latency")
    def label(self, info: Info) -> str:
        return fact(info, self._node, workload_label)

    @strawberry.field(
        description="A case's named axes as published (`m = 4096`, `batch_size = 12383`), by name; empty for a "
        "suite (its cases each have their own)."
    )
    def axes(self, info: Info) -> list[WorkloadAxis]:
        spec = document(info, self._node)["spec"]
        axes = sorted((spec.get("axes") or {}).items())  # a case's axes are integers (the WorkloadCase schema)
        return [WorkloadAxis(name=name, value=str(value), number=float(value)) for name, value in axes]

    @strawberry.field(
        description="The digest of its correctness policy (a cohort identity part: runs held to other tolerances "
        "never compare)."
    )
    def correctness_key(self) -> str:
        return self._node.correctness

    @strawberry.field(description="The workload's correctness policy, as published.")
    def correctness(self, info: Info) -> JSON:
        return as_json(document(info, self._node)["spec"]["correctness"])

    @strawberry.field(description="The operation it is an input of; null if the registry lacks it.")
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._node.operation)

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field(description="The cohorts measured on it, largest first.")
    @follows_cursor
    def cohorts(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[CohortRef] | None:
        keys = self._graph.ordered_cohorts(read.cohorts_with(self._graph, read.CohortIndex.WORKLOAD, self._node.digest))
        return paginate(
            self._graph,
            keys,
            Window(first, after, last, before),
            lambda k: _cohort(self._graph, k),
        )


@manifest_type
@strawberry.type(description="Who maintains implementations: a library, a person, a vendor.")
class Project(Named):
    _node: strawberry.Private[n.Project]

    def _state(self, info: Info) -> Hashable:
        return project_state(self._graph, self._node)

    @strawberry.field(description="The project's own name (spec.name).")
    def display_name(self) -> str:
        return self._node.display_name

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field(
        description="Where it stands at this commit: cohorts it leads, records it holds, cohorts it entered, its "
        "runs and implementations (counted inside each cohort, never across)."
    )
    def standing(self) -> ProjectStanding:
        return ProjectStanding(_standing=catalog.standings(self._graph)[self._node.digest])

    @strawberry.field(description="Its implementations (those whose `metadata.labels.project` names it), by digest.")
    @follows_cursor
    def implementations(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Implementation] | None:
        digests = sorted(read.children_of(self._graph, read.ChildList.PROJECT_IMPLEMENTATIONS, self._node.name))
        return paginate(
            self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Implementation)
        )


@strawberry.type(
    description="A project's standing at one commit. Runs rank only inside their cohort, so each count is of "
    "cohorts, and a project's runs are those of its implementations (`Implementation.project`)."
)
class ProjectStanding:
    _standing: strawberry.Private[catalog.Standing]

    @strawberry.field(
        description="Cohorts whose #1 under ranking-v1 at this commit (`Cohort.leader`) is one of its runs."
    )
    def cohorts_led(self) -> int:
        return self._standing.led

    @strawberry.field(
        description="Cohorts whose current record (the records ledger's holder: the first run to reach the cohort's "
        "best value) is one of its runs. Differs from `cohortsLed` only when runs tie at the top (ranking-v1 "
        "shows a tie by trust, then newest first; the record stays with whoever set it)."
    )
    def records_held(self) -> int:
        return self._standing.records

    @strawberry.field(description="Cohorts holding at least one of its runs, eligible or not.")
    def cohorts_entered(self) -> int:
        return self._standing.entered

    @strawberry.field(description="Kernel runs of its implementations.")
    def run_count(self) -> int:
        return self._standing.runs

    @strawberry.field(description="Its implementations (revisions of code).")
    def implementation_count(self) -> int:
        return self._standing.implementations


def _revision(document: dict[str, Any]) -> str | None:
    """An implementation's `projectRevision.version`, or the commit it was built from."""
    revision = document["spec"]["projectRevision"]
    return text(revision.get("version") or revision.get("commit"))


def standing_order(standing: catalog.Standing) -> tuple[int, int, int, int]:
    """The sort key of `projects(order: STANDING)` (Python's sort is stable: ties keep the name order)."""
    return (-standing.led, -standing.records, -standing.entered, -standing.runs)


@manifest_type
@strawberry.type(description="One revision of code that computes an operation.")
class Implementation(Named):
    _node: strawberry.Private[n.Implementation]

    def _state(self, info: Info) -> Hashable:
        project = project_of(self._graph, self._node)
        return implementation_state(self._graph, self._node, project.digest if project else None)

    @strawberry.field(description="Who wrote it: the first author, else the project, else the name.")
    def display_name(self) -> str:
        return implementation_name(self._graph, self._node)

    @strawberry.field(description="projectRevision.version, or the commit it was built from.")
    def revision(self, info: Info) -> str | None:
        return fact(info, self._node, _revision)

    @strawberry.field(description="The language it is written in, as the manifest says (cuda, triton, cute_dsl...).")
    def language(self) -> str:
        return self._node.language

    @strawberry.field(
        description="Whether its source code is public: with raw evidence, what makes a run REPRODUCIBLE."
    )
    def source_available(self) -> bool:
        return self._node.source_available

    @strawberry.field(description="Its licence: declared, concluded (SPDX), whether known, whether permissive.")
    def license(self, info: Info) -> License:
        return license_of(facts_of(info.context.objects, self._node))

    @strawberry.field(description="The ways its manifest gives to install it, in the manifest's order; empty: none.")
    def install_variants(self, info: Info) -> list[InstallVariant]:
        return install_variants_of(facts_of(info.context.objects, self._node))

    @strawberry.field(description="Whether its manifest gives at least one way to install it.")
    def installable(self, info: Info) -> bool:
        return facts_of(info.context.objects, self._node).installable

    @strawberry.field(description="Where its code is: repository, commit, the exact source file measured.")
    def source_code(self, info: Info) -> SourceCode:
        return source_code_of(facts_of(info.context.objects, self._node))

    @strawberry.field(
        description="Can it be shipped? deployability-v1's verdict (public source, an install recipe, a known "
        "licence) with every reason it is not."
    )
    def deployability(self, info: Info) -> Deployability:
        return deployability_of(facts_of(info.context.objects, self._node))

    @strawberry.field(description="The operation it computes; null if the registry lacks it.")
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._node.operation)

    @strawberry.field(
        description="The project it belongs to (its `metadata.labels.project`); null when it names none the registry "
        "holds."
    )
    def project(self) -> Project | None:
        node = project_of(self._graph, self._node)
        return Project(_graph=self._graph, _node=node) if node else None

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field(description="Its runs, newest measurement first, eligible or not.")
    @follows_cursor
    def runs(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[RunRef] | None:
        window = Window(first, after, last, before)
        if asks_count_only(info):
            runs = read.runs_with(self._graph, read.RunIndex.IMPLEMENTATION, self._node.digest)
            return counted(self._graph, runs, window)
        digests = read.ordered_runs_with(self._graph, read.RunIndex.IMPLEMENTATION, self._node.digest)
        return paginate(
            self._graph,
            digests,
            window,
            lambda d: _run(self._graph, d),
        )


@manifest_type
@strawberry.type(description="How a run was measured: harness, timer, statistic, correctness reference.")
class Protocol(Named):
    _node: strawberry.Private[n.Protocol]

    @strawberry.field(description="e.g. SOL-ExecBench evaluation stack v1.0")
    def harness(self, info: Info) -> str:
        harness = document(info, self._node)["spec"]["harness"]
        return " ".join(p for p in (harness["name"], harness.get("version")) if p)

    @strawberry.field(description="How time was measured (cuda_events, wall_clock...), as the manifest says.")
    def timer(self, info: Info) -> str:
        return str(document(info, self._node)["spec"]["measurement"]["timer"])

    @strawberry.field(description="The statistic runs under it rank by (mean, median...).")
    def primary_statistic(self, info: Info) -> str:
        return str(document(info, self._node)["spec"]["measurement"]["primaryStatistic"])

    @strawberry.field(
        description="What outputs were checked against (a reference implementation); null when not published."
    )
    def correctness_reference(self, info: Info) -> str | None:
        return (document(info, self._node)["spec"].get("correctness") or {}).get("reference")

    @strawberry.field(description="Protocols of one family give comparable numbers; null when not declared.")
    def comparability_family(self, info: Info) -> str | None:
        return (document(info, self._node)["spec"].get("comparability") or {}).get("family")

    @strawberry.field(description="The whole protocol spec, as published.")
    def spec(self, info: Info) -> JSON:
        return as_json(document(info, self._node)["spec"])

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


@manifest_type
@strawberry.type(description="Where a run was measured: hardware and software.")
class Environment(Named):
    _node: strawberry.Private[n.Environment]

    @strawberry.field(description="The GPU's vendor, as the manifest says (nvidia, amd...).")
    def vendor(self) -> str:
        return self._node.vendor

    @strawberry.field(description="The GPU product (NVIDIA B200...).")
    def product(self) -> str:
        return self._node.product

    @strawberry.field(description="The GPU architecture (sm_100, gfx942...), or `unknown`.")
    def architecture(self) -> str:
        return self._node.architecture

    @strawberry.field(description="e.g. NVIDIA B200 (sm_100)")
    def gpu(self) -> str:
        if self._node.architecture == "unknown":
            return self._node.product
        return f"{self._node.product} ({self._node.architecture})"

    @strawberry.field(description="The whole environment spec, as published.")
    def spec(self, info: Info) -> JSON:
        return as_json(document(info, self._node)["spec"])

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


def _run(graph: Graph, digest: str) -> Run:
    return cast("Run", build(RunRef, _graph=graph, _node=graph.nodes[digest]))


def _cohort(graph: Graph, key: str) -> Cohort:
    return cast("Cohort", build(CohortRef, _graph=graph, _cohort=graph.cohorts[key]))


def operation_of(graph: Graph, digest: str) -> Operation | None:
    """The operation with this digest, if the graph has it."""
    node = graph.nodes.get(digest)
    return Operation(_graph=graph, _node=node) if isinstance(node, n.Operation) else None


_FAMILIES: weakref.WeakKeyDictionary[Graph, dict[str, list[n.Operation]]] = weakref.WeakKeyDictionary()


def _family(graph: Graph, family: str, without: str) -> list[n.Operation]:
    """The operations of `family` by name then digest, without the one whose digest is `without`."""
    families = _FAMILIES.get(graph)
    if families is None:
        families = {}
        for node in graph.nodes.values():
            if type(node) is n.Operation:
                families.setdefault(node.family, []).append(node)
        for members in families.values():
            members.sort(key=lambda node: (node.name, node.digest))
        families = _FAMILIES.setdefault(graph, families)
    return [node for node in families.get(family, ()) if node.digest != without]

"""The manifest kinds a run names: operations, workloads, projects, implementations, protocols, environments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, cast

import strawberry
from strawberry.scalars import JSON

from api.types.base import (
    Info,
    Named,
    as_json,
    build,
    document,
    implementation_name,
    ordered_cohorts,
    ordered_runs,
    project_of,
    text,
    typed,
)
from api.types.deployment import (
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
from api.types.manifests import Manifest
from api.types.pages import Connection, Window, follows_cursor, paginate
from registry import nodes as n
from registry.graph import Graph
from registry.present import workload_label

if TYPE_CHECKING:
    from api.types.cohorts import Cohort
    from api.types.runs import Run

__all__ = ["Environment", "Implementation", "Operation", "Project", "Protocol", "Workload", "operation_of"]

RunRef = Annotated["Run", strawberry.lazy("api.types.runs")]
CohortRef = Annotated["Cohort", strawberry.lazy("api.types.cohorts")]


@strawberry.type(description="What is computed (OperationSpec): inputs, outputs, semantics.")
class Operation(Named):
    _node: strawberry.Private[n.Operation]

    @strawberry.field
    def family(self) -> str:
        return self._node.family

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    @follows_cursor
    def workloads(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[Workload]:
        digests = sorted(self._graph.children["workloads"].get(self._node.digest, ()))
        return paginate(
            self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Workload)
        )

    @strawberry.field
    @follows_cursor
    def implementations(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[Implementation]:
        digests = sorted(self._graph.children["implementations"].get(self._node.digest, ()))
        return paginate(
            self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Implementation)
        )

    @strawberry.field
    @follows_cursor
    def cohorts(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[CohortRef]:
        keys = ordered_cohorts(self._graph, self._graph.cohorts_by["operation"].get(self._node.digest, set()))
        return paginate(
            self._graph,
            keys,
            Window(first, after, last, before),
            lambda k: _cohort(self._graph, k),
        )

    @strawberry.field
    @follows_cursor
    def runs(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[RunRef]:
        digests = ordered_runs(self._graph, self._graph.runs_by["operation"].get(self._node.digest, set()))
        return paginate(
            self._graph,
            digests,
            Window(first, after, last, before),
            lambda d: _run(self._graph, d),
        )

    @strawberry.field
    def run_count(self) -> int:
        return len(self._graph.runs_by["operation"].get(self._node.digest, ()))


@strawberry.type(description="The inputs a run measured: one case, or a suite of cases.")
class Workload(Named):
    _node: strawberry.Private[n.Workload]

    @strawberry.field(description="WorkloadCase or WorkloadSuite.")
    def kind(self) -> str:
        return self._node.kind

    @strawberry.field
    def cases(self) -> int:
        return self._node.cases

    @strawberry.field(description="e.g. suite of 16 cases · mean latency")
    def label(self, info: Info) -> str:
        return workload_label(document(info, self._node))

    @strawberry.field
    def correctness_key(self) -> str:
        return self._node.correctness

    @strawberry.field(description="The workload's correctness policy, as published.")
    def correctness(self, info: Info) -> JSON:
        return as_json(document(info, self._node)["spec"]["correctness"])

    @strawberry.field
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._node.operation)

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    @follows_cursor
    def cohorts(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[CohortRef]:
        keys = ordered_cohorts(self._graph, self._graph.cohorts_by["workload"].get(self._node.digest, set()))
        return paginate(
            self._graph,
            keys,
            Window(first, after, last, before),
            lambda k: _cohort(self._graph, k),
        )


@strawberry.type(description="Who maintains implementations: a library, a person, a vendor.")
class Project(Named):
    _node: strawberry.Private[n.Project]

    @strawberry.field(description="The project's own name (spec.name).")
    def display_name(self) -> str:
        return self._node.display_name

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    @follows_cursor
    def implementations(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[Implementation]:
        digests = sorted(self._graph.children["project_implementations"].get(self._node.name, ()))
        return paginate(
            self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Implementation)
        )


@strawberry.type(description="One revision of code that computes an operation.")
class Implementation(Named):
    _node: strawberry.Private[n.Implementation]

    @strawberry.field(description="Who wrote it: the first author, else the project, else the name.")
    def display_name(self) -> str:
        return implementation_name(self._graph, self._node)

    @strawberry.field(description="projectRevision.version, or the commit it was built from.")
    def revision(self, info: Info) -> str | None:
        revision = document(info, self._node)["spec"]["projectRevision"]
        return text(revision.get("version") or revision.get("commit"))

    @strawberry.field
    def language(self) -> str:
        return self._node.language

    @strawberry.field
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

    @strawberry.field
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._node.operation)

    @strawberry.field
    def project(self) -> Project | None:
        node = project_of(self._graph, self._node)
        return Project(_graph=self._graph, _node=node) if node else None

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    @follows_cursor
    def runs(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[RunRef]:
        digests = ordered_runs(self._graph, self._graph.runs_by["implementation"].get(self._node.digest, set()))
        return paginate(
            self._graph,
            digests,
            Window(first, after, last, before),
            lambda d: _run(self._graph, d),
        )


@strawberry.type(description="How a run was measured: harness, timer, statistic, correctness reference.")
class Protocol(Named):
    _node: strawberry.Private[n.Protocol]

    @strawberry.field(description="e.g. SOL-ExecBench evaluation stack v1.0")
    def harness(self, info: Info) -> str:
        harness = document(info, self._node)["spec"]["harness"]
        return " ".join(p for p in (harness["name"], harness.get("version")) if p)

    @strawberry.field
    def timer(self, info: Info) -> str:
        return str(document(info, self._node)["spec"]["measurement"]["timer"])

    @strawberry.field
    def primary_statistic(self, info: Info) -> str:
        return str(document(info, self._node)["spec"]["measurement"]["primaryStatistic"])

    @strawberry.field
    def correctness_reference(self, info: Info) -> str | None:
        return (document(info, self._node)["spec"].get("correctness") or {}).get("reference")

    @strawberry.field
    def comparability_family(self, info: Info) -> str | None:
        return (document(info, self._node)["spec"].get("comparability") or {}).get("family")

    @strawberry.field(description="The whole protocol spec, as published.")
    def spec(self, info: Info) -> JSON:
        return as_json(document(info, self._node)["spec"])

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


@strawberry.type(description="Where a run was measured: hardware and software.")
class Environment(Named):
    _node: strawberry.Private[n.Environment]

    @strawberry.field
    def vendor(self) -> str:
        return self._node.vendor

    @strawberry.field
    def product(self) -> str:
        return self._node.product

    @strawberry.field
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

    @strawberry.field
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

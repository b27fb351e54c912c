"""The manifest kinds a run names: operations, workloads, projects, implementations, protocols, environments."""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

from api.context import Context
from api.types.manifests import Manifest, _document, _json, _Named, _text, _typed
from api.types.pages import Connection, Window, follows_cursor, paginate
from registry import nodes as n
from registry.graph import Graph
from registry.present import workload_label

__all__ = ["Environment", "Implementation", "Operation", "Project", "Protocol", "Workload"]

Info = strawberry.Info[Context, None]


@strawberry.type(description="What is computed (OperationSpec): inputs, outputs, semantics.")
class Operation(_Named):
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
            self._graph, digests, Window(first, after, last, before), lambda d: _typed(self._graph, d, Workload)
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
            self._graph, digests, Window(first, after, last, before), lambda d: _typed(self._graph, d, Implementation)
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
    ) -> Connection[Cohort]:
        keys = _ordered_cohorts(self._graph, self._graph.cohorts_by["operation"].get(self._node.digest, set()))
        return paginate(
            self._graph,
            keys,
            Window(first, after, last, before),
            lambda k: Cohort(_graph=self._graph, _cohort=self._graph.cohorts[k]),
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
    ) -> Connection[Run]:
        digests = _ordered_runs(self._graph, self._graph.runs_by["operation"].get(self._node.digest, set()))
        return paginate(self._graph, digests, Window(first, after, last, before), lambda d: _typed(self._graph, d, Run))

    @strawberry.field
    def run_count(self) -> int:
        return len(self._graph.runs_by["operation"].get(self._node.digest, ()))


@strawberry.type(description="The inputs a run measured: one case, or a suite of cases.")
class Workload(_Named):
    _node: strawberry.Private[n.Workload]

    @strawberry.field(description="WorkloadCase or WorkloadSuite.")
    def kind(self) -> str:
        return self._node.kind

    @strawberry.field
    def cases(self) -> int:
        return self._node.cases

    @strawberry.field(description="e.g. suite of 16 cases · mean latency")
    def label(self, info: Info) -> str:
        return workload_label(_document(info, self._node))

    @strawberry.field
    def correctness_key(self) -> str:
        return self._node.correctness

    @strawberry.field(description="The workload's correctness policy, as published.")
    def correctness(self, info: Info) -> JSON:
        return _json(_document(info, self._node)["spec"]["correctness"])

    @strawberry.field
    def operation(self) -> Operation | None:
        return _operation(self._graph, self._node.operation)

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
    ) -> Connection[Cohort]:
        keys = _ordered_cohorts(self._graph, self._graph.cohorts_by["workload"].get(self._node.digest, set()))
        return paginate(
            self._graph,
            keys,
            Window(first, after, last, before),
            lambda k: Cohort(_graph=self._graph, _cohort=self._graph.cohorts[k]),
        )


@strawberry.type(description="Who maintains implementations: a library, a person, a vendor.")
class Project(_Named):
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
            self._graph, digests, Window(first, after, last, before), lambda d: _typed(self._graph, d, Implementation)
        )


@strawberry.type(description="One revision of code that computes an operation.")
class Implementation(_Named):
    _node: strawberry.Private[n.Implementation]

    @strawberry.field(description="Who wrote it: the first author, else the project, else the name.")
    def display_name(self) -> str:
        return implementation_name(self._graph, self._node)

    @strawberry.field(description="projectRevision.version, or the commit it was built from.")
    def revision(self, info: Info) -> str | None:
        revision = _document(info, self._node)["spec"]["projectRevision"]
        return _text(revision.get("version") or revision.get("commit"))

    @strawberry.field
    def language(self) -> str:
        return self._node.language

    @strawberry.field
    def source_available(self) -> bool:
        return self._node.source_available

    @strawberry.field
    def operation(self) -> Operation | None:
        return _operation(self._graph, self._node.operation)

    @strawberry.field
    def project(self) -> Project | None:
        node = _project_of(self._graph, self._node)
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
    ) -> Connection[Run]:
        digests = _ordered_runs(self._graph, self._graph.runs_by["implementation"].get(self._node.digest, set()))
        return paginate(self._graph, digests, Window(first, after, last, before), lambda d: _typed(self._graph, d, Run))


@strawberry.type(description="How a run was measured: harness, timer, statistic, correctness reference.")
class Protocol(_Named):
    _node: strawberry.Private[n.Protocol]

    @strawberry.field(description="e.g. SOL-ExecBench evaluation stack v1.0")
    def harness(self, info: Info) -> str:
        harness = _document(info, self._node)["spec"]["harness"]
        return " ".join(p for p in (harness["name"], harness.get("version")) if p)

    @strawberry.field
    def timer(self, info: Info) -> str:
        return str(_document(info, self._node)["spec"]["measurement"]["timer"])

    @strawberry.field
    def primary_statistic(self, info: Info) -> str:
        return str(_document(info, self._node)["spec"]["measurement"]["primaryStatistic"])

    @strawberry.field
    def correctness_reference(self, info: Info) -> str | None:
        return (_document(info, self._node)["spec"].get("correctness") or {}).get("reference")

    @strawberry.field
    def comparability_family(self, info: Info) -> str | None:
        return (_document(info, self._node)["spec"].get("comparability") or {}).get("family")

    @strawberry.field(description="The whole protocol spec, as published.")
    def spec(self, info: Info) -> JSON:
        return _json(_document(info, self._node)["spec"])

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


@strawberry.type(description="Where a run was measured: hardware and software.")
class Environment(_Named):
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
        return _json(_document(info, self._node)["spec"])

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


def implementation_name(graph: Graph, implementation: n.Implementation) -> str:
    """Implementation.displayName: the first author, else the project, else the name."""
    if implementation.author is not None:
        return implementation.author
    project = _project_of(graph, implementation)
    return project.display_name if project else implementation.name


def _project_of(graph: Graph, implementation: n.Implementation) -> n.Project | None:
    """The project an implementation's `metadata.labels.project` names (the first by digest if several)."""
    if not implementation.project:
        return None
    found = sorted(d for d in graph.named(implementation.project) if graph.nodes[d].kind == "SoftwareProject")
    node = graph.nodes[found[0]] if found else None
    return node if isinstance(node, n.Project) else None


def _operation(graph: Graph, digest: str) -> Operation | None:
    node = graph.nodes.get(digest)
    return Operation(_graph=graph, _node=node) if isinstance(node, n.Operation) else None


# Kinds, runs, cohorts and lifecycle facts name each other: their modules import each other last,
# once their own classes exist (strawberry resolves the annotations when the schema is built).
from api.types.cohorts import Cohort, _ordered_cohorts  # noqa: E402
from api.types.runs import Run, _ordered_runs  # noqa: E402

"""The serving root fields of a snapshot (`ServingRoot`, which `Snapshot` extends) and their filters,
and `compare`'s refusal of serving runs."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.present import with_article
from kernelindex.registry.serving_graph import ServingIndex, serving_index
from kernelindex.schema import types as t
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.identity import find_cohort, find_manifest
from kernelindex.schema.types.serving import (
    Model,
    ServingCohort,
    ServingMetric,
    ServingRun,
    ServingRunStatus,
    ServingWorkload,
    run_maker,
    vocabulary,
)

__all__ = ["ServingCohortFilter", "ServingRoot", "ServingRunFilter", "refuse_serving_runs"]


@strawberry.input(description="Narrow the serving runs; every given condition must hold.")
class ServingRunFilter:
    model: str | None = strawberry.field(default=None, description="A model id (digest, prefix or name).")
    accelerator: str | None = strawberry.field(
        default=None, description="An accelerator model or vendor, any case: 'NVIDIA B200-SXM-180GB', 'amd'."
    )
    scenario: str | None = strawberry.field(default=None, description="offline, server, interactive (any case).")
    submitter: str | None = strawberry.field(
        default=None, description="The stack's project, any case, with or without its note: 'AMD'."
    )
    quality_policy: str | None = strawberry.field(
        default=None, description="Runs held to this accuracy target (mlperf_closed_99...), exactly."
    )
    cohort: str | None = strawberry.field(default=None, description="A serving cohort key (or unique prefix).")
    status: list[ServingRunStatus] | None = strawberry.field(
        default=None, description="Runs with one of these statuses (VALID for results that can rank)."
    )
    eligible_only: bool = strawberry.field(default=False, description="Only runs that rank; false by default.")


@strawberry.input(description="Narrow the serving cohorts; every given condition must hold.")
class ServingCohortFilter:
    model: str | None = strawberry.field(default=None, description="A model id (digest, prefix or name).")
    workload: str | None = strawberry.field(default=None, description="A serving workload id (digest, prefix or name).")
    min_size: int | None = strawberry.field(default=None, description="Cohorts of at least this many runs.")


def _filtered_runs(graph: Graph, index: ServingIndex, f: ServingRunFilter | None) -> list[str]:
    if f is None:
        return index.runs
    model: str | None = None
    if f.model is not None:
        node = find_manifest(graph, ("ModelRevision",), f.model, ("Model",), "a model")
        if node is None:
            return []
        model = node.digest
    found = index.filtered(
        model=model,
        accelerator=f.accelerator,
        scenario=f.scenario,
        submitter=f.submitter,
        quality_policy=f.quality_policy,
        statuses=[s.name.lower() for s in f.status] if f.status else None,
        eligible_only=f.eligible_only,
    )
    if f.cohort is not None:
        cohort = find_cohort(index.cohorts, f.cohort, ("ServingCohort",))
        members = set(cohort.members) if cohort else set()
        found = [d for d in found if d in members]
    return found


def _filtered_cohorts(graph: Graph, index: ServingIndex, f: ServingCohortFilter | None) -> list[str]:
    keys = index.ordered_cohorts()
    if f is None:
        return keys
    for kinds, wanted, part, noun in (
        (("ModelRevision",), f.model, 0, "Model"),
        (("ServingWorkload",), f.workload, 2, "ServingWorkload"),
    ):
        if wanted is not None:
            node = find_manifest(graph, kinds, wanted, (noun,), with_article(noun))
            keys = [k for k in keys if node is not None and index.cohorts[k].parts[part] == node.digest]
    if f.min_size:
        keys = [k for k in keys if len(index.cohorts[k].members) >= f.min_size]
    return keys


@strawberry.type
class ServingRoot:
    """The serving fields of a snapshot (`Snapshot` extends this; not itself in the schema)."""

    _graph: strawberry.Private[Graph | None] = None

    def _serving_graph(self, info: Info) -> Graph:
        return self._graph if self._graph is not None else t.head_graph(info)

    @strawberry.field(description="A serving run by digest, unique hex prefix (>= 12) or metadata.name.")
    def serving_run(
        self,
        info: Info,
        id: Annotated[
            str,
            strawberry.argument(
                description="Its digest, a unique hex prefix of at least 12 digits, its name or its `id` (MLPerf "
                "names are not unique: prefer digests)."
            ),
        ],
    ) -> ServingRun | None:
        graph = self._serving_graph(info)
        node = find_manifest(graph, ("ServingRun",), id, ("ServingRun",), "a serving run")
        return ServingRun(_graph=graph, _node=node) if isinstance(node, n.ServingRun) else None

    @strawberry.field(description="Serving runs, newest observation first.")
    @t.follows_cursor
    def serving_runs(
        self,
        info: Info,
        filter: Annotated[
            ServingRunFilter | None, strawberry.argument(description="Keep the runs that meet every condition given.")
        ] = None,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[ServingRun] | None:
        graph = self._serving_graph(info)
        t.page_bounds(first)
        digests = _filtered_runs(graph, serving_index(graph), filter)
        return t.paginate(graph, digests, t.Window(first, after, last, before), run_maker(graph))

    @strawberry.field(description="A serving cohort by its key (or a unique prefix of >= 12 hex digits).")
    def serving_cohort(
        self,
        info: Info,
        key: Annotated[
            str,
            strawberry.argument(
                description="Its key (sha256:<64 hex>), a unique prefix of at least 12 hex digits, or its `id`."
            ),
        ],
    ) -> ServingCohort | None:
        graph = self._serving_graph(info)
        cohort = find_cohort(serving_index(graph).cohorts, key, ("ServingCohort",))
        return ServingCohort(_graph=graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="Serving cohorts, largest first, then by key.")
    @t.follows_cursor
    def serving_cohorts(
        self,
        info: Info,
        filter: Annotated[
            ServingCohortFilter | None,
            strawberry.argument(description="Keep the cohorts that meet every condition given."),
        ] = None,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[ServingCohort] | None:
        graph = self._serving_graph(info)
        t.page_bounds(first)
        index = serving_index(graph)
        keys = _filtered_cohorts(graph, index, filter)
        return t.paginate(
            graph,
            keys,
            t.Window(first, after, last, before),
            lambda k: ServingCohort(_graph=graph, _cohort=index.cohorts[k]),
        )

    @strawberry.field(
        description="Models (ModelRevision manifests) by name then digest, each with its serving cohorts and runs."
    )
    @t.follows_cursor
    def models(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[Model] | None:
        graph = self._serving_graph(info)
        t.page_bounds(first)
        found = sorted((x for x in graph.nodes.values() if type(x) is n.Model), key=lambda x: (x.name, x.digest))
        return t.paginate(graph, found, t.Window(first, after, last, before), lambda x: Model(_graph=graph, _node=x))

    @strawberry.field(description="A model by digest, unique hex prefix (>= 12) or metadata.name; null when none.")
    def model(
        self,
        info: Info,
        id: Annotated[
            str,
            strawberry.argument(
                description="Its digest, a unique hex prefix of at least 12 characters, or its `metadata.name`."
            ),
        ],
    ) -> Model | None:
        graph = self._serving_graph(info)
        node = graph.find(("ModelRevision",), id)
        return Model(_graph=graph, _node=node) if isinstance(node, n.Model) else None

    @strawberry.field(
        description="Serving workloads (the load a serving run was measured under, with its declared SLOs) by name "
        "then digest: the values `ServingCohortFilter.workload` takes."
    )
    @t.follows_cursor
    def serving_workloads(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[ServingWorkload] | None:
        graph = self._serving_graph(info)
        t.page_bounds(first)
        found = sorted(
            (x for x in graph.nodes.values() if type(x) is n.ServingWorkload), key=lambda x: (x.name, x.digest)
        )
        return t.paginate(
            graph, found, t.Window(first, after, last, before), lambda x: ServingWorkload(_graph=graph, _node=x)
        )

    @strawberry.field(description="serving-v1's metric vocabulary: units and which way is better.")
    def serving_metrics(self) -> list[ServingMetric]:
        return vocabulary()


def refuse_serving_runs(graph: Graph, ids: list[str]) -> None:
    """`compare` takes kernel runs only.

    Raises:
        kernelindex.registry.errors.IncomparableKinds: some ids name serving runs.
    """
    serving = [i for i in ids if graph.find(("ServingRun",), i) is not None]
    if serving:
        raise registry.errors.IncomparableKinds(serving)

"""Search and the navigation lists of a snapshot: `search(query:)` with KernelIndex's grammar
(`kernelindex.registry.search`), and `projects`, `implementations`, `gpus`, `sources` with their counts: what a
frontend's search box and its browse menus ask for. `Snapshot` extends `SearchRoot`."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import strawberry

from kernelindex.registry import catalog, read
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.kernel_query import kernel_request
from kernelindex.registry.read import implementation_passes
from kernelindex.registry.search import parse_query, search_runs
from kernelindex.registry.search_query import Intent
from kernelindex.schema import types as t
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.deployment import facts_of
from kernelindex.schema.types.gpus import Gpu, find_gpu, gpu_list
from kernelindex.schema.types.kinds import standing_order
from kernelindex.schema.types.resolution import KernelResolution, resolution_of

__all__ = [
    "ImplementationFilter",
    "OperationFamily",
    "ProjectOrder",
    "SearchFacet",
    "SearchIssue",
    "SearchResult",
    "SearchRoot",
    "SourceCount",
]

_MOVED = "Page with the arguments of `runs` (`search(query:) { runs(first:, after:) }`), as every connection pages."


@strawberry.enum(description="How `projects` orders software projects.")
class ProjectOrder(enum.Enum):
    NAME = strawberry.enum_value("name", description="By `name` (metadata.name), then digest.")
    STANDING = strawberry.enum_value(
        "standing",
        description="Most cohorts led first, then most records held, most cohorts entered, most runs, then by name.",
    )


SEARCHES_KEPT = 64
"""Searches a snapshot keeps the answer of, by query text: paging through results, or the page and its JSON twin,
asks the same search again with other page arguments. A search depends only on the snapshot and the text (the
manifests it reads are content-addressed), so the kept answer is the answer."""


def _searched(graph: Graph, query: str, search: Callable[[], list[str]]) -> Sequence[str]:
    kept: dict[str, tuple[str, ...]] = graph.__dict__.setdefault("_searches", {})
    found = kept.get(query)
    if found is None:
        found = tuple(search())
        if len(kept) >= SEARCHES_KEPT:
            kept.clear()  # bounded; a dict's clear and item assignment are atomic under the GIL
        kept[query] = found
    return found


@strawberry.type(description="One part of a search query as the registry read it.")
class SearchFacet:
    token: str = strawberry.field(description="The text as typed.")
    field: str = strawberry.field(description="op, family, gpu, arch, dtype, shape, axis, layout, framework, ...")
    display: str = strawberry.field(description="How it was read: 'gpu B200', 'dtype bf16', 'tokens = 2048'.")


@strawberry.type(description="A part of a search query that could not be used, and why (with a hint).")
class SearchIssue:
    token: str = strawberry.field(description="The part of the query, as typed.")
    message: str = strawberry.field(
        description="Why it could not be used, with a hint where there is one (\"did you mean 'gpu:'?\")."
    )


@strawberry.type(description="Runs a search query matches, most relevant first, with how the query was read.")
class SearchResult:
    text: list[str] = strawberry.field(description="The free-text terms (matched against names and titles).")
    facets: list[SearchFacet] = strawberry.field(description="The `key:value` parts it understood, in order.")
    issues: list[SearchIssue] = strawberry.field(
        description="The parts it could not use (an unknown key, a bad value), each with a hint; empty when "
        "every part was used."
    )
    _graph: strawberry.Private[Graph]
    _digests: strawberry.Private[Sequence[str]]
    _window: strawberry.Private[t.Window]
    _intent: strawberry.Private[Intent]

    @strawberry.field(
        description="The matching runs, most relevant first, paged like every connection. Without its own "
        "paging arguments it pages with the ones given to `search` (deprecated there)."
    )
    @t.follows_cursor
    def runs(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Run] | None:
        window = t.Window(first, after, last, before)
        if window == t.Window():
            window = self._window
        graph = self._graph
        return t.paginate(graph, self._digests, window, lambda d: t.typed(graph, d, t.Run))

    @strawberry.field(
        description="The kernel resolver's answer when the query reads as a kernel request, else null. It reads "
        "as one when it names an operation (the one `op:` term, else all its free text as one name, else its "
        "`family:`), that name finds an operation as the resolver names them ('rmsnorm' finds RMSNorm), and its "
        "other parts are only those the resolver matches, each at most once: a GPU or architecture, a dtype, a "
        "shape, axis bindings (`tokens=3000`). Any other facet (language, trust, licence...) makes it a search only."
    )
    def resolution(self, info: Info) -> KernelResolution | None:
        objects = info.context.objects
        request = kernel_request(self._graph, self._intent, objects.get)
        return resolution_of(self._graph, request, objects.get) if request is not None else None


@strawberry.type(description='A family of operations (`Operation.family`: "rmsnorm", "gemm", "moe").')
class OperationFamily:
    name: str = strawberry.field(description="The family as operations spell it; `operations(family:)` takes it.")
    operation_count: int = strawberry.field(description="Operations of the family.")
    run_count: int = strawberry.field(description="Kernel runs of those operations.")


@strawberry.type(description="A source of results and how many kernel runs it published (`source` has the rest).")
class SourceCount:
    source: t.Source = strawberry.field(description="The source.")
    run_count: int = strawberry.field(description="How many kernel runs it published.")


@strawberry.input(
    description="Narrow a list of implementations by what their manifests say; every given condition must hold."
)
class ImplementationFilter:
    deployable_only: bool = strawberry.field(
        default=False,
        description="Only implementations deployable under deployability-v1 (public source, an install recipe, a "
        "known licence).",
    )
    license_known: bool | None = strawberry.field(
        default=None,
        description="true: only those whose licence is known (an SPDX expression was concluded); false: only those "
        "whose licence is unknown; null: either.",
    )
    installable: bool | None = strawberry.field(
        default=None,
        description="true: only those whose manifest gives a way to install them; false: only those whose does not; "
        "null: either.",
    )


@strawberry.type
class SearchRoot:
    """The search and navigation fields of a snapshot (not itself in the schema)."""

    _graph: strawberry.Private[Graph | None] = None

    def _search_graph(self, info: Info) -> Graph:
        return self._graph if self._graph is not None else t.head_graph(info)

    @strawberry.field(
        description="Runs matching a query in KernelIndex's grammar, most relevant first: `rmsnorm b200 bf16`, "
        '`op:gemm gpu:"NVIDIA H100" dtype:bfloat16 trust:verified`, `"fused attention" shape:[2048,4096]`. '
        "Keys: op, family, gpu, arch, dtype, shape, layout, framework, language, cuda, license, source, "
        "installable, trust, and name=integer for a workload axis. Words are matched case-insensitively "
        "against operation and implementation names and titles (split on _, - and spaces)."
    )
    @t.follows_cursor
    def search(
        self,
        info: Info,
        query: Annotated[str, strawberry.argument(description="The query, at most 512 characters and 32 terms.")],
        first: Annotated[
            int | None, strawberry.argument(description="`runs(first:)`.", deprecation_reason=_MOVED)
        ] = None,
        after: Annotated[
            str | None, strawberry.argument(description="`runs(after:)`.", deprecation_reason=_MOVED)
        ] = None,
        last: Annotated[
            int | None, strawberry.argument(description="`runs(last:)`.", deprecation_reason=_MOVED)
        ] = None,
        before: Annotated[
            str | None, strawberry.argument(description="`runs(before:)`.", deprecation_reason=_MOVED)
        ] = None,
    ) -> SearchResult | None:
        graph = self._search_graph(info)
        intent = parse_query(query)  # SearchTooLarge past its limits (the cost limit refuses it sooner)
        objects = info.context.objects

        def document(digest: str) -> dict[str, Any]:
            return objects.get(graph.nodes[digest].oid)

        digests = _searched(graph, query, lambda: search_runs(graph, intent, document))
        return SearchResult(
            text=intent.text + intent.operations,
            facets=[SearchFacet(token=f.token, field=f.field, display=f.display) for f in intent.facets],
            issues=[SearchIssue(token=i.token, message=i.message) for i in intent.issues],
            _graph=graph,
            _digests=digests,
            _window=t.Window(first, after, last, before),
            _intent=intent,
        )

    @strawberry.field(
        description="Software projects (each with its implementations): by name, or by `order: STANDING` most "
        "cohorts led first (`standing` says what each count means)."
    )
    @t.follows_cursor
    def projects(
        self,
        info: Info,
        order: Annotated[
            ProjectOrder,
            strawberry.argument(description="How projects are ordered: by name (the default) or by standing."),
        ] = ProjectOrder.NAME,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Project] | None:
        graph = self._search_graph(info)
        found = sorted((x for x in graph.nodes.values() if isinstance(x, n.Project)), key=lambda x: (x.name, x.digest))
        if order == ProjectOrder.STANDING:
            standings = catalog.standings(graph)
            found.sort(key=lambda x: standing_order(standings[x.digest]))
        return t.paginate(
            graph, found, t.Window(first, after, last, before), lambda x: t.Project(_graph=graph, _node=x)
        )

    @strawberry.field(
        description="Implementations, most runs first (`runs { totalCount }` says how many); `filter` narrows by "
        "licence, install recipes and deployability."
    )
    @t.follows_cursor
    def implementations(
        self,
        info: Info,
        filter: Annotated[
            ImplementationFilter | None,
            strawberry.argument(description="Conditions on what the implementations' manifests say; null: all."),
        ] = None,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Implementation] | None:
        graph = self._search_graph(info)
        objects = info.context.objects
        found = sorted(
            (
                x
                for x in graph.nodes.values()
                if isinstance(x, n.Implementation)
                and (
                    filter is None
                    or implementation_passes(
                        facts_of(objects, x),
                        deployable_only=filter.deployable_only,
                        license_known=filter.license_known,
                        installable=filter.installable,
                    )
                )
            ),
            key=lambda x: (-len(read.runs_with(graph, read.RunIndex.IMPLEMENTATION, x.digest)), x.name, x.digest),
        )
        return t.paginate(
            graph, found, t.Window(first, after, last, before), lambda x: t.Implementation(_graph=graph, _node=x)
        )

    @strawberry.field(description="Every family of operations, by name, with how many operations and runs each has.")
    def operation_families(self, info: Info) -> list[OperationFamily]:
        graph = self._search_graph(info)
        operations: dict[str, int] = {}
        runs: dict[str, int] = {}
        for node in graph.nodes.values():
            if type(node) is n.Operation:
                operations[node.family] = operations.get(node.family, 0) + 1
                runs[node.family] = runs.get(node.family, 0) + len(
                    read.runs_with(graph, read.RunIndex.OPERATION, node.digest)
                )
        return [OperationFamily(name=f, operation_count=operations[f], run_count=runs[f]) for f in sorted(operations)]

    @strawberry.field(
        description="GPU products with environments in the registry, most kernel runs first, then by product."
    )
    def gpus(self, info: Info) -> list[Gpu]:
        return gpu_list(self._search_graph(info))

    @strawberry.field(
        description='A GPU by its slug ("nvidia-b200") or its product in any case and spacing ("NVIDIA B200"); '
        "null when the registry has no environment of that product."
    )
    def gpu(
        self,
        info: Info,
        id: Annotated[
            str, strawberry.argument(description='A GPU\'s slug ("nvidia-b200") or its product ("NVIDIA B200").')
        ],
    ) -> Gpu | None:
        return find_gpu(self._search_graph(info), id)

    @strawberry.field(
        description="Sources of results (kernel and serving), most runs of either kind first, then by slug: each "
        "with its terms, what it published and its latest commit."
    )
    def sources(self, info: Info) -> list[SourceCount]:
        graph = self._search_graph(info)
        tallies = sorted(catalog.sources(graph), key=lambda s: (-(s.runs + s.serving_runs), s.slug))
        found = []
        for tally in tallies:
            source = t.source_type(info.context, graph, tally.slug)
            if source is not None:
                found.append(SourceCount(source=source, run_count=tally.runs))
        return found

    @strawberry.field(description="A source by its slug (`sol-execbench`); null when no commit or run names it.")
    def source(
        self, info: Info, slug: Annotated[str, strawberry.argument(description="A source's slug (`sol-execbench`).")]
    ) -> t.Source | None:
        graph = self._search_graph(info)
        return t.source_type(info.context, graph, slug) if catalog.source_tally(graph, slug) else None

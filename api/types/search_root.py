"""Search and the navigation lists of a snapshot: `search(query:)` with KernelIndex's grammar
(`registry.search`), and `projects`, `implementations`, `gpus`, `sources` with their counts: what a
frontend's search box and its browse menus ask for. `Snapshot` extends `SearchRoot`."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from api import types as t
from api.types.base import Info
from api.types.deployment import facts_of, implementation_passes
from api.types.resolution import KernelResolution, resolution_of
from registry import nodes as n
from registry.graph import Graph
from registry.kernel_query import kernel_request
from registry.search import parse_query, search_runs
from registry.search_query import Intent

__all__ = ["Gpu", "ImplementationFilter", "SearchFacet", "SearchIssue", "SearchResult", "SearchRoot", "SourceCount"]

MAX_QUERY = 512


@strawberry.type(description="One part of a search query as the registry read it.")
class SearchFacet:
    token: str = strawberry.field(description="The text as typed.")
    field: str = strawberry.field(description="op, family, gpu, arch, dtype, shape, axis, layout, framework, ...")
    display: str = strawberry.field(description="How it was read: 'gpu B200', 'dtype bf16', 'tokens = 2048'.")


@strawberry.type(description="A part of a search query that could not be used, and why (with a hint).")
class SearchIssue:
    token: str
    message: str


@strawberry.type(description="Runs a search query matches, most relevant first, with how the query was read.")
class SearchResult:
    text: list[str] = strawberry.field(description="The free-text terms (matched against names and titles).")
    facets: list[SearchFacet]
    issues: list[SearchIssue]
    runs: t.Connection[t.Run]
    _graph: strawberry.Private[Graph]
    _intent: strawberry.Private[Intent]

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


@strawberry.type(description="A GPU product the registry has kernel runs on.")
class Gpu:
    vendor: str
    product: str
    architecture: str
    run_count: int
    cohort_count: int


@strawberry.type(description="A source of results and how many kernel runs it published.")
class SourceCount:
    source: t.Source
    run_count: int


def _gpus(graph: Graph) -> list[Gpu]:
    found: dict[tuple[str, str, str], Gpu] = {}
    for node in graph.nodes.values():
        if not isinstance(node, n.Environment):
            continue
        key = (node.vendor, node.product, node.architecture)
        if key in found:
            continue
        product = node.product.lower()
        found[key] = Gpu(
            vendor=node.vendor,
            product=node.product,
            architecture=node.architecture,
            run_count=len(graph.runs_by["gpu"].get(product, ())),
            cohort_count=len(graph.cohorts_by["gpu"].get(product, ())),
        )
    unique: dict[str, Gpu] = {}
    for gpu in found.values():  # one row per product: the architecture it is known by, if any
        kept = unique.get(gpu.product)
        if kept is None or kept.architecture == "unknown":
            unique[gpu.product] = gpu
    return sorted(unique.values(), key=lambda gpu: (-gpu.run_count, gpu.product))


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
        return self._graph if self._graph is not None else info.context.graph(None)

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
        query: str,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> SearchResult:
        graph = self._search_graph(info)
        if len(query) > MAX_QUERY:
            raise t.PageSizeError(f"a search query is at most {MAX_QUERY} characters (got {len(query)})")
        intent = parse_query(query)
        objects = info.context.objects

        def document(digest: str) -> dict[str, Any]:
            return objects.get(graph.nodes[digest].oid)

        digests = search_runs(graph, intent, document)
        return SearchResult(
            text=intent.text + intent.operations,
            facets=[SearchFacet(token=f.token, field=f.field, display=f.display) for f in intent.facets],
            issues=[SearchIssue(token=i.token, message=i.message) for i in intent.issues],
            runs=t.paginate(graph, digests, t.Window(first, after, last, before), lambda d: t.typed(graph, d, t.Run)),
            _graph=graph,
            _intent=intent,
        )

    @strawberry.field(description="Software projects by name (each with its implementations).")
    @t.follows_cursor
    def projects(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.Project]:
        graph = self._search_graph(info)
        found = sorted((x for x in graph.nodes.values() if isinstance(x, n.Project)), key=lambda x: (x.name, x.digest))
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
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.Implementation]:
        graph = self._search_graph(info)
        runs = graph.runs_by["implementation"]
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
            key=lambda x: (-len(runs.get(x.digest, ())), x.name, x.digest),
        )
        return t.paginate(
            graph, found, t.Window(first, after, last, before), lambda x: t.Implementation(_graph=graph, _node=x)
        )

    @strawberry.field(description="GPU products with kernel runs and cohorts on them, most runs first.")
    def gpus(self, info: Info) -> list[Gpu]:
        graph = self._search_graph(info)
        cached: list[Gpu] | None = graph.__dict__.get("_gpus")
        if cached is None:
            cached = graph.__dict__["_gpus"] = _gpus(graph)
        return cached

    @strawberry.field(description="Sources of kernel results, with how many runs each published, most first.")
    def sources(self, info: Info) -> list[SourceCount]:
        graph = self._search_graph(info)
        counts = sorted(((len(d), slug) for slug, d in graph.runs_by["source"].items()), key=lambda x: (-x[0], x[1]))
        found = []
        for count, slug in counts:
            source = t.source_type(info.context, graph, slug)
            if source is not None:
                found.append(SourceCount(source=source, run_count=count))
        return found

"""Search and the navigation lists of a snapshot: `search(query:)` with KernelIndex's grammar
(`registry.search`), and `projects`, `implementations`, `gpus`, `sources` with their counts: what a
frontend's search box and its browse menus ask for. `Snapshot` extends `SearchRoot`."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from api import types as t
from api.types.base import Info
from registry import nodes as n
from registry.graph import Graph
from registry.search import parse_query, search_runs

__all__ = ["Gpu", "SearchFacet", "SearchIssue", "SearchResult", "SearchRoot", "SourceCount"]

_MOVED = "Page with the arguments of `runs` (`search(query:) { runs(first:, after:) }`), as every connection pages."


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
    _digests: strawberry.Private[list[str]]
    _window: strawberry.Private[t.Window]

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


@strawberry.type(description="A GPU product the registry has kernel runs on.")
class Gpu:
    vendor: str = strawberry.field(description="Its vendor (nvidia, amd...).")
    product: str = strawberry.field(description="The product (NVIDIA B200...).")
    architecture: str = strawberry.field(description="Its architecture (sm_100...), or `unknown`.")
    run_count: int = strawberry.field(description="How many kernel runs were measured on it.")
    cohort_count: int = strawberry.field(description="How many cohorts were measured on it.")


@strawberry.type(description="A source of results and how many kernel runs it published.")
class SourceCount:
    source: t.Source = strawberry.field(description="The source.")
    run_count: int = strawberry.field(description="How many kernel runs it published.")


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

        digests = search_runs(graph, intent, document)
        return SearchResult(
            text=intent.text + intent.operations,
            facets=[SearchFacet(token=f.token, field=f.field, display=f.display) for f in intent.facets],
            issues=[SearchIssue(token=i.token, message=i.message) for i in intent.issues],
            _graph=graph,
            _digests=digests,
            _window=t.Window(first, after, last, before),
        )

    @strawberry.field(description="Software projects by name (each with its implementations).")
    @t.follows_cursor
    def projects(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Project] | None:
        graph = self._search_graph(info)
        found = sorted((x for x in graph.nodes.values() if isinstance(x, n.Project)), key=lambda x: (x.name, x.digest))
        return t.paginate(
            graph, found, t.Window(first, after, last, before), lambda x: t.Project(_graph=graph, _node=x)
        )

    @strawberry.field(description="Implementations, most runs first (`runs { totalCount }` says how many).")
    @t.follows_cursor
    def implementations(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Implementation] | None:
        graph = self._search_graph(info)
        runs = graph.runs_by["implementation"]
        found = sorted(
            (x for x in graph.nodes.values() if isinstance(x, n.Implementation)),
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

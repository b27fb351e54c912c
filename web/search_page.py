"""The search page: KernelIndex's search grammar (the `search` field), with the query as it was read."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.urls import Urls
from kernelindex.web import documents
from kernelindex.web.names import humanize_operation
from kernelindex.web.render import Spec, guarded, json_asked, render

__all__ = ["RESOLVER_CASES", "SEARCH_PAGE", "search"]

SEARCH_PAGE = 50
RESOLVER_CASES = 5  # exact or nearest cases the resolver's answer shows above the results

# The grammar as a reader needs it (registry/search.py, upstream's apps/web/src/lib/search-query.ts).
GRAMMAR = (
    ("op:rmsnorm", "an operation (name or words of it); also family:attention"),
    ("gpu:b200, b200, sm_100", "a GPU product as a whole word, or an architecture (arch:sm_100)"),
    ("dtype:bf16, bf16", "a dtype, with aliases (bfloat16, half, fp8 e4m3...)"),
    ("4096x4096, shape:[2048, 4096]", "a shape of the workload"),
    ("tokens=2048", "an axis bound to a value"),
    ("language:triton, triton, framework:pytorch", "how the implementation is written"),
    ("trust:verified, verified", "an evidence level at least this"),
    ("source:public, license:mit, installable:yes", "what the implementation publishes"),
    ('"fused attention"', "a phrase; any other word is text, matched against operations and implementations"),
)


def _search_extra(data: dict[str, Any], links: Urls, query: str, after: str | None) -> dict[str, Any]:
    found = data["search"]
    page_info = found["runs"]["pageInfo"]
    return {
        "query": query,
        "found": found,
        "resolution": found["resolution"],
        "runs": [edge["node"] for edge in found["runs"]["edges"]],
        "grammar": GRAMMAR,
        "humanize": humanize_operation,
        "next_url": links.search(query, page_info["endCursor"]) if page_info["hasNextPage"] else None,
        "first_url": links.search(query) if after else None,
    }


@guarded
async def search(request: Request) -> Response:
    """`/search?q=...`: the runs a query matches, most relevant first, and how the query was read. A query over
    the search limits is refused as `/graphql` refuses it (`SEARCH_TOO_LARGE`), by the same cost limit."""
    at = request.path_params.get("commit")
    query = request.query_params.get("q", "").strip()
    after = request.query_params.get("after") or None
    spec = Spec(
        template="search.html",
        document=documents.SEARCH,
        variables={"at": at, "q": query, "first": SEARCH_PAGE, "after": after, "cases": RESOLVER_CASES},
        title=lambda d: f"Search: {query}" if query else "Search",
        extra=lambda data, links: _search_extra(data, links, query, after),
        query=[("q", query), *([("after", after)] if after else [])] if query or after else [],
    )
    return await render(request, spec, json_asked(request), at)

"""The exports page (`/exports`): the dataset, that is the catalog export of a commit of main, with its digest,
size, tables, the sources it holds, and how to cite it (the `catalogExport` field)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.web import documents
from kernelindex.web.render import Spec, copy_citations, guarded, json_asked, render

__all__ = ["exports"]


@guarded
async def exports(request: Request) -> Response:
    """`/exports` (and pinned): the export of the head of main (or of the pinned commit), and its citation."""
    at = request.path_params.get("commit")
    as_json = json_asked(request)
    spec = Spec(
        template="exports.html",
        document=documents.CATALOG_EXPORT,
        variables={"at": at, **copy_citations(request)},
        title=lambda d: f"Catalog export {d['catalogExport']['name']}",
        subject="catalogExport",
        missing="no export: exports pin commits of main",
    )
    return await render(request, spec, as_json, at)

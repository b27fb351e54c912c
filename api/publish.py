"""HTTP routes that publish the registry beyond GraphQL: Atom feeds, catalog exports pinned to a
commit, and `llms.txt` / `robots.txt` / the sitemap. Kept beside `app.py` (which mounts `ROUTES`)
so that the application module stays one list of routes; rendering lives in `feeds`, `wellknown`
and `registry.export`, which know nothing of HTTP.
"""

from __future__ import annotations

import email.utils
import hashlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import orjson
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

import registry
from api.codes import AMBIGUOUS_NAME, MANIFEST_NOT_FOUND, NO_BASE_URL, NOT_FOUND, REVISION_NOT_FOUND
from api.feeds import Feed, publications_feed, records_feed
from api.http.responses import error
from api.service import NotPublished
from api.urls import Urls
from api.wellknown import llms_txt, robots_txt, sitemap_index, sitemap_runs, sitemap_site
from registry.export import CATALOG_FORMAT, compressed, export_name, plan_export
from registry.graph import Graph
from registry.provenance import utc_instant

if TYPE_CHECKING:
    from api.app import Service

__all__ = ["ROUTES"]

IMMUTABLE = "public, max-age=31536000, immutable"
FOLLOW = "public, max-age=60"  # feeds and pointers move with main; readers poll
_ATOM = "application/atom+xml; charset=utf-8"
_EXPORT_VERSION = "1"  # part of an export's ETag: the same commit exports the same bytes under one version


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def _urls(service: Service) -> Urls:
    return Urls.of(service.settings.base_url)


def _not_modified(request: Request, etag: str, updated: int | None) -> bool:
    """RFC 9110 section 13.2.2: If-None-Match decides when present; otherwise If-Modified-Since."""
    match = request.headers.get("if-none-match")
    if match is not None:
        return etag in {tag.strip() for tag in match.split(",")} or match.strip() == "*"
    since = request.headers.get("if-modified-since")
    if since is None or updated is None:
        return False
    try:
        parsed = email.utils.parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
    return updated <= int(parsed.timestamp())


async def _pinned_graph(request: Request, service: Service, path: str) -> Graph | Response:
    """The graph a `/at/{commit}/...` URL names (a full commit id of main), or the response refusing it."""
    rev = request.path_params["commit"]
    try:
        commit = await service.queries.pinned(rev)
    except registry.RevisionNotFound as exc:
        return error(404, str(exc), REVISION_NOT_FOUND)
    except NotPublished as exc:
        message = f"{exc.commit} is not on main: only commits of the publication record are pinned"
        return error(404, message, REVISION_NOT_FOUND)
    if rev != commit:
        base = _urls(service).base or ""
        return RedirectResponse(f"{base}/at/{commit}{path}", status_code=307)
    graph: Graph = await anyio.to_thread.run_sync(service.snapshots.at, commit)
    return graph


async def _cached_feed(request: Request, name: str, render: Callable[[Graph, Urls, bool], Feed | None]) -> Response:
    """A feed of main's served head, or (under `/at/{commit}/`) of a commit of main: then immutable."""
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    pinned = "commit" in request.path_params
    if pinned:
        found = await _pinned_graph(request, service, "/" + request.url.path.split("/", 3)[3])
        if isinstance(found, Response):
            return found
        graph = found
    else:
        graph = service.snapshots.head
    key = ("feed", graph.commit, name, pinned)
    feed: Feed | None = service.feeds.get(key)
    if feed is None:
        feed = await anyio.to_thread.run_sync(render, graph, _urls(service), pinned)
        if feed is None:
            return error(404, f"no such feed: {name} at {graph.commit}", MANIFEST_NOT_FOUND)
        service.feeds.put(key, feed)
    headers = {
        "etag": feed.etag,
        "last-modified": email.utils.format_datetime(_utc(feed.updated), usegmt=True),
        "cache-control": IMMUTABLE if pinned else FOLLOW,
        "x-kernelindex-commit": graph.commit,
    }
    if _not_modified(request, feed.etag, feed.updated):
        return Response(status_code=304, headers=headers)
    return Response(feed.body, media_type=_ATOM, headers=headers)


def _utc(seconds: int) -> Any:
    import datetime as dt

    return dt.datetime.fromtimestamp(seconds, dt.UTC)


async def _records(request: Request) -> Response:
    return await _cached_feed(request, "records", lambda graph, urls, pinned: records_feed(graph, urls, pinned=pinned))


async def _publications(request: Request) -> Response:
    service = _service(request)
    return await _cached_feed(
        request,
        "publications",
        lambda graph, urls, pinned: publications_feed(graph, urls, service.objects.commit, pinned),
    )


async def _operation_feed(request: Request) -> Response:
    ident = request.path_params["ident"]

    def render(graph: Graph, urls: Urls, pinned: bool) -> Feed | None:
        operation = graph.find(("OperationSpec",), ident)
        if operation is None:
            return None
        cohorts = [graph.cohorts[k] for k in graph.cohorts_by["operation"].get(operation.digest, ())]
        return records_feed(graph, urls, f"operations/{operation.digest}", cohorts, pinned)

    return await _guarded_feed(request, f"operations/{ident}", render)


async def _cohort_feed(request: Request) -> Response:
    key = request.path_params["key"]

    def render(graph: Graph, urls: Urls, pinned: bool) -> Feed | None:
        cohort = graph.find_cohort(key)
        return None if cohort is None else records_feed(graph, urls, f"cohorts/{cohort.key}", [cohort], pinned)

    return await _guarded_feed(request, f"cohorts/{key}", render)


async def _guarded_feed(request: Request, name: str, render: Callable[[Graph, Urls, bool], Feed | None]) -> Response:
    try:
        return await _cached_feed(request, name, render)
    except registry.AmbiguousName as exc:
        return error(400, str(exc), AMBIGUOUS_NAME)


# Exports -----------------------------------------------------------------------------------------


async def _export(request: Request) -> Response:
    """The catalog export of a commit of main, streamed as it is produced; immutable."""
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    rev = request.path_params["commit"]
    try:
        commit = await service.queries.pinned(rev)
    except registry.RevisionNotFound as exc:
        return error(404, str(exc), REVISION_NOT_FOUND)
    except NotPublished as exc:
        return error(
            404, f"{exc.commit} is not on main: exports pin commits of the publication record", REVISION_NOT_FOUND
        )
    if rev != commit:
        return RedirectResponse(_urls(service).export(commit), status_code=307)
    etag = f'"{commit}-{CATALOG_FORMAT}-{_EXPORT_VERSION}"'
    graph = await anyio.to_thread.run_sync(service.snapshots.at, commit)
    name = export_name(graph.commit, graph.committed_at)
    headers = {
        "etag": etag,
        "cache-control": IMMUTABLE,
        "content-disposition": f'attachment; filename="{name}"',
        "last-modified": email.utils.format_datetime(_utc(graph.committed_at), usegmt=True),
        "x-kernelindex-commit": commit,
    }
    if _not_modified(request, etag, graph.committed_at):
        return Response(status_code=304, headers=headers)
    if request.method == "HEAD":
        return Response(media_type="application/zstd", headers=headers)
    plan = await anyio.to_thread.run_sync(plan_export, service.snapshots.store(), graph)
    stream: Iterator[bytes] = compressed(plan.lines())
    return StreamingResponse(stream, media_type="application/zstd", headers=headers)


async def _latest(request: Request) -> Response:
    """A pointer to the export of main's served head (upstream's `latest.json`)."""
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    graph = service.snapshots.head
    urls = _urls(service)
    body = orjson.dumps(
        {
            "format": CATALOG_FORMAT,
            "name": export_name(graph.commit, graph.committed_at),
            "url": urls.export(graph.commit),
            "commit": graph.commit,
            "committedAt": utc_instant(graph.committed_at),
        }
    )
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {"etag": etag, "cache-control": FOLLOW, "x-kernelindex-commit": graph.commit}
    if _not_modified(request, etag, None):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


# Well-known files --------------------------------------------------------------------------------


async def _llms(request: Request) -> Response:
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    text = llms_txt(service.snapshots.head, _urls(service))
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8", headers={"cache-control": FOLLOW})


async def _robots(request: Request) -> Response:
    return PlainTextResponse(robots_txt(_urls(_service(request))), headers={"cache-control": FOLLOW})


_NO_BASE = "a sitemap lists absolute URLs: set KERNELINDEX_BASE_URL (or serve --base-url) to publish one"


async def _sitemap(request: Request) -> Response:
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    urls = _urls(service)
    if not urls.absolute:
        return error(404, _NO_BASE, NO_BASE_URL)
    graph = service.snapshots.head
    body = await anyio.to_thread.run_sync(sitemap_index, graph, urls)
    return Response(body, media_type="application/xml", headers={"cache-control": FOLLOW})


async def _sitemap_part(request: Request) -> Response:
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    urls = _urls(service)
    if not urls.absolute:
        return error(404, _NO_BASE, NO_BASE_URL)
    graph = service.snapshots.head
    name = request.path_params["name"]
    body: bytes | None = None
    if name == "site":
        body = sitemap_site(graph, urls)
    elif name.startswith("runs-") and name[5:].isdigit():
        body = await anyio.to_thread.run_sync(sitemap_runs, graph, urls, int(name[5:]))
    if body is None:
        return error(404, f"no such sitemap: {name}.xml", NOT_FOUND)
    return Response(body, media_type="application/xml", headers={"cache-control": FOLLOW})


ROUTES = [
    Route("/feeds/records.atom", _records, methods=["GET"]),
    Route("/feeds/publications.atom", _publications, methods=["GET"]),
    Route("/feeds/operations/{ident}.atom", _operation_feed, methods=["GET"]),
    Route("/feeds/cohorts/{key}.atom", _cohort_feed, methods=["GET"]),
    Route("/at/{commit}/feeds/records.atom", _records, methods=["GET"]),
    Route("/at/{commit}/feeds/publications.atom", _publications, methods=["GET"]),
    Route("/at/{commit}/feeds/operations/{ident}.atom", _operation_feed, methods=["GET"]),
    Route("/at/{commit}/feeds/cohorts/{key}.atom", _cohort_feed, methods=["GET"]),
    Route("/at/{commit}/export.jsonl.zst", _export, methods=["GET", "HEAD"]),
    Route("/exports/latest.json", _latest, methods=["GET"]),
    Route("/llms.txt", _llms, methods=["GET"]),
    Route("/robots.txt", _robots, methods=["GET"]),
    Route("/sitemap.xml", _sitemap, methods=["GET"]),
    Route("/sitemaps/{name}.xml", _sitemap_part, methods=["GET"]),
]

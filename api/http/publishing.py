"""Publishing the registry beyond GraphQL: Atom feeds, catalog exports pinned to a commit, and `llms.txt` /
`robots.txt` / the sitemap. What they say is rendered by `kernelindex.service.feeds`, `kernelindex.service.wellknown`
and
`kernelindex.registry.export`, which know nothing of HTTP; here are their validators, caching and refusals.
"""

from __future__ import annotations

import base64
import datetime as dt
import email.utils
from collections.abc import Callable
from typing import TypeVar

import orjson
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response

from kernelindex import registry
from kernelindex.core.cache import FOLLOW, IMMUTABLE, Representation, entity_tag
from kernelindex.core.codes import AMBIGUOUS_NAME, MANIFEST_NOT_FOUND, NO_BASE_URL, NOT_FOUND, REVISION_NOT_FOUND
from kernelindex.core.urls import Urls, unpinned
from kernelindex.http.requests import not_ready, server_of
from kernelindex.http.responses import JSON, error
from kernelindex.registry import read
from kernelindex.registry.export import CATALOG_FORMAT, export_name, plan_export
from kernelindex.registry.export_cache import CachedExport
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.service.feeds import Feed, publications_feed, records_feed
from kernelindex.service.queries import NotPublished
from kernelindex.service.wellknown import llms_txt, robots_txt, sitemap_index
from kernelindex.service.wellknown import sitemap_part as sitemap_file

__all__ = [
    "cohort_feed",
    "export",
    "latest_export",
    "llms",
    "operation_feed",
    "publications",
    "records",
    "robots",
    "sitemap",
    "sitemap_part",
    "sitemap_part_moved",
]

_ATOM = "application/atom+xml; charset=utf-8"
_EXPORT_VERSION = "1"  # part of an export's ETag: the same commit exports the same bytes under one version


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


async def _pinned_graph(request: Request, pins: str) -> Graph | Response:
    """The graph a `/at/{commit}/...` URL names (a full commit id of main), or the response refusing it
    (`pins`: what such URLs pin, for the refusal's message)."""
    server = server_of(request)
    rev = request.path_params["commit"]
    try:
        commit = await server.queries.pinned(rev)
    except registry.RevisionNotFound as exc:
        return error(404, str(exc), REVISION_NOT_FOUND)
    except NotPublished as exc:
        return error(404, f"{exc.commit} is not on main: {pins}", REVISION_NOT_FOUND)
    if rev != commit:
        return RedirectResponse(server.urls.pin(commit, unpinned(request.url.path)), status_code=307)
    # Under the executor bound: a pinned graph not derived yet takes up to a cold build.
    graph: Graph = await server.queries.run(server.snapshots.at, commit)
    return graph


def _utc(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


# Feeds ---------------------------------------------------------------------------------------------


async def _cached_feed(request: Request, name: str, render: Callable[[Graph, Urls, bool], Feed | None]) -> Response:
    """A feed of main's served head, or (under `/at/{commit}/`) of a commit of main: then immutable."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    pinned = "commit" in request.path_params
    if pinned:
        found = await _pinned_graph(request, "only commits of the publication record are pinned")
        if isinstance(found, Response):
            return found
        graph = found
    else:
        graph = server.snapshots.head
    key = ("feed", graph.commit, name, pinned)
    feed: Feed | None = server.feeds.get(key)
    if feed is None:
        feed = await server.queries.run(render, graph, server.urls, pinned)
        if feed is None:
            return error(404, f"no such feed: {name} at {graph.commit}", MANIFEST_NOT_FOUND)
        server.feeds.put(key, feed)
    headers = {
        "etag": feed.etag,
        "last-modified": email.utils.format_datetime(_utc(feed.updated), usegmt=True),
        "cache-control": IMMUTABLE if pinned else FOLLOW,
        "x-kernelindex-commit": graph.commit,
    }
    if _not_modified(request, feed.etag, feed.updated):
        return Response(status_code=304, headers=headers)
    return Response(feed.body, media_type=_ATOM, headers=headers)


async def records(request: Request) -> Response:
    """`/feeds/records.atom`: new records and retraction hand-overs in every cohort, newest first."""
    return await _cached_feed(request, "records", lambda graph, urls, pinned: records_feed(graph, urls, pinned=pinned))


async def publications(request: Request) -> Response:
    """`/feeds/publications.atom`: each commit of main and what it published."""
    commit_info = server_of(request).objects.commit
    return await _cached_feed(
        request, "publications", lambda graph, urls, pinned: publications_feed(graph, urls, commit_info, pinned)
    )


async def operation_feed(request: Request) -> Response:
    """`/feeds/operations/{id}.atom`: the records of an operation's cohorts."""
    ident = request.path_params["ident"]

    def render(graph: Graph, urls: Urls, pinned: bool) -> Feed | None:
        operation = read.manifest(graph, ident, ("OperationSpec",))
        if operation is None:
            return None
        cohorts = [graph.cohorts[k] for k in read.cohorts_with(graph, read.CohortIndex.OPERATION, operation.digest)]
        return records_feed(graph, urls, f"operations/{operation.digest}", cohorts, pinned)

    return await _guarded_feed(request, f"operations/{ident}", render)


async def cohort_feed(request: Request) -> Response:
    """`/feeds/cohorts/{key}.atom`: one cohort's records."""
    key = request.path_params["key"]

    def render(graph: Graph, urls: Urls, pinned: bool) -> Feed | None:
        cohort = read.cohort(graph, key)
        return None if cohort is None else records_feed(graph, urls, f"cohorts/{cohort.key}", [cohort], pinned)

    return await _guarded_feed(request, f"cohorts/{key}", render)


async def _guarded_feed(request: Request, name: str, render: Callable[[Graph, Urls, bool], Feed | None]) -> Response:
    try:
        return await _cached_feed(request, name, render)
    except registry.AmbiguousName as exc:
        return error(400, str(exc), AMBIGUOUS_NAME)


# Exports -----------------------------------------------------------------------------------------


async def _exported(request: Request, graph: Graph) -> CachedExport:
    """The export of `graph`'s commit, from the server's export cache (built there on first use, off the event loop
    and under the executor bound: a first build reads every manifest of the commit)."""
    server = server_of(request)
    store = server.snapshots.store()
    return await server.queries.run(server.exports.get, graph.commit, lambda: plan_export(store, graph))


def _digest_header(sha256: str) -> str:
    """RFC 9530's `Repr-Digest` of bytes whose sha256 (hex) is given."""
    return "sha-256=:" + base64.b64encode(bytes.fromhex(sha256)).decode() + ":"


async def export(request: Request) -> Response:
    """`/at/{commit}/export.jsonl.zst`: the catalog export of a commit of main, built once and served from the
    export cache with its sha256 (`Repr-Digest`) and size; immutable."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    graph = await _pinned_graph(request, "exports pin commits of the publication record")
    if isinstance(graph, Response):
        return graph
    etag = f'"{graph.commit}-{CATALOG_FORMAT}-{_EXPORT_VERSION}"'
    name = export_name(graph.commit, graph.committed_at)
    headers = {
        "etag": etag,
        "cache-control": IMMUTABLE,
        "content-disposition": f'attachment; filename="{name}"',
        "last-modified": email.utils.format_datetime(_utc(graph.committed_at), usegmt=True),
        "x-kernelindex-commit": graph.commit,
    }
    if _not_modified(request, etag, graph.committed_at):
        return Response(status_code=304, headers=headers)
    found = await _exported(request, graph)
    headers["repr-digest"] = _digest_header(found.digest.sha256)
    return FileResponse(found.path, media_type="application/zstd", headers=headers)


async def latest_export(request: Request) -> Response:
    """`/exports/latest.json`: a pointer to the export of main's served head (upstream's `latest.json`)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    graph = server.snapshots.head
    found = await _exported(request, graph)
    body = orjson.dumps(
        {
            "format": CATALOG_FORMAT,
            "name": export_name(graph.commit, graph.committed_at),
            "url": server.urls.export(graph.commit),
            "commit": graph.commit,
            "committedAt": utc_instant(graph.committed_at),
            "sha256": found.digest.sha256,
            "size": found.digest.size,
        }
    )
    etag = entity_tag(body)
    headers = {"etag": etag, "cache-control": FOLLOW, "x-kernelindex-commit": graph.commit}
    if _not_modified(request, etag, None):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=JSON, headers=headers)


# Well-known files --------------------------------------------------------------------------------


async def llms(request: Request) -> Response:
    """`/llms.txt`: what the registry is and how to ask it, for assistants (llmstxt.org)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    head = server.snapshots.head
    text = await _kept(request, ("llms.txt", head.commit), lambda: llms_txt(head, server.urls).encode())
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8", headers={"cache-control": FOLLOW})


_Made = TypeVar("_Made", bytes, bytes | None)


async def _kept(request: Request, key: tuple[str, ...], make: Callable[[], _Made]) -> _Made:
    """What `make()` gives (in a worker), made once for `key` (a commit among it) and kept in the pages' cache:
    a sitemap's file (up to 10,000 URLs) or llms.txt is not made again for each request of the same head."""
    server = server_of(request)
    found = server.pages.get(key)
    if found is None:
        body = await server.queries.run(make)
        if body is None:
            return None
        found = Representation(body, "application/octet-stream")
        found.key = key
        server.pages.put(key, found)
    return found.body


async def robots(request: Request) -> Response:
    """`/robots.txt`."""
    return PlainTextResponse(robots_txt(server_of(request).urls), headers={"cache-control": FOLLOW})


_NO_BASE = "a sitemap lists absolute URLs: set KERNELINDEX_BASE_URL (or serve --base-url) to publish one"


async def sitemap(request: Request) -> Response:
    """`/sitemap.xml`: the index of the sitemaps (only under a configured base URL)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    if not server.urls.absolute:
        return error(404, _NO_BASE, NO_BASE_URL)
    head = server.snapshots.head
    body = await _kept(request, ("sitemap", head.commit), lambda: sitemap_index(head, server.urls))
    return Response(body, media_type="application/xml", headers={"cache-control": FOLLOW})


async def sitemap_part(request: Request) -> Response:
    """`/sitemap-{name}.xml`: the site's entry points and index pages (`site`), or a family's n-th file of at
    most 10,000 pages (`operations-1`, `runs-2`...)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    if not server.urls.absolute:
        return error(404, _NO_BASE, NO_BASE_URL)
    name = request.path_params["name"]
    head = server.snapshots.head
    body = await _kept(request, ("sitemap", head.commit, name), lambda: sitemap_file(head, server.urls, name))
    if body is None:
        return error(404, f"no such sitemap: sitemap-{name}.xml", NOT_FOUND)
    return Response(body, media_type="application/xml", headers={"cache-control": FOLLOW})


async def sitemap_part_moved(request: Request) -> Response:
    """`/sitemaps/{name}.xml`, where the sitemap's files first were: a permanent redirect to `/sitemap-{name}.xml`
    (a sitemap may list only URLs under its own folder, so its files moved to the root)."""
    return RedirectResponse(server_of(request).urls.sitemap_part(request.path_params["name"]), status_code=301)

"""Permalinks: a manifest's stored bytes and a run's dossier, pinned to a commit of main (`/at/{commit}/...`);
the same URLs at the head of main redirect to the commit served now.

A permalink names a commit of main's served history by its full id: a prefix or a branch name redirects
(307) to the full id, anything else is 404, so what a permalink answers never changes. A run's permalink is
also its page: `kernelindex.web.run_pages.run_permalink` answers a browser, and asks `dossier` here for an API client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kernelindex import registry
from kernelindex.core.cache import IMMUTABLE, Representation
from kernelindex.core.codes import INTERNAL, MANIFEST_NOT_FOUND, REVISION_NOT_FOUND
from kernelindex.core.graphql_http import etag_matches
from kernelindex.http.requests import digest_param, not_ready, server_of
from kernelindex.http.responses import JSON, error, send
from kernelindex.registry import read
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.service.dossier import DOSSIER_QUERY, SERVING_DOSSIER_QUERY
from kernelindex.service.queries import NotPublished

__all__ = ["RunTarget", "dossier", "head_manifest", "head_run", "manifest", "resolve_run"]


@dataclass(frozen=True, slots=True)
class RunTarget:
    """The run a permalink names: its commit (a full id of main), its digest, and which kind of run it is
    (`run`, `servingRun`: the dossier's field), or None when nothing of either kind has that digest."""

    graph: Graph
    digest: str
    kind: Literal["run", "servingRun"] | None

    @property
    def commit(self) -> str:
        return self.graph.commit


async def _resolve(request: Request, kind: str) -> tuple[Graph, str] | Response:
    """The graph (of a commit in main's history) and digest a permalink names, or the response that refuses it."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    digest = digest_param(request)
    if isinstance(digest, Response):
        return digest
    rev = request.path_params["commit"]
    try:
        commit = await server.queries.pinned(rev)
    except registry.RevisionNotFound as exc:
        return error(404, str(exc), REVISION_NOT_FOUND)
    except NotPublished as exc:
        message = f"{exc.commit} is not on main: permalinks pin commits of the publication record"
        return error(404, message, REVISION_NOT_FOUND)
    if rev != commit:
        return RedirectResponse(server.urls.url_path_for(kind, at=commit, digest=digest), status_code=307)
    head = server.snapshots.head
    # Under the executor bound: a pinned graph not derived yet takes up to a cold build.
    graph = head if commit == head.commit else await server.queries.run(server.snapshots.at, commit)
    return graph, digest


async def manifest(request: Request) -> Response:
    """`/at/{commit}/manifests/{digest}`: the manifest's stored bytes, as published; immutable."""
    server = server_of(request)
    found = await _resolve(request, "manifest")
    if isinstance(found, Response):
        return found
    graph, digest = found
    node = read.node(graph, digest)
    if node is None:
        return error(404, f"manifest not found: {digest} at {graph.commit}", MANIFEST_NOT_FOUND)
    etag = f'"{node.oid}"'
    headers = {"etag": etag, "cache-control": IMMUTABLE, "x-kernelindex-commit": graph.commit}
    if etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(server.objects.raw(node.oid), media_type=JSON, headers=headers)


async def resolve_run(request: Request) -> RunTarget | Response:
    """The run `/at/{commit}/runs/{digest}` names, or the response that refuses the URL."""
    found = await _resolve(request, "run")
    if isinstance(found, Response):
        return found
    graph, digest = found
    node = read.node(graph, digest)
    kind: Literal["run", "servingRun"] | None = None
    if isinstance(node, registry.nodes.ServingRun):
        kind = "servingRun"  # serving-v1 keeps the two kinds apart, each with its own dossier
    elif isinstance(node, registry.nodes.Run):
        kind = "run"
    return RunTarget(graph, digest, kind)


async def dossier(request: Request, target: RunTarget) -> Response:
    """A run's dossier as JSON: everything its page shows, pinned to its commit; immutable, cached."""
    server = server_of(request)
    if target.kind is None:
        return error(404, f"run not found: {target.digest} at {target.commit}", MANIFEST_NOT_FOUND)
    key = ("dossier", target.commit, target.digest)
    cached = server.responses.get(key)
    if cached is None:
        query = DOSSIER_QUERY if target.kind == "run" else SERVING_DOSSIER_QUERY
        answer = await server.queries.answer(query, {"at": target.commit, "id": target.digest})
        if answer.errors or answer.data is None:
            return error(500, f"the dossier could not be built: {answer.messages}", INTERNAL)
        graph = target.graph
        body = orjson.dumps(
            {
                "registry": {"commit": graph.commit, "committedAt": utc_instant(graph.committed_at)},
                target.kind: answer.data["registry"][target.kind],
            }
        )
        headers = {"cache-control": IMMUTABLE, "x-kernelindex-commit": graph.commit}
        cached = Representation(body, JSON, headers)
        cached.key = key
        server.responses.put(key, cached)
    return send(request, cached, cache=server.responses)


async def head_manifest(request: Request) -> Response:
    """`/manifests/{digest}`: to the manifest's permalink at the commit served now (302: it moves)."""
    return await _head_redirect(request, "manifest")


async def head_run(request: Request) -> Response:
    """`/runs/{digest}`: to the run's permalink at the commit served now (302: it moves)."""
    return await _head_redirect(request, "run")


async def _head_redirect(request: Request, name: str) -> Response:
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    digest = digest_param(request)
    if isinstance(digest, Response):
        return digest
    commit = server.snapshots.head.commit
    return RedirectResponse(server.urls.url_path_for(name, at=commit, digest=digest), status_code=302)

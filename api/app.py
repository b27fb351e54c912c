"""The ASGI application: `/graphql`, permalinks, `/healthz`, `/hooks/refresh`.

`create_app(settings)` builds it; `app` is the one uvicorn serves (`uvicorn api.app:app`).
The GraphQL endpoint is ours rather than strawberry's view so that a response for
(commit, document, variables) is served from a cache at the speed of a static route, with
strong ETags (304 on `If-None-Match`) and immutable caching when pinned to a full commit id.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError

import registry
from api import compression, freshness
from api import graphql_http as gh
from api.cache import ByteLRU
from api.compression import Encodings
from api.context import Context, Documents
from api.dossier import DOSSIER_QUERY, SERVING_DOSSIER_QUERY
from api.errors import INTERNAL, UNEXPECTED, code_of_class
from api.feeds import Feed
from api.follow import follow_main
from api.graphiql import Asset, GraphiQL
from api.mcp_lazy import LazyMCP
from api.previews import Previews
from api.publish import ROUTES as PUBLISH_ROUTES
from api.schema import LIMITS, Query, schema
from api.settings import Settings
from registry.graphcache import cache_path, load_cache, materialize, save_cache
from registry.mirror import Mirror
from registry.provenance import utc_instant
from registry.snapshots import Snapshots
from web.catalog_pages import home
from web.render import wants_json
from web.routes import ROUTES as PAGE_ROUTES
from web.run_pages import cached_run_page, run_page
from web.serving_pages import serving_run_page

__all__ = ["app", "create_app"]

log = logging.getLogger("kernelindex")

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=0, must-revalidate"
_MAX_BODY = 2 * LIMITS["max_query_bytes"]
RESPONSE_CACHE_BYTES = 64 * 1024 * 1024
FEED_CACHE_BYTES = 16 * 1024 * 1024  # rendered Atom feeds: a few hundred KB each at most
CORS_HEADERS = (
    "accept",
    "authorization",
    "content-type",
    "if-none-match",
    # What Apollo Client, urql and graphql-codegen's clients send (issue 9): a preflight naming any
    # header not listed here is refused, and the browser never sends the query.
    "apollo-require-preflight",
    "apollographql-client-name",
    "apollographql-client-version",
    "x-apollo-operation-name",
    "graphql-client-name",
    "graphql-client-version",
)
EXECUTORS = 2
"""GraphQL executions at once. Execution is CPU-bound Python: more threads add no throughput under
the GIL, only contenders for it, each delaying the event loop thread (measured under 6 heavy
clients, /healthz p99: 1 executor ~25 ms, 2 ~50 ms, 4 ~70 ms); two let one wait on git while the
other computes."""
SWITCH_INTERVAL = 0.001
"""How long a thread holding the GIL keeps it when another wants it (CPython's default is 5 ms):
the event loop waits for an executor that long at each step of a request (/healthz p99 under 6
heavy clients: ~90 ms at 5 ms, ~50 ms at 1 ms, with the same throughput of heavy queries)."""


class Service:
    """What the routes share: the snapshots, the documents, the response cache, the executors."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.snapshots = Snapshots(settings.repo_path, trust_root=settings.trust_root_policy())
        self.documents = Documents(self.snapshots)
        self.previews = Previews(self.snapshots)
        self.moved = asyncio.Condition()  # notified after each refresh (monotonic reads wait on it)
        self.persisted = gh.PersistedQueries(settings.trusted_documents())
        self.graphiql = GraphiQL()
        self.responses: ByteLRU[tuple[str, ...], Rendered] = ByteLRU(RESPONSE_CACHE_BYTES, Rendered.weight)
        self.feeds: ByteLRU[tuple[object, ...], Feed] = ByteLRU(FEED_CACHE_BYTES, lambda feed: len(feed.body) + 256)
        # GraphQL executes in worker threads, at most this many at once (made in the lifespan: anyio
        # wants a running loop). The event loop only routes, so /healthz answers under any load.
        self.executions: anyio.CapacityLimiter | None = None
        self.started = time.time()
        self.ready = False
        self.load_error: str | None = None
        self.saved: str | None = None  # the commit the warm-start cache describes
        # A replica's canonical repository, fetched on a poll and on the refresh hook (docs/deploy.md).
        self.mirror = (
            Mirror(settings.mirror_url, settings.repo_path, pull_requests=settings.mirror_pull_requests)
            if settings.mirror_url
            else None
        )

    def load(self) -> None:
        """Build (or warm-load) the head graph; runs in a worker thread at startup. What is left
        (every cohort's ranking and ledger, the cache for the next start) is done afterwards in the
        background, while the server already answers."""
        if self.mirror is not None:
            self.mirror.ensure()  # a replica's first start clones its canonical repository
        store = self.snapshots.store()
        cached = load_cache(cache_path(self.settings.repo_path), store) if self.settings.graph_cache else None
        if cached is not None:
            if self.settings.handover_from is not None:
                materialize(*cached)  # replacing a serving process: take traffic fully decoded
            self.snapshots.load(*cached)
            self.saved = cached[0].commit
        else:
            self.snapshots.load()
        self.ready = True
        threading.Thread(target=self._prepare, name="prepare-graph", daemon=True).start()

    def _prepare(self) -> None:
        try:
            if self.saved is not None and self.saved == self.snapshots.status.serving:
                # Started warm at the cached commit: its rankings and ledgers came with it, and a
                # background pass over every cohort would only hold the GIL while requests wait (the
                # tail latency of issue 14). What is left (a cohort's places) is computed on first use.
                return
            self.snapshots.head.prepare()
            self.save()
        except registry.RegistryError as exc:  # nothing served: nothing to prepare
            log.info("kernelindex: nothing to prepare: %s", exc)

    def refresh(self) -> registry.snapshots.HeadStatus:
        return self.snapshots.refresh()

    async def refresh_async(self) -> registry.snapshots.HeadStatus:
        """Refresh in a worker thread, then wake the requests waiting for main to move (api.freshness)."""
        status = await anyio.to_thread.run_sync(self.refresh)
        async with self.moved:
            self.moved.notify_all()
        return status

    async def fetch(self) -> str | None:
        """A replica brings its canonical repository's refs, then refreshes (which validates the new
        head before serving it); why it could not fetch, or None."""
        if self.mirror is None:
            return None
        try:
            fetched = await anyio.to_thread.run_sync(self.mirror.fetch)
        except registry.RegistryError as exc:
            log.warning("kernelindex: %s", exc)
            return str(exc)
        if fetched.moved and self.ready:
            await self.refresh_async()
        return None

    def save(self) -> None:
        """Write the warm-start cache if what is served moved since it was written."""
        publication = self.snapshots.publication
        serving = self.snapshots.status.serving
        if not self.settings.graph_cache or publication is None or serving is None or serving == self.saved:
            return
        graph = self.snapshots.head
        graph.prepare()
        if save_cache(cache_path(self.settings.repo_path), graph, publication):
            self.saved = graph.commit

    def unavailable(self) -> JSONResponse | None:
        """The 503 to answer while there is nothing to serve (loading, or no valid head)."""
        if not self.ready:
            return _error(503, self.load_error or "the registry is still loading", "NOT_READY")
        if self.snapshots.status.serving is None:
            return _error(503, f"nothing to serve: {self.snapshots.status.reason}", "NOT_READY")
        return None

    @property
    def base_url(self) -> str:
        """Where absolute links point: the configured base URL, else "" (root-relative links).
        Never the request's Host: a cached answer would carry it to every later client (issue 8)."""
        return (self.settings.base_url or "").rstrip("/")

    def context(self, head: registry.graph.Graph) -> Context:
        return Context(self.snapshots, self.documents, self.base_url, None, head, self.previews)

    async def execute(self, query: str, variables: dict[str, Any], operation: str | None, context: Context) -> Any:
        """Run a GraphQL operation in a worker thread, at most `EXECUTORS` at once."""
        assert self.executions is not None, "the lifespan makes the limiter"
        run = functools.partial(
            schema.execute_sync,
            query,
            variable_values=variables,
            context_value=context,
            operation_name=operation,
            root_value=Query(),
        )
        return await anyio.to_thread.run_sync(run, limiter=self.executions)


def create_app(settings: Settings | None = None) -> Starlette:
    """The application for one registry."""
    service = Service(settings or Settings.from_env())
    mcp = LazyMCP(  # the MCP tools at /mcp (api/mcp_server.py), imported on the first MCP request
        lambda module: module.Backend(
            service.snapshots,
            service.documents,
            service.base_url,
            lambda: None,  # a server adds no access date of its own
            ready=lambda: service.ready and service.snapshots.status.serving is not None,
            previews=service.previews,
        )
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        service.executions = anyio.CapacityLimiter(EXECUTORS)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            await anyio.to_thread.run_sync(service.load)
        except registry.RegistryError as exc:
            service.load_error = str(exc)
            log.error("kernelindex: cannot load %s: %s", service.settings.repo_path, exc)
        try:
            git_dir = service.snapshots.store().git_dir
        except registry.RegistryError:  # no repository (a replica whose first clone failed): nothing to follow
            git_dir = None
        poller = None
        if git_dir is not None:
            poller = asyncio.create_task(
                follow_main(
                    git_dir,
                    service.refresh_async,
                    service.settings.poll_seconds,
                    watch=service.settings.watch,
                    ready=lambda: service.ready,
                )
            )
        follower = asyncio.create_task(_follow(service)) if service.mirror is not None else None
        try:
            async with mcp.running():
                yield
        finally:
            sys.setswitchinterval(switch)
            for task in (poller, follower):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            if service.ready:
                await anyio.to_thread.run_sync(service.save)  # the next start is a warm one

    routes = [
        Route("/", _index, methods=["GET"]),
        Route("/graphql", _graphql, methods=["GET", "POST"]),
        Route("/static/graphiql/{version}/{name}", _graphiql_asset, methods=["GET"]),
        Route("/healthz", _healthz, methods=["GET"]),
        Route("/hooks/refresh", _refresh, methods=["POST"]),
        *PAGE_ROUTES,  # the HTML pages and their JSON twins (web/)
        Route("/manifests/{digest}", _head_redirect, methods=["GET"]),
        Route("/runs/{digest}", _head_redirect, methods=["GET"]),
        Route("/at/{commit}/manifests/{digest}", _manifest_permalink, methods=["GET"]),
        Route("/at/{commit}/runs/{digest}.json", _run_permalink, methods=["GET"]),  # the run page's JSON twin
        Route("/at/{commit}/runs/{digest}", _run_permalink, methods=["GET"]),
        *PUBLISH_ROUTES,  # feeds, exports, llms.txt, robots.txt, sitemap (api/publish.py)
        Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
    ]
    middleware = [
        Middleware(
            CORSMiddleware,
            allow_origins=list(service.settings.cors_origins),
            allow_methods=["GET", "HEAD", "POST", "OPTIONS"],
            allow_headers=list(CORS_HEADERS),
            expose_headers=["etag", "x-kernelindex-commit"],
            max_age=86400,
        )
    ]
    handlers = {registry.RegistryError: _registry_fault, Exception: _unexpected_fault}
    application = Starlette(routes=routes, middleware=middleware, lifespan=lifespan, exception_handlers=handlers)
    application.state.service = service
    return application


async def _follow(service: Service) -> None:
    """A replica fetches its canonical repository on a poll too (the refresh hook is the fast path)."""
    while True:
        await asyncio.sleep(service.settings.poll_seconds)
        await service.fetch()


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def _registry_fault(request: Request, exc: Exception) -> Response:
    """A registry error no route expected (a corrupt object read mid-request): the error shape, never a
    bare 500. Corruption is the server's state, not the client's fault: 503, retryable elsewhere."""
    log.error("kernelindex: %s %s: %s", request.method, request.url.path, exc)
    if isinstance(exc, registry.StoreCorrupt):
        return _error(503, f"the registry cannot serve this: {exc}", "STORE_CORRUPT")
    return _error(500, str(exc), "INTERNAL")


async def _unexpected_fault(request: Request, exc: Exception) -> Response:
    log.exception("kernelindex: unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, "Unexpected error.", "INTERNAL")


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"errors": [{"message": message, "extensions": {"code": code}}]}, status_code=status)


# GraphQL ------------------------------------------------------------------------------------------


async def _graphql(request: Request) -> Response:
    service = _service(request)
    accept = request.headers.get("accept")
    if request.method != "POST" and (
        ("text/html" in (accept or "") and "application/graphql-response+json" not in (accept or ""))
        or (request.method == "HEAD" and not request.query_params)
    ):
        # A browser (or a probe) at /graphql: GraphiQL, prefilled from ?query=..., its assets ours.
        return HTMLResponse(service.graphiql.page(service.base_url), headers={"cache-control": REVALIDATE})
    media = gh.response_media_type(accept)
    if media is None:
        return _refused(gh.Refusal(406, f"cannot answer in {accept!r}: accept {gh.GRAPHQL_RESPONSE}", "NOT_ACCEPTABLE"))
    body = b""
    if request.method == "POST":
        declared = int(request.headers.get("content-length") or 0)
        read = await _read_body(request) if declared <= _MAX_BODY else None
        if read is None:
            return _refused(gh.Refusal(413, f"request body over {_MAX_BODY:,} bytes", "QUERY_TOO_LARGE"), media)
        body = read
    parsed = gh.parse_operations(request.method, request.query_params, request.headers.get("content-type"), body)
    if isinstance(parsed, gh.Refusal):
        return _refused(parsed, media)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    behind = await _at_least(service, request, parsed)
    if behind is not None:
        return behind
    head = service.snapshots.head
    if isinstance(parsed, gh.Operation):
        answer = await _answer(service, head, parsed, LIMITS["max_cost"])
        if isinstance(answer, gh.Refusal):
            return _refused(answer, media)
        status = 400 if answer.request_error and media == gh.GRAPHQL_RESPONSE else answer.status
        return _send(request, service, answer, status, media)
    # A batch: answered as an array, in order; together its operations get one operation's cost limit.
    parts: list[bytes] = []
    immutable = True
    budget = LIMITS["max_cost"]
    for operation in parsed:
        answer = await _answer(service, head, operation, budget)
        if isinstance(answer, gh.Refusal):
            parts.append(_refusal_body(answer))
            immutable = False
            continue
        budget = max(budget - answer.cost, 0)
        parts.append(answer.body)
        immutable = immutable and answer.headers["cache-control"] == IMMUTABLE
    batch = Rendered(b"[" + b",".join(parts) + b"]", 200, False, immutable, head.commit)
    return _send(request, service, batch, 200, media)


def _refusal_body(refusal: gh.Refusal) -> bytes:
    return orjson.dumps({"errors": [{"message": refusal.message, "extensions": {"code": refusal.code}}]})


def _refused(refusal: gh.Refusal, media: str = gh.JSON) -> Response:
    """A request refused before GraphQL ran. Status 200 marks a GraphQL request error (a persisted query
    not found), 400 to a client of application/graphql-response+json."""
    status = refusal.status
    if status == 200 and media == gh.GRAPHQL_RESPONSE:
        status = 400
    return Response(_refusal_body(refusal), status_code=status, media_type=media, headers={"vary": _VARY})


_VARY = "Accept, Accept-Encoding"


def _send(request: Request, service: Service, item: Rendered | Asset, status: int, media: str) -> Response:
    """An answer in the coding the client accepts (made once, kept with the cached answer), with its tag."""
    body = item.body
    accepted = request.headers.get("accept-encoding")
    coding = compression.negotiate(accepted) if len(body) >= compression.MIN_BYTES else None
    out = {**item.headers, "etag": compression.tag_for(item.etag, coding), "vary": _VARY}
    if status == 200 and gh.etag_matches(request.headers.get("if-none-match"), item.etag):
        return Response(status_code=304, headers=out)
    if coding is not None:
        body, made = item.encodings.get(body, coding)
        out["content-encoding"] = coding
        if made and isinstance(item, Rendered) and item.key is not None:
            service.responses.put(item.key, item)  # weigh it again, with its new coding
    return Response(body, status_code=status, media_type=media, headers=out)


async def _answer(service: Service, head: Any, operation: gh.Operation, budget: int) -> Rendered | gh.Refusal:
    """One operation's answer: from the response cache, or executed (and then cached when it may be)."""
    query = service.persisted.resolve(operation)
    if isinstance(query, gh.Refusal):
        return query
    if len(query.encode()) > LIMITS["max_query_bytes"]:
        return gh.Refusal(413, f"query over {LIMITS['max_query_bytes']:,} bytes", "QUERY_TOO_LARGE")
    try:
        request_digest = hashlib.sha256(
            orjson.dumps([query, operation.variables, operation.operation_name], option=orjson.OPT_SORT_KEYS)
        ).hexdigest()
    except TypeError:  # orjson reads deeper JSON than it writes (254 levels)
        return gh.Refusal(400, "variables are nested too deeply", "BAD_REQUEST")
    key = (head.commit, request_digest)
    cached = service.responses.get(key)
    if cached is None or cached.cost > budget:
        budgeted = budget if budget < LIMITS["max_cost"] else None
        cached = await _execute(service, head, query, operation.variables, operation.operation_name, budgeted)
        if cached.cacheable:
            cached.key = key
            service.responses.put(key, cached)
    return cached


async def _at_least(service: Service, request: Request, parsed: gh.Operation | list[gh.Operation]) -> Response | None:
    """Wait until the commits the client last saw are served (api.freshness), or say why not: the
    `X-Registry-Min-Commit` header, and `registry(minCommit:)` in any operation of the request."""
    operations = [parsed] if isinstance(parsed, gh.Operation) else parsed
    try:
        wanted = freshness.wanted_commits(request.headers, "", {})
        for operation in operations:
            # Only a hash-only persisted query needs its document looked up (and _answer resolves it again):
            # hashing every document twice would cost each request on the hot path.
            query = operation.query if operation.query is not None else service.persisted.resolve(operation)
            if isinstance(query, str):
                wanted += freshness.wanted_commits({}, query, operation.variables)
        for commit in dict.fromkeys(wanted):
            await freshness.await_commit(
                service.snapshots, commit, service.refresh_async, service.moved, service.settings.min_commit_wait
            )
    except registry.errors.CommitNotYetAvailable as exc:
        response = _error(503, str(exc), "COMMIT_NOT_YET_AVAILABLE")
        response.headers["retry-after"] = "1"
        return response
    except registry.RegistryError as exc:  # not on main, or not a commit id: the client's mistake
        return _error(400, str(exc), code_of_class(exc))
    return None


async def _read_body(request: Request) -> bytes | None:
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > _MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class Rendered:
    """A serialized GraphQL response with its caching headers, and its coded forms once asked for.

    `status` is the legacy (application/json) one; `request_error` marks an answer of a request that
    never ran (400 to clients of application/graphql-response+json). `cost` is what it was charged.
    """

    __slots__ = ("body", "cacheable", "cost", "encodings", "etag", "headers", "key", "request_error", "status")

    def __init__(
        self,
        body: bytes,
        status: int,
        cacheable: bool,
        immutable: bool,
        commit: str,
        request_error: bool = False,
        cost: int = 0,
    ) -> None:
        self.body = body
        self.status = status
        self.cacheable = cacheable
        self.request_error = request_error
        self.cost = cost
        self.key: tuple[str, ...] | None = None
        self.encodings = Encodings()
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        self.headers = {
            "etag": self.etag,
            "cache-control": IMMUTABLE if immutable else REVALIDATE,
            "x-kernelindex-commit": commit,
        }

    def weight(self) -> int:
        """What it holds in the response cache: the body and its codings, the headers, the key, the bookkeeping."""
        return len(self.body) + self.encodings.size + 512


async def _execute(
    service: Service,
    head: Any,
    query: str,
    variables: dict[str, Any],
    operation: str | None,
    budget: int | None = None,
) -> Rendered:
    context = service.context(head)
    context.cost_budget = budget
    try:
        result = await service.execute(query, variables, operation, context)
    except (CannotGetOperationTypeError, InvalidOperationTypeError) as exc:
        # strawberry raises these rather than answering them: the operation could not be chosen.
        reason = "only queries are served"
        if isinstance(exc, CannotGetOperationTypeError):
            reason = exc.as_http_error_reason()
        body = orjson.dumps({"errors": [{"message": reason, "extensions": {"code": "OPERATION_RESOLUTION_FAILURE"}}]})
        return Rendered(body, 200, False, False, head.commit, request_error=True)
    # A request error (syntax, validation, limits, variables) never started executing: no error has a
    # path, and the answer has no `data` (the GraphQL-over-HTTP draft).
    request_error = result.data is None and bool(result.errors) and all(not e.path for e in result.errors or ())
    payload: dict[str, Any] = {}
    if result.errors:
        payload["errors"] = [_formatted(error) for error in result.errors]
    if not request_error:
        payload["data"] = result.data
    extensions: dict[str, Any] = {"commit": head.commit, "committedAt": utc_instant(head.committed_at)}
    pinned = [g for commit, g in context.seen.items() if commit != head.commit or not context.used_head]
    if pinned:
        extensions["pinned"] = [{"commit": g.commit, "committedAt": utc_instant(g.committed_at)} for g in pinned]
    payload["extensions"] = {**(result.extensions or {}), "registry": extensions}
    body = orjson.dumps(payload)
    unexpected = any(error["extensions"]["code"] == INTERNAL for error in payload.get("errors", ()))
    # Immutable only when nothing in it can change: pinned to full ids of commits in main's history,
    # nothing asked of the moving head, no error (issue 8).
    immutable = (
        bool(context.seen)
        and not context.used_head
        and not context.pinned_by_name
        and not context.unpublished
        and not result.errors
    )
    cacheable = not unexpected and not context.pinned_by_name and not request_error
    cost = ((result.extensions or {}).get("cost") or {}).get("requested") or 0
    return Rendered(body, 200, cacheable, immutable, head.commit, request_error=request_error, cost=int(cost))


def _formatted(error: Any) -> dict[str, Any]:
    """An error as the response carries it; one without a code escaped `api.errors` and is masked."""
    formatted: dict[str, Any] = error.formatted
    if isinstance((formatted.get("extensions") or {}).get("code"), str):
        return formatted
    log.error("kernelindex: unexpected error: %s", error.message, exc_info=getattr(error, "original_error", None))
    masked: dict[str, Any] = {"message": UNEXPECTED, "extensions": {"code": INTERNAL}}
    for key in ("locations", "path"):
        if formatted.get(key):
            masked[key] = formatted[key]
    return masked


async def _graphiql_asset(request: Request) -> Response:
    """A vendored GraphiQL file: its URL names its version, so it never changes."""
    service = _service(request)
    asset = service.graphiql.asset(request.path_params["version"], request.path_params["name"])
    if asset is None:
        return _error(404, "no such GraphiQL asset (the page names the current ones)", "NOT_FOUND")
    return _send(request, service, asset, 200, asset.media_type)


# Permalinks ---------------------------------------------------------------------------------------


def _digest_param(text: str) -> str | None:
    try:
        return registry.parse_digest(text)
    except ValueError:
        return None


async def _resolve_pinned(request: Request, kind: str) -> tuple[registry.graph.Graph, str] | Response:
    """The graph (of a commit in main's history) and digest a permalink names, or the response that refuses it."""
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    digest = _digest_param(request.path_params["digest"])
    if digest is None:
        return _error(400, "expected sha256:<64 lowercase hex digits>", "BAD_DIGEST")
    rev = request.path_params["commit"]
    try:
        commit = await anyio.to_thread.run_sync(service.snapshots.store().resolve, rev)
    except registry.RevisionNotFound as exc:
        return _error(404, str(exc), "REVISION_NOT_FOUND")
    head = service.snapshots.head.commit
    if not await anyio.to_thread.run_sync(service.previews.published, commit, head):
        return _error(
            404, f"{commit} is not on main: permalinks pin commits of the publication record", "REVISION_NOT_FOUND"
        )
    if rev != commit:
        return RedirectResponse(f"{service.base_url}/at/{commit}/{kind}/{digest}", status_code=307)
    graph = await anyio.to_thread.run_sync(service.snapshots.at, commit)
    return graph, digest


async def _manifest_permalink(request: Request) -> Response:
    service = _service(request)
    found = await _resolve_pinned(request, "manifests")
    if isinstance(found, Response):
        return found
    graph, digest = found
    node = graph.nodes.get(digest)
    if node is None:
        return _error(404, f"manifest not found: {digest} at {graph.commit}", "MANIFEST_NOT_FOUND")
    etag = f'"{node.oid}"'
    headers = {"etag": etag, "cache-control": IMMUTABLE, "x-kernelindex-commit": graph.commit}
    if gh.etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(service.documents.raw(node.oid), media_type="application/json", headers=headers)


async def _run_permalink(request: Request) -> Response:
    shown = None if request.url.path.endswith(".json") or wants_json(request) else cached_run_page(request)
    if shown is not None:
        return shown  # a run page shown before at this head (web/)
    service = _service(request)
    found = await _resolve_pinned(request, "runs")
    if isinstance(found, Response):
        return found
    graph, digest = found
    node = graph.nodes.get(digest)
    if isinstance(node, registry.nodes.Run | registry.nodes.ServingRun) and not (
        request.url.path.endswith(".json") or wants_json(request)
    ):  # one URL, two audiences: the page for a browser
        page = run_page if isinstance(node, registry.nodes.Run) else serving_run_page
        return await page(request, graph.commit, digest)
    # A serving run has its own dossier (serving-v1 keeps the two kinds apart), at the same kind of URL.
    field, query = (
        ("servingRun", SERVING_DOSSIER_QUERY) if isinstance(node, registry.nodes.ServingRun) else ("run", DOSSIER_QUERY)
    )
    if not isinstance(node, registry.nodes.Run | registry.nodes.ServingRun):
        return _error(404, f"run not found: {digest} at {graph.commit}", "MANIFEST_NOT_FOUND")
    head = service.snapshots.head
    key = ("dossier", graph.commit, digest)
    cached = service.responses.get(key)
    if cached is None:
        context = service.context(head)
        result = await service.execute(query, {"at": graph.commit, "id": digest}, None, context)
        if result.errors or result.data is None:
            messages = "; ".join(e.message for e in result.errors or ())
            return _error(500, f"the dossier could not be built: {messages}", INTERNAL)
        body = orjson.dumps(
            {
                "registry": {"commit": graph.commit, "committedAt": utc_instant(graph.committed_at)},
                field: result.data["registry"][field],
            }
        )
        cached = Rendered(body, 200, True, True, graph.commit)
        cached.key = key
        service.responses.put(key, cached)
    return _send(request, service, cached, 200, gh.JSON)


async def _head_redirect(request: Request) -> Response:
    service = _service(request)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    kind = request.url.path.strip("/").split("/")[0]
    digest = _digest_param(request.path_params["digest"])
    if digest is None:
        return _error(400, "expected sha256:<64 lowercase hex digits>", "BAD_DIGEST")
    commit = service.snapshots.head.commit
    return RedirectResponse(f"{service.base_url}/at/{commit}/{kind}/{digest}", status_code=302)


# Operations ---------------------------------------------------------------------------------------


async def _healthz(request: Request) -> JSONResponse:
    service = _service(request)
    status = service.snapshots.status
    body = {
        "status": "ok" if service.ready and status.serving and not status.reason else "degraded",
        "serving": status.serving,
        "main": status.main,
        "reason": service.load_error or status.reason,
        "checkedAt": utc_instant(int(status.checked_at)) if status.checked_at else None,
        "buildSeconds": round(status.build_seconds, 3),
        "integrity": {"verified": status.verified, "checkSeconds": round(status.verify_seconds, 3)},
        "uptimeSeconds": round(time.time() - service.started, 1),
        "worker": os.getpid(),  # which process answered (each worker serves its own snapshots)
    }
    if service.mirror is not None:
        fetched = service.mirror.last
        body["mirror"] = {
            "url": service.mirror.url,
            "fetchedAt": utc_instant(int(fetched.at)) if fetched else None,
            "error": service.mirror.error,
        }
    if not service.ready:
        body["status"] = "starting" if service.load_error is None else "failed"
    return JSONResponse(
        body, status_code=200 if service.ready and status.serving else 503, headers={"cache-control": "no-store"}
    )


async def _refresh(request: Request) -> JSONResponse:
    service = _service(request)
    secret = service.settings.hook_secret
    given = request.headers.get("authorization", "").encode()
    if secret and not hmac.compare_digest(given, f"Bearer {secret}".encode()):  # no timing oracle
        return _error(401, "a valid 'Authorization: Bearer <secret>' is required", "UNAUTHORIZED")
    if not service.ready:
        return _error(503, "the registry is still loading", "NOT_READY")
    failed = await service.fetch()  # a replica first brings the canonical refs
    status = await service.refresh_async()
    body = {"serving": status.serving, "main": status.main, "reason": status.reason}
    if failed is not None:
        return JSONResponse({**body, "reason": failed}, status_code=502)
    return JSONResponse(body, status_code=200 if status.reason is None else 409)


async def _index(request: Request) -> Response:
    if not wants_json(request):
        return await home(request)  # the home page for a browser; this index for API clients
    service = _service(request)
    base = service.base_url
    return JSONResponse(
        {
            "name": "KernelIndex registry",
            "graphql": f"{base}/graphql",
            "health": f"{base}/healthz",
            "serving": service.snapshots.status.serving,
        }
    )


app = create_app()

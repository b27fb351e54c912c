"""`/graphql`: GraphQL over HTTP (`kernelindex.core.graphql_http` reads the protocol), GraphiQL for a browser, and its
files.

The endpoint is ours rather than strawberry's view so that a response for (commit, document, variables) is
served from a cache at the speed of a static route, with strong entity tags (304 on `If-None-Match`) and
immutable caching when pinned to a full commit id. Answers come from the query service (`kernelindex.service.queries`).
"""

from __future__ import annotations

import asyncio
import hashlib

import orjson
from starlette.requests import Request
from starlette.responses import Response

from kernelindex import registry
from kernelindex.core import graphql_http as gh
from kernelindex.core.budgets import CACHED_COST, Account
from kernelindex.core.cache import IMMUTABLE, REVALIDATE, Representation, entity_tag
from kernelindex.core.codes import (
    BAD_REQUEST,
    COMMIT_NOT_YET_AVAILABLE,
    NOT_ACCEPTABLE,
    NOT_FOUND,
    QUERY_TOO_LARGE,
    THROTTLED,
)
from kernelindex.core.errors import code_of_class
from kernelindex.core.metrics import TRACE, Trace
from kernelindex.http.headers import GRAPHIQL_POLICY
from kernelindex.http.metering import account_of
from kernelindex.http.requests import not_ready, server_of
from kernelindex.http.responses import VARY, error, error_body, finish, send
from kernelindex.registry.graph import Graph
from kernelindex.schema.root import LIMITS, schema
from kernelindex.service import freshness
from kernelindex.service.queries import Answer
from kernelindex.service.server import Server

__all__ = [
    "MAX_BODY",
    "answer_operation",
    "asset",
    "cache_key",
    "endpoint",
    "request_digest",
    "sdl",
    "status_of",
    "throttled",
    "wants_graphiql",
]

MAX_BODY = 2 * LIMITS["max_query_bytes"]
"""A request body's limit: a query at its limit, and as much again for its variables."""


async def endpoint(request: Request) -> Response:
    """GET, POST (and HEAD) `/graphql`: one operation or a batch, answered in the media type asked for."""
    server = server_of(request)
    accept = request.headers.get("accept")
    if wants_graphiql(request.method, accept, bool(request.query_params)):
        # A browser (or a probe) at /graphql: GraphiQL, prefilled from ?query=..., its assets ours.
        page = server.graphiql.page(server.urls.graphiql_assets(server.graphiql.version))
        # One URL, two answers (GraphiQL or GraphQL's), chosen by Accept: a cache keeps them apart.
        headers = {"cache-control": REVALIDATE, "vary": VARY}
        return finish(request, page.encode(), media_type="text/html", headers=headers, policy=GRAPHIQL_POLICY)
    media = gh.response_media_type(accept)
    if media is None:
        return _refused(gh.Refusal(406, f"cannot answer in {accept!r}: accept {gh.GRAPHQL_RESPONSE}", NOT_ACCEPTABLE))
    body = b""
    if request.method == "POST":
        declared = int(request.headers.get("content-length") or 0)
        read = await _read_body(request) if declared <= MAX_BODY else None
        if read is None:
            return _refused(gh.Refusal(413, f"request body over {MAX_BODY:,} bytes", QUERY_TOO_LARGE), media)
        body = read
    parsed = gh.parse_operations(request.method, request.query_params, request.headers.get("content-type"), body)
    if isinstance(parsed, gh.Refusal):
        return _refused(parsed, media)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    behind = await _at_least(server, request, parsed)
    if behind is not None:
        return behind
    head = server.snapshots.head
    account = account_of(request.scope)
    if isinstance(parsed, gh.Operation):
        answer = await answer_operation(server, head, parsed, LIMITS["max_cost"], account)
        if isinstance(answer, gh.Refusal):
            return _refused(answer, media)
        return send(request, answer, status_of(answer, media), media, server.responses)
    # A batch: answered as an array, in order; together its operations get one operation's cost limit.
    parts: list[bytes] = []
    immutable = True
    throttled: Representation | None = None
    budget = LIMITS["max_cost"]
    for operation in parsed:
        answer = await answer_operation(server, head, operation, budget, account)
        if isinstance(answer, gh.Refusal):
            parts.append(error_body(answer.message, answer.code))
            immutable = False
            continue
        throttled = answer if answer.throttled else throttled
        budget = max(budget - answer.cost, 0)
        parts.append(answer.body)
        immutable = immutable and answer.headers["cache-control"] == IMMUTABLE and not answer.personal
    batch = _representation(b"[" + b",".join(parts) + b"]", immutable, head.commit)
    if throttled is not None:  # an operation the budget refused: the batch says when to retry, and is not kept
        batch.headers.update(throttled.headers)
        batch.headers["etag"] = batch.etag
        return send(request, batch, 429, media)
    return send(request, batch, 200, media)


def status_of(answer: Representation, media: str) -> int:
    """A single operation's status: 429 when the client's budget refused it, 400 for a request error to a client of
    application/graphql-response+json, else 200."""
    if answer.throttled:
        return 429
    return 400 if answer.request_error and media == gh.GRAPHQL_RESPONSE else 200


async def asset(request: Request) -> Response:
    """A vendored GraphiQL file: its URL names its version, so it never changes."""
    server = server_of(request)
    found = server.graphiql.asset(request.path_params["version"], request.path_params["name"])
    if found is None:
        return error(404, "no such GraphiQL asset (the page names the current ones)", NOT_FOUND)
    return send(request, found)


def wants_graphiql(method: str, accept: str | None, has_query: bool) -> bool:
    """Whether a request to /graphql is a browser's (or a probe's) and gets GraphiQL rather than GraphQL's answer:
    a GET that accepts HTML but not GraphQL's own media type, or a HEAD without a query string."""
    if method == "POST":
        return False
    return ("text/html" in (accept or "") and gh.GRAPHQL_RESPONSE not in (accept or "")) or (
        method == "HEAD" and not has_query
    )


def _representation(
    body: bytes,
    immutable: bool,
    commit: str,
    *,
    request_error: bool = False,
    cost: int = 0,
    throttled: int | None = None,
    personal: bool = False,
) -> Representation:
    """A GraphQL answer's representation; `throttled`, the seconds after which to retry one the budget refused (it
    is kept by no cache); `personal`, one about the client that asked (kept by no shared cache)."""
    headers = {"cache-control": IMMUTABLE if immutable else REVALIDATE, "x-kernelindex-commit": commit}
    if throttled is not None:
        headers["cache-control"] = "no-store"
        headers["retry-after"] = str(throttled)
    elif personal:
        headers["cache-control"] = "private, no-cache"
    return Representation(
        body,
        gh.JSON,
        headers,
        request_error=request_error,
        cost=cost,
        throttled=throttled is not None,
        personal=personal,
    )


def _refused(refusal: gh.Refusal, media: str = gh.JSON) -> Response:
    """A request refused before GraphQL ran. Status 200 marks a GraphQL request error (a persisted query
    not found), 400 to a client of application/graphql-response+json."""
    status = refusal.status
    if status == 200 and media == gh.GRAPHQL_RESPONSE:
        status = 400
    return error(status, refusal.message, refusal.code, media_type=media, headers={"vary": VARY})


async def answer_operation(
    server: Server, head: Graph, operation: gh.Operation, budget: int, account: Account | None = None
) -> Representation | gh.Refusal:
    """One operation's answer: from the response cache, or from the query service (then cached when it may be).
    `account`, the client's budget when it is metered, is charged before anything runs: `CACHED_COST` for an answer
    found (or being made for another client), the operation's estimated cost for one executed; an answer it
    cannot pay is a throttled one (429), and nothing runs."""
    found = cache_key(server, head, operation)
    if isinstance(found, gh.Refusal):
        return found
    query, key = found
    trace = TRACE.get()
    cached = server.responses.get(key)
    if cached is not None and cached.cost <= budget:
        if account is not None and not account.charge(CACHED_COST):
            return throttled(account, CACHED_COST, head.commit)
        if trace is not None:
            trace.answered(True, CACHED_COST)
        return cached
    if budget < LIMITS["max_cost"]:  # a batch's later operation: its own budget, its own execution
        return _traced(trace, await _execute(server, head, query, operation, key, budget, account))
    # The same request already executing (a burst of clients asking what nobody asked before) is waited
    # for, not executed again; its execution is a task of its own, so that no waiter's cancellation
    # (a client gone) cancels it for the others.
    running = server.executing.get(key)
    if running is None:
        running = asyncio.ensure_future(_execute(server, head, query, operation, key, None, account))
        server.executing[key] = running
        running.add_done_callback(lambda _: server.executing.pop(key, None))
        return _traced(trace, await asyncio.shield(running))
    if account is not None and not account.charge(CACHED_COST):
        return throttled(account, CACHED_COST, head.commit)
    shared = await asyncio.shield(running)
    if shared.throttled or shared.personal:  # the other client's budget, or about the other client: our own
        return _traced(trace, await _execute(server, head, query, operation, key, None, account))
    if trace is not None:
        trace.answered(True, CACHED_COST)
    return shared


def _traced(trace: Trace | None, answer: Representation) -> Representation:
    """An executed answer, counted in the request's trace (`kernelindex.core.metrics`) unless it was throttled."""
    if trace is not None and not answer.throttled:
        trace.answered(False, max(answer.cost, 1))
    return answer


def throttled(account: Account, cost: int, commit: str) -> Representation:
    """The answer to an operation the client's budget refused before anything ran (as the executors refuse one:
    `kernelindex.engine.pipeline.charge`)."""
    seconds = account.status().retry_after
    status = account.throttle_status()
    message = (
        f"throttled: this query costs {cost:,} points and your budget holds {status['currentlyAvailable']:,}; "
        f"retry in {seconds} s, or ask for less"
    )
    cost_report = {"requested": cost, "limit": LIMITS["max_cost"], "throttleStatus": status}
    body = orjson.dumps(
        {"errors": [{"message": message, "extensions": {"code": THROTTLED}}], "extensions": {"cost": cost_report}}
    )
    return _representation(body, False, commit, request_error=True, throttled=seconds)


async def _execute(
    server: Server,
    head: Graph,
    query: str,
    operation: gh.Operation,
    key: tuple[str, str],
    budget: int | None,
    account: Account | None = None,
) -> Representation:
    """Execute an operation (within `budget`, a batch's remainder; charged to `account`) and cache its answer when
    it may be: its body, entity tag and weight are made in the worker thread that executed it, not on the event
    loop."""

    def kept(answer: Answer) -> Representation:
        made = _representation(
            answer.body,
            answer.immutable,
            head.commit,
            request_error=answer.request_error,
            cost=answer.cost,
            throttled=account.status().retry_after if answer.throttled and account is not None else None,
            personal=answer.personal,
        )
        if answer.cacheable:
            made.key = key
            server.responses.put(key, made)
        return made

    found: Representation = await server.queries.answer_then(
        query, operation.variables, kept, operation=operation.operation_name, head=head, budget=budget, account=account
    )
    return found


def cache_key(server: Server, head: Graph, operation: gh.Operation) -> tuple[str, tuple[str, str]] | gh.Refusal:
    """An operation's document (a persisted query's looked up) and its key in the response cache at `head`, or why
    it is refused: a persisted query not found or not allowed, a query over the size limit, variables nested too
    deeply to be keyed."""
    query = server.persisted.resolve(operation)
    if isinstance(query, gh.Refusal):
        return query
    if len(query.encode()) > LIMITS["max_query_bytes"]:
        return gh.Refusal(413, f"query over {LIMITS['max_query_bytes']:,} bytes", QUERY_TOO_LARGE)
    digest = request_digest(query, operation)
    if digest is None:
        return gh.Refusal(400, "variables are nested too deeply", BAD_REQUEST)
    return query, (head.commit, digest)


def request_digest(query: str, operation: gh.Operation) -> str | None:
    """An operation's key in the response cache (beside the commit): its document, variables and name;
    None when its variables nest too deeply to be written again (orjson reads 1024 levels, writes 254)."""
    try:
        return hashlib.sha256(
            orjson.dumps([query, operation.variables, operation.operation_name], option=orjson.OPT_SORT_KEYS)
        ).hexdigest()
    except TypeError:
        return None


async def _at_least(server: Server, request: Request, parsed: gh.Operation | list[gh.Operation]) -> Response | None:
    """Wait until the commits the client last saw are served (kernelindex.service.freshness), or say why not: the
    `X-Registry-Min-Commit` header, and `registry(minCommit:)` in any operation of the request."""
    operations = [parsed] if isinstance(parsed, gh.Operation) else parsed
    try:
        wanted = freshness.wanted_commits(request.headers, "", {})
        for operation in operations:
            # Only a hash-only persisted query needs its document looked up (and answer_operation resolves it again):
            # hashing every document twice would cost each request on the hot path.
            query = operation.query if operation.query is not None else server.persisted.resolve(operation)
            if isinstance(query, str):
                wanted += freshness.wanted_commits({}, query, operation.variables)
        for commit in dict.fromkeys(wanted):
            await freshness.await_commit(
                server.snapshots, commit, server.refresh_async, server.moved, server.settings.min_commit_wait
            )
    except registry.errors.CommitNotYetAvailable as exc:
        return error(503, str(exc), COMMIT_NOT_YET_AVAILABLE, headers={"retry-after": "1"})
    except registry.RegistryError as exc:  # not on main, or not a commit id: the client's mistake
        return error(400, str(exc), code_of_class(exc))
    return None


async def _read_body(request: Request) -> bytes | None:
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


_SDL = (schema.as_str() + "\n").encode()
"""The schema's SDL, as the repository keeps it (`tests/schema.graphql`): made once, it changes only with the code."""
_SDL_TAG = entity_tag(_SDL)


async def sdl(request: Request) -> Response:
    """`/schema.graphql`: the schema as SDL text, for code generators and reviewers; revalidated by its entity tag
    (it changes only when the server's code does)."""
    headers = {"etag": _SDL_TAG, "cache-control": REVALIDATE}
    return finish(request, _SDL, media_type="text/plain; charset=utf-8", headers=headers)

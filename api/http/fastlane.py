"""The fast lane: a single GraphQL operation answered from a raw ASGI path, cached or executed.

A repeated answer costs microseconds to find, and the framework around it (a `Request`, the middleware
chain, the router, a `Response`) cost several times that on the event loop: under load, that work is
the tail latency; for an answer met for the first time, it was a third of the server's time (py-spy of
first-time dossiers and leaderboards). `FastLane` sits under the application's error handler and above
every other middleware. For `POST` and `GET /graphql` it does what the endpoint (`kernelindex.http.graphql`)
does for one operation (the same parsing, the same refusals, the same persisted-query rule, the same
key), and sends the cached answer, or executes the operation as the endpoint would
(`answer_operation`: one execution per burst, cached when it may be) and sends that. Anything else (a
batch, a refusal, a minimum commit, GraphiQL, a server not ready, an execution that raised) goes down
the normal path untouched, with the body it read replayed.

The answer leaves exactly as the normal path sends it: the endpoint's headers (`kernelindex.http.responses.send`,
Starlette's content length and type), then the headers the middleware under it would add, by the same
code (`CORSMiddleware.send` of an instance configured like the application's, and `SafeAnswers`'
completion). The finished header list of an answer without `Origin` is kept with the answer, per coding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.middleware.cors import CORSMiddleware

from kernelindex.core import compression
from kernelindex.core import graphql_http as gh
from kernelindex.core.budgets import CACHED_COST
from kernelindex.core.cache import Representation
from kernelindex.core.metrics import TRACE
from kernelindex.core.urls import PATHS
from kernelindex.http.graphql import MAX_BODY, answer_operation, cache_key, status_of, throttled, wants_graphiql
from kernelindex.http.headers import ASGIApp, Message, Receive, Scope, Send, completed
from kernelindex.http.metering import account_of
from kernelindex.http.responses import VARY
from kernelindex.schema.root import LIMITS
from kernelindex.service.server import Server

__all__ = ["FastLane"]

_GRAPHQL = PATHS["graphql"]
_SHAPES = 64
"""Header-list shapes kept (`FastLane._from_shape`): status, media type, coding and cache headers per commit."""


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    """The app of the CORS instance that only finishes headers (`send`): never called."""


class FastLane:
    """ASGI middleware: single GraphQL operations answered without the framework (see the module's docstring).

    `cors` is the CORS configuration the application's `CORSMiddleware` has (the same keyword arguments):
    answers get its headers from an instance of the same class. `hits` counts cached answers sent here,
    `executed` answers executed here; `executes` False leaves every miss to the normal path (to compare
    the two). It also
    counts the HTTP requests in flight (`Server.in_flight`), which the server's background work reads to stay
    behind them."""

    def __init__(self, app: ASGIApp, *, server: Server, cors: Mapping[str, Any]) -> None:
        self.app = app
        self.server = server
        self.cors = CORSMiddleware(_nothing, **cors)
        self.hits = 0
        self.executed = 0
        self.executes = True
        # Finished header lists of answers without `Origin`, by shape (`_shape`): (list, where the entity
        # tag is, where the length is).
        self._shapes: dict[tuple[Any, ...], tuple[tuple[tuple[bytes, bytes], ...], int, int | None]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.server.in_flight += 1
        try:
            await self._answer(scope, receive, send)
        finally:
            self.server.in_flight -= 1

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] != _GRAPHQL or scope["method"] not in ("POST", "GET"):
            await self.app(scope, receive, send)
            return
        body = b""
        if scope["method"] == "POST":
            headers = Headers(scope=scope)
            declared = headers.get("content-length")
            if declared is None or not declared.isdigit() or int(declared) > MAX_BODY:
                await self.app(scope, receive, send)
                return
            body, rest = await _read(receive, int(declared))
            if rest is not None:  # longer than declared, or a disconnect: the endpoint meets it as it would
                await self.app(scope, _replay(body, receive, rest), send)
                return
        if not await self._send_answer(scope, body, send):
            await self.app(scope, _replay(body, receive) if scope["method"] == "POST" else receive, send)

    async def _send_answer(self, scope: Scope, body: bytes, send: Send) -> bool:
        """Send the answer to this request, cached or executed now, when the endpoint would answer nothing else."""
        headers = Headers(scope=scope)
        accept = headers.get("accept")
        method = scope["method"]
        # The endpoint's own decisions (`kernelindex.http.graphql`), in its order; whatever it would answer
        # otherwise than with one operation's answer goes down the normal path.
        if wants_graphiql(method, accept, bool(scope["query_string"])):
            return False
        media = gh.response_media_type(accept)
        if media is None or headers.get("x-registry-min-commit", "").strip():
            return False
        params: Mapping[str, str] = QueryParams(scope["query_string"]) if method == "GET" else {}
        operation = gh.parse_operations(method, params, headers.get("content-type"), body)
        if not isinstance(operation, gh.Operation) or operation.query is None or "minCommit" in operation.query:
            return False
        server = self.server
        if server.unavailable() is not None:
            return False
        head = server.snapshots.head
        keyed = cache_key(server, head, operation)
        if isinstance(keyed, gh.Refusal):
            return False
        item = server.responses.get(keyed[1], count_miss=False)
        if item is not None and item.cost > LIMITS["max_cost"]:
            return False
        account = account_of(scope)
        if item is None:
            if not self.executes:
                return False
            try:
                found = await answer_operation(server, head, operation, LIMITS["max_cost"], account)
            except Exception:
                return False
            if isinstance(found, gh.Refusal):
                return False
            item = found
            self.executed += 1
        else:
            self.hits += 1
            if account is not None and not account.charge(CACHED_COST):  # as answer_operation charges it
                item = throttled(account, CACHED_COST, head.commit)
            elif (trace := TRACE.get()) is not None:
                trace.answered(True, CACHED_COST)
        await self._send(scope, headers, item, status_of(item, media), media, send)
        return True

    async def _send(
        self, scope: Scope, headers: Headers, item: Representation, status: int, media: str, send: Send
    ) -> None:
        """What `kernelindex.http.responses.send` and the middleware under this one send for `item`."""
        content = item.body
        coding = None
        extra = 0  # what a new coding or a header list kept for it adds to its weight
        if len(content) >= compression.MIN_BYTES:
            coding = compression.negotiate(headers.get("accept-encoding"))
        if status == 200 and gh.etag_matches(headers.get("if-none-match"), item.etag):
            status, content = 304, b""
        elif coding is not None:
            content, extra = item.encodings.get(content, coding)
        origin = headers.get("origin")
        memo = (status, media, coding) if origin is None else None
        raw = item.wire.get(memo) if memo is not None else None
        if raw is None:
            raw = self._from_shape(item, status, media, coding, len(content)) if memo is not None else None
            if raw is None:
                raw = await self._headers(headers, item, status, media, coding, len(content))
                if memo is not None:
                    self._learn_shape(item, status, media, coding, raw)
            if memo is not None:
                if item.sent:
                    extra += item.keep_wire(memo, raw)
                else:  # kept from its second sending on: most first-time answers are sent once, never again
                    item.sent = True
        if item.key is not None and extra:
            self.server.responses.grow(item.key, item, extra)
        await send({"type": "http.response.start", "status": status, "headers": list(raw)})
        await send({"type": "http.response.body", "body": content})

    def _shape(self, item: Representation, status: int, media: str, coding: str | None) -> tuple[Any, ...]:
        """What a finished header list (without `Origin`) depends on but its entity tag and length."""
        return (status, media, coding, *((k, v) for k, v in item.headers.items() if k != "etag"))

    def _from_shape(
        self, item: Representation, status: int, media: str, coding: str | None, length: int
    ) -> tuple[tuple[bytes, bytes], ...] | None:
        """The finished header list of an answer without `Origin`, from one of the same shape (`_learn_shape`):
        its entity tag and length put in. Each first-time answer otherwise builds its list and has the CORS
        middleware finish it (~20 µs of a first-time dossier's ~700 µs of server CPU)."""
        found = self._shapes.get(self._shape(item, status, media, coding))
        if found is None:
            return None
        template, tag_at, length_at = found
        raw = list(template)
        raw[tag_at] = (b"etag", compression.tag_for(item.etag, coding).encode("latin-1"))
        if length_at is not None:
            raw[length_at] = (b"content-length", str(length).encode("latin-1"))
        return tuple(raw)

    def _learn_shape(
        self, item: Representation, status: int, media: str, coding: str | None, raw: tuple[tuple[bytes, bytes], ...]
    ) -> None:
        """Keep `raw` as the template of its shape, with where its entity tag and length are: the only headers
        that differ between answers of one shape (nothing else reads them)."""
        names = [name for name, _ in raw]
        if names.count(b"etag") != 1 or names.count(b"content-length") > (0 if status == 304 else 1):
            return
        length_at = names.index(b"content-length") if b"content-length" in names else None
        if (length_at is None) is (status != 304):
            return
        if len(self._shapes) >= _SHAPES:
            self._shapes.clear()  # a handful per served commit: a new commit's replace the old
        self._shapes[self._shape(item, status, media, coding)] = (raw, names.index(b"etag"), length_at)

    async def _headers(
        self, headers: Headers, item: Representation, status: int, media: str, coding: str | None, length: int
    ) -> tuple[tuple[bytes, bytes], ...]:
        out = {**item.headers, "etag": compression.tag_for(item.etag, coding), "vary": VARY}
        if coding is not None and status != 304:
            out["content-encoding"] = coding
        # As a Starlette `Response` makes them: its headers, then the length and the type of a body.
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in out.items()]
        if status != 304:
            raw.append((b"content-length", str(length).encode("latin-1")))
            raw.append((b"content-type", media.encode("latin-1")))
        message: Message = {"type": "http.response.start", "status": status, "headers": raw}
        captured: list[Message] = []

        async def capture(message: Message) -> None:
            captured.append(message)

        await self.cors.send(message, capture, headers)
        return tuple(completed(list(captured[0]["headers"])))


async def _read(receive: Receive, declared: int) -> tuple[bytes, Message | None]:
    """The request's body; with the message that ended it otherwise than as declared (a disconnect, or a
    chunk past `declared` bytes), the body read before that message."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"") if message["type"] == "http.request" else b""
        if message["type"] != "http.request" or size + len(chunk) > declared:
            return b"".join(chunks), message
        size += len(chunk)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _replay(body: bytes, receive: Receive, rest: Message | None = None) -> Receive:
    """A `receive` that gives `body` (already read) first, then `rest` (the message read after it, if
    any), then whatever the client still sends."""
    pending: list[Message] = [rest] if rest is not None else []
    pending.append({"type": "http.request", "body": body, "more_body": rest is not None})

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed

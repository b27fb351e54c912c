"""Metering: each request's client and its budget, charged and told on every answer that spends from it.

`Metering` is the outermost middleware but the error handler and the access log, in both modes. For a request of a
metered route family (`METERED`) it works out who the client is (`kernelindex.core.clients`), puts the client's
`Account` in the scope (`account_of`), and adds `RateLimit-Policy` and `RateLimit` (`Account.headers`) to the answer's
headers as it leaves, after everything under it, the fast lane's kept header lists included, has finished them: those
lists stay the same for every client. A request with `Authorization: Bearer <token>` spends from the token's own
budget when an operator issued it (`kernelindex.core.tokens`), and is refused 401 when not, or no longer. A GraphQL
request is charged by the endpoint (or the fast lane) once its cost is known
(`kernelindex.http.graphql.answer_operation`); any other metered request is charged `FIXED_COST` here, before it
runs, and answered 429 with `Retry-After` when its budget cannot pay.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from kernelindex.core.budgets import FIXED_COST, Account, Budgets
from kernelindex.core.clients import TrustedProxies, client_key
from kernelindex.core.codes import THROTTLED, UNAUTHORIZED
from kernelindex.core.tokens import Tokens
from kernelindex.core.urls import PATHS
from kernelindex.http.headers import ASGIApp, Message, Receive, Scope, Send, completed
from kernelindex.http.responses import error_body

__all__ = ["ACCOUNT", "METERED", "Metering", "account_of", "client_of", "route_family"]

ACCOUNT = "kernelindex.account"
"""The scope's key of a metered request's `Account`."""
METERED = frozenset({"graphql", "page", "feed", "badge", "mcp", "export"})
"""The route families that spend from a client's budget; the others (health, metrics, static files, the refresh hook,
the schemas) are free."""


def _folder(name: str) -> str:
    """The first folder of a route's path (`/feeds/` of `/feeds/records.atom`)."""
    return "/" + PATHS[name].split("/")[1] + "/"


_FREE = (
    (PATHS["healthz"], "health"),
    (PATHS["metrics"], "metrics"),
    (PATHS["static"] + "/", "static"),
    (PATHS["favicon"], "static"),
    (PATHS["robots_txt"], "static"),
    (PATHS["schema_sdl"], "schema"),
    (_folder("schema"), "schema"),
    (_folder("refresh"), "hook"),
)
_PREFIXES = (
    (PATHS["graphql"], "graphql"),
    (PATHS["mcp"], "mcp"),
    (_folder("records_feed"), "feed"),
    (_folder("run_badge"), "badge"),
    (PATHS["export"], "export"),
    (PATHS["exports"], "export"),
)


def route_family(path: str) -> str:
    """The family a path belongs to, for budgets and metrics: `graphql`, `mcp`, `feed`, `badge`, `export`, `health`,
    `metrics`, `static`, `schema`, `hook`, or `page` (every page, permalink, card and sitemap).

    >>> [route_family(p) for p in ("/graphql", "/feeds/records.atom", "/runs/x", "/healthz", "/static/a.css")]
    ['graphql', 'feed', 'page', 'health', 'static']
    """
    for prefix, family in _FREE:
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return family
    for prefix, family in _PREFIXES:
        if path == prefix or path.startswith(prefix + ("" if prefix.endswith("/") else "/")):
            return family
    return "page"


def account_of(scope: MutableMapping[str, Any]) -> Account | None:
    """The client's account of a metered request (None when budgets are off, or the request is not metered)."""
    found: Account | None = scope.get(ACCOUNT)
    return found


def client_of(scope: Scope, proxies: TrustedProxies) -> str:
    """A request's client key: its peer, or what a trusted proxy reports (`kernelindex.core.clients`)."""
    client = scope.get("client")
    peer = client[0] if client else None
    reported: list[tuple[str, str]] = []
    if proxies.networks:
        wanted = proxies.header.encode("latin-1")
        reported = [(proxies.header, v.decode("latin-1")) for n, v in scope["headers"] if n == wanted]
    return client_key(peer, reported, proxies)


class Metering:
    """ASGI middleware: a metered request's account in its scope, fixed costs charged, budget headers added."""

    def __init__(
        self, app: ASGIApp, *, budgets: Budgets | None, proxies: TrustedProxies, tokens: Tokens | None = None
    ) -> None:
        self.app = app
        self.budgets = budgets
        self.proxies = proxies
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        budgets = self.budgets
        if scope["type"] != "http" or budgets is None or route_family(scope["path"]) not in METERED:
            await self.app(scope, receive, send)
            return
        bearer = _bearer(scope) if self.tokens is not None else None
        if bearer is not None and self.tokens is not None:
            grant = self.tokens.find(bearer)
            if grant is None:  # never issued, or revoked: it stops here
                await _send_error(send, 401, "unknown or revoked token", UNAUTHORIZED, [])
                return
            account = Account(budgets, grant.key, grant.policy)
        else:
            account = Account(budgets, client_of(scope, self.proxies))
        scope[ACCOUNT] = account
        if route_family(scope["path"]) != "graphql" and not account.charge(FIXED_COST):
            await self._refuse(account, send)
            return

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], *account.headers()]}
            await send(message)

        await self.app(scope, receive, sent)

    async def _refuse(self, account: Account, send: Send) -> None:
        seconds = account.status().retry_after
        message = f"throttled: your budget of cost points is spent; retry in {seconds} s"
        extra = [(b"retry-after", str(seconds).encode()), *account.headers()]
        await _send_error(send, 429, message, THROTTLED, extra)


def _bearer(scope: Scope) -> str | None:
    """The token of `Authorization: Bearer <token>`, if the request has one."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


async def _send_error(send: Send, status: int, message: str, code: str, extra: list[tuple[bytes, bytes]]) -> None:
    """The error shape, answered here (with the headers `SafeAnswers` would add), never stored."""
    body = error_body(message, code)
    headers = [
        (b"cache-control", b"no-store"),
        (b"content-length", str(len(body)).encode()),
        (b"content-type", b"application/json"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": [*completed(headers), *extra]})
    await send({"type": "http.response.body", "body": body})

"""The ASGI application: it composes, and holds no endpoint (Starlette's `applications.py` is the model).

`create_app(settings)` builds one over a `Server` (the snapshots it serves, the query service, the
caches): the routes of `kernelindex.app.routes`, the middleware (every answer's safety headers,
`kernelindex.http.headers`;
CORS), the exception handlers that keep every fault and every 404 in the error shape, and the lifespan that
loads the registry and follows main. `app` is the one uvicorn serves (`uvicorn kernelindex.app:app`).

No redirect is built from the request's Host: Starlette's own trailing-slash redirect does (`Location:
http://<Host>/...`), so it is off, and a path with a trailing slash that names a route without it is
redirected here, to the configured base URL or root-relative.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Match

from kernelindex import registry
from kernelindex.app.routes import routes
from kernelindex.core.cache import REVALIDATE
from kernelindex.core.codes import BAD_REQUEST, INTERNAL, NOT_FOUND, STORE_CORRUPT
from kernelindex.core.errors import UNEXPECTED
from kernelindex.core.settings import Settings, plain_mode
from kernelindex.http.fastlane import FastLane
from kernelindex.http.headers import SafeAnswers
from kernelindex.http.limits import HeaderLimit
from kernelindex.http.mcp_guard import McpGuard
from kernelindex.http.mcp_lazy import LazyMCP
from kernelindex.http.metering import Metering
from kernelindex.http.observing import ACCESS_LOG, Observing
from kernelindex.http.requests import server_of
from kernelindex.http.responses import error
from kernelindex.service.server import Server, own_documents
from kernelindex.web import documents
from kernelindex.web.render import error_page

__all__ = ["CORS_HEADERS", "WorkerConfig", "app", "create_app"]

log = logging.getLogger("kernelindex")

app: Starlette
"""The application of this environment's settings, the one `uvicorn kernelindex.app:app` serves: made when first
asked for (`__getattr__`), so that importing this module builds nothing."""

CORS_HEADERS = (
    "accept",
    "authorization",
    "content-type",
    "if-none-match",
    # What Apollo Client, urql and graphql-codegen's clients send: a preflight naming any header not
    # listed here is refused, and the browser never sends the query.
    "apollo-require-preflight",
    "apollographql-client-name",
    "apollographql-client-version",
    "x-apollo-operation-name",
    "graphql-client-name",
    "graphql-client-version",
)


def create_app(settings: Settings | None = None) -> Starlette:
    """The application for one registry."""
    server = Server(settings or Settings.from_env())
    server.persisted.trust(own_documents(documents))  # the pages' documents run under an allow-list too
    mcp = LazyMCP(  # the MCP tools at /mcp (api/http/mcp_server.py), imported on the first MCP request
        lambda module: module.Backend(server.queries, ready=server.serving)
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with server.running(), mcp.running():
            yield

    cors: dict[str, Any] = {
        "allow_origins": list(server.settings.cors_origins),
        "allow_methods": ["GET", "HEAD", "POST", "OPTIONS"],
        "allow_headers": list(CORS_HEADERS),
        "expose_headers": ["etag", "x-kernelindex-commit"],
        "max_age": 86400,
    }
    middleware = [
        Middleware(SafeAnswers),  # it sees every other answer, the framework's own included
        Middleware(CORSMiddleware, **cors),
    ]
    if not plain_mode():
        # Cached GraphQL answers leave here, finished as the two below would finish them (api/http/fastlane.py).
        middleware.insert(0, Middleware(FastLane, server=server, cors=cors))
    else:
        # uvicorn's own protocol does not bound a request's headers (kernelindex.serving.wire does, in fast mode).
        middleware.insert(1, Middleware(HeaderLimit, max_bytes=server.settings.max_header_bytes))
    # Outermost but the error handler, in both modes: each request counted, timed and logged; then whose budget it
    # spends, and the budget on its answer.
    proxies = server.settings.proxies()
    middleware.insert(0, Middleware(Metering, budgets=server.budgets, proxies=proxies, tokens=server.tokens))
    middleware.insert(
        0, Middleware(Observing, commit=server.served_commit, proxies=proxies, access_log=server.settings.access_log)
    )
    if server.settings.access_log:
        _log_access()
    handlers: dict[Any, Any] = {
        404: _not_found,
        ClientDisconnect: _client_gone,
        registry.RegistryError: _registry_fault,
        Exception: _unexpected_fault,
    }
    guarded = McpGuard(mcp, server.settings)  # /mcp answers only the origins and hosts it is configured for
    application = Starlette(
        routes=routes(guarded), middleware=middleware, lifespan=lifespan, exception_handlers=handlers
    )
    application.router.redirect_slashes = False  # it builds Location from Host (see the module's docstring)
    application.state.server = server
    return application


def _log_access() -> None:
    """The access log's lines (`kernelindex.http.observing`) on stderr as they are: one JSON object a line."""
    if ACCESS_LOG.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    ACCESS_LOG.addHandler(handler)
    ACCESS_LOG.setLevel(logging.INFO)
    ACCESS_LOG.propagate = False


async def _not_found(request: Request, exc: Exception) -> Response:
    """No route answers this path: a path with a trailing slash that names one without it is redirected there
    (308: the method is kept), under the configured base URL or root-relative; anything else is a 404 page
    for a browser, the error shape for an API client."""
    path = request.url.path
    if len(path) > 1 and path.endswith("/"):
        candidate = "/" + path.strip("/")  # one leading slash: never `//host`, a URL of another site
        scope = {**request.scope, "path": candidate}
        if any(route.matches(scope)[0] is not Match.NONE for route in request.app.router.routes):
            location = server_of(request).urls.base + quote(candidate, safe="/:@!$&'()*+,;=")
            if request.url.query:
                location += f"?{request.url.query}"
            return RedirectResponse(location, status_code=308, headers={"cache-control": REVALIDATE})
    return error_page(request, 404, NOT_FOUND, "nothing here: no page or API route has this path")


async def _registry_fault(request: Request, exc: Exception) -> Response:
    """A registry error no route expected (a corrupt object read mid-request): the error shape, never a
    bare 500. Corruption is the server's state, not the client's fault: 503, retryable elsewhere."""
    log.error("kernelindex: %s %s: %s", request.method, request.url.path, exc)
    if isinstance(exc, registry.StoreCorrupt):
        return error(503, f"the registry cannot serve this: {exc}", STORE_CORRUPT)
    return error(500, str(exc), INTERNAL)


async def _client_gone(request: Request, exc: Exception) -> Response:
    """The client closed its connection before its request's body arrived (an aborted upload): nothing to answer
    and nothing wrong here, so one line without a traceback (it was two full tracebacks, as unexpected errors)."""
    why = "the client closed the connection before its body arrived"
    log.warning("kernelindex: %s %s: %s", request.method, request.url.path, why)
    return error(400, why, BAD_REQUEST)  # nobody reads it: the server drops what is sent to a closed connection


async def _unexpected_fault(request: Request, exc: Exception) -> Response:
    log.exception("kernelindex: unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return error(500, UNEXPECTED, INTERNAL)


class WorkerConfig(uvicorn.Config):
    """uvicorn's configuration for worker processes (`kernelindex serve --workers N`), carrying the
    registry's settings: each worker starts with a pickled copy of its configuration, and builds its
    application from them rather than from the environment."""

    def __init__(self, settings: Settings, **options: Any) -> None:
        # The import string is what uvicorn asks of a configuration for workers; `load` gives each its own.
        super().__init__(
            "kernelindex.app:app", host=settings.host, port=settings.port, workers=settings.workers, **options
        )
        self.settings = settings

    def load(self) -> None:
        self.app = create_app(self.settings)
        super().load()


def __getattr__(name: str) -> Starlette:
    """`app`, made on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    application = create_app()
    globals()["app"] = application
    return application

"""What the endpoints read from a request: the server it reached, what the client accepts, and whether there
is anything to serve yet."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kernelindex import registry
from kernelindex.core.codes import BAD_DIGEST, NOT_READY
from kernelindex.core.negotiation import qualities
from kernelindex.http.responses import error
from kernelindex.service.server import Server

__all__ = ["digest_param", "not_ready", "server_of", "wants_json"]


def server_of(request: Request) -> Server:
    """The server whose application answers this request."""
    server: Server = request.app.state.server
    return server


def not_ready(server: Server) -> Response | None:
    """The 503 to answer while there is nothing to serve (loading, or no valid head), else None."""
    reason = server.unavailable()
    return None if reason is None else error(503, reason, NOT_READY)


def wants_json(request: Request) -> bool:
    """Whether the client prefers JSON to HTML (RFC 9110 section 12.5.1 quality values).

    A browser names text/html; an API client names application/json, or nothing, or `*/*` (curl,
    httpx): those get JSON, the answer they got before pages existed.
    """
    weights = qualities(request.headers.get("accept"))
    html = weights.get("text/html", weights.get("application/xhtml+xml", 0.0))
    return not (html > 0 and html >= weights.get("application/json", 0.0))


def digest_param(request: Request) -> str | Response:
    """The path's `{digest}`, or the 400 refusing it."""
    try:
        return registry.parse_digest(request.path_params["digest"])
    except ValueError:
        return error(400, "expected sha256:<64 lowercase hex digits>", BAD_DIGEST)

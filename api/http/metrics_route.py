"""`/metrics`: the server's metrics in the Prometheus text format (`kernelindex.core.metrics`), for an operator's
scraper; free of any budget, never cached."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.metrics import exposition
from kernelindex.http.requests import server_of

__all__ = ["endpoint"]


async def endpoint(request: Request) -> Response:
    """GET `/metrics`."""
    server = server_of(request)
    server.observe_head()
    body = exposition(server.settings.metrics_dir)
    return Response(body, headers={"content-type": CONTENT_TYPE_LATEST, "cache-control": "no-store"})

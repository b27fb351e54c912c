"""The floor of the HTTP measurements: a bare Starlette route returning fixed bytes.

Served by the same uvicorn (same loop, same HTTP parser and protocol, same worker count) as the registry, it
answers GET and POST on every path with the bytes of the file named by $BENCH_FLOOR_BODY, so a
ratio against it measures what the registry adds on top of the stack itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["app"]

_BODY = Path(os.environ.get("BENCH_FLOOR_BODY", "/dev/null")).read_bytes()


async def _fixed(request: Request) -> Response:
    await request.body()  # read the request as the real endpoint does
    return Response(_BODY, media_type="application/json")


app = Starlette(routes=[Route("/{path:path}", _fixed, methods=["GET", "POST"])])

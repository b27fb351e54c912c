"""The total size of a request's headers, where the server's HTTP protocol does not bound it (plain mode).

`kernelindex serve` reads requests through its own protocol (`kernelindex.serving.wire`), which refuses a head
whose header names and values, summed, exceed `KERNELINDEX_MAX_HEADER_BYTES` with `431 Request Header Fields
Too Large`, before the head is even complete. In plain mode uvicorn's own protocol reads the request, and
nothing in its configuration bounds the headers of its httptools parser: `HeaderLimit` gives the same answer to
the same requests, once uvicorn has read them (their bytes were already received: a proxy's limit is what
stops them at the door, docs/deploy.md).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from kernelindex.core.codes import HEADERS_TOO_LARGE
from kernelindex.http.responses import error

__all__ = ["HeaderLimit", "header_bytes"]


def header_bytes(headers: list[tuple[bytes, bytes]]) -> int:
    """The bytes of a request's header names and values, summed (as an ASGI scope holds them).

    >>> header_bytes([(b"host", b"example.org"), (b"accept", b"*/*")])
    24
    """
    return sum(len(name) + len(value) for name, value in headers)


class HeaderLimit:
    """ASGI middleware: a request whose headers exceed `max_bytes` (names and values summed) is answered 431."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and header_bytes(scope["headers"]) > self.max_bytes:
            why = f"the request's header names and values exceed {self.max_bytes:,} bytes"
            await error(431, why, HEADERS_TOO_LARGE, headers={"connection": "close"})(scope, receive, send)
            return
        await self.app(scope, receive, send)

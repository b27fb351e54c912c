"""How every HTTP answer of the registry is finished: errors in the one documented shape (with the one code
list, `kernelindex.core.codes`), pages and badges (`finish`: where every HTML and SVG response is made, with the
security
headers of `kernelindex.http.headers`), and cached answers in the content coding a client accepts (`send`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from kernelindex.core import compression
from kernelindex.core.cache import REVALIDATE, ByteLRU, Representation
from kernelindex.core.graphql_http import etag_matches
from kernelindex.http.headers import for_media

__all__ = ["ERROR_CACHE", "JSON", "VARY", "Files", "error", "error_body", "finish", "send"]

JSON = "application/json"
VARY = "Accept, Accept-Encoding"
"""What a coded answer of GraphQL varies with."""
ERROR_CACHE = "no-store"
"""Cache-Control of an error unless its route says otherwise: a refusal is never served to the next client."""


def error_body(message: str, code: str) -> bytes:
    """`{"errors": [{"message", "extensions": {"code"}}]}`: the shape of every error the registry answers."""
    return orjson.dumps({"errors": [{"message": message, "extensions": {"code": code}}]})


def error(
    status: int, message: str, code: str, *, headers: Mapping[str, str] | None = None, media_type: str = JSON
) -> Response:
    """An error answer: `status`, the error shape with `message` and `code` (one of `kernelindex.core.codes`); not
    stored
    by any cache unless `headers` say otherwise."""
    return Response(
        error_body(message, code),
        status_code=status,
        media_type=media_type,
        headers={"cache-control": ERROR_CACHE, **(headers or {})},
    )


def finish(
    request: Request,
    body: bytes,
    *,
    media_type: str,
    headers: Mapping[str, str],
    status: int = 200,
    policy: str | None = None,
    kept: Representation | None = None,
    grown: Callable[[int], object] | None = None,
) -> Response:
    """A page, an error page, a badge or GraphiQL's page as it leaves, with the security headers of its media
    type (`policy`: an HTML page's own Content-Security-Policy, the pages' when None): 304 when the client
    holds it already (its entity tag, compared as sent).

    `kept`: the representation `body` is kept as (a cached page's), whose coded forms are made once and kept
    with it. A body of `compression.MIN_BYTES` or more then goes out in the coding the client accepts (a
    30 KB leaderboard page as 6.9 KB of zstd), with the coding's own entity tag, compared as `send` does;
    `grown` is told what a coding made now adds to `kept`'s weight (for the cache that keeps it)."""
    out = {**headers, **for_media(media_type, policy)}
    etag = headers.get("etag")
    asked = request.headers.get("if-none-match")
    coding = None
    if kept is not None and len(body) >= compression.MIN_BYTES:
        coding = compression.negotiate(request.headers.get("accept-encoding"))
        out["vary"] = f"{out['vary']}, Accept-Encoding" if out.get("vary") else "Accept-Encoding"
        if etag is not None:
            out["etag"] = compression.tag_for(etag, coding)
    if etag is not None and (status == 200 and etag_matches(asked, etag) if kept is not None else asked == etag):
        return Response(status_code=304, headers=out)
    if kept is not None and coding is not None:
        body, added = kept.encodings.get(body, coding)
        out["content-encoding"] = coding
        if added and grown is not None:
            grown(added)
    return Response(body, status_code=status, media_type=media_type, headers=out)


def send(
    request: Request,
    item: Representation,
    status: int | None = None,
    media_type: str | None = None,
    cache: ByteLRU[tuple[str, ...], Representation] | None = None,
) -> Response:
    """A cached answer (GraphQL's, a dossier, a GraphiQL file) in the coding the client accepts, made once and
    kept with the answer (`cache` weighs it again), with the coding's own entity tag; 304 when the client
    holds it already (the weak comparison: any coding of it will do)."""
    body = item.body
    coding = (
        compression.negotiate(request.headers.get("accept-encoding")) if len(body) >= compression.MIN_BYTES else None
    )
    out = {**item.headers, "etag": compression.tag_for(item.etag, coding), "vary": VARY}
    status = item.status if status is None else status
    if status == 200 and etag_matches(request.headers.get("if-none-match"), item.etag):
        return Response(status_code=304, headers=out)
    if coding is not None:
        body, added = item.encodings.get(body, coding)
        out["content-encoding"] = coding
        if added and cache is not None and item.key is not None:
            cache.grow(item.key, item, added)  # what its new coding holds
    return Response(body, status_code=status, media_type=media_type or item.media_type, headers=out)


class Files(StaticFiles):
    """Static files (the pages' stylesheet and script) that say how to cache them: revalidate, which their
    validators (Last-Modified, ETag) make cheap; a new release may change them under the same name."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            response.headers.setdefault("cache-control", REVALIDATE)
        return response

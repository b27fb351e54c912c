"""What every answer carries for its own safety, spelled once: the security headers of pages, of GraphiQL
and of SVG (`for_media`, which `finish` applies to every HTML and SVG answer), and `SafeAnswers`, the
middleware that gives every other answer `nosniff`, a locked-down policy and a `Cache-Control`.

Pages hold no inline script or style (their script and stylesheet are files under `/static`), so their
policy allows only this origin's files and nothing inline. GraphiQL's page loads its vendored files from
this origin too; its editor needs `data:` images and fonts (icons in its stylesheet) and inline styles
(CodeMirror positions its cursor and gutters with `style` attributes), and nothing else. An SVG badge is
a document when opened by itself: it runs nothing, loads nothing, and is sandboxed besides.

`Referrer-Policy: strict-origin-when-cross-origin`: a link followed to another site (a run's evidence, a
source) tells it only that the reader came from this registry, never which page or search (a search's
terms are in its URL), and nothing at all over plain http; links inside the registry keep the full
referrer. `no-referrer` would hide even the origin from the sources whose results are published here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = [
    "GRAPHIQL_POLICY",
    "OTHER_POLICY",
    "PAGE_POLICY",
    "REFERRER_POLICY",
    "SVG_POLICY",
    "SafeAnswers",
    "for_media",
]

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The Content-Security-Policy of every HTML page (and error page) the registry renders."""
GRAPHIQL_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""GraphiQL's: its scripts only from this origin, and what its editor draws with (inline styles, data: icons)."""
SVG_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"
"""An SVG opened by itself: nothing loads, nothing runs, in a sandbox."""
OTHER_POLICY = "default-src 'none'; frame-ancestors 'none'"
"""Any other answer (JSON, feeds, text): a browser that renders one anyway loads and runs nothing."""
REFERRER_POLICY = "strict-origin-when-cross-origin"
DEFAULT_CACHE = "no-store"
"""Cache-Control of an answer that says nothing itself (a framework's 404 or 405, a CORS preflight, MCP)."""

_HTML = "text/html"
_SVG = "image/svg+xml"


def for_media(media_type: str, policy: str | None = None) -> dict[str, str]:
    """The security headers of an answer of `media_type`: HTML gets `policy` (the pages' by default), SVG
    the sandbox, anything else the locked-down policy; all of them `nosniff`."""
    essence = media_type.split(";", 1)[0].strip().lower()
    if essence == _HTML:
        chosen = policy or PAGE_POLICY
    elif essence == _SVG:
        chosen = SVG_POLICY
    else:
        return {"x-content-type-options": "nosniff", "content-security-policy": OTHER_POLICY}
    return {
        "content-security-policy": chosen,
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",  # frame-ancestors for browsers that predate it
        "referrer-policy": REFERRER_POLICY,
    }


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SafeAnswers:
    """ASGI middleware: every HTTP answer leaves with the headers of its media type (`for_media`) and a
    Cache-Control, unless its endpoint set them (only missing headers are added). The endpoints that know
    better (pages, GraphiQL, cached answers) say so themselves; this catches what a framework answers on
    its own and anything a new route forgets."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def finished(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _completed(list(message.get("headers") or ()))
            await send(message)

        await self.app(scope, receive, finished)


def _completed(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    present = {name.lower() for name, _ in headers}
    media = next((value.decode("latin-1") for name, value in headers if name.lower() == b"content-type"), "")
    wanted = {**for_media(media), "cache-control": DEFAULT_CACHE}
    for name, value in wanted.items():
        key = name.encode()
        if key not in present:
            headers.append((key, value.encode()))
    return headers

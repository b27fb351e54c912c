"""`/mcp` answers only the browser origins and Host names it is configured for (the MCP transport's rule
against DNS rebinding: a page of `http://attacker.example` whose name comes to resolve to this server).

- **Origin.** A request without `Origin` is allowed: MCP clients (and curl, and servers) send none, and a
  browser always sends one on a cross-origin POST. With one, it must be the configured base URL's origin or
  one of `KERNELINDEX_MCP_ORIGINS` (comma-separated `scheme://host[:port]`; `*` allows any); else 403.
- **Host.** When a base URL or `KERNELINDEX_ALLOWED_HOSTS` is configured, the Host's name must be the base
  URL's, one of those, or a loopback name or address (`localhost`, `127.0.0.1`, `[::1]`: a rebound name is
  never one of these); else 403. With neither configured, any Host is answered.

A refusal is the error shape (`ORIGIN_NOT_ALLOWED`, `HOST_NOT_ALLOWED`), made before the MCP SDK is
imported or a session started.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers

from kernelindex.core.codes import HOST_NOT_ALLOWED, ORIGIN_NOT_ALLOWED
from kernelindex.core.settings import Settings, is_loopback
from kernelindex.http.responses import error

__all__ = ["McpGuard", "origin_of"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """A URL's origin as browsers serialize it (`scheme://host[:port]`, the default port left out), or None.

    >>> origin_of("HTTPS://Registry.Example:443/path"), origin_of("http://127.0.0.1:8000"), origin_of("null")
    ('https://registry.example', 'http://127.0.0.1:8000', None)
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    kept = f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else ""
    return f"{scheme}://{host}{kept}"


def _host_name(host: str) -> str:
    """The name of a Host header, without its port (`[::1]:8000` -> `::1`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class McpGuard:
    """The `/mcp` endpoint behind its Origin and Host checks."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        base = origin_of(settings.base_url) if settings.base_url else None
        self._any_origin = "*" in settings.mcp_origins
        self._origins = {found for found in (base, *map(origin_of, settings.mcp_origins)) if found}
        named = [urlsplit(base).hostname] if base else []
        named += [_host_name(host) for host in settings.allowed_hosts]
        self._hosts = {name for name in named if name} or None  # None: no Host is configured, any is answered

    def refusal(self, headers: Headers) -> tuple[str, str] | None:
        """Why a request with these headers is refused (code, message), or None."""
        origin = headers.get("origin")
        if origin is not None and not self._any_origin and origin_of(origin) not in self._origins:
            return ORIGIN_NOT_ALLOWED, (
                f"/mcp does not answer pages of {origin[:100]!r}: allowed origins are the base URL's and "
                "KERNELINDEX_MCP_ORIGINS"
            )
        host = _host_name(headers.get("host", ""))
        if self._hosts is not None and host not in self._hosts and not is_loopback(host):
            return HOST_NOT_ALLOWED, (
                f"/mcp does not answer under the name {host[:100]!r}: allowed names are the base URL's, "
                "KERNELINDEX_ALLOWED_HOSTS and loopback"
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.refusal(Headers(scope=scope))
            if refused is not None:
                code, message = refused
                await error(403, message, code)(scope, receive, send)
                return
        await self.app(scope, receive, send)

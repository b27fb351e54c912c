"""`/mcp`, made on its first request: the MCP SDK is a third of a server's memory and half its import
time, and most servers never meet an MCP client.

The first request imports `kernelindex.http.mcp_server` in a worker thread (the event loop keeps answering), builds
the endpoint, and starts the SDK's session manager in a task of its own that lives until the
application's lifespan ends (`running()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread

__all__ = ["LazyMCP"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class LazyMCP:
    """An ASGI endpoint that becomes `kernelindex.http.mcp_server.http_app(backend(module))` on its first request."""

    def __init__(self, backend: Callable[[Any], Any]) -> None:
        """`backend`: given the `kernelindex.http.mcp_server` module, the `Backend` to serve."""
        self._backend = backend
        self._endpoint: ASGIApp | None = None
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        endpoint = self._endpoint or await self._start()
        await endpoint(scope, receive, send)

    async def _start(self) -> ASGIApp:
        async with self._lock:
            if self._endpoint is None:
                module = await anyio.to_thread.run_sync(importlib.import_module, "kernelindex.http.mcp_server")
                endpoint, running = module.http_app(self._backend(module))
                started = asyncio.Event()

                async def hold() -> None:
                    async with running():
                        started.set()
                        await self._stop.wait()

                self._task = asyncio.create_task(hold())
                waiting = asyncio.create_task(started.wait())
                await asyncio.wait([self._task, waiting], return_when=asyncio.FIRST_COMPLETED)
                if not started.is_set():
                    waiting.cancel()
                    await self._task  # it ended before starting: raise what stopped it
                    raise RuntimeError("the MCP session manager stopped as it started")
                self._endpoint = endpoint
            return self._endpoint

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Enter in the application's lifespan: stops the session manager (if it started) at the end."""
        try:
            yield
        finally:
            self._stop.set()
            if self._task is not None:
                await self._task

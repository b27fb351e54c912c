"""A real uvicorn server on loopback, in a thread of the test process, for HTTP tests."""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette

from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.service.server import Server
from kernelindex.serving.process import options

__all__ = ["Running", "serve"]


@dataclass
class Running:
    url: str
    app: Starlette
    client: httpx.Client

    @property
    def service(self) -> Server:
        """The application's server: its snapshots, query service and caches."""
        server: Server = self.app.state.server
        return server

    def graphql(self, query: str, variables: dict[str, object] | None = None, **kwargs: object) -> httpx.Response:
        return self.client.post("/graphql", json={"query": query, "variables": variables or {}}, **kwargs)  # type: ignore[arg-type]


@contextmanager
def serve(
    repo: Path,
    *,
    poll_seconds: float = 3600.0,
    graph_cache: bool = False,
    prepare_search: bool = False,
    **settings: object,
) -> Iterator[Running]:
    """Start the app for `repo` on a free loopback port; stop it afterwards. Its exports are kept in a
    temporary directory of its own (no export outlives the server); the background preparation of search is off
    unless asked for (each server would spend a second of CPU on it)."""
    exports = tempfile.TemporaryDirectory(prefix="kernelindex-exports-")
    settings.setdefault("export_cache", Path(exports.name))
    configured = Settings(
        repo_path=repo,
        poll_seconds=poll_seconds,
        graph_cache=graph_cache,
        prepare_search=prepare_search,
        **settings,  # type: ignore[arg-type]
    )
    app = create_app(configured)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # The protocol `kernelindex serve` runs for these settings (uvicorn's own in plain mode).
    protocol = options(configured).get("http", "auto")
    # As `kernelindex serve` runs it (kernelindex.serving.process): uvicorn never rewrites the client's address.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", http=protocol, proxy_headers=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield Running(url, app, client)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()
        exports.cleanup()

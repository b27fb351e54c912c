"""Zero-downtime restarts: `kernelindex serve` hands its listening socket to a successor that takes
traffic only once warm, then drains: no request is refused or lost while the code or the registry's
cache is replaced.

1. `kill -HUP <pid>` (or `kernelindex serve --pid-file F` and `kill -HUP $(cat F)`): the serving
   process P starts a successor S, `python -m kernelindex.cli serve` with P's settings (in its environment) and
   P's listening socket, inherited (`KERNELINDEX_LISTEN_FD`). P keeps accepting meanwhile.
2. S loads (uvicorn runs the lifespan, the registry's load, before it accepts), then accepts on the
   same socket. Both accept from one kernel queue for a moment: no connection is refused or lost.
3. S, once it serves a head, writes the pid file and sends P `SIGQUIT`. P stops accepting (it closes
   its copy of the socket; S holds it open), answers every request it has already accepted with
   `Connection: close`, leaves idle keep-alive connections to close at their timeout, and exits when
   no connection is left (or after `DRAIN_SECONDS`).

If S cannot serve (it crashes, or loads nothing valid), it exits without signalling and P, which never
stopped, keeps serving. `SIGTERM`/`SIGINT` stop a server as uvicorn always does; `SIGQUIT` is the
graceful drain (nginx's meaning of the same signals). The same hand-over is an upgrade: S runs the
code installed when it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

__all__ = ["DRAIN", "DRAIN_SECONDS", "HANDOVER", "Draining", "HandoverServer", "listening_socket"]

log = logging.getLogger("kernelindex")

HANDOVER = signal.SIGHUP
DRAIN = signal.SIGQUIT
DRAIN_SECONDS = 30.0
"""The longest a replaced process waits for its connections (a response still being computed, a
keep-alive connection no client closes) before it stops anyway."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Draining:
    """ASGI middleware: once `active`, every response starts with `Connection: close`, so each client
    opens its next connection on the listening socket, where the successor accepts it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.active = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Checked as a request starts: one already running when the drain begins leaves its connection
        # open, and the next request on it (after the drain began) closes it. No wrapper otherwise.
        if scope["type"] != "http" or not self.active:
            await self.app(scope, receive, send)
            return

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, closing)


def listening_socket(config: uvicorn.Config, fd: int | None) -> socket.socket:
    """The socket to serve: the one handed over (a file descriptor inherited from the process this one
    replaces), else a new one bound to the configured host and port."""
    if fd is None:
        return config.bind_socket()
    try:
        inherited = socket.socket(fileno=fd)
    except OSError as exc:
        raise SystemExit(f"kernelindex: KERNELINDEX_LISTEN_FD={fd} is not a socket: {exc.strerror}") from None
    inherited.set_inheritable(True)
    return inherited


class HandoverServer(uvicorn.Server):
    """uvicorn's server, plus the hand-over: `SIGHUP` starts a successor, `SIGQUIT` drains."""

    def __init__(
        self,
        config: uvicorn.Config,
        draining: Draining,
        *,
        warm: Callable[[], bool],
        predecessor: int | None = None,
        pid_file: Path | None = None,
        command: list[str] | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        """`warm`: whether this process serves a head (it takes over only then); `predecessor`: the
        process to drain once it does; `command`: how to start a successor (default: this serve), with
        `environment` over this process's (the settings this one was given on its command line)."""
        super().__init__(config)
        self.draining = draining
        self.warm = warm
        self.predecessor = predecessor
        self.pid_file = pid_file
        pid_option = ["--pid-file", str(pid_file)] if pid_file is not None else []
        self.command = command or [sys.executable, "-m", "kernelindex.cli", "serve", *pid_option]
        self.environment = dict(environment or {})
        self.listener: socket.socket | None = None
        self.successor: subprocess.Popen[bytes] | None = None
        self._signalled: list[int] = []
        self._drain: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self.listener = sockets[0] if sockets else None
        if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
            for signum in (HANDOVER, DRAIN):
                signal.signal(signum, self._on_signal)
        await super().serve(sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        if self.predecessor is not None:
            # A successor that cannot serve must not accept even once: check before uvicorn listens
            # (it exits with its startup-failure status when the lifespan says so).
            loading = self.lifespan.startup

            async def gated() -> None:
                await loading()
                if not self.lifespan.should_exit and not self.warm():
                    log.error("kernelindex: not taking over from %d: nothing valid to serve", self.predecessor)
                    self.lifespan.should_exit = True

            self.lifespan.startup = gated
        await super().startup(sockets)
        if not self.started or self.should_exit or not self.warm():
            return
        if self.pid_file is not None:
            _write_pid(self.pid_file)
        if self.predecessor is not None:
            log.info("kernelindex: serving; draining %d", self.predecessor)
            with contextlib.suppress(ProcessLookupError):  # gone already: nothing to drain
                os.kill(self.predecessor, DRAIN)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signalled.append(signum)  # acted on by the next tick (signal handlers must not block)

    async def on_tick(self, counter: int) -> bool:
        while self._signalled:
            signum = self._signalled.pop(0)
            if signum == HANDOVER:
                self._start_successor()
            elif signum == DRAIN and self._drain is None:
                self._drain = asyncio.create_task(self._drain_then_exit())
        if self.successor is not None and self.successor.poll() is not None:
            log.error("kernelindex: the successor exited with %s; still serving", self.successor.returncode)
            self.successor = None
        return await super().on_tick(counter)

    def _start_successor(self) -> None:
        if self.listener is None or (self.successor is not None and self.successor.poll() is None):
            return  # one successor at a time
        fd = self.listener.fileno()
        env = {
            **os.environ,
            **self.environment,
            "KERNELINDEX_LISTEN_FD": str(fd),
            "KERNELINDEX_HANDOVER_FROM": str(os.getpid()),
        }
        log.info("kernelindex: starting a successor on fd %d", fd)
        self.successor = subprocess.Popen(self.command, env=env, pass_fds=(fd,))

    async def _drain_then_exit(self) -> None:
        for server in self.servers:
            server.close()  # stop accepting: the successor holds the socket open
        self.draining.active = True
        deadline = time.monotonic() + DRAIN_SECONDS
        while self.server_state.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self.should_exit = True


def _write_pid(path: Path) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(f"{os.getpid()}\n")
    os.replace(temporary, path)

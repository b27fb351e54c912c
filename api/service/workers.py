"""The executor bound: a fixed set of worker threads that run what an event loop hands them, at most `size` at once.

Every GraphQL execution, export render and MCP tool's parsing runs here, never on the event loop, so the loop only
answers sockets (/healthz is answered between two steps of the heaviest batch). The hand-off is one queue put and,
when the work is done, one `call_soon_threadsafe`: cheaper than a general-purpose pool's (anyio's `to_thread`
looks up or starts a worker, borrows a limiter token and wraps the call in a context copy at every hand-off), which
is what a first-time answer of ~1 ms saves by being handed over this way.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kernelindex.core.metrics import EXECUTOR_QUEUE, EXECUTOR_WAIT

__all__ = ["Workers"]

T = TypeVar("T")

_STOP = object()


class Workers:
    """`size` daemon threads, started on first use, taking work from one queue in the order it came.

    Work whose waiter was cancelled before a thread took it (a client gone) is skipped, not run."""

    def __init__(self, size: int, name: str = "kernelindex executor") -> None:
        if size < 1:
            raise ValueError(f"workers: size must be at least 1, not {size}")
        self.size = size
        self._name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.busy = 0
        """Work items running or waiting now (read on the event loop's thread only)."""

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a worker thread; its result, or its exception raised here."""
        if len(self._threads) < self.size:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self.busy += 1
        EXECUTOR_QUEUE.inc()
        try:
            self._queue.put((function, args, future, loop, time.perf_counter()))
            return await future
        finally:
            self.busy -= 1
            EXECUTOR_QUEUE.dec()

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        """Let the threads end once the work queued before this is done (an application's shutdown)."""
        with self._lock:
            for _ in self._threads:
                self._queue.put(_STOP)
            self._threads = []

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            function, args, future, loop, queued = item
            if future.cancelled():
                continue
            EXECUTOR_WAIT.observe(time.perf_counter() - queued)
            try:
                result = function(*args)
            except BaseException as exc:  # handed to the waiter, which raises it
                _deliver(loop, future, None, exc)
            else:
                _deliver(loop, future, result, None)
            del item, function, args, future, loop, queued


def _deliver(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, error: BaseException | None
) -> None:
    def settle() -> None:
        if future.done():  # cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop closed while the work ran: nobody waits for it
        loop.call_soon_threadsafe(settle)

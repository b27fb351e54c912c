"""The executor bound: a fixed set of worker threads that run what an event loop hands them, at most `size` at once.

Every GraphQL execution, export render and MCP tool's parsing runs here, never on the event loop, so the loop only
answers sockets (/healthz is answered between two steps of the heaviest batch). The hand-off is one queue put and,
when the work is done, one `call_soon_threadsafe`: cheaper than a general-purpose pool's (anyio's `to_thread`
looks up or starts a worker, borrows a limiter token and wraps the call in a context copy at every hand-off), which
is what a first-time answer of ~1 ms saves by being handed over this way.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kernelindex.core.metrics import EXECUTOR_QUEUE, EXECUTOR_WAIT

__all__ = ["CLIENT", "Workers"]

T = TypeVar("T")

_STOP = object()

CLIENT: contextvars.ContextVar[object] = contextvars.ContextVar("kernelindex_client", default=None)
"""Whose turn the work handed over now waits for (the client's budget key; None: the server's own work)."""


class Workers:
    """`size` daemon threads, started on first use, taking work from a queue per client in turn.

    Each client (the key its budget is kept under; None for the server's own work) has a queue of its own, and the
    threads serve the clients with work waiting round-robin, one item each in turn, each client's in the order it
    came: a client with one query waiting is not queued behind another's hundred (the fair queuing).
    Work whose waiter was cancelled before a thread took it (a client gone) is skipped, not run."""

    def __init__(self, size: int, name: str = "kernelindex executor") -> None:
        if size < 1:
            raise ValueError(f"workers: size must be at least 1, not {size}")
        self.size = size
        self._name = name
        # A thread waits on `_tokens` (one token an item, or a stop), C-level and cheap to wake (a `Condition`
        # doubled a first-time answer's hand-over, ~30 -> ~70 us); which item a token takes is the round-robin's.
        self._tokens: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._queued = threading.Lock()
        self._queues: dict[object, collections.deque[Any]] = {}  # each client's work waiting, in order
        self._turns: collections.deque[object] = collections.deque()  # clients with work waiting, in turn
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.busy = 0
        """Work items running or waiting now (read on the event loop's thread only)."""

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a worker thread, in the turn of the client being answered (`CLIENT`: the query service
        sets it); its result, or its exception raised here."""
        if len(self._threads) < self.size:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self.busy += 1
        EXECUTOR_QUEUE.inc()
        try:
            self._put(CLIENT.get(), (function, args, future, loop, time.perf_counter()))
            return await future
        finally:
            self.busy -= 1
            EXECUTOR_QUEUE.dec()

    def _put(self, client: object, item: Any) -> None:
        with self._queued:
            waiting = self._queues.get(client)
            if waiting is None:
                waiting = self._queues[client] = collections.deque()
                self._turns.append(client)
            waiting.append(item)
        self._tokens.put(None)

    def _take(self) -> Any:
        """The next item: the first of the client whose turn it is (that client goes to the back of the line if it
        has more); `_STOP` when a stop comes before the next token (the work queued before it is done first)."""
        if self._tokens.get() is _STOP:
            return _STOP
        with self._queued:
            client = self._turns.popleft()
            waiting = self._queues[client]
            item = waiting.popleft()
            if waiting:
                self._turns.append(client)
            else:
                del self._queues[client]
            return item

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
                self._tokens.put(_STOP)
            self._threads = []

    def _work(self) -> None:
        while True:
            item = self._take()
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

"""Bursts of the same request made into at most two runs: one in flight and one queued behind it.

The refresh hook is public: a burst of calls (a CI retrying, a flood) must not start a refresh (and on a
replica a `git fetch`) per call. The first call while nothing runs runs the job and waits for its result;
one arriving while it runs queues one more run (a push that landed mid-refresh is still picked up), and
returns at once; any other arriving while one is queued joins that queued run, and returns at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ["Coalescer", "Outcome"]

T = TypeVar("T")

log = logging.getLogger("kernelindex")


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """What a call got: `ran` (and the job's `result`), `queued` (a run after the current one) or `pending`
    (a run was queued already: this call joined it)."""

    status: Literal["ran", "queued", "pending"]
    result: T | None = None


class Coalescer(Generic[T]):
    """Calls of `job` with at most one in flight and one queued (in one event loop)."""

    def __init__(self, job: Callable[[], Awaitable[T]]) -> None:
        self._job = job
        self._running = False
        self._queued = False
        self._drain: asyncio.Task[None] | None = None
        self.runs = 0
        """Runs started."""
        self.joined = 0
        """Calls that joined a run already queued."""

    async def submit(self) -> Outcome[T]:
        """Run now, queue one run, or join the queued one (see the module's docstring)."""
        if not self._running:
            self._running = True
            try:
                return Outcome("ran", await self._once())
            finally:
                self._next()
        if not self._queued:
            self._queued = True
            return Outcome("queued")
        self.joined += 1
        return Outcome("pending")

    async def _once(self) -> T:
        self.runs += 1
        return await self._job()

    def _next(self) -> None:
        """After a run: the queued one, in a task of its own (its callers returned already), else idle."""
        if not self._queued:
            self._running = False
            return
        self._queued = False
        self._drain = asyncio.get_running_loop().create_task(self._queued_run())

    async def _queued_run(self) -> None:
        try:
            await self._once()
        except Exception:  # nobody waits for this run: its failure is logged, and the next call runs anew
            log.exception("kernelindex: a queued run failed")
        finally:
            self._next()

"""One budget per client across the workers of `kernelindex serve --workers N`: a file-backed table.

Each worker maps the same file (`KERNELINDEX_BUDGET_FILE`, which `serve` makes for its workers) and charges through
it, under an exclusive `flock` of the file (and a thread lock, since a `flock` does not exclude the threads of one
process). The table is fixed in size, `SLOTS` slots of 24 bytes (1.5 MB): a slot is a client key's 64-bit hash
(BLAKE2b of the key), its points and when they were counted (the monotonic clock, which every process of a machine
shares). A key is looked up in `PROBES` slots from where its hash points; a bucket that is full again is the same as
no bucket, so its slot is free. When every slot of a key's window holds a spending client, the one that will be full
soonest is given up: that client starts full again, as in `kernelindex.core.budgets.Budgets` past its bound. Two keys
whose hashes collide share a budget: at 2^64 that is never.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "budgets"
    >>> now = [0.0]
    >>> one = SharedBudgets(path, Policy(capacity=100, rate=1), clock=lambda: now[0])
    >>> two = SharedBudgets(path, Policy(capacity=100, rate=1), clock=lambda: now[0])
    >>> one.charge("ip:a", 60).granted, two.charge("ip:a", 41).granted, two.charge("ip:a", 40).granted
    (True, False, True)
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kernelindex.core.budgets import Budgets, Charge, Policy

__all__ = ["PROBES", "SLOTS", "SharedBudgets"]

SLOTS = 65_536
"""Clients whose budgets are being spent at once, at most (a client whose bucket is full needs no slot)."""
PROBES = 16
"""Slots a key may take, from where its hash points (linear probing)."""
_SLOT = struct.Struct("<Qdd")  # key hash (0: free), points, when


class SharedBudgets(Budgets):
    """`Budgets` kept in a file every worker maps (see the module's docstring)."""

    def __init__(
        self, path: Path, policy: Policy, *, clock: Callable[[], float] = time.monotonic, slots: int = SLOTS
    ) -> None:
        super().__init__(policy, clock=clock, max_clients=slots)
        self.path = path
        self.slots = slots
        size = slots * _SLOT.size
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            if os.fstat(self._fd).st_size != size:
                os.ftruncate(self._fd, size)  # a new table (or one of another size: started again, all full)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._map = mmap.mmap(self._fd, size)
        self._thread_lock = threading.Lock()

    def __len__(self) -> int:
        """Clients whose buckets are not full again (the slots taken)."""
        with self._locked():
            now = self.clock()
            taken = (_SLOT.unpack_from(self._map, n * _SLOT.size) for n in range(self.slots))
            return sum(
                1 for found, points, then in taken if found and self._held(points, then, now) < self.policy.capacity
            )

    def _held(self, points: float, then: float, now: float) -> float:
        return points + max(now - then, 0.0) * self.policy.rate

    def charge(self, key: str, cost: int, policy: Policy | None = None) -> Charge:
        policy = policy or self.policy
        with self._locked():
            now = self.clock()
            slot, available = self._find(_hash(key), now, policy)
            granted = cost <= available
            if granted:
                available -= cost
            if available >= policy.capacity:
                _SLOT.pack_into(self._map, slot * _SLOT.size, 0, 0.0, 0.0)
            else:
                _SLOT.pack_into(self._map, slot * _SLOT.size, _hash(key), available, now)
            return Charge(granted, cost, available, policy)

    def peek(self, key: str, policy: Policy | None = None) -> Charge:
        policy = policy or self.policy
        with self._locked():
            return Charge(True, 0, self._find(_hash(key), self.clock(), policy)[1], policy)

    def _find(self, wanted: int, now: float, policy: Policy) -> tuple[int, float]:
        """The slot of `wanted` (its own, else a free one, else the one that will be full soonest) and the points
        its bucket holds now."""
        start = wanted % self.slots
        free: int | None = None
        soonest, soonest_points = start, -1.0
        for step in range(PROBES):
            slot = (start + step) % self.slots
            found, points, then = _SLOT.unpack_from(self._map, slot * _SLOT.size)
            if found == wanted:
                return slot, min(float(policy.capacity), points + max(now - then, 0.0) * policy.rate)
            if found == 0:
                free = slot if free is None else free
                continue
            held = self._held(points, then, now)
            if held >= self.policy.capacity:  # full again: as good as free
                free = slot if free is None else free
            elif held > soonest_points:
                soonest, soonest_points = slot, held
        return (free if free is not None else soonest), float(policy.capacity)

    def _locked(self) -> _FileLock:
        return _FileLock(self._fd, self._thread_lock)

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)


class _FileLock:
    def __init__(self, fd: int, lock: threading.Lock) -> None:
        self._fd = fd
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire()
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._lock.release()


def _hash(key: str) -> int:
    value = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return value or 1

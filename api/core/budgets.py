"""Cost budgets per client: a token bucket of cost points for each client key, and one request's account.

A client's bucket holds at most `capacity` points and refills at `rate` points a second, continuously. A request is
charged before it runs: a GraphQL operation its estimated cost (`kernelindex.engine.cost`, at least 1), a cached
answer `CACHED_COST`, a page, feed, badge or MCP request `FIXED_COST`. A charge the bucket cannot pay takes nothing
and is refused: the request is answered 429 with when to retry (the seconds until the bucket holds the charge).
Exactly at the budget passes; one point past is refused.

A bucket that is full again is the same as no bucket, so it is dropped; and at most `max_clients` buckets are kept
(the least recently used go first, full ones first of all), so a server asked by 100,000 addresses holds no more
than `max_clients` buckets. A client whose partly spent bucket was dropped that way starts full again: at the default
bound that takes 50,000 clients spending at once between two of its requests.

    >>> now = [0.0]
    >>> budgets = Budgets(Policy(capacity=100, rate=10), clock=lambda: now[0])
    >>> budgets.charge("ip:a", 100).granted, budgets.charge("ip:a", 1).granted
    (True, False)
    >>> now[0] = 0.1
    >>> budgets.charge("ip:a", 1).granted, budgets.charge("ip:b", 100).granted
    (True, True)
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "CACHED_COST",
    "DEFAULT_CAPACITY",
    "DEFAULT_RATE",
    "FIXED_COST",
    "MAX_CLIENTS",
    "Account",
    "Budgets",
    "Charge",
    "Policy",
]

DEFAULT_CAPACITY = 500_000
"""Points a client may spend at once: 20 operations at the per-request cost limit (25,000) back to back, or some
thousands of ordinary ones (a first-time run dossier estimates a few hundred). One person in GraphiQL or browsing the
pages of `kernelindex serve` on a laptop never empties it."""
DEFAULT_RATE = 10_000.0
"""Points a second a bucket refills: one operation at the cost limit every 2.5 s, sustained, after the burst. A point
is about a field resolved (~4 µs of an executor), so a client spending at this rate holds about 4% of one executor;
the bucket is full again 50 s after it was empty."""
CACHED_COST = 1
"""A GraphQL answer served from the response cache (or being made for another client at the same time): microseconds
of work, but a flood of them still spends something."""
FIXED_COST = 5
"""A page, a feed, a badge or an MCP request: mostly cached, their own documents within the per-request limits."""
MAX_CLIENTS = 50_000
"""Buckets kept at most (a few hundred bytes each: ~10 MB at the bound)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """A bucket's size (points) and refill rate (points a second)."""

    capacity: int = DEFAULT_CAPACITY
    rate: float = DEFAULT_RATE

    @property
    def window(self) -> int:
        """Seconds an empty bucket takes to fill."""
        return math.ceil(self.capacity / self.rate)


@dataclass(frozen=True, slots=True)
class Charge:
    """What a charge did: `granted`, the points `available` after it, and when a refused one could be paid."""

    granted: bool
    cost: int
    available: float
    policy: Policy

    @property
    def retry_after(self) -> int:
        """Whole seconds until the bucket holds `cost` (0 when granted)."""
        if self.granted:
            return 0
        return max(1, math.ceil((min(self.cost, self.policy.capacity) - self.available) / self.policy.rate))

    @property
    def full_in(self) -> int:
        """Whole seconds until the bucket is full again."""
        return math.ceil(max(self.policy.capacity - self.available, 0) / self.policy.rate)


class Budgets:
    """Every client's bucket, one policy for all (thread-safe: executors charge from their threads)."""

    def __init__(
        self, policy: Policy, *, clock: Callable[[], float] = time.monotonic, max_clients: int = MAX_CLIENTS
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.max_clients = max_clients
        self._lock = threading.Lock()
        # key -> [points, when they were counted], least recently used first
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def charge(self, key: str, cost: int, policy: Policy | None = None) -> Charge:
        """Take `cost` points from `key`'s bucket if it holds them; otherwise take nothing (`granted` False).
        `policy` is the key's own, for a token's budget (else the server's)."""
        policy = policy or self.policy
        with self._lock:
            now = self.clock()
            available = self._available(key, now, policy)
            granted = cost <= available
            if granted:
                available -= cost
            self._store(key, available, now, policy)
            return Charge(granted, cost, available, policy)

    def peek(self, key: str, policy: Policy | None = None) -> Charge:
        """`key`'s bucket as it is now, charging nothing."""
        policy = policy or self.policy
        with self._lock:
            return Charge(True, 0, self._available(key, self.clock(), policy), policy)

    def _available(self, key: str, now: float, policy: Policy) -> float:
        found = self._buckets.get(key)
        if found is None:
            return float(policy.capacity)
        points, then = found
        return min(float(policy.capacity), points + max(now - then, 0.0) * policy.rate)

    def _store(self, key: str, available: float, now: float, policy: Policy) -> None:
        buckets = self._buckets
        if available >= policy.capacity:
            buckets.pop(key, None)  # full: the same as no bucket
        else:
            buckets[key] = [available, now]
            buckets.move_to_end(key)
        # The least recently used buckets that are full again are dropped as new ones come (two a charge keeps
        # pace with any arrival rate); past the bound, the least recently used goes whatever it holds.
        for _ in range(2):
            if not buckets:
                break
            oldest, (points, then) = next(iter(buckets.items()))
            if points + (now - then) * self.policy.rate < self.policy.capacity and len(buckets) <= self.max_clients:
                break
            del buckets[oldest]


class Account:
    """One request's client: its key, its policy, and what it was charged (`charged`) and last told (`last`)."""

    __slots__ = ("budgets", "charged", "key", "last", "policy")

    def __init__(self, budgets: Budgets, key: str, policy: Policy | None = None) -> None:
        self.budgets = budgets
        self.key = key
        self.policy = policy or budgets.policy
        self.charged = 0
        self.last: Charge | None = None

    def charge(self, cost: int) -> bool:
        """Charge `cost` points; whether they were granted."""
        found = self.budgets.charge(self.key, cost, self.policy)
        self.last = found
        if found.granted:
            self.charged += cost
        return found.granted

    def status(self) -> Charge:
        """The last charge, or the bucket as it is (nothing was charged)."""
        return self.last or self.budgets.peek(self.key, self.policy)

    def throttle_status(self) -> dict[str, float | int]:
        """`extensions.cost.throttleStatus`, as Shopify's: the bucket's size, what it holds, its refill a second."""
        status = self.status()
        return {
            "maximumAvailable": self.policy.capacity,
            "currentlyAvailable": math.floor(status.available),
            "restoreRate": self.policy.rate,
        }

    def headers(self) -> list[tuple[bytes, bytes]]:
        """`RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-09): the policy "cost", its
        quota in cost points (`q`, `qu`) and the seconds an empty bucket takes to fill (`w`); what is left (`r`) and
        the seconds until the bucket is full again (`t`)."""
        status = self.status()
        policy = self.policy
        return [
            (b"ratelimit-policy", f'"cost";q={policy.capacity};w={policy.window};qu="cost-points"'.encode()),
            (b"ratelimit", f'"cost";r={math.floor(status.available)};t={status.full_in}'.encode()),
        ]

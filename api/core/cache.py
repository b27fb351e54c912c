"""Caches bounded by bytes, not by entries (700 distinct 64 KB queries once grew a server from 130 MB to
906 MB through caches that counted entries), and what the response caches keep: `Representation`s, which
weigh the memory they hold (`kernelindex.core.footprint`), not the length of their body.

A snapshot is immutable, so an answer for (commit, document, variables) can be served again byte
for byte; a document parsed from the same text is the same document.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from kernelindex.core.compression import Encodings
from kernelindex.core.footprint import ENTRY_BYTES, exact, footprint

__all__ = ["FOLLOW", "IMMUTABLE", "REVALIDATE", "ByteLRU", "Representation", "entity_tag"]

IMMUTABLE = "public, max-age=31536000, immutable"
"""Cache-Control of an answer pinned to a published commit (or a file named by its digest): it never changes."""
REVALIDATE = "public, max-age=0, must-revalidate"
"""Cache-Control of an answer of the moving head of main: ask again (its entity tag makes that cheap)."""
FOLLOW = "public, max-age=60"
"""Cache-Control of feeds and pointers that move with main: a reader polls."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ByteLRU(Generic[K, V]):
    """A thread-safe LRU whose entries weigh what `weigh(value)` says; at most `max_bytes` in all.

    With `bookkeeping`, an entry also weighs its key and what the LRU keeps for it (`footprint`), so that a
    cache of many small answers holds no more than its limit either. An entry heavier than `max_bytes // 8`
    is not kept: one huge value must not evict everything. A value that grows once kept (an answer's coded
    forms) is put again to be weighed again.
    """

    def __init__(self, max_bytes: int, weigh: Callable[[V], int], *, bookkeeping: bool = False) -> None:
        self._max = max_bytes
        self._weigh = weigh
        self._bookkeeping = bookkeeping
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def max_bytes(self) -> int:
        return self._max

    @property
    def bytes(self) -> int:
        """What the kept entries weigh together."""
        return self._bytes

    def get(self, key: K, *, count_miss: bool = True) -> V | None:
        """The value of `key` (now the most recently used), or None; `count_miss=False` for a look that
        another will repeat when it misses (the fast lane's, before the endpoint's)."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                if count_miss:
                    self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: K, value: V) -> None:
        size = self._weigh(value) + (footprint(key) + ENTRY_BYTES if self._bookkeeping else 0)
        with self._lock:
            if size > self._max // 8:
                # Not kept; nor is what was kept under its key (a value grown too heavy, put again to be weighed).
                dropped = self._items.pop(key, None)
                if dropped is not None:
                    self._bytes -= dropped[1]
                return
            previous = self._items.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self._max and self._items:
                _, (_, evicted) = self._items.popitem(last=False)
                self._bytes -= evicted

    def grow(self, key: K, value: V, extra: int) -> None:
        """`value`, kept under `key`, now holds `extra` bytes more (weighed by whoever added them): its weight
        is raised by that much, without weighing it whole again, if it is still kept there."""
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] is not value:
                return
            size = found[1] + extra
            if size > self._max // 8:
                self._items.pop(key)
                self._bytes -= found[1]
                return
            self._items[key] = (value, size)
            self._bytes += extra
            while self._bytes > self._max and self._items:
                _, (_, evicted) = self._items.popitem(last=False)
                self._bytes -= evicted

    def __len__(self) -> int:
        return len(self._items)


def entity_tag(body: bytes) -> str:
    """The strong entity tag of a body: its sha256, 128 bits of it, quoted."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _allocated_table(table: dict[Any, Any]) -> int:
    return footprint(table, apart=(*table.keys(), *table.values()))


class Representation:
    """Bytes to send again: their status, media type and headers (the entity tag among them), and their
    coded forms once asked for (`encodings`). `key` is its place in a response cache, if it has one.

    A GraphQL answer also keeps `request_error` (it never ran: 400 to clients of
    application/graphql-response+json) and `cost` (what it was charged, against a batch's budget); `throttled`: the
    client's budget refused it (429, never kept); `personal`: it tells one client about itself (`rateLimit`), so it
    is never kept or shared with another.
    `wire` keeps the fast lane's finished header lists (`kernelindex.http.fastlane`).
    """

    __slots__ = (
        "body",
        "cost",
        "encodings",
        "etag",
        "headers",
        "key",
        "media_type",
        "personal",
        "request_error",
        "sent",
        "status",
        "throttled",
        "wire",
        "wire_bytes",
    )

    def __init__(
        self,
        body: bytes,
        media_type: str,
        headers: Mapping[str, str] | None = None,
        *,
        status: int = 200,
        request_error: bool = False,
        cost: int = 0,
        throttled: bool = False,
        personal: bool = False,
    ) -> None:
        self.body = exact(body)  # orjson's answers keep the buffer they grew in: 4 KB for a 75-byte body
        self.media_type = media_type
        self.status = status
        self.request_error = request_error
        self.cost = cost
        self.throttled = throttled
        self.personal = personal
        self.etag = entity_tag(body)
        self.headers = {**(headers or {}), "etag": self.etag}
        self.encodings = Encodings()
        self.key: tuple[str, ...] | None = None
        # The finished header lists the fast lane sent for it, by (status, media type, coding).
        self.wire: dict[tuple[int, str, str | None], tuple[tuple[bytes, bytes], ...]] = {}
        self.wire_bytes = 0  # what the lists in `wire` hold (`keep_wire`), weighed once as each is kept
        self.sent = False  # whether the fast lane sent it before (it keeps header lists from the second time on)

    def keep_wire(self, memo: tuple[int, str, str | None], raw: tuple[tuple[bytes, bytes], ...]) -> int:
        """Keep a finished header list; what the answer holds more for it (the list, and the growth of the
        table that keeps it), for its cache to add (`ByteLRU.grow`)."""
        if memo in self.wire:
            self.wire[memo] = raw
            return 0
        # The table may grow, and the count of bytes is an object too (a small integer is not allocated).
        before = _allocated_table(self.wire) + footprint(self.wire_bytes)
        added = footprint(memo, raw)
        self.wire_bytes += added
        self.wire[memo] = raw
        return added + _allocated_table(self.wire) + footprint(self.wire_bytes) - before

    def weight(self) -> int:
        """The memory it holds (`footprint`): itself, its body and coded forms, headers and header lists; not its
        `key`, which its cache weighs as its own. The header lists were weighed as they were kept."""
        return footprint(self, apart=(self.key, *self.wire.keys(), *self.wire.values())) + self.wire_bytes

"""Caches bounded by bytes, not by entries (issue 8: 700 distinct 64 KB queries grew a server from
130 MB to 906 MB through caches that counted entries): the serialized responses, and the parsed
and validated documents.

A snapshot is immutable, so an answer for (commit, document, variables) can be served again byte
for byte; a document parsed from the same text is the same document.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["ByteLRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ByteLRU(Generic[K, V]):
    """A thread-safe LRU whose entries weigh what `weigh(value)` says; at most `max_bytes` in all.

    An entry heavier than `max_bytes // 8` is not kept: one huge value must not evict everything.
    """

    def __init__(self, max_bytes: int, weigh: Callable[[V], int]) -> None:
        self._max = max_bytes
        self._weigh = weigh
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

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: K, value: V) -> None:
        size = self._weigh(value)
        if size > self._max // 8:
            return
        with self._lock:
            previous = self._items.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self._max and self._items:
                _, (_, evicted) = self._items.popitem(last=False)
                self._bytes -= evicted

    def __len__(self) -> int:
        return len(self._items)

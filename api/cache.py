"""A bounded cache of serialized responses: a snapshot is immutable, so an answer for
(commit, document, variables) can be served again byte for byte."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol

__all__ = ["ResponseCache"]


class _Sized(Protocol):
    body: bytes


class ResponseCache:
    """LRU by total body bytes."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Any) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: Any, value: _Sized) -> None:
        size = len(value.body)
        if size > self._max // 8:
            return  # one huge answer must not evict everything else
        with self._lock:
            previous = self._items.pop(key, None)
            if previous is not None:
                self._bytes -= len(previous.body)
            self._items[key] = value
            self._bytes += size
            while self._bytes > self._max and self._items:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= len(evicted.body)

    def __len__(self) -> int:
        return len(self._items)

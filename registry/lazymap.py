"""A read-only mapping materialized bucket by bucket from a memory-mapped file: the warm-start cache's
form of a graph's big maps (a warm start that costs what the first requests touch, not the
registry).

Keys are hashed (CRC-32 of their UTF-8, stable across processes) into buckets; each bucket is one
`marshal` blob of `{key: row}` in the file. Reading a key decodes its bucket (tens of entries), turns
its rows into values (`convert`), and keeps them: a key is decoded at most once, and values are
shared like any dict's. Iterating, `len`-free views and `values()`/`items()` decode every bucket
first. Thread-safe: a bucket is decoded under a lock and published before it is marked loaded.

>>> body = bytearray()
>>> size, spans = write_buckets({"a": 1, "b": 2, "c": 3}, lambda blob: body.extend(blob) or len(blob))
>>> lazy = LazyMap(bytes(body), spans, size)
>>> lazy["b"], lazy.get("z"), "c" in lazy, len(lazy), sorted(lazy.items())
(2, None, True, 3, [('a', 1), ('b', 2), ('c', 3)])
"""

from __future__ import annotations

import marshal
import mmap
import threading
import zlib
from collections.abc import Callable, ItemsView, Iterator, KeysView, MutableMapping, ValuesView
from typing import Any, TypeVar

__all__ = ["LazyMap", "bucket_count", "bucket_of", "write_buckets"]

V = TypeVar("V")

_ENTRIES_PER_BUCKET = 48
_MAX_BUCKETS = 1 << 16
_MISSING: Any = object()
_EMPTY = memoryview(b"")


def bucket_count(size: int) -> int:
    """How many buckets a map of `size` keys is cut into (a few dozen keys each)."""
    return max(1, min(_MAX_BUCKETS, size // _ENTRIES_PER_BUCKET))


def bucket_of(key: str, buckets: int) -> int:
    return zlib.crc32(key.encode()) % buckets


def write_buckets(rows: dict[str, Any], write: Callable[[bytes], int]) -> tuple[int, list[tuple[int, int]]]:
    """Write `rows` (marshal-able values) as buckets through `write` (which returns the bytes written);
    (number of keys, [(offset relative to the first bucket, length)])."""
    count = bucket_count(len(rows))
    parts: list[dict[str, Any]] = [{} for _ in range(count)]
    for key, row in rows.items():
        parts[bucket_of(key, count)][key] = row
    spans, offset = [], 0
    for part in parts:
        length = write(marshal.dumps(part))
        spans.append((offset, length))
        offset += length
    return len(rows), spans


class LazyMap(MutableMapping[str, V]):
    """`{key: convert(row)}` over the buckets `spans` of `buffer`; read-only (a derived graph layers its
    changes over it, `kernelindex.registry.members.layered_over`)."""

    __slots__ = ("_buffer", "_convert", "_data", "_loaded", "_lock", "_missing", "_size", "_spans")

    def __init__(
        self,
        buffer: bytes | mmap.mmap | memoryview,
        spans: list[tuple[int, int]],
        size: int,
        convert: Callable[[dict[str, Any]], dict[str, V]] | None = None,
    ) -> None:
        self._buffer = memoryview(buffer)
        self._spans = spans
        self._size = size
        self._convert = convert
        self._data: dict[str, V] = {}
        self._loaded = bytearray(len(spans))
        self._missing = len(spans)
        self._lock = threading.Lock()

    def _load(self, index: int) -> None:
        with self._lock:
            if self._loaded[index]:
                return
            start, length = self._spans[index]
            rows = marshal.loads(self._buffer[start : start + length])
            self._data.update(rows if self._convert is None else self._convert(rows))
            self._loaded[index] = 1  # after the update: a reader that sees it loaded sees its keys
            self._missing -= 1
            if not self._missing:
                # Every bucket decoded: the file is not read again. Once every map over it lets go, the
                # mapping is closed, and its pages are no longer counted in the process's resident memory.
                self._buffer = _EMPTY

    @property
    def complete(self) -> bool:
        """Whether every bucket is decoded (the file is no longer read)."""
        return not self._missing

    def decode_all(self, pause: Callable[[], object] | None = None) -> None:
        """Decode every bucket not decoded yet, calling `pause` after each slice of 16 (a background pass
        that lets requests go first: a slice is ~1-2 ms of work)."""
        decoded = 0
        for index in range(len(self._spans)):
            if not self._loaded[index]:
                self._load(index)
                decoded += 1
                if pause is not None and decoded % 16 == 0:
                    pause()

    def _load_all(self) -> dict[str, V]:
        if self._missing:
            for index in range(len(self._spans)):
                if not self._loaded[index]:
                    self._load(index)
        return self._data

    def __getitem__(self, key: str) -> V:
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            index = bucket_of(key, len(self._spans))
            if self._loaded[index]:
                raise KeyError(key)
            self._load(index)
            return self._data[key]
        return value  # type: ignore[no-any-return]

    def get(self, key: str, default: Any = None) -> Any:
        value = self._data.get(key, _MISSING)
        if value is not _MISSING:
            return value
        if not isinstance(key, str):
            return default
        index = bucket_of(key, len(self._spans))
        if not self._loaded[index]:
            self._load(index)
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return self.get(key, _MISSING) is not _MISSING  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load_all())

    def __len__(self) -> int:
        return self._size

    def keys(self) -> KeysView[str]:
        return self._load_all().keys()

    def values(self) -> ValuesView[V]:
        return self._load_all().values()

    def items(self) -> ItemsView[str, V]:
        return self._load_all().items()

    def __setitem__(self, key: str, value: V) -> None:
        raise TypeError("a LazyMap is read-only: layer changes over it")

    def __delitem__(self, key: str) -> None:
        raise TypeError("a LazyMap is read-only: layer changes over it")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyMap):
            other = other._load_all()
        return self._load_all() == other

    __hash__ = None  # type: ignore[assignment]  # mutable-looking mapping: unhashable like a dict

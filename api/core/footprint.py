"""What a value holds in memory, as the caches weigh it: every object it keeps reachable, each as its allocation
(`sys.getsizeof`, rounded as the allocators round), and bytes made to hold exactly their length.

A cache that weighs `len(body)` holds what the body's allocation holds, which can be far more: orjson keeps the
buffer it grew an answer in (a 75-byte answer held 4 KB, a 58 KB one 260 KB, measured with tracemalloc) and
zstandard the compression bound of its input (a 72 KB answer's 7.9 KB of zstd held 73 KB). Such a cache held
4-8x its byte limit; `exact` copies bytes into an allocation of their length before they are kept.
"""

from __future__ import annotations

import sys
import threading

__all__ = ["ENTRY_BYTES", "allocation", "exact", "footprint"]

_SMALL = 512
"""The largest request CPython's small-object allocator serves (in 16-byte steps); larger ones go to malloc."""
_MALLOC_HEADER = 16
"""What malloc keeps beside each of its chunks (glibc, 64-bit)."""
_LOCK = type(threading.Lock())
_LOCK_BYTES = 96
"""A lock's own allocation besides its object (its semaphore): 97 bytes each, measured with tracemalloc."""

_LEAVES = frozenset({bytes, str, int, float})
"""Objects that hold no other: weighed as they are met (an immutable leaf two holders share counts for both)."""

ENTRY_BYTES = 224
"""What a least-recently-used entry's bookkeeping holds besides its key and value: its share of an `OrderedDict`'s
table and its link node, and the (value, weight) pair with its integer (160-200 bytes an entry by tracemalloc,
from 1,000 to 100,000 entries, as the table fills and grows), and malloc's own headers."""


def exact(data: bytes) -> bytes:
    """`data` in an allocation of its own length (a copy: bytes that keep a larger buffer give it back).

    >>> exact(b"abc")
    b'abc'
    """
    return bytes(memoryview(data))


def _allocated(size: int) -> int:
    """What an object of `size` bytes takes from its allocator."""
    if size <= _SMALL:
        return (size + 15) & ~15
    return ((size + 15) & ~15) + _MALLOC_HEADER


def allocation(value: object) -> int:
    """What `value` itself takes from its allocator, without what it holds (a container's own table).

    >>> allocation({}) < allocation({"a": 1})
    True
    """
    return _allocated(sys.getsizeof(value))


def footprint(*values: object, apart: tuple[object, ...] = ()) -> int:
    """The memory `values` hold: each object reachable through tuples, lists, sets, dicts, `__slots__` and
    `__dict__` counted once, as its allocation; the objects in `apart` (and what only they reach) are weighed
    elsewhere. A shared object (an interned name, the commit id every answer carries) is counted by each holder
    that is measured apart: the weight errs on the side of the limit.

    >>> footprint(b"") == footprint(b"") and footprint(b"x" * 1000) > 1000
    True
    >>> footprint((b"x" * 1000, b"x" * 1000)) > 2000
    True
    """
    seen = {id(value) for value in apart}
    stack = list(values)
    total = 0
    getsizeof = sys.getsizeof
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _LEAVES:
            if isinstance(value, int) and -5 <= value <= 256:
                continue  # CPython's small integers: never allocated for one holder
            total += _allocated(getsizeof(value))
            continue
        if value is None or kind is bool or id(value) in seen:
            continue
        seen.add(id(value))
        total += _allocated(getsizeof(value))
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, tuple | list | set | frozenset):
            stack.extend(value)
        elif kind is _LOCK:
            total += _LOCK_BYTES
        else:
            for name in getattr(kind, "__slots__", ()):
                found = getattr(value, name, None)
                if found is not None:
                    stack.append(found)
            if hasattr(value, "__dict__"):
                stack.append(value.__dict__)
    return total

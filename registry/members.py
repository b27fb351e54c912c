"""Index values that a new graph derives from its parent's in time proportional to the change.

An index maps a key (an operation, a GPU, a source...) to the digests under it. Some groups are
huge (every run on a B200), and a graph for a new commit must not copy them to add one run: a
`Layered` set is the parent's set, shared, plus what was added and removed since.

>>> base = {"a", "b", "c"}
>>> layered = Layered(base)
>>> layered.add("d"); layered.discard("a")
>>> sorted(layered), len(layered), "a" in layered, "d" in layered
(['b', 'c', 'd'], 3, False, True)
>>> base == {"a", "b", "c"}
True
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any

__all__ = ["LAYER_FROM", "Layered", "Members", "flattened"]

LAYER_FROM = 2048
"""Sets at least this big are layered rather than copied when a derived graph changes them."""


class Layered(Set[str]):
    """A shared base set plus local additions and removals. The base is never modified."""

    __slots__ = ("_added", "_base", "_removed", "_size")

    def __init__(self, base: Set[str], added: set[str] | None = None, removed: set[str] | None = None) -> None:
        self._base = base
        self._added = set() if added is None else added
        self._removed = set() if removed is None else removed
        self._size = len(base) - len(self._removed) + len(self._added)

    @classmethod
    def over(cls, parent: Set[str]) -> Layered:
        """A layer to change over `parent` (a plain set, or another layer: its deltas are copied,
        so that layers never stack)."""
        if isinstance(parent, Layered):
            return cls(parent._base, set(parent._added), set(parent._removed))
        return cls(parent)

    def __contains__(self, value: object) -> bool:
        return value in self._added or (value in self._base and value not in self._removed)

    def __iter__(self) -> Iterator[str]:
        yield from self._added
        removed = self._removed
        for value in self._base:
            if value not in removed:
                yield value

    def __len__(self) -> int:
        return self._size

    def add(self, value: str) -> None:
        if value in self:
            return
        if value in self._removed:
            self._removed.discard(value)
        else:
            self._added.add(value)
        self._size += 1

    def discard(self, value: str) -> None:
        if value not in self:
            return
        if value in self._added:
            self._added.discard(value)
        else:
            self._removed.add(value)
        self._size -= 1

    @property
    def delta(self) -> int:
        return len(self._added) + len(self._removed)

    def __reduce__(self) -> tuple[Any, ...]:
        return (set, (list(self),))  # saved flat: a cache holds plain sets


Members = set[str] | Layered


def flattened(members: Members) -> set[str]:
    return set(members)

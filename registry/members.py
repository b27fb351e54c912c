"""Collections that a new graph derives from its parent's in time proportional to the change.

A graph for a new commit must not copy what it shares with its parent: a million nodes by
digest, or every run on a B200 under one index key, to add a hundred manifests. A `Layered` set
is the parent's set, shared, plus what was added and removed since; a `LayeredMap` is the same
for a dict. Both are flattened into a plain set or dict once their changes outgrow a fraction of
the base, so that reads stay fast and the copying stays amortized O(1) per change.

>>> base = {"a", "b", "c"}
>>> layered = Layered(base)
>>> layered.add("d"); layered.discard("a")
>>> sorted(layered), len(layered), "a" in layered, "d" in layered
(['b', 'c', 'd'], 3, False, True)
>>> base == {"a", "b", "c"}
True
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, MutableMapping, Set, ValuesView
from itertools import filterfalse
from typing import Any, TypeVar

from kernelindex.registry.lazymap import LazyMap

__all__ = ["LAYER_FROM", "Layered", "LayeredMap", "Members", "add_member", "compact", "flattened", "layered_over"]

K = TypeVar("K")
V = TypeVar("V")

LAYER_FROM = 2048
"""Sets and maps at least this big are layered rather than copied when a derived graph changes them."""


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


Members = set[str] | Layered | tuple[str, ...]
"""An index's members under one key: a tuple in a built graph (`add_member`, `compact`), a set from the size at
which a derived graph layers its changes over them (`LAYER_FROM`). Read members as a collection (iterate, `len`,
`in`); a graph that changes them copies them first (`kernelindex.registry.graph_apply.Delta`)."""


def add_member(index: MutableMapping[str, Members], key: str, value: str) -> None:
    """Add `value` under `key` to an index of a graph being built (`take`, `derive`, a `runs_by` index on first
    read). A first member is kept as a 1-tuple, a second makes the set (in the same order as adding both to an
    empty set would): ~7,000 of the ~10,000 keys of the 1x registry have one member."""
    found = index.get(key)
    if found is None:
        index[key] = (value,)
    elif isinstance(found, tuple):
        index[key] = {*found, value}
    else:
        found.add(value)


def compact(index: MutableMapping[str, Members]) -> None:
    """Hold the members of a built index as tuples where they are fewer than `LAYER_FROM`: 8 bytes a member where
    a set takes 16-32, and 56 bytes or more of its own (at 1x a graph's indexes took 5.8 MB as sets, 1.3 MB so).
    A bigger set stays one: a derived graph layers its changes over it, asking it for members."""
    for key, members in index.items():
        if type(members) is set and len(members) < LAYER_FROM:
            index[key] = tuple(members)


def flattened(members: Members) -> set[str]:
    return set(members)


_MISSING: Any = object()
_GONE: Any = object()  # a key removed in this layer


class LayeredMap(MutableMapping[K, V]):
    """A shared base dict plus local changes (new values, and removals). The base is never modified.

    >>> base = {"a": 1, "b": 2}
    >>> layer = LayeredMap(base)
    >>> layer["c"] = 3; del layer["a"]; layer["b"] = 20
    >>> sorted(layer.items()), len(layer), "a" in layer, layer.get("a")
    ([('b', 20), ('c', 3)], 2, False, None)
    >>> base
    {'a': 1, 'b': 2}
    """

    __slots__ = ("_base", "_changes", "_size")

    def __init__(self, base: Mapping[K, V], changes: dict[K, Any] | None = None, size: int | None = None) -> None:
        self._base = base
        self._changes: dict[K, Any] = {} if changes is None else changes
        self._size = len(base) if size is None else size

    def __getitem__(self, key: K) -> V:
        value = self._changes.get(key, _MISSING)
        if value is _MISSING:
            return self._base[key]
        if value is _GONE:
            raise KeyError(key)
        return value  # type: ignore[no-any-return]

    def get(self, key: K, default: Any = None) -> Any:
        value = self._changes.get(key, _MISSING)
        if value is _MISSING:
            return self._base.get(key, default)
        return default if value is _GONE else value

    def __contains__(self, key: object) -> bool:
        value = self._changes.get(key, _MISSING)  # type: ignore[arg-type]
        return key in self._base if value is _MISSING else value is not _GONE

    def __iter__(self) -> Iterator[K]:
        changes = self._changes
        for key in self._base:
            if key not in changes:
                yield key
        for key, value in changes.items():
            if value is not _GONE:
                yield key

    def __len__(self) -> int:
        return self._size

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self:
            self._size += 1
        self._changes[key] = value

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        if key in self._base:
            self._changes[key] = _GONE
        else:
            del self._changes[key]
        self._size -= 1

    def absent(self, keys: Iterable[K]) -> list[K]:
        """Which of `keys` this mapping does not hold, asked of the base dict and the changes in
        bulk (C loops) rather than key by key through `__contains__` (a refresh asks ~20k digests).

        >>> layer = LayeredMap({"a": 1, "b": 2})
        >>> layer["c"] = 3; del layer["a"]
        >>> sorted(layer.absent(["a", "b", "c", "d"]))
        ['a', 'd']
        """
        keys = list(keys)
        changes = self._changes
        found = list(filterfalse(self._base.__contains__, keys))
        if changes:
            # Not in the base: absent unless added here. In the base: absent if removed here.
            found = list(filterfalse(changes.__contains__, found))
            found.extend(key for key in filter(changes.__contains__, keys) if changes[key] is _GONE)
        return found

    def values(self) -> ValuesView[V]:
        return _LayeredValues(self)

    def items(self) -> ItemsView[K, V]:
        return _LayeredItems(self)

    def _pairs(self) -> Iterator[tuple[K, V]]:
        changes = self._changes
        for key, value in self._base.items():
            if key not in changes:
                yield key, value
        for key, value in changes.items():
            if value is not _GONE:
                yield key, value

    @property
    def delta(self) -> int:
        return len(self._changes)


class _LayeredValues(ValuesView[V]):
    _mapping: LayeredMap[Any, V]

    def __iter__(self) -> Iterator[V]:
        for _, value in self._mapping._pairs():
            yield value


class _LayeredItems(ItemsView[K, V]):
    _mapping: LayeredMap[K, V]

    def __iter__(self) -> Iterator[tuple[K, V]]:
        return self._mapping._pairs()


def layered_over(parent: Mapping[K, V]) -> MutableMapping[K, V]:
    """A mapping equal to `parent` for a derived graph to change, sharing what it can: small
    mappings are copied; a layer's base is shared and its changes copied (layers never stack),
    until they reach an eighth of the base, when it is flattened into a plain dict."""
    if isinstance(parent, LayeredMap):
        if parent.delta * 8 > len(parent._base):
            return dict(parent._pairs())
        return LayeredMap(parent._base, dict(parent._changes), parent._size)
    if len(parent) < LAYER_FROM or not isinstance(parent, dict | LazyMap):
        return dict(parent)
    return LayeredMap(parent)  # over a warm cache's lazy map too: it is never changed either

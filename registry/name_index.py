"""A cold-built graph's name index (metadata.name -> digests), made from its nodes on first read.

`ColdBuild.take` recorded every node's name as it arrived: a hash of a fresh ~60-100 character string and an
insertion into a 215k-entry dict at 10x (85 ms, ~3% of the build's process), for an index a server reads
by a few names per request, long after its start. Made from the nodes instead, in their order, it holds
what `take` would have made: the digests of each name in the order their nodes came, a single digest as
itself (`Graph.names`). `take` keeps the old way from the first node it meets again (a digest taken
twice), where the nodes alone no longer say the order.

Thread-safe as `RunIndexes`: two request threads reading it first build it once.
"""

from __future__ import annotations

import threading
from collections.abc import ItemsView, Iterator, KeysView, Mapping, MutableMapping, ValuesView

from kernelindex.registry.nodes import Node

__all__ = ["NameIndex", "names_of"]

Names = dict[str, str | tuple[str, ...]]


def names_of(nodes: Mapping[str, Node]) -> Names:
    """metadata.name -> the digest of its one node, or a tuple of them in `nodes`' order."""
    names: Names = {}
    for digest, node in nodes.items():
        name = node.name
        size = len(names)
        found = names.setdefault(name, digest)  # one lookup for a new name (most of them)
        if len(names) == size:
            names[name] = (found, digest) if type(found) is str else (*found, digest)
    return names


class NameIndex(MutableMapping[str, str | tuple[str, ...]]):
    """`names_of(nodes)`, made on first use (a read, or a change) and kept. `nodes` must not change
    before then: a cold build's, complete once `take` returns."""

    __slots__ = ("_built", "_lock", "_nodes")

    def __init__(self, nodes: Mapping[str, Node]) -> None:
        self._nodes = nodes
        self._built: Names | None = None
        self._lock = threading.Lock()

    @property
    def made(self) -> bool:
        """Whether the index is made (read or changed since it was given its nodes)."""
        return self._built is not None

    def built(self) -> Names:
        """The index as a plain dict, made now if it was not."""
        found = self._built
        if found is None:
            with self._lock:
                found = self._built
                if found is None:
                    found = self._built = names_of(self._nodes)
        return found

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        return self.built().get(key, default)

    def __getitem__(self, key: str) -> str | tuple[str, ...]:
        return self.built()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.built()

    def __iter__(self) -> Iterator[str]:
        return iter(self.built())

    def __len__(self) -> int:
        return len(self.built())

    def __setitem__(self, key: str, value: str | tuple[str, ...]) -> None:
        self.built()[key] = value

    def __delitem__(self, key: str) -> None:
        del self.built()[key]

    def keys(self) -> KeysView[str]:
        return self.built().keys()

    def values(self) -> ValuesView[str | tuple[str, ...]]:
        return self.built().values()

    def items(self) -> ItemsView[str, str | tuple[str, ...]]:
        return self.built().items()

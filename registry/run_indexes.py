"""A graph's `runs_by` indexes, each built from its runs and facts the first time it is read.

A cold build used to fill all six while the stream arrived: ~6 set insertions a run, about 7% of a
10x build's samples (py-spy), for indexes most starts read a few keys of, long after the build (at 1x
~7,000 of the sets have a single member). Built on first use instead, from the graph's nodes and
facts as they are then, they hold the same members.

`RunIndexes` is the dict `Graph.runs_by` has always been, with every name always present to a
reader: `runs_by["gpu"]`, iteration, `items()` and `values()` build what is missing. A graph that
maintains its indexes as it changes asks `built(name)` and leaves an index not built yet alone (it
will be built from the final state).
"""

from __future__ import annotations

import threading
from collections.abc import ItemsView, Iterator, KeysView, Mapping, MutableMapping, ValuesView
from typing import Any

from kernelindex.registry.members import Members, add_member, compact
from kernelindex.registry.nodes import Node, Run
from kernelindex.registry.run_facts import RunFacts

__all__ = ["FACT_INDEXES", "NODE_INDEXES", "RunIndexes"]

NODE_INDEXES = ("environment", "implementation", "workload")  # runs by a field of the node itself
FACT_INDEXES = ("operation", "source", "gpu")  # runs by a derived fact
_NAMES = NODE_INDEXES + FACT_INDEXES

Index = MutableMapping[str, Members]


class RunIndexes(dict[str, Index]):
    """name -> {key: digests of the runs with it}, built on first read from `nodes` and `facts` (the
    graph's own mappings: this holds no reference to the graph). `built` names those given."""

    def __init__(
        self,
        nodes: Mapping[str, Node],
        facts: Mapping[str, RunFacts],
        built: Mapping[str, Index] | None = None,
    ) -> None:
        super().__init__(built or {})
        self._nodes = nodes
        self._facts = facts
        self._lock = threading.Lock()  # two request threads reading one index first build it once

    def built(self, name: str) -> Index | None:
        """The index if it is built, else None (without building it)."""
        return dict.get(self, name)

    def built_items(self) -> list[tuple[str, Index]]:
        return list(dict.items(self))

    def __missing__(self, name: str) -> Index:
        if name not in _NAMES:
            raise KeyError(name)
        with self._lock:
            index = dict.get(self, name)
            if index is None:
                index = self._build(name)
                dict.__setitem__(self, name, index)
        return index

    def _build(self, name: str) -> Index:
        index: Index = {}
        if name in NODE_INDEXES:
            field = Run._fields.index(name)
            for digest, node in self._nodes.items():
                if type(node) is Run:
                    key: str = node[field]  # type: ignore[assignment]  # environment, implementation, workload: digests
                    add_member(index, key, digest)
        else:
            for digest, facts in self._facts.items():
                keys = facts.gpu if name == "gpu" else (getattr(facts, name),)
                for key in keys:
                    if key is not None:
                        add_member(index, key, digest)
        compact(index)  # read for as long as the graph serves: 4.2 MB of sets at 1x, 1.6 MB so
        return index

    def _all(self) -> None:
        for name in _NAMES:
            self[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in _NAMES else default

    def __contains__(self, name: object) -> bool:
        return name in _NAMES

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMES)

    def __len__(self) -> int:
        return len(_NAMES)

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        self._all()
        return super().keys()

    def values(self) -> ValuesView[Index]:  # type: ignore[override]
        self._all()
        return super().values()

    def items(self) -> ItemsView[str, Index]:  # type: ignore[override]
        self._all()
        return super().items()

    def __eq__(self, other: object) -> bool:
        self._all()
        return super().__eq__(other)

    __hash__ = None

"""What every resolver of one request sees: the snapshots, where the API lives, today's date,
and which commits the request looked at (for `extensions.registry` and caching)."""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import orjson

from kernelindex import registry
from kernelindex.core.budgets import Account
from kernelindex.core.cache import ByteLRU
from kernelindex.core.footprint import footprint
from kernelindex.core.previews import Previews
from kernelindex.core.urls import Urls
from kernelindex.registry.graph import Graph
from kernelindex.registry.snapshots import Snapshots

__all__ = ["Context", "StoredObjects"]

T = TypeVar("T")
_MISSING: Any = object()


PARSED_BYTES = 64 * 1024 * 1024
"""What the parsed manifests a server keeps may hold (~20,000 run manifests' documents; one of 1 MiB is kept too)."""
_WEIGHED_FROM = 16 * 1024
"""A document parsed from fewer bytes is weighed as `_PER_BYTE` times them (no walk on a first-time answer's path);
a larger one is weighed by walking it (`footprint`)."""
_PER_BYTE = 24
"""At most what a parsed JSON document holds for each byte of its text: 3 bytes (`{},`) make an empty dict of 64
and its list slot; strings, numbers and lists hold less (tests/test_cache_memory.py measures it)."""
_ENTRY = 64 + 224
"""The `_Parsed` itself and the LRU's bookkeeping of it (`kernelindex.core.footprint.ENTRY_BYTES`)."""


class _Parsed:
    """A parsed manifest as the cache keeps it, with the memory it holds (`held`)."""

    __slots__ = ("document", "held")

    def __init__(self, document: dict[str, Any], length: int) -> None:
        self.document = document
        self.held = footprint(document) if length >= _WEIGHED_FROM else length * _PER_BYTE

    def weight(self) -> int:
        return self.held + _ENTRY


class StoredObjects:
    """Stored git objects a request reads: manifests by blob id (raw bytes, parsed JSON kept in a small
    LRU) and commits' metadata.

    Object ids name immutable bytes, so one cache serves every snapshot.
    """

    def __init__(self, snapshots: Snapshots, parsed_bytes: int = PARSED_BYTES, facts: int = 65536) -> None:
        self._snapshots = snapshots
        # Bounded by the memory the parsed documents hold: a manifest may be 1 MiB, and its parsed form more.
        self._parsed: ByteLRU[str, _Parsed] = ByteLRU(parsed_bytes, _Parsed.weight)
        self._facts: dict[tuple[str, Callable[[dict[str, Any]], Any]], Any] = {}
        self._facts_capacity = facts
        self._commits: OrderedDict[str, registry.CommitInfo] = OrderedDict()
        self._lock = threading.Lock()

    def raw(self, oid: str) -> bytes:
        return self._snapshots.store().read_blob(oid)

    def get(self, oid: str) -> dict[str, Any]:
        found = self._parsed.get(oid)
        if found is not None:
            return found.document
        raw = self.raw(oid)
        document: dict[str, Any] = orjson.loads(raw)
        self._parsed.put(oid, _Parsed(document, len(raw)))
        return document

    def fact(self, oid: str, derive: Callable[[dict[str, Any]], T]) -> T:
        """What `derive` makes of a manifest's document (a workload's label, an implementation's revision),
        made once per blob: the document of a workload or an implementation many runs share need not stay
        among the parsed ones (runs' documents push it out), nor its fact be made again (a dossier asks for
        its workload's label twice). Kept while there are fewer than `facts` (the oldest half dropped then).

        Raises:
            whatever `derive` or reading the document raises (nothing is kept then).
        """
        key = (oid, derive)
        found = self._facts.get(key, _MISSING)
        if found is _MISSING:
            found = derive(self.get(oid))
            with self._lock:
                if len(self._facts) >= self._facts_capacity:
                    for old in list(self._facts)[: self._facts_capacity // 2]:
                        del self._facts[old]
                self._facts[key] = found
        return cast(T, found)

    def commit(self, commit: str) -> registry.CommitInfo:
        with self._lock:
            found = self._commits.get(commit)
        if found is None:
            found = self._snapshots.store().commit_info(commit)
            with self._lock:
                self._commits[commit] = found
                if len(self._commits) > 256:
                    self._commits.popitem(last=False)
        return found


@dataclass(slots=True)
class Context:
    """One request's view. `seen` collects every snapshot the query touched.

    `base_url` is configuration, never the request's Host (a cached answer would carry one client's Host
    to every later client): "" makes links root-relative.
    `today` is the reader's date when there is one (the CLI's); a server has none, so no answer it
    caches embeds the day it was computed. `previews`, when given, decides which pinned commits are
    published and refuses previews that fail the pull-request check.
    """

    snapshots: Snapshots
    objects: StoredObjects
    base_url: str
    today: dt.date | None
    head: Graph
    previews: Previews | None = None
    seen: dict[str, Graph] = field(default_factory=dict)
    pinned_by_name: bool = False  # a branch, tag or prefix was used: the answer may change later
    used_head: bool = False  # something was answered for "the head of main", which moves
    unpublished: bool = False  # a pinned commit is not in main's history: main may still change the answer
    cost_budget: int | None = None  # what is left of a batch's cost limit, when this operation is in one
    # The client's budget (kernelindex.core.budgets), charged the operation's cost before it runs; None: not metered
    # (the CLI, MCP over stdio, budgets off).
    account: Account | None = None
    throttled: bool = False  # the account could not pay: nothing ran
    personal: bool = False  # the answer tells this client about itself (`rateLimit`): never cached, never shared
    # Response paths of root fields that answer a pinned commit (`registry(at:)`, `node(id:)` with a pinned
    # id): objects under them get pinned ids (`kernelindex.schema.types.identity`).
    pinned_paths: set[tuple[str | int, ...]] = field(default_factory=set)
    # The graph the head fields answer from: the served head, or the commit their cursors were cut from
    # (`kernelindex.schema.types.pages.head_graph`); None until a head field asks.
    head_scope: Graph | None = None

    def graph(self, at: str | None) -> Graph:
        """The snapshot for `registry(at:)`: the head, or a pinned commit, branch or tag.

        Raises:
            kernelindex.registry.RevisionNotFound: unknown or unreachable.
            PreviewRejected: a commit not on main that fails the pull-request check.
        """
        if at is None:
            graph = self.head
            self.used_head = True
        elif at == self.head.commit:
            graph = self.head
        else:
            commit = self.snapshots.store().resolve(at)
            if self.previews is not None and not self.previews.published(commit, self.head.commit):
                self.unpublished = True
                if not self.snapshots.reachable(commit):
                    raise registry.RevisionNotFound(at, "not reachable from any branch or tag of the registry")
                self.previews.check(commit, self.head.commit)
            graph = self.snapshots.at(commit)
            if at != graph.commit:
                self.pinned_by_name = True
        self.seen[graph.commit] = graph
        return graph

    @property
    def urls(self) -> Urls:
        """Where the answer's links point (permalinks): under the configured base URL."""
        return Urls(self.base_url)

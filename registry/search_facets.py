"""The facets a search filters by, as the set of runs each value selects: built once per snapshot and
facet kind, in one pass over the manifests the runs name, so a facet costs a lookup and an intersection.

Each value keeps its runs in the smaller of two forms (`_Members`): a bitset over the snapshot's runs (an
int: ~1.2 KB at 1x, whether it holds ten runs or all 9,508), or a tuple of their digests (8 bytes a run).
A frozenset of digests takes ~40 bytes a run: the 1x facets held 122k memberships in 6.4 MB that way, and
every server holds them for its life (`kernelindex.registry.search.prepare`). Filters intersect bitsets as ints, the
few runs of a tuple by looking their bits up, and only the answer becomes a set of digests.

Facts the graph keeps (trust, family, language, source) come from its nodes; the others (dtypes,
shapes, axes, layouts, frameworks, CUDA, licences, installability) from the stored manifests, each
read once and its facts kept by blob id across snapshots (`FACTS_CAPACITY`). What selects a run is
upstream's rule for each facet, and exactly what the search did before it had an index:

- `dtype:` every dtype asked for is among the run's workload's `dtype`s and implementation's `dtypes`;
- `shape:` a `shape` of the workload; `name=value` the workload's `spec.axes`;
- `layout:` among the workload's `layout`s and the implementation's `layouts`;
- `framework:` the environment's framework or the implementation's callable interface (aliased);
- `cuda:` the major version of the environment's CUDA toolkit;
- `license:` the implementation's declared or concluded licence; `installable:` a build variant installs.
"""

from __future__ import annotations

import operator
import re
import threading
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any, TypeVar

from kernelindex.registry import nodes as n
from kernelindex.registry.cohorts import Trust
from kernelindex.registry.graph import Graph
from kernelindex.registry.search_query import DTYPE_ALIASES, FRAMEWORK_ALIASES

__all__ = ["FACETS", "FACTS_CAPACITY", "Facets"]

Document = Callable[[str], Mapping[str, Any]]
Runs = frozenset[str]

FACTS_CAPACITY = 1 << 17
"""Manifests whose search facts are kept across snapshots (by blob id): more than a registry of 100k
manifests names from its runs. Each entry is a few small sets."""

_Members = int | tuple[str, ...]
"""A facet value's runs: a bitset over `Facets`' numbering of the runs, or their digests (`_compact`)."""
_NONE: _Members = ()
_BITS = tuple(tuple(bit for bit in range(8) if byte >> bit & 1) for byte in range(256))
"""The bits set in each byte value, lowest first."""

FACETS = (
    "trust", "family", "language", "source", "dtype", "shape", "axis", "layout", "framework", "cuda", "license",
    "installable",
)  # fmt: skip
"""Every facet kind `Facets.runs` answers."""


class Facets:
    """The runs each facet value selects in one snapshot, computed per facet kind when first asked."""

    def __init__(self, graph: Graph) -> None:
        self._graph = weakref.ref(graph)  # the index that owns this is kept by its graph, weakly
        self._maps: dict[str, dict[Hashable, _Members]] = {}
        self._lock = threading.Lock()
        self._runs: list[str] = []  # the snapshot's runs, numbered for the bitsets (on first build)
        self._number: dict[str, int] = {}

    @property
    def graph(self) -> Graph:
        graph = self._graph()
        assert graph is not None, "facets are only used through their live graph"
        return graph

    def runs(self, kind: str, value: Hashable, document: Document) -> Runs:
        """The runs whose `kind` facet (`trust`, `family`, `language`, `source`, `dtype`, `shape`, `axis`,
        `layout`, `framework`, `cuda`, `license`, `installable`) has `value`."""
        return self.selected([(kind, value)], document)

    def selected(self, wanted: Sequence[tuple[str, Hashable]], document: Document) -> Runs:
        """The runs every `(kind, value)` of `wanted` (at least one) selects: the intersection of the `runs`."""
        members = [self._members(kind, value, document) for kind, value in wanted]
        digests = [found for found in members if isinstance(found, tuple)]
        bitsets = [found for found in members if isinstance(found, int)]
        mask = reduce(operator.and_, bitsets) if bitsets else None
        if not digests:
            assert mask is not None, "at least one facet is wanted"
            return frozenset(self._decode(mask))
        digests.sort(key=len)
        kept = set(digests[0]).intersection(*digests[1:])
        if mask is None or not kept:
            return frozenset(kept)
        data, number = _bytes(mask), self._number
        return frozenset(d for d in kept if _has(data, number.get(d, -1)))

    def _members(self, kind: str, value: Hashable, document: Document) -> _Members:
        found = self._maps.get(kind)
        if found is None:
            with self._lock:  # one pass per kind, however many searches ask at once
                found = self._maps.get(kind)
                if found is None:
                    if not self._number:
                        self._runs = list(self.graph.facts)
                        self._number = {digest: place for place, digest in enumerate(self._runs)}
                    found = self._maps[kind] = {
                        value: self._compact(runs) for value, runs in self._build(kind, document).items()
                    }
        return found.get(value, _NONE)

    def _compact(self, runs: set[str]) -> _Members:
        """`runs` as a bitset or as a tuple of digests, whichever takes fewer bytes."""
        number = self._number
        places = [number.get(digest, -1) for digest in runs]
        highest = max(places, default=0)
        if 8 * len(places) <= highest // 8 or -1 in places:  # (a run without facts has no bit: never so far)
            return tuple(runs)
        bits = bytearray(highest // 8 + 1)
        for place in places:
            bits[place >> 3] |= 1 << (place & 7)
        return int.from_bytes(bits, "little")

    def _decode(self, mask: int) -> list[str]:
        """The digests of the runs a bitset holds."""
        runs = self._runs
        found: list[str] = []
        for offset, byte in enumerate(_bytes(mask)):
            if byte:
                base = offset << 3
                found.extend([runs[base + bit] for bit in _BITS[byte]])
        return found

    def _build(self, kind: str, document: Document) -> dict[Hashable, set[str]]:
        graph = self.graph
        by = graph.runs_by
        if kind == "trust":  # a level selects the runs at it or above
            levels: dict[Hashable, set[str]] = {level: set() for level in Trust}
            for digest, facts in graph.facts.items():
                for level in Trust:
                    if not facts.trust < level:
                        levels[level].add(digest)
            return levels
        if kind == "family":
            return _select(by["operation"], lambda d: _of(graph, d, n.Operation, lambda op: [op.family.lower()]))
        if kind == "language":
            return _select(
                by["implementation"], lambda d: _of(graph, d, n.Implementation, lambda i: [i.language.lower()])
            )
        if kind == "source":
            return _select(
                by["implementation"],
                lambda d: _of(graph, d, n.Implementation, lambda i: [True] if i.source_available else []),
            )
        read = _Reader(graph, document)
        workloads, implementations, environments = by["workload"], by["implementation"], by["environment"]
        if kind == "dtype":
            return _union(
                _select(workloads, lambda d: read(d).dtypes),
                _select(implementations, lambda d: read(d).implementation_dtypes),
            )
        if kind == "layout":
            return _union(
                _select(workloads, lambda d: read(d).layouts),
                _select(implementations, lambda d: read(d).implementation_layouts),
            )
        if kind == "shape":
            return _select(workloads, lambda d: read(d).shapes)
        if kind == "axis":
            return _select(workloads, lambda d: read(d).axes)
        if kind == "framework":
            return _union(
                _select(environments, lambda d: [FRAMEWORK_ALIASES.get(read(d).framework, read(d).framework)]),
                _select(implementations, lambda d: [FRAMEWORK_ALIASES.get(read(d).interface, read(d).interface)]),
            )
        if kind == "cuda":
            return _select(environments, lambda d: [read(d).cuda_major])
        if kind == "license":
            return _select(implementations, lambda d: read(d).licenses)
        if kind == "installable":
            return _select(implementations, lambda d: [True] if read(d).installable else [])
        raise ValueError(f"no facet {kind!r}")


def _of(graph: Graph, digest: str, kind: type[Any], values: Callable[[Any], list[Hashable]]) -> list[Hashable]:
    node = graph.nodes.get(digest)
    return values(node) if isinstance(node, kind) else []


def _select(
    runs_by: Mapping[str, Iterable[str]], values: Callable[[str], Iterable[Hashable]]
) -> dict[Hashable, set[str]]:
    """value -> the runs of every manifest (a key of `runs_by`) that has it."""
    found: dict[Hashable, set[str]] = {}
    for digest, runs in runs_by.items():
        for value in values(digest):
            found.setdefault(value, set()).update(runs)
    return found


def _union(*maps: dict[Hashable, set[str]]) -> dict[Hashable, set[str]]:
    found: dict[Hashable, set[str]] = {}
    for mapping in maps:
        for value, runs in mapping.items():
            found.setdefault(value, set()).update(runs)
    return found


def _bytes(mask: int) -> bytes:
    return mask.to_bytes((mask.bit_length() + 7) // 8, "little")


def _has(data: bytes, place: int) -> bool:
    """Whether the bitset `data` (`_bytes`) holds bit `place` (-1: an unnumbered run, never)."""
    at = place >> 3
    return 0 <= at < len(data) and bool(data[at] >> (place & 7) & 1)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False  # a list or an object: never equal to the integer an axis binding asks for
    return True


# Facts read from one manifest (kept by blob id across snapshots) ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the facets need from one manifest (a workload, an implementation or an environment; a field
    that does not apply to its kind is empty)."""

    dtypes: frozenset[str]  # every `dtype` anywhere in it, aliased
    shapes: frozenset[tuple[int, ...]]  # every all-integer `shape` anywhere in it
    axes: tuple[tuple[str, Hashable], ...]  # spec.axes' bindings whose value can equal a `name=value` asked
    layouts: frozenset[str]  # every `layout` anywhere in it, lower case
    implementation_dtypes: frozenset[str]  # every item of every `dtypes` list, aliased
    implementation_layouts: frozenset[str]  # every item of every `layouts` list, lower case
    interface: str  # spec.callable.interface, as written
    licenses: frozenset[str]  # spec.licensing declared and concluded, lower case ("" when absent)
    installable: bool  # a build variant with an install
    framework: str  # spec.software.framework.name, lower case
    cuda_major: int | None  # the major version of spec.software.cudaToolkit


_FACTS: dict[str, _Facts] = {}  # blob id -> facts, oldest first
_FACTS_LOCK = threading.Lock()


class _Reader:
    """The facts of the manifests of one snapshot, by digest; a missing manifest reads as `{}`."""

    def __init__(self, graph: Graph, document: Document) -> None:
        self._nodes = graph.nodes
        self._document = document

    def __call__(self, digest: str) -> _Facts:
        node = self._nodes.get(digest)
        if node is None:
            return _read({})
        found = _FACTS.get(node.oid)
        if found is None:
            found = _read(self._document(digest))
            with _FACTS_LOCK:
                _FACTS[node.oid] = found
                if len(_FACTS) > FACTS_CAPACITY:
                    for oid in list(_FACTS)[: FACTS_CAPACITY // 4]:  # the oldest quarter
                        del _FACTS[oid]
        return found


_T = TypeVar("_T", bound=Hashable)
_SHARED: dict[Any, Any] = {}
_SHARED_CAPACITY = 1 << 16


def _shared(value: _T) -> _T:
    """One object for equal values: most manifests' sets are empty or one of a few hundred, and each set of its
    own is 216 bytes or more (six a manifest: ~9 MB at the real corpus's size, kept for the server's life).
    Whole facts too: many implementations' are equal, and an object of its own for each, made among the
    objects of a manifest read and dropped, kept a part-used pymalloc arena alive (at 1x the facets' pass over
    6,251 manifests left 5 MB resident beyond what it keeps)."""
    if len(_SHARED) > _SHARED_CAPACITY:  # distinct shapes are as many as workloads: bounded, never grown past
        _SHARED.clear()
    found: _T = _SHARED.setdefault(value, value)
    return found


def _read(document: Mapping[str, Any]) -> _Facts:
    spec = document.get("spec") or {}
    licensing = spec.get("licensing") or {}
    software = spec.get("software") or {}
    major = re.match(r"\d+", str(software.get("cudaToolkit") or ""))
    axes = document.get("spec", {}).get("axes") or {}
    bindings = tuple((k, v) for k, v in axes.items() if _hashable(v)) if isinstance(axes, dict) else ()
    facts = _Facts(
        dtypes=_shared(frozenset(DTYPE_ALIASES.get(str(v).lower(), str(v).lower()) for v in _walk(document, "dtype"))),
        shapes=_shared(frozenset(tuple(s) for s in _walk(document, "shape") if _ints(s))),
        axes=_shared(bindings),
        layouts=_shared(frozenset(str(v).lower() for v in _walk(document, "layout"))),
        implementation_dtypes=_shared(
            frozenset(
                DTYPE_ALIASES.get(str(v).lower(), str(v).lower())
                for listed in _walk(document, "dtypes")
                for v in listed or ()
            )
        ),
        implementation_layouts=_shared(
            frozenset(str(v).lower() for listed in _walk(document, "layouts") for v in listed or ())
        ),
        interface=str((spec.get("callable") or {}).get("interface") or ""),
        licenses=_shared(frozenset(str(licensing.get(k) or "").lower() for k in ("declared", "concluded"))),
        installable=any(v.get("install") for v in spec.get("buildVariants") or ()),
        framework=str((software.get("framework") or {}).get("name") or "").lower(),
        cuda_major=int(major.group()) if major else None,
    )
    return _shared(facts)


def _walk(value: Any, key: str) -> Iterable[Any]:
    """Every value under `key` anywhere in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            yield from _walk(v, key)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key)


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)

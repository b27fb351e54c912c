"""Naming things the way people type them: operations by name, alias or family, GPUs by product or
architecture, and the nearest known names when nothing matches.

Operations follow KernelIndex's tiers (`server/catalog/search-reads.ts`, `resolveOperation`): a digest
(or a unique prefix) first, then the operation's name (`metadata.name`, upstream's slug), then an
alias, then its family. Comparison is case-insensitive and also tried with `-`, `_` and spaces taken
out, so `rmsnorm` finds the operation titled "RMSNorm" and `fused add rmsnorm` the one named
`fused-add-rmsnorm-...` only if that is its whole name. The first tier that matches answers.

Aliases: upstream keeps an `operation_aliases` table; an OperationSpec keeps none. 434 of the 450
aliases in upstream's export are the operation's title (its display name), so the alias tier is the
title here; the other 16 are GPU MODE leaderboard names, which the runs keep as
`sourceNative.benchmark` (`amd-fp8-mm`, or `amd-fp8-mm/13` for one of its cases): a last tier, tried
only when nothing else matched, reads them. All 450 of upstream's aliases find upstream's operation.

>>> collapse("Fused-Add RMSNorm_h4096")
'fusedaddrmsnormh4096'
>>> nearest("rmsnrom", ["RMSNorm", "rmsnorm", "layernorm", "softmax"])
('RMSNorm',)
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Environment, Operation, Run
from kernelindex.registry.search_query import gpu_keys_matching

__all__ = [
    "ALIAS",
    "BENCHMARK",
    "DIGEST",
    "FAMILY",
    "NAME",
    "OperationMatch",
    "collapse",
    "gpu_names",
    "match_gpu",
    "match_operations",
    "nearest",
    "operation_names",
]

DIGEST, NAME, ALIAS, FAMILY, BENCHMARK = "digest", "name", "alias", "family", "benchmark"
_SEPARATORS = re.compile(r"[-_\s]+")


@dataclass(frozen=True, slots=True)
class OperationMatch:
    """An operation a request names, and how: `digest`, `name`, `alias` (its title) or `family`."""

    digest: str
    how: str


def collapse(text: str) -> str:
    """Lower case, without `-`, `_` or spaces: how two spellings of a name are compared."""
    return _SEPARATORS.sub("", text.lower())


def nearest(text: str, candidates: Iterable[str], count: int = 5) -> tuple[str, ...]:
    """The candidates closest to `text` (case-insensitive, best first), for "did you mean"; none
    when nothing is close."""
    by_lower: dict[str, str] = {}
    for candidate in sorted(candidates):  # one spelling per name, the same every time
        by_lower.setdefault(candidate.lower(), candidate)
    import difflib  # here: only a name not found is matched against the others

    found = difflib.get_close_matches(text.lower(), sorted(by_lower), n=count, cutoff=0.5)
    return tuple(by_lower[f] for f in found)


class _Operations:
    """A graph's operations by each spelling of their name, alias and family (built once a graph)."""

    def __init__(self, graph: Graph, everything: bool) -> None:
        """The operations something refers to (read from the graph's indexes: as many as there are
        operations), or `everything`: one pass over all nodes (about 15 ms at 20k manifests), for
        an operation nothing refers to yet."""
        self.by: dict[str, dict[str, set[str]]] = {NAME: {}, ALIAS: {}, FAMILY: {}}
        self.spellings: set[str] = set()
        if everything:
            digests: Iterable[str] = (d for d, node in graph.nodes.items() if type(node) is Operation)
        else:
            digests = {*graph.cohorts_by["operation"], *graph.children["workloads"], *graph.children["implementations"]}
        for digest in digests:
            node = graph.nodes.get(digest)
            if not isinstance(node, Operation):
                continue
            for how, text in ((NAME, node.name), (ALIAS, node.title), (FAMILY, node.family)):
                if text:
                    self.spellings.add(text)
                    for key in {text.lower(), collapse(text)}:
                        self.by[how].setdefault(key, set()).add(digest)


_INDEXES: dict[bool, weakref.WeakKeyDictionary[Graph, _Operations]] = {
    False: weakref.WeakKeyDictionary(),
    True: weakref.WeakKeyDictionary(),
}


def _operations(graph: Graph, everything: bool = False) -> _Operations:
    """A graph's operation index, built on first use and kept as long as the graph lives."""
    cache = _INDEXES[everything]
    found = cache.get(graph)
    if found is None:
        found = cache[graph] = _Operations(graph, everything)
    return found


def match_operations(
    graph: Graph, text: str, document: Callable[[str], Mapping[str, Any]] | None = None
) -> tuple[OperationMatch, ...]:
    """The operations `text` names, from the first tier that matches (by digest), empty when none.
    With `document(oid)` (a stored manifest's reader), a last tier: the name a source gave what it
    measured (`sourceNative.benchmark` of the runs, see `_Benchmarks`).

    Raises:
        AmbiguousName: a digest prefix matches several operations.
    """
    wanted = text.strip()
    if not wanted:
        return ()
    node = graph.find(("OperationSpec",), wanted) if re.fullmatch(r"(sha256:)?[0-9a-f]{12,64}", wanted) else None
    if isinstance(node, Operation):
        return (OperationMatch(node.digest, DIGEST),)
    exact = {d for d in graph.named(wanted) if isinstance(graph.nodes[d], Operation)}
    if exact:
        return tuple(OperationMatch(d, NAME) for d in sorted(exact))
    for everything in (False, True):  # the operations in use first; all of them only on a miss
        index = _operations(graph, everything)
        for how in (NAME, ALIAS, FAMILY):
            found = index.by[how].get(wanted.lower()) or index.by[how].get(collapse(wanted))
            if found:
                return tuple(OperationMatch(d, how) for d in sorted(found))
    if document is not None:
        found = _benchmarks(graph, document).get(wanted.lower()) or _benchmarks(graph, document).get(collapse(wanted))
        if found:
            return tuple(OperationMatch(d, BENCHMARK) for d in sorted(found))
    return ()


class _Benchmarks(dict[str, set[str]]):
    """Operations by the names sources gave their benchmarks (`sourceNative.benchmark`: a GPU MODE
    leaderboard such as `amd-moe-mxfp4`, which upstream keeps among its operation aliases).

    Read from one run per operation, protocol and environment (a source runs one leaderboard per
    operation on one machine; its cases, `amd-fp8-mm/13`, share the leaderboard's name before the
    slash): 561 manifests for the embedded registry (0.1 s on a busy machine), once per graph and
    only when no other tier matched. Its cost grows with the operations the registry has."""

    def __init__(self, graph: Graph, document: Callable[[str], Mapping[str, Any]]) -> None:
        super().__init__()
        seen: set[tuple[str, str, str]] = set()
        for cohort in graph.cohorts.values():
            where = (cohort.operation, cohort.protocol, cohort.environment)
            if where in seen:
                continue
            seen.add(where)
            run = graph.nodes.get(cohort.members[0])
            if not isinstance(run, Run) or run.source is None:
                continue
            native = document(run.oid)["spec"].get("sourceNative") or {}
            name = native.get("benchmark")
            if not isinstance(name, str) or not name:
                continue
            # `amd-fp8-mm/13` is case 13 of the leaderboard `amd-fp8-mm`: both name the operation.
            for spelling in {name, name.split("/", 1)[0]}:
                for key in {spelling.lower(), collapse(spelling)}:
                    self.setdefault(key, set()).add(cohort.operation)


_BENCHMARKS: weakref.WeakKeyDictionary[Graph, _Benchmarks] = weakref.WeakKeyDictionary()


def _benchmarks(graph: Graph, document: Callable[[str], Mapping[str, Any]]) -> _Benchmarks:
    found = _BENCHMARKS.get(graph)
    if found is None:
        found = _BENCHMARKS[graph] = _Benchmarks(graph, document)
    return found


def operation_names(graph: Graph) -> set[str]:
    """Every name, title and family of the graph's operations: what `nearest` offers."""
    return set(_operations(graph, everything=True).spellings)


def match_gpu(graph: Graph, text: str) -> frozenset[str]:
    """The GPU keys (lower-case products and architectures, as the graph indexes runs) `text` names:
    a whole-word product match ("b200" is NVIDIA B200, not GB200) or an architecture (`sm100`)."""
    return frozenset(gpu_keys_matching(text, graph.runs_by["gpu"]))


def gpu_names(graph: Graph) -> set[str]:
    """The GPU products and architectures the registry has runs on, as their environments spell them."""
    names: set[str] = set()
    for digest in graph.runs_by["environment"]:
        node = graph.nodes.get(digest)
        if isinstance(node, Environment):
            names.add(node.product)
            if node.architecture != "unknown":
                names.add(node.architecture)
    return names

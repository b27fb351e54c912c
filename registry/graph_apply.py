"""The delta applier: the graph of a commit made from its parent's graph and the change between them (`apply`).

The new graph shares every node, fact, cohort and index of its parent that the change leaves alone: its big mappings
are layered over the parent's (`kernelindex.registry.members.layered_over`), each index set it edits is copied or
layered on first change (`Delta`), and only the runs a change touches, and the cohorts they leave or join, are
derived again (`Delta.recompute`), so the cost follows the change rather than the registry.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Mapping, MutableMapping, Sequence

from kernelindex.registry.fan_out import edited_fan_out
from kernelindex.registry.graph import Graph, Index, record_entries
from kernelindex.registry.graph_cohort import SOURCE_NATIVE, Cohort
from kernelindex.registry.graph_derive import Derivation, node_index_keys
from kernelindex.registry.mainline import Mainline
from kernelindex.registry.members import LAYER_FROM, Layered, layered_over
from kernelindex.registry.name_index import NameIndex
from kernelindex.registry.nodes import (
    Attestation,
    Environment,
    Implementation,
    Node,
    Retraction,
    Run,
    Supersession,
    Verification,
    Workload,
)
from kernelindex.registry.run_facts import RunFacts
from kernelindex.registry.run_indexes import RunIndexes

__all__ = ["Delta", "apply"]


def apply(
    parent: Graph,
    commit: str,
    committed_at: int,
    mainline: Mainline,
    position: int | None,
    added: Sequence[Node],
    removed: Sequence[str],
    honoured_commits: frozenset[str] | None = None,
    published_in: Mapping[str, int] | None = None,
) -> Graph:
    """A new graph for `commit`: `parent` plus `added` (replacing nodes of the same digest),
    minus `removed` (digests), with a newer publication record if given. Only the cohorts
    of touched runs are recomputed."""
    honoured = parent.honoured_commits if honoured_commits is None else honoured_commits
    publication = parent.published_in if published_in is None else published_in
    graph = Graph(
        commit,
        committed_at,
        mainline,
        position,
        honoured,
        publication,
        nodes=layered_over(parent.nodes),
        facts=layered_over(parent.facts),
        cohorts=layered_over(parent.cohorts),
        names=layered_over(parent.names.built() if isinstance(parent.names, NameIndex) else parent.names),
        cohorts_by={k: layered_over(v) for k, v in parent.cohorts_by.items()},
        children={k: layered_over(v) for k, v in parent.children.items()},
        overlays={k: layered_over(v) for k, v in parent.overlays.items()},
        unpublished=set(parent.unpublished),
        record_order=parent.record_order,
    )
    graph.runs_by = RunIndexes(graph.nodes, graph.facts, {k: layered_over(v) for k, v in parent.runs_by.built_items()})
    if parent.by_folder is not None:
        graph.by_folder = edited_fan_out(parent.by_folder, parent.nodes, added, removed)
    delta = Delta(graph)
    touched: list[str] = []
    if honoured != parent.honoured_commits:
        # Which commits count changed: every run an overlay points at may change.
        for index in graph.overlays.values():
            for run in index:
                touched.append(run)
    if publication is not parent.published_in:
        # Manifests merged into main since: they are published now (cost: the unpublished ones).
        for digest in [d for d in graph.unpublished if d in publication]:
            graph.unpublished.discard(digest)
            touched.extend(delta.runs_depending_on(graph.nodes[digest]))
    delta.change(list(added), list(removed), touched, parent)
    return graph


class Delta:
    """One change applied to a new graph (`apply` made it over its parent's): nodes indexed and unindexed, the facts
    of the runs they touch and the cohorts those leave or join derived again, and the records ledger's order
    edited. Index sets the new graph shares with its parent are copied before their first change (copy on write)."""

    __slots__ = ("_derivation", "_owned", "graph")

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._derivation = Derivation(graph)
        self._owned: set[int] = set()  # ids of the index sets this change made itself and may change in place

    def change(
        self, added: list[Node], removed: list[str], touched: Iterable[str] = (), parent: Graph | None = None
    ) -> None:
        graph = self.graph
        runs: set[str] = set(touched)
        for digest in removed:
            node = graph.nodes.pop(digest, None)
            if node is not None:
                self._unindex(node)
                runs.update(self.runs_depending_on(node))
        for node in added:
            previous = graph.nodes.get(node.digest)
            if previous is not None:
                self._unindex(previous)
            graph.nodes[node.digest] = node
            self._index(node)
            runs.update(self.runs_depending_on(node))
        recomputed = self.recompute(runs)
        self._owned.clear()
        self._derivation.memo.clear()
        if graph.record_order is not None and recomputed:
            graph.record_order = self._edited_order(graph.record_order, recomputed, parent)
        graph.__dict__.pop("records", None)
        graph.__dict__.pop("cohorts_largest_first", None)  # made again when asked: the cohorts changed

    def _edited_order(
        self, order: list[tuple[int, str]], recomputed: set[str], parent: Graph | None
    ) -> list[tuple[int, str]]:
        """The records ledger's order with the entries of `recomputed` cohorts made again.

        When `order` is `parent`'s, the entries to drop are the parent's own for those cohorts:
        each is found by bisection and the new ones inserted, so the cost follows the change (a
        pass over every cohort's entry took ~10 ms at 10x). Otherwise, or if an entry is not where
        the parent says, the whole order is filtered and sorted again."""
        graph = self.graph
        cohorts = graph.cohorts
        fresh = list(record_entries(graph, (cohorts[k] for k in recomputed if k in cohorts)))
        if parent is not None and parent.record_order is order:
            edited = order.copy()
            stale = record_entries(parent, (parent.cohorts[k] for k in recomputed if k in parent.cohorts))
            for entry in stale:
                at = bisect_left(edited, entry)
                if at == len(edited) or edited[at] != entry:
                    break
                del edited[at]
            else:
                for entry in fresh:
                    insort(edited, entry)
                return edited
        rebuilt = [entry for entry in order if entry[1] not in recomputed]
        rebuilt.extend(fresh)
        rebuilt.sort()  # a sorted run and a short tail: timsort merges them in one pass (heapq.merge: 10x slower)
        return rebuilt

    def runs_depending_on(self, node: Node) -> list[str]:
        """Runs whose derived facts may change when `node` comes or goes."""
        graph = self.graph
        if isinstance(node, Run):
            return [node.digest]
        if isinstance(node, Retraction | Attestation):
            return [node.run]
        if isinstance(node, Supersession):
            return [node.run, node.supersedes]
        if isinstance(node, Verification):
            return [node.run, node.rerun]
        if isinstance(node, Workload):
            return list(graph.runs_by["workload"].get(node.digest, ()))
        if isinstance(node, Implementation):
            return list(graph.runs_by["implementation"].get(node.digest, ()))
        if isinstance(node, Environment):
            return list(graph.runs_by["environment"].get(node.digest, ()))
        return []

    def _edit(self, index: Index, key: object, value: str, remove: bool) -> None:
        """Change one index entry of this graph without touching its parent's (copy on write:
        small sets are copied, big ones layered, so the cost follows the change)."""
        members = index.get(key)  # type: ignore[call-overload]
        if members is None:
            if remove:
                return
            members = set()
            index[key] = members  # type: ignore[index]
            self._owned.add(id(members))
        elif id(members) not in self._owned:
            if len(members) >= LAYER_FROM:
                members = Layered.over(members)
                if members.delta * 4 > len(members):
                    members = set(members)  # too many changes on this base: flatten once
            else:
                members = set(members)
            index[key] = members  # type: ignore[index]
            self._owned.add(id(members))
        if remove:
            members.discard(value)
            if not members:
                del index[key]  # type: ignore[arg-type]
        else:
            members.add(value)

    def _fact_index_keys(self, facts: RunFacts) -> list[tuple[Index, str]]:
        """The fact indexes a run's facts put it in, of those built (the others are built from the
        facts when first read)."""
        graph = self.graph
        keys: list[tuple[Index, str]] = []
        if (gpus := graph.runs_by.built("gpu")) is not None:
            keys.extend((gpus, gpu) for gpu in facts.gpu)
        if facts.operation is not None and (operations := graph.runs_by.built("operation")) is not None:
            keys.append((operations, facts.operation))
        if facts.source is not None and (sources := graph.runs_by.built("source")) is not None:
            keys.append((sources, facts.source))
        return keys

    def cohort_index_keys(self, cohort: Cohort) -> list[tuple[Index, str]]:
        graph = self.graph
        keys = [(graph.cohorts_by["operation"], cohort.operation), (graph.cohorts_by["workload"], cohort.workload)]
        keys.extend((graph.cohorts_by["gpu"], gpu) for gpu in cohort.gpu)
        return keys

    def _index(self, node: Node, remove: bool = False) -> None:
        graph = self.graph
        digest = node.digest
        _edit_name(graph.names, node.name, digest, remove)
        if remove:
            graph.unpublished.discard(digest)
        elif digest not in graph.published_in:
            graph.unpublished.add(digest)
        for index, key in node_index_keys(graph, node):
            self._edit(index, key, digest, remove)

    def _unindex(self, node: Node) -> None:
        self._index(node, remove=True)

    def _index_facts(self, run: str, facts: RunFacts, remove: bool = False) -> None:
        for index, key in self._fact_index_keys(facts):
            self._edit(index, key, run, remove)

    def recompute(self, runs: set[str]) -> set[str]:
        """Facts of `runs`, and the cohorts they leave or join, again; the keys of those cohorts."""
        graph = self.graph
        cohorts: set[str] = set()
        joining: dict[str, list[str]] = {}
        for digest in runs:
            old = graph.facts.pop(digest, None)
            if old is not None:
                self._index_facts(digest, old, remove=True)
                if old.cohort is not None:
                    cohorts.add(old.cohort)
            node = graph.nodes.get(digest)
            if isinstance(node, Run):
                new = self._derivation.facts(node)
                graph.facts[digest] = new
                self._index_facts(digest, new)
                if new.cohort is not None:
                    cohorts.add(new.cohort)
                    joining.setdefault(new.cohort, []).append(digest)
        for key in cohorts:
            old_cohort = graph.cohorts.pop(key, None)
            cohort = None
            if old_cohort is not None:
                joined = joining.get(key)
                if joined and old_cohort.summarized and runs.isdisjoint(old_cohort.members):
                    # Only gains runs (the usual commit): no member's facts changed, so its summary
                    # follows from the old one and the newcomers' (a pass over every member of big
                    # cohorts was half of applying a 100-manifest commit at 10x).
                    gained = self._derivation.summary(joined, old_cohort.profile == SOURCE_NATIVE, old_cohort.best)
                    if not gained[2]:
                        cohort = self._derivation.cohort(key, sorted((*old_cohort.members, *joined)), gained)
            if cohort is None:
                members = {d for d in old_cohort.members if d not in runs} if old_cohort else set()
                members.update(joining.get(key, ()))
                cohort = self._derivation.cohort(key, sorted(members)) if members else None
            if cohort is not None:
                graph.cohorts[key] = cohort
            self._reindex_cohort(key, old_cohort, cohort)
        return cohorts

    def _reindex_cohort(self, key: str, old: Cohort | None, new: Cohort | None) -> None:
        """Move a recomputed cohort in `cohorts_by`: nothing to do when its operation, workload and
        GPUs are the same (the usual case: each edit copies or layers a set of the parent's)."""
        before = self.cohort_index_keys(old) if old is not None else []
        after = self.cohort_index_keys(new) if new is not None else []
        if [value for _, value in before] == [value for _, value in after]:
            return
        for index, value in before:
            self._edit(index, value, key, remove=True)
        for index, value in after:
            self._edit(index, value, key, remove=False)


def _edit_name(index: MutableMapping[str, str | tuple[str, ...]], key: str, value: str, remove: bool) -> None:
    """Add to or remove from the name index (a digest, or a tuple of digests when several share a name)."""
    found = index.get(key)
    current: tuple[str, ...] = () if found is None else (found,) if isinstance(found, str) else found
    if remove:
        current = tuple(v for v in current if v != value)
    elif value not in current:
        current = (*current, value)
    if not current:
        index.pop(key, None)
    else:
        index[key] = current[0] if len(current) == 1 else current

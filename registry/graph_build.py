"""The cold builder: a graph made from scratch, from every node of a commit (`ColdBuild`, or `build` at once).

Nodes are taken as a stream arrives (`take`: the nodes, their names and the indexes that need nothing else, and with
`derive_runs` each run's facts as far as the nodes alone decide them), then everything else is derived once the
publication record is known (`derive`: facts, cohorts, record holders, the records ledger's order). A graph derived
from another by a change is `kernelindex.registry.graph_apply`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kernelindex.registry.graph import Graph, record_entries
from kernelindex.registry.graph_derive import Derivation, node_index_keys
from kernelindex.registry.mainline import Mainline
from kernelindex.registry.members import add_member
from kernelindex.registry.name_index import NameIndex, names_of
from kernelindex.registry.nodes import Implementation, Node, Other, Run, Workload
from kernelindex.registry.run_indexes import RunIndexes

__all__ = ["ColdBuild", "build"]


def build(
    commit: str,
    committed_at: int,
    mainline: Mainline,
    position: int | None,
    nodes: Iterable[Node],
    honoured_commits: frozenset[str] = frozenset(),
    published_in: Mapping[str, int] | None = None,
) -> Graph:
    """A graph from scratch: `take` the nodes, then `derive` everything else."""
    builder = ColdBuild(commit, committed_at)
    builder.take(nodes)
    return builder.derive(mainline, position, published_in or {}, honoured_commits)


class ColdBuild:
    """A graph of one commit being built: `graph` holds the nodes taken so far (and their indexes), before its
    publication record is known; `derive` completes it."""

    __slots__ = ("_derivation", "_streamed", "graph")

    def __init__(self, commit: str, committed_at: int) -> None:
        self.graph = Graph(commit, committed_at, Mainline.of((), (), ()), None, frozenset())
        self._derivation = Derivation(self.graph)
        # What `take` derived of the runs while the stream was still arriving (`derive_runs`).
        self._streamed: _Streamed | None = None

    def take(self, nodes: Iterable[Node], *, derive_runs: bool = False) -> None:
        """Index nodes as they arrive (from a stream that is still being read): everything that
        does not need the publication record or the other nodes.

        `derive_runs`: also derive each run's facts and cohort as it arrives, as if published by a
        commit main honours nothing of (`Derivation.static_facts`), when the nodes it references came
        before it (a stream of every other kind first, then the runs): the work overlaps the
        wait for the stream, and `derive` only revisits the runs that assumption does not hold
        for (unpublished, sourceless, overlaid).
        """
        graph = self.graph
        by_digest, names = graph.nodes, graph.names
        graph.runs_by = RunIndexes(by_digest, graph.facts)  # built on first read, from what is taken
        # The name index is made from the nodes on first read (`NameIndex`) while no digest comes twice.
        if isinstance(names, NameIndex) and names.made:  # read already: kept up to date from here on
            names = graph.names = names.built()
        lazy = isinstance(names, NameIndex) or not (names or by_digest)
        if lazy and not isinstance(names, NameIndex):
            graph.names = NameIndex(by_digest)
        facts = graph.facts
        streamed = self._streamed
        if derive_runs and streamed is None:
            streamed = self._streamed = _Streamed()
        if streamed is not None:
            members, native, best = streamed.members, streamed.native, streamed.best
        static_facts = self._derivation.static_facts
        # The two most frequent kinds after runs, indexed here without `node_index_keys`'s dispatch.
        workloads, implementations = graph.children["workloads"], graph.children["implementations"]
        projects = graph.children["project_implementations"]
        for node in nodes:
            digest = node.digest
            if lazy:
                size = len(by_digest)
                by_digest.setdefault(digest, node)
                if len(by_digest) == size:
                    # Taken before: the index as `take` always made it, from the nodes so far (each
                    # the first of its digest, in the order they came), then this one.
                    names = graph.names = names_of(by_digest)
                    by_digest[digest] = node
                    lazy = False
            else:
                by_digest[digest] = node
            if not lazy:
                name = node.name
                size = len(names)
                found = names.setdefault(name, digest)  # one lookup for a new name (most of them)
                if len(names) == size:
                    names[name] = (found, digest) if type(found) is str else (*found, digest)
            if type(node) is Run:
                if streamed is None:
                    continue
                derived = static_facts(node, complete=False)
                if derived is None:
                    streamed.underived = True
                    continue
                facts[digest] = derived
                if node.source is None:
                    streamed.sourceless.append(digest)
                key = derived.cohort
                if key is None:
                    continue
                found_members = members.get(key)
                if found_members is None:
                    members[key] = [digest]
                else:
                    found_members.append(digest)
                if node.source is not None:
                    native.add(key)
                primary = node.primary
                if primary is not None and not derived.reasons:
                    # The record holder as `Derivation.cohort` finds it: the least (value, observed, id) of the eligible
                    candidate = (primary.value, node.observed_ns, digest)
                    held = best.get(key)
                    if held is None or candidate < held:
                        best[key] = candidate
            elif type(node) is Workload:
                add_member(workloads, node.operation, digest)
            elif type(node) is Implementation:
                add_member(implementations, node.operation, digest)
                if node.project:
                    add_member(projects, node.project, digest)
            elif type(node) is not Other:
                for index, key in node_index_keys(graph, node):
                    add_member(index, key, digest)

    def derive(
        self,
        mainline: Mainline,
        position: int | None,
        published_in: Mapping[str, int],
        honoured_commits: frozenset[str],
    ) -> Graph:
        """The graph: everything derived from the nodes taken (facts, cohorts, rankings, the ledger).

        Call it once, after the last `take`."""
        graph, derivation = self.graph, self._derivation
        graph.mainline, graph.position, graph.published_in, graph.honoured_commits = (
            mainline,
            position,
            published_in,
            honoured_commits,
        )
        nodes = graph.nodes
        if isinstance(nodes, dict) and isinstance(published_in, dict):
            graph.unpublished.update(nodes.keys() - published_in.keys())
        else:
            graph.unpublished.update(d for d in nodes if d not in published_in)
        streamed, self._streamed = self._streamed, None
        graph.runs_by = RunIndexes(nodes, graph.facts)  # built on first read, from the facts made here
        changed: set[str] = set()  # cohorts whose runs' standing differs from what `take` assumed
        if streamed is None or streamed.underived:
            if streamed is not None:  # some run was taken before a node it references: derive them all here
                graph.facts.clear()
                streamed = None
            members: dict[str, list[str]] = {}
            for run in [n for n in nodes.values() if type(n) is Run]:
                facts = derivation.facts(run)
                graph.facts[run.digest] = facts
                if facts.cohort is not None:
                    members.setdefault(facts.cohort, []).append(run.digest)
        else:
            # `take` derived every run as published, by its own source, with no overlay: revisit the
            # runs for which that is not so (their cohort is the same: it depends on the nodes alone).
            members = streamed.members
            revisit = {d for d in graph.unpublished if type(nodes[d]) is Run}
            revisit.update(streamed.sourceless)
            for name in ("retractions", "supersessions", "verifications"):
                revisit.update(d for d in graph.overlays[name] if type(nodes.get(d)) is Run)
            for digest in revisit:
                node = nodes[digest]
                assert isinstance(node, Run)
                old, new = graph.facts[digest], derivation.facts(node)
                if new != old:
                    graph.facts[digest] = new
                    if new.cohort is not None:
                        changed.add(new.cohort)
        by_operation, by_workload, by_gpu = (graph.cohorts_by[k] for k in ("operation", "workload", "gpu"))
        for key, digests in members.items():
            digests.sort()
            if streamed is None or key in changed:
                cohort = derivation.cohort(key, digests)
            else:
                held = streamed.best.get(key)
                cohort = derivation.cohort(key, digests, (key in streamed.native, held, False))
            graph.cohorts[key] = cohort
            add_member(by_operation, cohort.operation, key)  # `Delta.cohort_index_keys`, without a list a cohort
            add_member(by_workload, cohort.workload, key)
            for gpu in cohort.gpu:
                add_member(by_gpu, gpu, key)
        derivation.memo.clear()
        graph.record_order = sorted(record_entries(graph, graph.cohorts.values()))
        # The ledger's keys in order, made here rather than by the first `records` query after a start
        # (0.1 s for 127k cohorts at 50x on a busy machine); `records` is a cached property.
        graph.__dict__["records"] = tuple(key for _, key in graph.record_order)
        graph.__dict__.pop("cohorts_largest_first", None)
        return graph


@dataclass(eq=False)
class _Streamed:
    """What `ColdBuild.take(derive_runs=True)` derived of the runs as they arrived, for `derive`: each
    cohort's members, which cohorts have a source-native member, each cohort's least (value,
    observed_ns, id) of its eligible runs, the runs whose source falls back to their publishing
    commit, and whether some run came before a node it references (then `derive` does it all)."""

    members: dict[str, list[str]] = field(default_factory=dict)
    native: set[str] = field(default_factory=set)
    best: dict[str, tuple[float, int, str]] = field(default_factory=dict)
    sourceless: list[str] = field(default_factory=list)
    underived: bool = False

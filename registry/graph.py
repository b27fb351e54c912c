"""The graph of one commit: every manifest as a node, the facts derived from them, and the indexes
queries need. Treat it as immutable; a new commit gets a new graph from `Graph.apply`, which
recomputes only the cohorts a change touches and shares every node with its parent.

Derived facts: each run's cohort, eligibility reasons, rank and tie,
trust and integrity warnings; each cohort's profile, ranking and record events; the
records ledger. Overlays (retractions, supersessions, verifications) count only when the
commit that published them is signed by a maintainer: the builder is told which are.
"""

from __future__ import annotations

import re
import sys
import time
from bisect import bisect_left, insort
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from kernelindex.registry.cohorts import (
    Candidate,
    Ranked,
    RankInput,
    RecordEvent,
    Trust,
    comparison_key,
    eligibility_reasons,
    metric_key,
    rank_cohort,
    record_events,
    trust_of,
)
from kernelindex.registry.errors import AmbiguousName
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.members import LAYER_FROM, Layered, Members, add_member, compact, layered_over
from kernelindex.registry.name_index import NameIndex, names_of
from kernelindex.registry.nodes import (
    Attestation,
    Environment,
    Implementation,
    Node,
    Other,
    Protocol,
    Retraction,
    Run,
    ServingRun,
    Supersession,
    Verification,
    Workload,
)
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.run_facts import RunFacts
from kernelindex.registry.run_indexes import RunIndexes
from kernelindex.registry.validate import operation_mismatch_digests

__all__ = [
    "MIN_PREFIX",
    "SOURCE_NATIVE",
    "STRICT_EXACT",
    "Cohort",
    "Graph",
    "Mainline",
    "RunFacts",
    "find_keyed",
    "gpu_keys",
]

MIN_PREFIX = 12
"""The shortest digest prefix accepted as an id: at a million manifests 12 hex digits rarely collide."""
_HEX = re.compile(r"[0-9a-f]+")
_new = tuple.__new__
_V = TypeVar("_V")


def find_keyed(table: Mapping[str, _V], key: str) -> _V | None:
    """The entry of `table` (keyed `sha256:<hex>`: cohorts, serving cohorts) a key or a unique prefix of at
    least `MIN_PREFIX` hex digits names.

    Raises:
        AmbiguousName: the prefix matches several entries.
    """
    hexpart = key.strip().removeprefix("sha256:")
    if not _HEX.fullmatch(hexpart) or len(hexpart) < MIN_PREFIX:
        return None
    if len(hexpart) == 64:
        return table.get("sha256:" + hexpart)
    matches = sorted(k for k in table if k[7:].startswith(hexpart))
    if len(matches) > 1:
        raise AmbiguousName(key, matches)
    return table[matches[0]] if matches else None


SOURCE_NATIVE = "source_native"
STRICT_EXACT = "strict_exact"

Index = MutableMapping[str, Members]


@dataclass(frozen=True, slots=True)
class Mainline:
    """main's first-parent history (the publication record), oldest first."""

    commits: tuple[str, ...]
    times: tuple[int, ...]  # committer times, seconds
    sources: tuple[str | None, ...]  # each commit's Source: trailer
    positions: Mapping[str, int] = field(repr=False, compare=False)

    @classmethod
    def of(cls, commits: Sequence[str], times: Sequence[int], sources: Sequence[str | None]) -> Mainline:
        return cls(tuple(commits), tuple(times), tuple(sources), {c: i for i, c in enumerate(commits)})

    def extended(self, commits: Sequence[str], times: Sequence[int], sources: Sequence[str | None]) -> Mainline:
        return Mainline.of((*self.commits, *commits), (*self.times, *times), (*self.sources, *sources))


Best = tuple[float, int, str]
"""A cohort's record holder without its ledger: the least (value, observed_ns, id) of its eligible runs."""
Summary = tuple[bool, Best | None, bool]
"""What `Graph._summary` finds of a cohort's members: a source-native one, the record holder, a retracted one."""


class Cohort:
    """A comparison group: comparable runs, and (computed on first use, then kept) their ranking and
    their record events.

    A cohort object is shared by every graph in which none of its members' facts changed, so
    the graph asking is as good as any to compute from: all of them agree on these runs.
    """

    __slots__ = (
        "_best",
        "_events",
        "_holder_ns",
        "_places",
        "_ranked",
        "correctness_key",
        "environment",
        "gpu",
        "key",
        "members",
        "metric_key",
        "operation",
        "profile",
        "protocol",
        "workload",
    )

    def __init__(
        self,
        key: str,
        profile: str,
        operation: str,
        workload: str,
        protocol: str,
        environment: str,
        correctness_key: str,
        metric_key: str,
        gpu: tuple[str, ...],
        members: tuple[str, ...],
        holder_ns: int | None = -1,
        best: Best | None = None,
    ) -> None:
        self.key = key
        self.profile = profile
        self.operation = operation
        self.workload = workload
        self.protocol = protocol
        self.environment = environment
        self.correctness_key = correctness_key
        self.metric_key = metric_key
        self.gpu = gpu  # lower-cased product and architecture of its environment
        self.members = members  # every run in the cohort, eligible or not, by digest
        self._ranked: tuple[Ranked, ...] | None = None
        self._places: dict[str, Ranked] | None = None
        self._events: tuple[RecordEvent, ...] | None = None
        # When the current record holder took the record (ns; None: no record), known without the
        # ledger when no member is retracted (`Graph._cohort`); -1: ask the ledger.
        self._holder_ns = holder_ns
        # The least (value, observed_ns, id) of the eligible members, whose observed_ns is that
        # time; meaningful only when `_holder_ns` is not -1 (a cohort that only gains runs then
        # finds its record holder from the newcomers alone: `Graph._recompute`).
        self._best = best

    def restore(self, ranked: list[Ranked], events: list[RecordEvent]) -> None:
        """Set what `ranked` and `events` compute (from a warm cache that saved them)."""
        self._ranked = tuple(ranked)
        self._events = tuple(events)

    def ranked(self, graph: Graph) -> tuple[Ranked, ...]:
        """The eligible runs with a value, in ranking-v1 presentation order."""
        if self._ranked is None:
            inputs = []
            for digest in self.members:
                run = graph.nodes[digest]
                facts = graph.facts[digest]
                if facts.eligible and isinstance(run, Run) and run.primary is not None:
                    primary = run.primary
                    inputs.append(
                        RankInput(digest, primary.value, primary.low, primary.high, facts.trust, run.observed_ns)
                    )
            self._ranked = tuple(rank_cohort(inputs, self.profile == SOURCE_NATIVE))
        return self._ranked

    def place(self, graph: Graph, run: str) -> Ranked | None:
        if self._places is None:
            self._places = {entry.id: entry for entry in self.ranked(graph)}
        return self._places.get(run)

    def leader(self, graph: Graph) -> str | None:
        ranked = self.ranked(graph)
        return ranked[0].id if ranked else None

    def events(self, graph: Graph) -> tuple[RecordEvent, ...]:
        """This cohort's records ledger, oldest first."""
        if self._events is None:
            candidates = []
            for digest in self.members:
                run = graph.nodes[digest]
                facts = graph.facts[digest]
                if not isinstance(run, Run) or run.primary is None:
                    continue
                value = run.primary.value
                if facts.eligible:
                    candidates.append(Candidate(digest, value, run.observed_at, run.observed_ns))
                elif facts.reasons == ("RETRACTED",) and facts.retraction is not None:
                    # It held its place in the ledger until the retraction was published.
                    withdrawn = graph.mainline.times[graph.published_in[facts.retraction]]
                    candidates.append(
                        Candidate(
                            digest, value, run.observed_at, run.observed_ns, utc_instant(withdrawn),
                            withdrawn * 1_000_000_000,
                        )
                    )  # fmt: skip
            self._events = tuple(record_events(self.key, candidates))
        return self._events

    def holder(self, graph: Graph) -> RecordEvent | None:
        """The event that made the current record holder."""
        events = self.events(graph)
        return events[-1] if events else None

    def holder_ns(self, graph: Graph) -> int | None:
        """When the current record holder took the record (None: the cohort has no record): what
        orders the records ledger, without replaying this cohort's ledger when it need not be."""
        if self._events is None and self._holder_ns != -1:
            return self._holder_ns
        holder = self.holder(graph)
        return None if holder is None else holder.at_ns


def gpu_keys(environment: Node | None) -> tuple[str, ...]:
    """How a GPU filter can name an environment: its product or its architecture, lower case."""
    if not isinstance(environment, Environment):
        return ()
    keys = [environment.product.lower()]
    if environment.architecture != "unknown":
        keys.append(environment.architecture.lower())
    return tuple(sys.intern(k) for k in keys)


# (status, has a primary metric, source available, raw evidence) -> (eligibility reasons, trust) of
# a run with every reference present, as if published with no overlay: a handful of combinations.
_STANDING: dict[tuple[str, bool, bool, bool], tuple[tuple[str, ...], Trust]] = {}


@dataclass(eq=False)
class Graph:
    """Everything known at one commit."""

    commit: str
    committed_at: int
    mainline: Mainline
    position: int | None  # this commit's place on main's first-parent history; None off main
    honoured_commits: frozenset[str]  # commits whose overlays count (signed by a maintainer)
    # digest -> position on main of the commit that published it (the publication record, shared)
    published_in: Mapping[str, int] = field(default_factory=dict, repr=False)
    # The big mappings are plain dicts in a graph built from scratch, and `LayeredMap`s over the
    # parent's in a graph derived by `apply` (so that deriving costs the change, not the registry).
    nodes: MutableMapping[str, Node] = field(default_factory=dict)
    facts: MutableMapping[str, RunFacts] = field(default_factory=dict)
    cohorts: MutableMapping[str, Cohort] = field(default_factory=dict)
    # metadata.name -> its digest, or a tuple of them when several manifests share it (any kind):
    # a million names cost a million tuples otherwise. Read it through `named`.
    names: MutableMapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    # Runs by environment, implementation, workload, operation, source and GPU: each built on first
    # read from this graph's nodes and facts (`RunIndexes`), not by the cold build. A graph derived by
    # `apply`, or read from the warm cache, is given the ones already built.
    runs_by: RunIndexes = field(init=False, repr=False)
    cohorts_by: dict[str, Index] = field(default_factory=lambda: {k: {} for k in ("operation", "workload", "gpu")})
    children: dict[str, Index] = field(
        default_factory=lambda: {
            k: {} for k in ("workloads", "implementations", "project_implementations", "serving_runs")
        }
    )
    overlays: dict[str, Index] = field(
        default_factory=lambda: {spec.folder: {} for spec in KINDS.values() if spec.lifecycle}  # by folder
    )
    unpublished: set[str] = field(default_factory=set)  # digests of nodes not (yet) on main
    # Index sets this graph made itself and may change in place; the others are shared with the
    # graph it was derived from and are copied before their first change (copy on write).
    _owned: set[int] = field(default_factory=set, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)  # per change: cohort keys, GPU keys
    # The records ledger's order as (-holder time, cohort key), sorted: made with the cohorts, then
    # edited by each change (a first `records` query after a start or a refresh waits for nothing).
    _record_order: list[tuple[int, str]] | None = field(default=None, repr=False)
    # What `take` derived of the runs while the stream was still arriving (`derive_runs`).
    _streamed: _Streamed | None = field(default=None, repr=False)
    # The digests in each fan-out folder (`<kind-folder>/<hh>`), sorted as git sorts the folder's
    # files: made by `index_fan_out` and kept by `apply` (see `fan_out`).
    _fan_out: dict[str, list[str]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.runs_by = RunIndexes(self.nodes, self.facts)

    # Building -------------------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        commit: str,
        committed_at: int,
        mainline: Mainline,
        position: int | None,
        nodes: Iterable[Node],
        honoured_commits: frozenset[str] = frozenset(),
        published_in: Mapping[str, int] | None = None,
    ) -> Graph:
        """A graph from scratch: `take` the nodes, then `derive` everything else."""
        graph = cls.loading(commit, committed_at)
        graph.take(nodes)
        graph.derive(mainline, position, published_in or {}, honoured_commits)
        return graph

    @classmethod
    def loading(cls, commit: str, committed_at: int) -> Graph:
        """An empty graph to `take` nodes into, before its publication record is known."""
        return cls(commit, committed_at, Mainline.of((), (), ()), None, frozenset())

    def take(self, nodes: Iterable[Node], *, derive_runs: bool = False) -> None:
        """Index nodes as they arrive (from a stream that is still being read): everything that
        does not need the publication record or the other nodes.

        `derive_runs`: also derive each run's facts and cohort as it arrives, as if published by a
        commit main honours nothing of (`_static_facts`), when the nodes it references came
        before it (a stream of every other kind first, then the runs): the work overlaps the
        wait for the stream, and `derive` only revisits the runs that assumption does not hold
        for (unpublished, sourceless, overlaid).
        """
        by_digest, names = self.nodes, self.names
        self.runs_by = RunIndexes(by_digest, self.facts)  # built on first read, from what is taken
        # The name index is made from the nodes on first read (`NameIndex`) while no digest comes twice.
        if isinstance(names, NameIndex) and names.made:  # read already: kept up to date from here on
            names = self.names = names.built()
        lazy = isinstance(names, NameIndex) or not (names or by_digest)
        if lazy and not isinstance(names, NameIndex):
            self.names = NameIndex(by_digest)
        facts = self.facts
        streamed = self._streamed
        if derive_runs and streamed is None:
            streamed = self._streamed = _Streamed()
        if streamed is not None:
            members, native, best = streamed.members, streamed.native, streamed.best
        static_facts = self._static_facts
        # The two most frequent kinds after runs, indexed here without `_node_index_keys`'s dispatch.
        workloads, implementations = self.children["workloads"], self.children["implementations"]
        projects = self.children["project_implementations"]
        for node in nodes:
            digest = node.digest
            if lazy:
                size = len(by_digest)
                by_digest.setdefault(digest, node)
                if len(by_digest) == size:
                    # Taken before: the index as `take` always made it, from the nodes so far (each
                    # the first of its digest, in the order they came), then this one.
                    names = self.names = names_of(by_digest)
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
                    # The record holder as `_cohort` finds it: the least (value, observed, id) of the eligible.
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
                for index, key in self._node_index_keys(node):
                    add_member(index, key, digest)

    def derive(
        self,
        mainline: Mainline,
        position: int | None,
        published_in: Mapping[str, int],
        honoured_commits: frozenset[str],
    ) -> None:
        """Everything derived from the nodes taken: facts, cohorts, rankings, the ledger."""
        self.mainline, self.position, self.published_in, self.honoured_commits = (
            mainline,
            position,
            published_in,
            honoured_commits,
        )
        nodes = self.nodes
        if isinstance(nodes, dict) and isinstance(published_in, dict):
            self.unpublished.update(nodes.keys() - published_in.keys())
        else:
            self.unpublished.update(d for d in nodes if d not in published_in)
        streamed, self._streamed = self._streamed, None
        self.runs_by = RunIndexes(nodes, self.facts)  # built on first read, from the facts made here
        changed: set[str] = set()  # cohorts whose runs' standing differs from what `take` assumed
        if streamed is None or streamed.underived:
            if streamed is not None:  # some run was taken before a node it references: derive them all here
                self.facts.clear()
                streamed = None
            members: dict[str, list[str]] = {}
            for run in [n for n in nodes.values() if type(n) is Run]:
                facts = self._facts(run)
                self.facts[run.digest] = facts
                if facts.cohort is not None:
                    members.setdefault(facts.cohort, []).append(run.digest)
        else:
            # `take` derived every run as published, by its own source, with no overlay: revisit the
            # runs for which that is not so (their cohort is the same: it depends on the nodes alone).
            members = streamed.members
            revisit = {d for d in self.unpublished if type(nodes[d]) is Run}
            revisit.update(streamed.sourceless)
            for name in ("retractions", "supersessions", "verifications"):
                revisit.update(d for d in self.overlays[name] if type(nodes.get(d)) is Run)
            for digest in revisit:
                node = nodes[digest]
                assert isinstance(node, Run)
                old, new = self.facts[digest], self._facts(node)
                if new != old:
                    self.facts[digest] = new
                    if new.cohort is not None:
                        changed.add(new.cohort)
        by_operation, by_workload, by_gpu = (self.cohorts_by[k] for k in ("operation", "workload", "gpu"))
        for key, digests in members.items():
            digests.sort()
            if streamed is None or key in changed:
                cohort = self._cohort(key, digests)
            else:
                held = streamed.best.get(key)
                cohort = self._cohort(key, digests, (key in streamed.native, held, False))
            self.cohorts[key] = cohort
            add_member(by_operation, cohort.operation, key)  # `_cohort_index_keys`, without a list a cohort
            add_member(by_workload, cohort.workload, key)
            for gpu in cohort.gpu:
                add_member(by_gpu, gpu, key)
        self._memo.clear()
        self._record_order = sorted(self._record_entries(self.cohorts.values()))
        # The ledger's keys in order, made here rather than by the first `records` query after a start
        # (0.1 s for 127k cohorts at 50x on a busy machine); `records` is a cached property.
        self.__dict__["records"] = tuple(key for _, key in self._record_order)
        self.__dict__.pop("cohorts_largest_first", None)

    def apply(
        self,
        commit: str,
        committed_at: int,
        mainline: Mainline,
        position: int | None,
        added: Sequence[Node],
        removed: Sequence[str],
        honoured_commits: frozenset[str] | None = None,
        published_in: Mapping[str, int] | None = None,
    ) -> Graph:
        """A new graph for `commit`: this one plus `added` (replacing nodes of the same digest),
        minus `removed` (digests), with a newer publication record if given. Only the cohorts
        of touched runs are recomputed."""
        honoured = self.honoured_commits if honoured_commits is None else honoured_commits
        publication = self.published_in if published_in is None else published_in
        graph = Graph(
            commit,
            committed_at,
            mainline,
            position,
            honoured,
            publication,
            nodes=layered_over(self.nodes),
            facts=layered_over(self.facts),
            cohorts=layered_over(self.cohorts),
            names=layered_over(self.names.built() if isinstance(self.names, NameIndex) else self.names),
            cohorts_by={k: layered_over(v) for k, v in self.cohorts_by.items()},
            children={k: layered_over(v) for k, v in self.children.items()},
            overlays={k: layered_over(v) for k, v in self.overlays.items()},
            unpublished=set(self.unpublished),
            _record_order=self._record_order,
        )
        graph.runs_by = RunIndexes(
            graph.nodes, graph.facts, {k: layered_over(v) for k, v in self.runs_by.built_items()}
        )
        if self._fan_out is not None:
            graph._fan_out = _edited_fan_out(self._fan_out, self.nodes, added, removed)
        touched: list[str] = []
        if honoured != self.honoured_commits:
            # Which commits count changed: every run an overlay points at may change.
            for index in graph.overlays.values():
                for run in index:
                    touched.append(run)
        if publication is not self.published_in:
            # Manifests merged into main since: they are published now (cost: the unpublished ones).
            for digest in [d for d in graph.unpublished if d in publication]:
                graph.unpublished.discard(digest)
                touched.extend(graph._runs_depending_on(graph.nodes[digest]))
        graph._change(list(added), list(removed), touched, self)
        return graph

    def _change(
        self, added: list[Node], removed: list[str], touched: Iterable[str] = (), parent: Graph | None = None
    ) -> None:
        runs: set[str] = set(touched)
        for digest in removed:
            node = self.nodes.pop(digest, None)
            if node is not None:
                self._unindex(node)
                runs.update(self._runs_depending_on(node))
        for node in added:
            previous = self.nodes.get(node.digest)
            if previous is not None:
                self._unindex(previous)
            self.nodes[node.digest] = node
            self._index(node)
            runs.update(self._runs_depending_on(node))
        recomputed = self._recompute(runs)
        self._owned.clear()
        self._memo.clear()
        if self._record_order is not None and recomputed:
            self._record_order = self._edited_order(self._record_order, recomputed, parent)
        self.__dict__.pop("records", None)
        self.__dict__.pop("cohorts_largest_first", None)  # made again when asked: the cohorts changed

    def _edited_order(
        self, order: list[tuple[int, str]], recomputed: set[str], parent: Graph | None
    ) -> list[tuple[int, str]]:
        """The records ledger's order with the entries of `recomputed` cohorts made again.

        When `order` is `parent`'s, the entries to drop are the parent's own for those cohorts:
        each is found by bisection and the new ones inserted, so the cost follows the change (a
        pass over every cohort's entry took ~10 ms at 10x). Otherwise, or if an entry is not where
        the parent says, the whole order is filtered and sorted again."""
        cohorts = self.cohorts
        fresh = list(self._record_entries(cohorts[k] for k in recomputed if k in cohorts))
        if parent is not None and parent._record_order is order:
            edited = order.copy()
            stale = parent._record_entries(parent.cohorts[k] for k in recomputed if k in parent.cohorts)
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

    def _record_entries(self, cohorts: Iterable[Cohort]) -> Iterator[tuple[int, str]]:
        """(-holder time, key) of the cohorts that have a record holder."""
        for cohort in cohorts:
            at = cohort.holder_ns(self)
            if at is not None:
                yield -at, cohort.key

    def _runs_depending_on(self, node: Node) -> list[str]:
        """Runs whose derived facts may change when `node` comes or goes."""
        if isinstance(node, Run):
            return [node.digest]
        if isinstance(node, Retraction | Attestation):
            return [node.run]
        if isinstance(node, Supersession):
            return [node.run, node.supersedes]
        if isinstance(node, Verification):
            return [node.run, node.rerun]
        if isinstance(node, Workload):
            return list(self.runs_by["workload"].get(node.digest, ()))
        if isinstance(node, Implementation):
            return list(self.runs_by["implementation"].get(node.digest, ()))
        if isinstance(node, Environment):
            return list(self.runs_by["environment"].get(node.digest, ()))
        return []

    # Indexes --------------------------------------------------------------------------------------

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

    def _node_index_keys(self, node: Node) -> list[tuple[Index, str]]:
        """The set-valued indexes a node belongs to, and under which key."""
        match node:
            case Run():
                # An index not built yet is left alone: it is built from the nodes when first read.
                run_keys = (("environment", node.environment), ("implementation", node.implementation),
                            ("workload", node.workload))  # fmt: skip
                return [(index, key) for name, key in run_keys if (index := self.runs_by.built(name)) is not None]
            case Workload():
                return [(self.children["workloads"], node.operation)]
            case Implementation():
                keys = [(self.children["implementations"], node.operation)]
                if node.project:
                    keys.append((self.children["project_implementations"], node.project))
                return keys
            case ServingRun():
                # serving runs by model; their facts and cohorts are `kernelindex.registry.serving_graph`'s
                return [(self.children["serving_runs"], node.model)]
        spec = KINDS.get(node.kind)
        if spec is not None and spec.lifecycle:
            # A lifecycle kind's overlay is named as its folder, keyed by the run its spec says it acts on.
            return [(self.overlays[spec.folder], getattr(node, spec.acts_on))]
        return []

    def _fact_index_keys(self, facts: RunFacts) -> list[tuple[Index, str]]:
        """The fact indexes a run's facts put it in, of those built (the others are built from the
        facts when first read)."""
        keys: list[tuple[Index, str]] = []
        if (gpus := self.runs_by.built("gpu")) is not None:
            keys.extend((gpus, gpu) for gpu in facts.gpu)
        if facts.operation is not None and (operations := self.runs_by.built("operation")) is not None:
            keys.append((operations, facts.operation))
        if facts.source is not None and (sources := self.runs_by.built("source")) is not None:
            keys.append((sources, facts.source))
        return keys

    def _cohort_index_keys(self, cohort: Cohort) -> list[tuple[Index, str]]:
        keys = [(self.cohorts_by["operation"], cohort.operation), (self.cohorts_by["workload"], cohort.workload)]
        keys.extend((self.cohorts_by["gpu"], gpu) for gpu in cohort.gpu)
        return keys

    def _index(self, node: Node, remove: bool = False) -> None:
        digest = node.digest
        _edit_name(self.names, node.name, digest, remove)
        if remove:
            self.unpublished.discard(digest)
        elif digest not in self.published_in:
            self.unpublished.add(digest)
        for index, key in self._node_index_keys(node):
            self._edit(index, key, digest, remove)

    def _unindex(self, node: Node) -> None:
        self._index(node, remove=True)

    def _index_facts(self, run: str, facts: RunFacts, remove: bool = False) -> None:
        for index, key in self._fact_index_keys(facts):
            self._edit(index, key, run, remove)

    # Derivation -----------------------------------------------------------------------------------

    def honoured(self, node: Node) -> bool:
        """An overlay counts when main published it in a commit signed by a maintainer."""
        position = self.published_in.get(node.digest, -1)
        return position >= 0 and self.mainline.commits[position] in self.honoured_commits

    def _recompute(self, runs: set[str]) -> set[str]:
        """Facts of `runs`, and the cohorts they leave or join, again; the keys of those cohorts."""
        cohorts: set[str] = set()
        joining: dict[str, list[str]] = {}
        for digest in runs:
            old = self.facts.pop(digest, None)
            if old is not None:
                self._index_facts(digest, old, remove=True)
                if old.cohort is not None:
                    cohorts.add(old.cohort)
            node = self.nodes.get(digest)
            if isinstance(node, Run):
                new = self._facts(node)
                self.facts[digest] = new
                self._index_facts(digest, new)
                if new.cohort is not None:
                    cohorts.add(new.cohort)
                    joining.setdefault(new.cohort, []).append(digest)
        for key in cohorts:
            old_cohort = self.cohorts.pop(key, None)
            cohort = None
            if old_cohort is not None:
                joined = joining.get(key)
                if joined and old_cohort._holder_ns != -1 and runs.isdisjoint(old_cohort.members):
                    # Only gains runs (the usual commit): no member's facts changed, so its summary
                    # follows from the old one and the newcomers' (a pass over every member of big
                    # cohorts was half of applying a 100-manifest commit at 10x).
                    gained = self._summary(joined, old_cohort.profile == SOURCE_NATIVE, old_cohort._best)
                    if not gained[2]:
                        cohort = self._cohort(key, sorted((*old_cohort.members, *joined)), gained)
            if cohort is None:
                members = {d for d in old_cohort.members if d not in runs} if old_cohort else set()
                members.update(joining.get(key, ()))
                cohort = self._cohort(key, sorted(members)) if members else None
            if cohort is not None:
                self.cohorts[key] = cohort
            self._reindex_cohort(key, old_cohort, cohort)
        return cohorts

    def _reindex_cohort(self, key: str, old: Cohort | None, new: Cohort | None) -> None:
        """Move a recomputed cohort in `cohorts_by`: nothing to do when its operation, workload and
        GPUs are the same (the usual case: each edit copies or layers a set of the parent's)."""
        before = self._cohort_index_keys(old) if old is not None else []
        after = self._cohort_index_keys(new) if new is not None else []
        if [value for _, value in before] == [value for _, value in after]:
            return
        for index, value in before:
            self._edit(index, value, key, remove=True)
        for index, value in after:
            self._edit(index, value, key, remove=False)

    def _earliest(self, overlays: Iterable[str]) -> list[str]:
        """Overlays in the order main published them (then by digest): when two retractions or two
        supersessions of one run count, the first published is the one that changed the run's standing,
        whatever order a set iterates in (kernelindex.registry.status picks the same one)."""
        unpublished = len(self.mainline.commits)
        return sorted(overlays, key=lambda d: (self.published_in.get(d, unpublished), d))

    def _facts(self, run: Run) -> RunFacts:
        """A run's facts except its rank (which needs its whole cohort)."""
        static = self._static_facts(run)
        assert static is not None
        return self._with_standing(run, static)

    def _static_facts(self, run: Run, *, complete: bool = True) -> RunFacts | None:
        """What a run's facts owe to the nodes alone: its facts as if main had published it, by its
        own source, and no overlay counted for it (`_with_standing` makes them true).

        `complete=False`: None when a node the run references is not taken yet (it may come later).
        """
        nodes, primary = self.nodes, run.primary
        # The common case, every referenced node present and of its kind, costs a few lookups: what
        # the workload, protocol and environment decide (the cohort key, operation, GPU keys) is
        # shared by a cohort's runs (3.6 a cohort at 10x) and made once per change by the long way.
        shared = self._memo.get(
            ("static", run.workload, run.protocol, run.environment, primary[:3] if primary else None)
        )
        implementation = nodes.get(run.implementation)
        if shared is not None and type(implementation) is Implementation:
            standing = _STANDING.get(
                (run.status, primary is not None, implementation.source_available, run.raw_evidence)
            )
            if standing is not None:
                key, operation, gpu = shared
                warnings: tuple[str, ...] = (primary.note,) if primary is not None and primary.note else ()
                mismatch = None if implementation.operation == operation else (
                    operation_mismatch_digests(implementation.operation, operation))  # fmt: skip
                if mismatch:
                    warnings = (
                        *warnings,
                        f"operation-mismatch: {mismatch} (an upstream data error, kept as published)",
                    )
                # `tuple.__new__`, not `RunFacts(...)`: the named tuple's `__new__` is a Python function
                # around the same call (one a run as the stream arrives: 95k at 10x).
                return _new(RunFacts, (key, standing[0], standing[1], warnings, run.source, None, None, operation, gpu))
        return self._static_facts_in_full(run, complete)

    def _static_facts_in_full(self, run: Run, complete: bool) -> RunFacts | None:
        """`_static_facts` the long way, for any run (and remembering what its cohort's runs share)."""
        nodes = self.nodes
        workload = nodes.get(run.workload)
        implementation = nodes.get(run.implementation)
        environment = nodes.get(run.environment)
        warnings = [run.primary.note] if run.primary is not None and run.primary.note else []
        if not (
            isinstance(workload, Workload)
            and isinstance(implementation, Implementation)
            and isinstance(environment, Environment)
            and isinstance(nodes.get(run.protocol), Protocol)
        ):
            if not complete:
                return None
            for role, digest, wanted in (
                ("implementation", run.implementation, Implementation),
                ("workload", run.workload, Workload),
                ("protocol", run.protocol, Protocol),
                ("environment", run.environment, Environment),
            ):
                if not isinstance(nodes.get(digest), wanted):
                    warnings.append(f"dangling-reference: the {role} {digest} is not in the registry")
        key = operation = None
        if isinstance(workload, Workload):
            operation = workload.operation
            metric = metric_key(run.primary)
            memo = ("key", run.workload, run.protocol, run.environment, metric)
            key = self._memo.get(memo)
            if key is None:
                key = comparison_key(
                    workload.operation, run.workload, run.protocol, run.environment, workload.correctness, metric
                )
                self._memo[memo] = key
            if isinstance(implementation, Implementation):
                mismatch = operation_mismatch_digests(implementation.operation, workload.operation)
                if mismatch:
                    warnings.append(f"operation-mismatch: {mismatch} (an upstream data error, kept as published)")
        # The standing is one of a handful (`_STANDING`), made the long way only for a new one or a
        # run that references no implementation or workload.
        known = (
            _STANDING.get((run.status, run.primary is not None, implementation.source_available, run.raw_evidence))
            if key is not None and isinstance(implementation, Implementation)
            else None
        )
        if known is not None:
            reasons, trust = known
        else:
            trust = trust_of(
                independent_verifications=0,
                source_available=isinstance(implementation, Implementation) and implementation.source_available,
                raw_evidence=run.raw_evidence,
            )
            reasons = eligibility_reasons(
                published=True,
                status=run.status,
                retracted=False,
                superseded=False,
                has_primary=run.primary is not None and key is not None,
            )
        gpu = self._gpu(run.environment, environment)
        if (
            isinstance(workload, Workload)
            and isinstance(environment, Environment)
            and isinstance(nodes.get(run.protocol), Protocol)
        ):
            primary = run.primary
            shared = ("static", run.workload, run.protocol, run.environment, primary[:3] if primary else None)
            self._memo[shared] = (key, operation, gpu)
            if isinstance(implementation, Implementation):
                standing = (run.status, primary is not None, implementation.source_available, run.raw_evidence)
                _STANDING.setdefault(standing, (reasons, trust))
        return RunFacts(
            key,
            reasons,
            trust,
            tuple(warnings) if warnings else (),
            run.source,
            None,
            None,
            operation,
            gpu,
        )

    def _with_standing(self, run: Run, static: RunFacts) -> RunFacts:
        """`static` (`_static_facts`) completed with the publication record and the overlays that count."""
        digest = run.digest
        published = digest in self.published_in
        retractions = self.overlays["retractions"].get(digest)
        supersessions = self.overlays["supersessions"].get(digest)
        verifications = self.overlays["verifications"].get(digest)
        if published and run.source is not None and not (retractions or supersessions or verifications):
            return static
        nodes = self.nodes
        retraction = superseded_by = None
        runners: set[str] = set()
        if retractions:
            retraction = next((d for d in self._earliest(retractions) if self.honoured(nodes[d])), None)
        if supersessions:
            superseded_by = next(
                (
                    overlay.run
                    for d in self._earliest(supersessions)
                    if isinstance(overlay := nodes[d], Supersession)
                    and self.honoured(overlay)
                    and isinstance(nodes.get(overlay.run), Run)
                ),
                None,
            )
        if verifications:
            runners = {
                overlay.runner
                for d in verifications
                if isinstance(overlay := nodes[d], Verification) and self.honoured(overlay)
            }
        implementation = nodes.get(run.implementation)
        trust = trust_of(
            independent_verifications=len(runners),
            source_available=isinstance(implementation, Implementation) and implementation.source_available,
            raw_evidence=run.raw_evidence,
        )
        reasons = eligibility_reasons(
            published=published,
            status=run.status,
            retracted=retraction is not None,
            superseded=superseded_by is not None,
            has_primary=run.primary is not None and static.cohort is not None,
        )
        source = run.source
        if source is None and published:
            source = self.mainline.sources[self.published_in[digest]]
        return static._replace(
            reasons=reasons, trust=trust, source=source, retraction=retraction, superseded_by=superseded_by
        )

    def _gpu(self, digest: str, environment: Node | None) -> tuple[str, ...]:
        memo = ("gpu", digest)
        found: tuple[str, ...] | None = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = gpu_keys(environment)
        return found

    def _summary(self, members: Sequence[str], source_native: bool = False, best: Best | None = None) -> Summary:
        """Whether a member is source-native, the record holder (None: no record), and whether a
        member is retracted (then ask the ledger instead); `source_native` and `best` are those of
        other members already seen.

        The record holder without the ledger: with no retracted member, the ledger's last event is
        the first run, in (observedAt, id) order, with the lowest value: the least of
        (value, observed_ns, id). A retracted member can hand the record over: ask the ledger then."""
        nodes, facts = self.nodes, self.facts
        source_native = source_native or any(nodes[d].source is not None for d in members)  # type: ignore[union-attr]
        for digest in members:
            run = nodes[digest]
            primary = run.primary  # type: ignore[union-attr]
            if primary is None:
                continue
            found = facts[digest]
            if not found.reasons:
                candidate = (primary.value, run.observed_ns, digest)  # type: ignore[union-attr]
                if best is None or candidate < best:
                    best = candidate
            elif found.retraction is not None and found.reasons == ("RETRACTED",):
                return source_native, None, True
        return source_native, best, False

    def _cohort(self, key: str, members: list[str], summary: Summary | None = None) -> Cohort:
        """A cohort's identity and membership; its ranking and ledger are computed on first use.

        `summary`: (whether a member is source-native, the record holder's (value, observed_ns, id)),
        when the caller already knows them from the members and none is retracted (`take` while
        streaming, a cohort that only gained runs)."""
        first = self.nodes[members[0]]
        assert isinstance(first, Run)
        workload = self.nodes[first.workload]
        assert isinstance(workload, Workload)
        nodes = self.nodes
        source_native, best, retracted = self._summary(members) if summary is None else summary
        holder_ns = -1 if retracted else None if best is None else best[1]
        return Cohort(
            key,
            SOURCE_NATIVE if source_native else STRICT_EXACT,
            workload.operation,
            first.workload,
            first.protocol,
            first.environment,
            workload.correctness,
            metric_key(first.primary),
            self._gpu(first.environment, nodes.get(first.environment)),
            tuple(members),
            holder_ns,
            best,
        )

    # Queries --------------------------------------------------------------------------------------

    def named(self, name: str) -> tuple[str, ...]:
        """Digests of the manifests (of any kind) whose metadata.name is `name`."""
        found = self.names.get(name)
        if found is None:
            return ()
        return (found,) if isinstance(found, str) else found

    def place(self, run: str) -> Ranked | None:
        facts = self.facts.get(run)
        cohort = self.cohorts.get(facts.cohort) if facts is not None and facts.cohort is not None else None
        return cohort.place(self, run) if cohort is not None else None

    def rank(self, run: str) -> int | None:
        """The run's rank in its cohort; None when it is not ranked."""
        place = self.place(run)
        return place.rank if place else None

    def tied(self, run: str) -> bool:
        """Whether the run shares its rank with the run presented before it."""
        place = self.place(run)
        return place.tied_with_previous if place else False

    def prepare(self, pause: Callable[[], object] | None = None) -> None:
        """Compute every cohort's ranking and ledger, and build the `runs_by` indexes, now (they are
        otherwise made on first use), and hold the indexes' members as tuples (`kernelindex.registry.members.compact`):
        before saving a warm cache, or in the background after a server starts. The fan-out index first
        (`index_fan_out`): a graph `apply` derives before it is made has none (its refreshes then ask about
        each name), and the rest takes seconds.

        `pause`: called every 16 cohorts (default: let a waiting thread take the GIL now rather than
        after the switch interval); a server passes what waits while its requests run."""
        self.index_fan_out(pause)
        for _ in self.runs_by.values():  # builds each index not built yet (each compact, `RunIndexes`)
            pass
        for members in (*self.cohorts_by.values(), *self.children.values()):
            if type(members) is dict:  # a derived graph's layer holds few sets of its own, left as they are
                compact(members)  # at 1x 1.6 MB of sets, 0.35 MB so (here, not in the build: 0.2 s at 50x)
        if isinstance(self.names, NameIndex):
            self.names.built()
        for index, cohort in enumerate(list(self.cohorts.values())):
            cohort.place(self, "")
            cohort.events(self)
            if index % 16 == 15:
                if pause is None:
                    time.sleep(0)
                else:
                    pause()
        _ = self.records
        _ = self.cohorts_largest_first

    def index_fan_out(self, pause: Callable[[], object] | None = None) -> None:
        """Index the digests by fan-out folder now (`fan_out`): after a start, before the first
        refresh needs it (~80 ms at 215k manifests); a graph derived by `apply` keeps it.

        `pause`: called every 4096 manifests (as by `prepare`)."""
        if self._fan_out is None:
            self._fan_out = _fan_out_index(self.nodes, pause or _yield)

    def fan_out(self, folder: str) -> Sequence[str] | None:
        """The digests of the manifests this graph holds in one fan-out folder (`benchmark-runs/ab`),
        in the order of the folder's files at this graph's commit; None when not indexed yet.

        A refresh's tree diff (`GitStore.diff`) finds a change's additions to a folder from this by
        bisection, where it would otherwise look up each file of the folder's new tree in `nodes`.
        """
        index = self._fan_out
        return None if index is None else index.get(folder, ())

    def find(self, kinds: Collection[str], ident: str) -> Node | None:
        """The node of one of `kinds` that `ident` names: `sha256:<hex>`, a unique hex prefix of
        at least 12 digits (with or without `sha256:`), or a `metadata.name`.

        Raises:
            AmbiguousName: a prefix or a name matches several manifests.
        """
        text = ident.strip()
        hexpart = text.removeprefix("sha256:")
        if _HEX.fullmatch(hexpart):
            if len(hexpart) == 64:
                node = self.nodes.get("sha256:" + hexpart)
                return node if node is not None and node.kind in kinds else None
            if len(hexpart) >= MIN_PREFIX:
                # A scan (about 50 ns a manifest): prefixes are for people typing ids, not for hot paths.
                wanted = "sha256:" + hexpart
                matches = sorted(d for d in self.nodes if d.startswith(wanted) and self.nodes[d].kind in kinds)
                if len(matches) == 1:
                    return self.nodes[matches[0]]
                if matches:
                    raise AmbiguousName(ident, sorted(matches))
        named = sorted(d for d in self.named(text) if self.nodes[d].kind in kinds)
        if len(named) == 1:
            return self.nodes[named[0]]
        if named:  # each with its kind: `kind` (or a typed lookup) is the other way out
            raise AmbiguousName(ident, named, [f"{self.nodes[d].kind} {d}" for d in named])
        return None

    def find_cohort(self, key: str) -> Cohort | None:
        """A cohort by its key or a unique prefix of at least 12 hex digits.

        Raises:
            AmbiguousName: the prefix matches several cohorts.
        """
        return find_keyed(self.cohorts, key)

    def publication(self, digest: str) -> int | None:
        """The position on main of the commit that first contained the manifest; None if not on main."""
        return self.published_in.get(digest)

    def published_at(self, node: Node) -> int | None:
        """Committer time of the main commit that first contained the manifest."""
        position = self.published_in.get(node.digest)
        return None if position is None else self.mainline.times[position]

    @cached_property
    def first_published_here(self) -> tuple[str, ...]:
        """Digests of the manifests this graph's commit first published on main, by kind, name, digest.

        Empty off main. A manifest removed and added again later keeps its first publication, so a
        commit re-adding it does not list it: this is the publication record, not the commit's diff.
        """
        if self.position is None:
            return ()
        position, nodes = self.position, self.nodes
        found = [nodes[d] for d, at in self.published_in.items() if at == position and d in nodes]
        found.sort(key=lambda node: (node.kind, node.name, node.digest))
        return tuple(node.digest for node in found)

    def ordered_cohorts(self, keys: Iterable[str]) -> list[str]:
        """Some cohort keys, most members first, then by key: the order of cohort lists."""
        cohorts = self.cohorts
        return sorted(keys, key=lambda key: (-len(cohorts[key].members), key))

    @cached_property
    def cohorts_largest_first(self) -> tuple[str, ...]:
        """Every cohort key in `ordered_cohorts`' order, made once a graph (sorting 26,270 cohorts took ~25 ms
        of every first-asked `cohorts` page at 10x)."""
        return tuple(self.ordered_cohorts(self.cohorts))

    @cached_property
    def records(self) -> tuple[str, ...]:
        """Cohort keys with a record holder, newest holder first (then by key)."""
        if self._record_order is None:  # a graph from the warm cache sets this property itself
            self._record_order = sorted(self._record_entries(self.cohorts.values()))
        return tuple(key for _, key in self._record_order)


def _fan_out_key(node: Node) -> str | None:
    spec = KINDS.get(node.kind)
    return None if spec is None else f"{spec.folder}/{node.digest[7:9]}"


def _yield() -> None:
    time.sleep(0)  # let a waiting thread take the GIL now rather than after the switch interval


def _fan_out_index(nodes: Mapping[str, Node], pause: Callable[[], object]) -> dict[str, list[str]]:
    """Digests by fan-out folder, sorted: a manifest's file is `<hex>.json`, all of one length, and
    git orders a folder's files by name, so the order of the names is that of the digests."""
    found: dict[str, list[str]] = {}
    for index, (digest, node) in enumerate(nodes.items()):
        if index % 4096 == 4095:
            pause()
        key = _fan_out_key(node)
        if key is None:
            continue
        digests = found.get(key)
        if digests is None:
            found[key] = [digest]
        else:
            digests.append(digest)
    for digests in found.values():
        digests.sort()  # a cold build takes the manifests in this order already: a pass over each list
    return found


def _edited_fan_out(
    index: dict[str, list[str]], before: Mapping[str, Node], added: Sequence[Node], removed: Sequence[str]
) -> dict[str, list[str]]:
    """The fan-out index after a change: the folders it touches copied and edited, the rest shared."""
    edited = dict(index)
    copied: set[str] = set()

    def folder(key: str) -> list[str]:
        if key not in copied:
            copied.add(key)
            edited[key] = list(edited.get(key, ()))
        return edited[key]

    for digest in [*removed, *(node.digest for node in added)]:  # an added node replaces one of its digest
        node = before.get(digest)
        key = None if node is None else _fan_out_key(node)
        if key is not None:
            digests = folder(key)
            at = bisect_left(digests, digest)
            if at < len(digests) and digests[at] == digest:
                del digests[at]
    for node in added:
        key = _fan_out_key(node)
        if key is not None:
            digests = folder(key)
            at = bisect_left(digests, node.digest)
            if at == len(digests) or digests[at] != node.digest:
                digests.insert(at, node.digest)
    return edited


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


@dataclass(eq=False)
class _Streamed:
    """What `Graph.take(derive_runs=True)` derived of the runs as they arrived, for `derive`: each
    cohort's members, which cohorts have a source-native member, each cohort's least (value,
    observed_ns, id) of its eligible runs, the runs whose source falls back to their publishing
    commit, and whether some run came before a node it references (then `derive` does it all)."""

    members: dict[str, list[str]] = field(default_factory=dict)
    native: set[str] = field(default_factory=set)
    best: dict[str, tuple[float, int, str]] = field(default_factory=dict)
    sourceless: list[str] = field(default_factory=list)
    underived: bool = False

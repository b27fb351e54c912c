"""The graph of one commit, as it is read: every manifest as a node, the facts derived from them, and the indexes
queries need, with the lookups (`named`, `find`, `place`, `records` ...). Treat it as immutable once made.

Derived facts: each run's cohort, eligibility reasons, rank and tie, trust and integrity warnings; each cohort's
profile, ranking and record events; the records ledger. Overlays (retractions, supersessions, verifications) count
only when the commit that published them is signed by a maintainer: the builder is told which are.

A graph is made in one of three ways, each its own module: from scratch by the cold builder
(`kernelindex.registry.graph_build`), from its parent's graph and a change by the delta applier
(`kernelindex.registry.graph_apply`, which recomputes only the cohorts a change touches and shares every node with
the parent), or from the warm cache (`kernelindex.registry.graphcache`). Both builders derive facts and cohorts
alike (`kernelindex.registry.graph_derive`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from kernelindex.registry.cohorts import Ranked
from kernelindex.registry.errors import AmbiguousName
from kernelindex.registry.fan_out import fan_out_index, pause_briefly
from kernelindex.registry.graph_cohort import SOURCE_NATIVE, STRICT_EXACT, Cohort, gpu_keys
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.mainline import Mainline
from kernelindex.registry.members import Members, compact
from kernelindex.registry.name_index import NameIndex
from kernelindex.registry.nodes import Node
from kernelindex.registry.run_facts import RunFacts
from kernelindex.registry.run_indexes import RunIndexes

__all__ = [
    "MIN_PREFIX",
    "SOURCE_NATIVE",
    "STRICT_EXACT",
    "Cohort",
    "Graph",
    "Index",
    "Mainline",
    "RunFacts",
    "find_keyed",
    "gpu_keys",
    "record_entries",
]

MIN_PREFIX = 12
"""The shortest digest prefix accepted as an id: at a million manifests 12 hex digits rarely collide."""
_HEX = re.compile(r"[0-9a-f]+")
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


Index = MutableMapping[str, Members]


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
    # parent's in a graph derived by `graph_apply.apply` (so that deriving costs the change, not the registry).
    nodes: MutableMapping[str, Node] = field(default_factory=dict)
    facts: MutableMapping[str, RunFacts] = field(default_factory=dict)
    cohorts: MutableMapping[str, Cohort] = field(default_factory=dict)
    # metadata.name -> its digest, or a tuple of them when several manifests share it (any kind):
    # a million names cost a million tuples otherwise. Read it through `named`.
    names: MutableMapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    # Runs by environment, implementation, workload, operation, source and GPU: each built on first
    # read from this graph's nodes and facts (`RunIndexes`), not by the cold build. A graph derived by
    # `graph_apply.apply`, or read from the warm cache, is given the ones already built.
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
    # The records ledger's order as (-holder time, cohort key), sorted: made with the cohorts, then
    # edited by each change (a first `records` query after a start or a refresh waits for nothing).
    record_order: list[tuple[int, str]] | None = field(default=None, repr=False)
    # The digests in each fan-out folder (`<kind-folder>/<hh>`), sorted as git sorts the folder's
    # files: made by `index_fan_out` and kept by `graph_apply.apply` (see `fan_out`).
    by_folder: dict[str, list[str]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.runs_by = RunIndexes(self.nodes, self.facts)

    # Queries --------------------------------------------------------------------------------------

    def honoured(self, node: Node) -> bool:
        """An overlay counts when main published it in a commit signed by a maintainer."""
        position = self.published_in.get(node.digest, -1)
        return position >= 0 and self.mainline.commits[position] in self.honoured_commits

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
        (`index_fan_out`): a graph `graph_apply.apply` derives before it is made has none (its refreshes then ask about
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
        refresh needs it (~80 ms at 215k manifests); a graph derived by `graph_apply.apply` keeps it.

        `pause`: called every 4096 manifests (as by `prepare`)."""
        if self.by_folder is None:
            self.by_folder = fan_out_index(self.nodes, pause or pause_briefly)

    def fan_out(self, folder: str) -> Sequence[str] | None:
        """The digests of the manifests this graph holds in one fan-out folder (`benchmark-runs/ab`),
        in the order of the folder's files at this graph's commit; None when not indexed yet.

        A refresh's tree diff (`GitStore.diff`) finds a change's additions to a folder from this by
        bisection, where it would otherwise look up each file of the folder's new tree in `nodes`.
        """
        index = self.by_folder
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
        if self.record_order is None:  # a graph from the warm cache sets this property itself
            self.record_order = sorted(record_entries(self, self.cohorts.values()))
        return tuple(key for _, key in self.record_order)


def record_entries(graph: Graph, cohorts: Iterable[Cohort]) -> Iterator[tuple[int, str]]:
    """(-holder time, key) of the cohorts that have a record holder."""
    for cohort in cohorts:
        at = cohort.holder_ns(graph)
        if at is not None:
            yield -at, cohort.key

"""The one read API over a graph: which runs, cohorts, records and manifests a question names, in which order.

Every edge (GraphQL resolvers, feeds, exports, the sitemap, llms.txt, permalinks, MCP, the CLI) asks these
functions, never the graph's indexes (`runs_by`, `cohorts_by`, `children`, `overlays`, `names`, `published_in`):
so "which runs of this operation" has one answer, whatever asks it (tests/test_layers.py holds the rule).

Questions are typed values: a filter is a frozen dataclass whose conditions all hold (None: no condition), an
order is an enum. References in a filter are already resolved (a set of digests: the edge says what an id
names, and an id naming nothing is the empty set, which keeps nothing). Answers are digests (runs), cohort keys
(cohorts, records) or nodes, in a fixed order for a commit: equal questions give equal lists.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

from kernelindex.registry import deployability
from kernelindex.registry import nodes as n
from kernelindex.registry.cohorts import RecordEvent, Trust
from kernelindex.registry.graph import Cohort, Graph
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.search import gpu_keys_matching

__all__ = [
    "ALL_KINDS",
    "ChildList",
    "CohortFilter",
    "CohortIndex",
    "CohortOrder",
    "ImplementationFactsOf",
    "OverlayList",
    "RecordFilter",
    "RecordOrder",
    "RunFilter",
    "RunIndex",
    "RunOrder",
    "children_of",
    "cohort",
    "cohorts",
    "cohorts_with",
    "holder",
    "implementation_passes",
    "kind_of",
    "largest_run_group",
    "manifest",
    "node",
    "ordered_cohort_runs",
    "ordered_runs",
    "ordered_runs_with",
    "overlays_on",
    "publications",
    "records",
    "runs",
    "runs_with",
]

ALL_KINDS: Collection[str] = KINDS.keys()
"""Every manifest kind: what `manifest` looks among unless told."""

ImplementationFactsOf = Callable[[n.Implementation], deployability.ImplementationFacts]
"""Reads an implementation's facts (its licence, install recipe, deployability) from its stored manifest: the
edge holds the stored objects, so a filter on those facts is given one."""


class RunOrder(enum.Enum):
    """The order of a list of runs; each then by digest, so ties have one order."""

    NEWEST_OBSERVED = "newest_observed"
    OLDEST_OBSERVED = "oldest_observed"
    NEWEST_PUBLISHED = "newest_published"  # unpublished runs last
    OLDEST_PUBLISHED = "oldest_published"  # unpublished runs last
    LOWEST_VALUE = "lowest_value"  # latencies across time units; other units after, by unit; no value last
    HIGHEST_VALUE = "highest_value"


class CohortOrder(enum.Enum):
    """The order of a list of cohorts."""

    LARGEST = "largest"  # most runs first, then by key
    NEWEST_RECORD = "newest_record"  # the latest change of holder first; cohorts without a record last, by key
    KEY = "key"


class RecordOrder(enum.Enum):
    """The order of the records ledger (cohorts with a holder)."""

    NEWEST = "newest"  # the latest change of holder first, then by key
    OLDEST = "oldest"  # NEWEST reversed
    NEWEST_PUBLISHED = "newest_published"  # the holder published most recently on main first
    LARGEST_COHORT = "largest_cohort"


class RunIndex(enum.Enum):
    """What runs are looked up by (`runs_with`): a node's reference, or a derived fact."""

    ENVIRONMENT = "environment"
    IMPLEMENTATION = "implementation"
    WORKLOAD = "workload"
    OPERATION = "operation"
    SOURCE = "source"  # a source's slug
    GPU = "gpu"  # a lower-cased product or architecture (`kernelindex.registry.graph.gpu_keys`)


class CohortIndex(enum.Enum):
    """What cohorts are looked up by (`cohorts_with`)."""

    OPERATION = "operation"
    WORKLOAD = "workload"
    GPU = "gpu"


class ChildList(enum.Enum):
    """Manifests that name another (`children_of`): an operation's workloads and implementations, a project's
    implementations (by the project's name), a serving configuration's runs."""

    WORKLOADS = "workloads"
    IMPLEMENTATIONS = "implementations"
    PROJECT_IMPLEMENTATIONS = "project_implementations"
    SERVING_RUNS = "serving_runs"


class OverlayList(enum.Enum):
    """Lifecycle manifests about a run (`overlays_on`), honoured or not."""

    ATTESTATIONS = "attestations"
    RETRACTIONS = "retractions"
    SUPERSESSIONS = "supersessions"
    VERIFICATIONS = "verifications"


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Conditions on runs; every one given must hold (None, or False for the flags: no condition)."""

    operations: frozenset[str] | None = None  # runs of one of these operations (digests)
    gpu: str | None = None  # a product, a word of it or an architecture, any case ("b200", "sm_100")
    source: str | None = None  # a source's slug (surrounding spaces ignored)
    statuses: frozenset[str] | None = None  # a run's `status` as its manifest spells it ("passed"); empty: none
    min_trust: Trust | None = None
    trusts: frozenset[Trust] | None = None
    eligible_only: bool = False
    observed_since_ns: int | None = None  # observed at or after
    implementations: frozenset[str] | None = None
    workloads: frozenset[str] | None = None
    cohorts: frozenset[str] | None = None  # cohort keys
    deployable_only: bool = False  # the implementation is deployable (deployability-v1)
    license_known: bool | None = None  # the implementation's licence is known (True) or not (False)
    installable: bool | None = None  # the implementation's manifest says how to install it (True) or not

    @property
    def on_implementations(self) -> bool:
        """Whether a condition reads implementations' stored facts (and `runs` then needs `facts`)."""
        return self.deployable_only or self.license_known is not None or self.installable is not None


@dataclass(frozen=True, slots=True)
class CohortFilter:
    """Conditions on cohorts; every one given must hold."""

    operations: frozenset[str] | None = None
    gpu: str | None = None
    workloads: frozenset[str] | None = None
    min_size: int | None = None  # at least this many runs (0 or None: any)


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Conditions on the records ledger; every one given must hold."""

    operations: frozenset[str] | None = None
    gpu: str | None = None
    source: str | None = None  # the holder's source
    since_ns: int | None = None  # the record was taken at or after


# Lookups --------------------------------------------------------------------------------------------------------


def manifest(graph: Graph, ident: str, kinds: Collection[str] = ALL_KINDS) -> n.Node | None:
    """The manifest of one of `kinds` that `ident` names: a digest, a unique hex prefix of at least 12 digits
    or a `metadata.name`; None when it names none.

    Raises:
        AmbiguousName: a prefix or a name names several.
    """
    return graph.find(kinds, ident)


def node(graph: Graph, digest: str) -> n.Node | None:
    """The manifest at exactly `digest` (`sha256:<64 hex>`); None when the graph holds none."""
    return graph.nodes.get(digest)


def kind_of(graph: Graph, digest: str) -> str | None:
    """The kind of the manifest at `digest` (`BenchmarkRun`...); None when the graph holds none."""
    node = graph.nodes.get(digest)
    return None if node is None else node.kind


def cohort(graph: Graph, key: str) -> Cohort | None:
    """A cohort by its key or a unique prefix of at least 12 hex digits; None when none.

    Raises:
        AmbiguousName: the prefix names several.
    """
    return graph.find_cohort(key)


def runs_with(graph: Graph, index: RunIndex, key: str) -> Collection[str]:
    """The runs (digests, unordered) whose `index` is `key`: `runs_with(g, RunIndex.OPERATION, digest)`."""
    found: Collection[str] = graph.runs_by[index.value].get(key, ())
    return found


def largest_run_group(graph: Graph, index: RunIndex) -> int:
    """How many runs share the commonest key of `index` (0 without runs): the most a scan of one key's runs
    touches, as a query's cost counts it."""
    return max((len(group) for group in graph.runs_by[index.value].values()), default=0)


def cohorts_with(graph: Graph, index: CohortIndex, key: str) -> Collection[str]:
    """The cohort keys (unordered) whose `index` is `key`."""
    found: Collection[str] = graph.cohorts_by[index.value].get(key, ())
    return found


def children_of(graph: Graph, children: ChildList, key: str) -> Collection[str]:
    """The digests (unordered) of the manifests that name `key` (a digest; a project's name for
    PROJECT_IMPLEMENTATIONS)."""
    found: Collection[str] = graph.children[children.value].get(key, ())
    return found


def overlays_on(graph: Graph, overlays: OverlayList, run: str) -> Collection[str]:
    """The digests (unordered) of the lifecycle manifests of one list about `run`."""
    found: Collection[str] = graph.overlays[overlays.value].get(run, ())
    return found


def publications(graph: Graph) -> Mapping[str, int]:
    """digest -> position on main of the commit that first published it (`graph.mainline` names the commit),
    for every manifest main ever published (some since removed: look each up in `graph.nodes`)."""
    return graph.published_in


def holder(graph: Graph, key: str) -> RecordEvent:
    """The event that made a record's holder (`key` is in `records`)."""
    event = graph.cohorts[key].holder(graph)
    assert event is not None, "the ledger lists cohorts with a holder only"
    return event


def implementation_passes(
    facts: deployability.ImplementationFacts,
    *,
    deployable_only: bool = False,
    license_known: bool | None = None,
    installable: bool | None = None,
) -> bool:
    """Whether an implementation's facts pass the conditions (None: either way)."""
    if deployable_only and not facts.deployability.deployable:
        return False
    if license_known is not None and facts.licence.known is not license_known:
        return False
    return installable is None or facts.installable is installable


# Lists ----------------------------------------------------------------------------------------------------------

_TIME_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
"""Time units in ns: latencies compare across them when a list is ordered by value."""


def ordered_runs(graph: Graph, digests: Iterable[str], order: RunOrder = RunOrder.NEWEST_OBSERVED) -> list[str]:
    """Runs in `order`, then by digest: a stable order for a commit."""
    nodes: Any = graph.nodes
    if order is RunOrder.NEWEST_OBSERVED:
        return sorted(digests, key=lambda d: (-nodes[d].observed_ns, d))
    if order is RunOrder.OLDEST_OBSERVED:
        return sorted(digests, key=lambda d: (nodes[d].observed_ns, d))
    if order in (RunOrder.NEWEST_PUBLISHED, RunOrder.OLDEST_PUBLISHED):
        sign = -1 if order is RunOrder.NEWEST_PUBLISHED else 1

        def published(d: str) -> tuple[bool, int, int, str]:
            position = graph.publication(d)
            return (position is None, sign * (position or 0), -nodes[d].observed_ns, d)

        return sorted(digests, key=published)
    sign = 1 if order is RunOrder.LOWEST_VALUE else -1

    def valued(d: str) -> tuple[bool, str, float, str]:
        primary = nodes[d].primary
        if primary is None:
            return (True, "", 0.0, d)
        scale = _TIME_UNITS.get(primary.unit)
        return (False, "" if scale else primary.unit, sign * primary.value * (scale or 1), d)

    return sorted(digests, key=valued)


def _kept_order(graph: Graph, key: Hashable, runs: Callable[[], Iterable[str]], order: RunOrder) -> Sequence[str]:
    """`runs()` in `order`, sorted once a graph for each `key` and order, then kept with it (graphs are not
    changed once served)."""
    kept: dict[tuple[Hashable, RunOrder], tuple[str, ...]] = graph.__dict__.setdefault("_kept_orders", {})
    found = kept.get((key, order))
    if found is None:
        found = kept[(key, order)] = tuple(ordered_runs(graph, runs(), order))
    return found


def ordered_runs_with(
    graph: Graph, index: RunIndex, key: str, order: RunOrder = RunOrder.NEWEST_OBSERVED
) -> Sequence[str]:
    """The runs whose `index` is `key`, in `order`, sorted once a graph for each key and order. However many
    times a query asks (an operation's runs for each of 100 operations, or for the same one through 100 of its
    runs), a graph sorts each of its runs at most once per order for an index: what a query's cost charges such
    a field, at most the number of runs (`kernelindex.engine.cost`)."""
    return _kept_order(graph, (index, key), lambda: runs_with(graph, index, key), order)


def ordered_cohort_runs(graph: Graph, key: str, order: RunOrder = RunOrder.NEWEST_OBSERVED) -> Sequence[str]:
    """Every run of the cohort `key` (eligible or not), in `order`, sorted once a graph for each cohort and
    order, as `ordered_runs_with` sorts an index's runs (a cohort's members are one cohort's alone).

    Raises:
        KeyError: no cohort has that key at this graph.
    """
    members = graph.cohorts[key].members
    return _kept_order(graph, ("cohort", key), lambda: set(members), order)


def _all_runs(graph: Graph, order: RunOrder = RunOrder.NEWEST_OBSERVED) -> Sequence[str]:
    """Every run in `order`, sorted once a graph for each order (14-22 ms for 9,508 runs; a query that orders or
    filters every run then walks this list, ~0.1 us a run, rather than sorting again)."""
    return _kept_order(graph, "every run", lambda: set(graph.facts), order)


def _in_order(graph: Graph, chosen: set[str], order: RunOrder) -> Sequence[str]:
    """`chosen` (runs of `graph`) in `order`: a few sorted on their own, many picked from every run in order,
    which gives the same list (the order is total: it ends with the digest)."""
    if len(chosen) * 16 < len(graph.facts):
        return ordered_runs(graph, chosen, order)
    return [digest for digest in _all_runs(graph, order) if digest in chosen]


class _Narrowed:
    """The intersection of the candidate sets given so far (None: no condition yet)."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: set[str] | None = None

    def by(self, found: Collection[str]) -> None:
        self.found = set(found) if self.found is None else self.found.intersection(found)


def _by_refs(index: Mapping[str, Collection[str]], refs: frozenset[str]) -> set[str]:
    return {item for ref in refs for item in index.get(ref, ())}


def _by_gpu(index: Mapping[str, Collection[str]], text: str) -> set[str]:
    return {item for key in gpu_keys_matching(text, index) for item in index[key]}


def runs(
    graph: Graph,
    where: RunFilter | None = None,
    order: RunOrder = RunOrder.NEWEST_OBSERVED,
    *,
    facts: ImplementationFactsOf | None = None,
) -> Sequence[str]:
    """The runs (digests) that pass `where`, in `order`.

    `facts` reads an implementation's stored facts; it is needed when `where` has a condition on them
    (`RunFilter.on_implementations`), and each implementation is judged once per call.

    Raises:
        ValueError: a condition on implementations' facts without `facts`.
    """
    if where is None:
        return _all_runs(graph, order)
    return _in_order(graph, _filtered_runs(graph, where, facts), order)


def _filtered_runs(graph: Graph, where: RunFilter, facts_of: ImplementationFactsOf | None) -> set[str]:
    if where.on_implementations and facts_of is None:
        raise ValueError("a filter on implementations' facts needs `facts` to read them")
    narrowed = _Narrowed()
    if where.operations is not None:
        narrowed.by(_by_refs(graph.runs_by["operation"], where.operations))
    if where.gpu is not None:
        narrowed.by(_by_gpu(graph.runs_by["gpu"], where.gpu))
    if where.source is not None:
        narrowed.by(graph.runs_by["source"].get(where.source.strip(), ()))
    if where.implementations is not None:
        narrowed.by(_by_refs(graph.runs_by["implementation"], where.implementations))
    if where.workloads is not None:
        narrowed.by(_by_refs(graph.runs_by["workload"], where.workloads))
    if where.cohorts is not None:
        narrowed.by({d for key in where.cohorts if (c := graph.cohorts.get(key)) is not None for d in c.members})
    pool: Iterable[str] = narrowed.found if narrowed.found is not None else graph.facts.keys()
    passes = _implementation_test(graph, where, facts_of) if where.on_implementations else None
    statuses, trusts, minimum, since = where.statuses, where.trusts, where.min_trust, where.observed_since_ns
    kept: set[str] = set()
    for digest in pool:
        node = graph.nodes[digest]
        fact = graph.facts[digest]
        assert isinstance(node, n.Run)
        if statuses is not None and node.status not in statuses:
            continue
        if trusts is not None and fact.trust not in trusts:
            continue
        if minimum is not None and fact.trust < minimum:
            continue
        if where.eligible_only and not fact.eligible:
            continue
        if since is not None and node.observed_ns < since:
            continue
        if passes is not None and not passes(node.implementation):
            continue
        kept.add(digest)
    return kept


def _implementation_test(graph: Graph, where: RunFilter, facts_of: Any) -> Callable[[str], bool]:
    judged: dict[str, bool] = {}

    def test(digest: str) -> bool:
        found = judged.get(digest)
        if found is None:
            node = graph.nodes.get(digest)
            found = judged[digest] = isinstance(node, n.Implementation) and implementation_passes(
                facts_of(node),
                deployable_only=where.deployable_only,
                license_known=where.license_known,
                installable=where.installable,
            )
        return found

    return test


def records(graph: Graph, where: RecordFilter | None = None, order: RecordOrder = RecordOrder.NEWEST) -> list[str]:
    """The records ledger's cohort keys that pass `where`, in `order`."""
    keys: list[str] = list(graph.records)
    if where is not None:
        if where.operations is not None:
            wanted = _by_refs(graph.cohorts_by["operation"], where.operations)
            keys = [k for k in keys if k in wanted]
        if where.gpu is not None:
            on_gpu = _by_gpu(graph.cohorts_by["gpu"], where.gpu)
            keys = [k for k in keys if k in on_gpu]
        if where.source is not None:
            source = where.source.strip()
            keys = [k for k in keys if graph.facts[holder(graph, k).run].source == source]
        if where.since_ns is not None:
            since = where.since_ns
            keys = [k for k in keys if holder(graph, k).at_ns >= since]
    if order is RecordOrder.OLDEST:
        keys.reverse()
    elif order is RecordOrder.NEWEST_PUBLISHED:
        keys.sort(key=lambda k: (-(graph.publication(holder(graph, k).run) or -1), k))
    elif order is RecordOrder.LARGEST_COHORT:
        keys.sort(key=lambda k: (-len(graph.cohorts[k].members), k))
    return keys


def cohorts(graph: Graph, where: CohortFilter | None = None, order: CohortOrder = CohortOrder.LARGEST) -> Sequence[str]:
    """The cohort keys that pass `where`, in `order`."""
    narrowed = _Narrowed()
    if where is not None:
        if where.operations is not None:
            narrowed.by(_by_refs(graph.cohorts_by["operation"], where.operations))
        if where.gpu is not None:
            narrowed.by(_by_gpu(graph.cohorts_by["gpu"], where.gpu))
        if where.workloads is not None:
            narrowed.by(_by_refs(graph.cohorts_by["workload"], where.workloads))
    least = where.min_size if where is not None else None
    if narrowed.found is None and order is CohortOrder.LARGEST:  # every cohort, or the largest: the graph's order
        everything = graph.cohorts_largest_first
        if not least:
            return everything
        table = graph.cohorts
        return list(takewhile(lambda key: len(table[key].members) >= least, everything))
    pool = set(graph.cohorts) if narrowed.found is None else narrowed.found
    if least:
        pool = {k for k in pool if len(graph.cohorts[k].members) >= least}
    if order is CohortOrder.KEY:
        return sorted(pool)
    if order is CohortOrder.NEWEST_RECORD:
        ranked = [k for k in graph.records if k in pool]
        return ranked + sorted(pool - set(ranked))
    return graph.ordered_cohorts(pool)

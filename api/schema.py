"""The root of the API: `registry(at:)` and its head shortcuts, and the strawberry schema with its limits."""

from __future__ import annotations

import enum
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import AddValidationRules, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter

import registry
from api import types as t
from api.cache import ByteLRU
from api.context import StoredObjects
from api.cost import CostModel
from api.errors import BadUserInput, ErrorCodes
from api.pipeline import CostLimit, DocumentCache, ParsedDocument
from api.types import serving_root as st
from api.types.base import Info
from api.types.deployment import facts_of, implementation_passes
from api.types.node_root import NodeRoot
from api.types.read_root import ReadRoot
from api.types.search_root import SearchRoot
from registry import nodes as n
from registry.graph import Graph
from registry.provenance import utc_instant
from registry.search import gpu_keys_matching, tokens

__all__ = ["DOCUMENTS", "LIMITS", "Query", "Snapshot", "schema"]

LIMITS = {
    "max_depth": 12,  # the deepest useful query (a dossier) is 7
    "max_aliases": 20,
    "max_tokens": 4000,  # the dossier query is ~250
    "max_query_bytes": 64 * 1024,
    "max_page": t.MAX_PAGE,
    "max_cost": 25_000,  # fields an operation may resolve (api.cost); 10 x runs(first: 100) with 12 fields is ~12,000
    "document_cache_bytes": 32 * 1024 * 1024,
}


@strawberry.input(description="Narrow a list of runs; every given condition must hold.")
class RunFilter:
    operation: str | None = strawberry.field(default=None, description="An operation id (digest, prefix or name).")
    gpu: str | None = strawberry.field(
        default=None,
        description="A GPU product, a word of it or an architecture, any case: 'NVIDIA B200', 'b200', 'sm_100'.",
    )
    source: str | None = strawberry.field(default=None, description="A source slug: sol-execbench, community...")
    status: list[t.RunStatus] | None = None
    min_trust: t.Trust | None = None
    trust: list[t.Trust] | None = None
    eligible_only: bool = False
    observed_since: str | None = strawberry.field(default=None, description="An ISO 8601 UTC instant.")
    implementation: str | None = None
    workload: str | None = None
    cohort: str | None = None
    deployable_only: bool = strawberry.field(
        default=False,
        description="Only runs whose implementation is deployable under deployability-v1 (public source, an "
        "install recipe, a known licence: `Implementation.deployability`).",
    )
    license_known: bool | None = strawberry.field(
        default=None,
        description="true: only runs whose implementation's licence is known (an SPDX expression was concluded); "
        "false: only those whose licence is unknown; null: either.",
    )
    installable: bool | None = strawberry.field(
        default=None,
        description="true: only runs whose implementation's manifest gives a way to install it; false: only those "
        "whose does not; null: either.",
    )


@strawberry.input
class CohortFilter:
    operation: str | None = None
    gpu: str | None = None
    workload: str | None = None
    min_size: int | None = None


@strawberry.enum
class CohortOrder(enum.Enum):
    LARGEST = "largest"
    NEWEST_RECORD = "newest_record"
    KEY = "key"


def _lookup(graph: Graph, kinds: tuple[str, ...], ident: str) -> n.Node | None:
    return graph.find(kinds, ident)


def _implementation_test(graph: Graph, objects: StoredObjects, f: RunFilter) -> Callable[[str], bool] | None:
    """Whether an implementation (a digest) passes the filter's conditions on implementation facts; None
    when the filter has none. Each implementation is judged once per call (its facts are kept longer:
    `api.types.deployment.facts_of`)."""
    if not f.deployable_only and f.license_known is None and f.installable is None:
        return None
    judged: dict[str, bool] = {}

    def test(digest: str) -> bool:
        found = judged.get(digest)
        if found is None:
            node = graph.nodes.get(digest)
            found = judged[digest] = isinstance(node, n.Implementation) and implementation_passes(
                facts_of(objects, node),
                deployable_only=f.deployable_only,
                license_known=f.license_known,
                installable=f.installable,
            )
        return found

    return test


def _filtered_runs(graph: Graph, f: RunFilter | None, objects: StoredObjects) -> list[str]:
    if f is None:
        return _all_runs(graph)
    candidates: set[str] | None = None

    def narrow(found: AbstractSet[str]) -> None:
        nonlocal candidates
        candidates = set(found) if candidates is None else candidates.intersection(found)

    if f.operation is not None:
        node = graph.find(("OperationSpec",), f.operation)
        narrow(graph.runs_by["operation"].get(node.digest, set()) if node else set())
    if f.gpu is not None:  # any case, a product word or an architecture: "b200", "NVIDIA B200", "sm_100"
        index = graph.runs_by["gpu"]
        narrow({d for key in gpu_keys_matching(f.gpu, index) for d in index[key]})
    if f.source is not None:
        narrow(graph.runs_by["source"].get(f.source.strip(), set()))
    if f.implementation is not None:
        node = graph.find(("ImplementationRevision",), f.implementation)
        narrow(graph.runs_by["implementation"].get(node.digest, set()) if node else set())
    if f.workload is not None:
        node = graph.find(("WorkloadCase", "WorkloadSuite"), f.workload)
        narrow(graph.runs_by["workload"].get(node.digest, set()) if node else set())
    if f.cohort is not None:
        cohort = graph.find_cohort(f.cohort)
        narrow(set(cohort.members) if cohort else set())
    pool: Any = candidates if candidates is not None else graph.facts.keys()
    implementations = _implementation_test(graph, objects, f)
    statuses = {s.value for s in f.status} if f.status else None
    trusts = {t.trust_of_enum(x) for x in f.trust} if f.trust else None
    minimum = t.trust_of_enum(f.min_trust) if f.min_trust else None
    since = n.instant_ns(f.observed_since) if f.observed_since else None
    kept = []
    for digest in pool:
        node = graph.nodes[digest]
        facts = graph.facts[digest]
        assert isinstance(node, n.Run)
        if statuses is not None and node.status not in statuses:
            continue
        if trusts is not None and facts.trust not in trusts:
            continue
        if minimum is not None and facts.trust < minimum:
            continue
        if f.eligible_only and not facts.eligible:
            continue
        if since is not None and node.observed_ns < since:
            continue
        if implementations is not None and not implementations(node.implementation):
            continue
        kept.append(digest)
    return t.ordered_runs(graph, set(kept))


def _has_words(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether the words of `needle` appear in order, the last as a prefix: "fused att" finds "fused attention"."""
    for i in range(len(haystack) - len(needle) + 1):
        window = haystack[i : i + len(needle)]
        if window[:-1] == needle[:-1] and window[-1].startswith(needle[-1]):
            return True
    return False


def _all_runs(graph: Graph) -> list[str]:
    cached: list[str] | None = graph.__dict__.get("_all_runs")
    if cached is None:
        cached = t.ordered_runs(graph, set(graph.facts))
        graph.__dict__["_all_runs"] = cached
    return cached


def _filtered_cohorts(graph: Graph, f: CohortFilter | None, order: CohortOrder) -> list[str]:
    keys: set[str] | None = None

    def narrow(found: AbstractSet[str]) -> None:
        nonlocal keys
        keys = set(found) if keys is None else keys.intersection(found)

    if f is not None:
        if f.operation is not None:
            node = graph.find(("OperationSpec",), f.operation)
            narrow(graph.cohorts_by["operation"].get(node.digest, set()) if node else set())
        if f.gpu is not None:
            index = graph.cohorts_by["gpu"]
            narrow({k for key in gpu_keys_matching(f.gpu, index) for k in index[key]})
        if f.workload is not None:
            node = graph.find(("WorkloadCase", "WorkloadSuite"), f.workload)
            narrow(graph.cohorts_by["workload"].get(node.digest, set()) if node else set())
    pool = set(graph.cohorts) if keys is None else keys
    if f is not None and f.min_size:
        pool = {k for k in pool if len(graph.cohorts[k].members) >= f.min_size}
    if order == CohortOrder.KEY:
        return sorted(pool)
    if order == CohortOrder.NEWEST_RECORD:
        records = graph.records
        ranked = [k for k in records if k in pool]
        return ranked + sorted(pool - set(ranked))
    return t.ordered_cohorts(graph, pool)


@strawberry.type(description="The registry at one commit. Every field answers for that commit only.")
class Snapshot(st.ServingRoot, SearchRoot, ReadRoot):
    _graph: strawberry.Private[Graph | None] = None

    def _g(self, info: Info) -> Graph:
        return self._graph if self._graph is not None else info.context.graph(None)

    def _at(self, graph: Graph) -> Snapshot:
        return Snapshot(_graph=graph)

    @strawberry.field(description="The commit this snapshot shows.")
    def commit(self, info: Info) -> t.Commit:
        return t.commit_type(info.context, self._g(info).commit)

    @strawberry.field(description="Its committer time, ISO 8601 UTC.")
    def committed_at(self, info: Info) -> str:
        return utc_instant(self._g(info).committed_at)

    @strawberry.field(description="Manifests by kind.")
    def counts(self, info: Info) -> list[t.KindCount]:
        totals: dict[str, int] = {}
        for node in self._g(info).nodes.values():
            totals[node.kind] = totals.get(node.kind, 0) + 1
        return [t.KindCount(kind=k, count=v) for k, v in sorted(totals.items())]

    @strawberry.field(
        description="Manifests this snapshot's commit first published on main, by kind, then name; `kind` narrows "
        "(`BenchmarkRun`). Empty for a commit off main. The publication record, not the diff: a manifest "
        "removed and added again stays with the commit that first published it."
    )
    @t.follows_cursor
    def published(
        self,
        info: Info,
        kind: str | None = None,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.Manifest]:
        graph = self._g(info)
        t.page_bounds(first)
        digests = graph.first_published_here
        if kind is not None:
            if kind not in registry.KINDS:
                raise BadUserInput(f"kind: expected one of {', '.join(sorted(registry.KINDS))}, not {kind!r}")
            digests = tuple(d for d in digests if graph.nodes[d].kind == kind)
        return t.paginate(
            graph,
            digests,
            t.Window(first, after, last, before),
            lambda d: t.Manifest(_graph=graph, _node=graph.nodes[d]),
        )

    @strawberry.field(description="How many manifests of each kind `published` lists, by kind.")
    def published_counts(self, info: Info) -> list[t.KindCount]:
        graph = self._g(info)
        totals: dict[str, int] = {}
        for digest in graph.first_published_here:
            kind = graph.nodes[digest].kind
            totals[kind] = totals.get(kind, 0) + 1
        return [t.KindCount(kind=k, count=v) for k, v in sorted(totals.items())]

    @strawberry.field(description="A run by digest, unique hex prefix (>= 12) or metadata.name.")
    def run(self, info: Info, id: str) -> t.Run | None:
        node = _lookup(self._g(info), ("BenchmarkRun",), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field(description="Runs, newest observation first.")
    @t.follows_cursor
    def runs(
        self,
        info: Info,
        filter: RunFilter | None = None,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.Run]:
        graph = self._g(info)
        t.page_bounds(first)
        digests = _filtered_runs(graph, filter, info.context.objects)
        return t.paginate(graph, digests, t.Window(first, after, last, before), lambda d: t.typed(graph, d, t.Run))

    @strawberry.field(description="A cohort by its key (or a unique prefix of >= 12 hex digits).")
    def cohort(self, info: Info, key: str) -> t.Cohort | None:
        graph = self._g(info)
        cohort = graph.find_cohort(key)
        return t.Cohort(_graph=graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="Cohorts, largest first unless ordered otherwise.")
    @t.follows_cursor
    def cohorts(
        self,
        info: Info,
        filter: CohortFilter | None = None,
        order: CohortOrder = CohortOrder.LARGEST,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.Cohort]:
        graph = self._g(info)
        t.page_bounds(first)
        keys = _filtered_cohorts(graph, filter, order)
        return t.paginate(
            graph,
            keys,
            t.Window(first, after, last, before),
            lambda k: t.Cohort(_graph=graph, _cohort=graph.cohorts[k]),
        )

    @strawberry.field
    def operation(self, info: Info, id: str) -> t.Operation | None:
        return t.node_type(self._g(info), _lookup(self._g(info), ("OperationSpec",), id))  # type: ignore[no-any-return]

    @strawberry.field(description="Operations by name; `family` narrows, `search` matches name or title.")
    @t.follows_cursor
    def operations(
        self,
        info: Info,
        family: str | None = None,
        search: str | None = None,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.Operation]:
        graph = self._g(info)
        t.page_bounds(first)
        # Words, case-insensitive, split on _, - and spaces: "fused attention" finds fused_attention_*.
        needle = tokens(search) if search else None

        def matches(node: n.Operation) -> bool:
            if not needle:
                return True
            return _has_words(tokens(node.name), needle) or _has_words(tokens(node.title or ""), needle)

        found = sorted(
            (
                node
                for node in graph.nodes.values()
                if isinstance(node, n.Operation) and (family is None or node.family == family) and matches(node)
            ),
            key=lambda node: (node.name, node.digest),
        )
        return t.paginate(
            graph, found, t.Window(first, after, last, before), lambda node: t.Operation(_graph=graph, _node=node)
        )

    @strawberry.field
    def workload(self, info: Info, id: str) -> t.Workload | None:
        node = _lookup(self._g(info), ("WorkloadCase", "WorkloadSuite"), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field
    def implementation(self, info: Info, id: str) -> t.Implementation | None:
        node = _lookup(self._g(info), ("ImplementationRevision",), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field
    def project(self, info: Info, id: str) -> t.Project | None:
        return t.node_type(self._g(info), _lookup(self._g(info), ("SoftwareProject",), id))  # type: ignore[no-any-return]

    @strawberry.field
    def protocol(self, info: Info, id: str) -> t.Protocol | None:
        return t.node_type(self._g(info), _lookup(self._g(info), ("BenchmarkProtocol",), id))  # type: ignore[no-any-return]

    @strawberry.field
    def environment(self, info: Info, id: str) -> t.Environment | None:
        node = _lookup(self._g(info), ("ExecutionEnvironment",), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field(description="Any manifest, of any kind, by digest (or unique prefix, or name).")
    def manifest(self, info: Info, digest: str) -> t.Manifest | None:
        graph = self._g(info)
        node = graph.find(registry.KINDS.keys(), digest)
        return t.Manifest(_graph=graph, _node=node) if node else None

    @strawberry.field(description="The records ledger: one entry per cohort with a record, newest holder first.")
    @t.follows_cursor
    def records(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> t.Connection[t.RecordEntry]:
        graph = self._g(info)
        return t.paginate(
            graph,
            graph.records,
            t.Window(first, after, last, before),
            lambda k: t.RecordEntry(_graph=graph, _cohort=graph.cohorts[k]),
        )

    @strawberry.field(description="Runs side by side; material differences first.")
    def compare(self, info: Info, runs: list[str]) -> t.Compare:
        if len(runs) > 20:
            raise t.PageSizeError(f"compare takes at most 20 runs (got {len(runs)})")
        st.refuse_serving_runs(self._g(info), runs)
        return t.compare_runs(self._g(info), runs, info)


@strawberry.type(
    description="The registry. The fields below answer for the served head of main; "
    "`registry(at:)` answers for any commit, branch or tag."
)
class Query(Snapshot, NodeRoot):
    @strawberry.field(
        description="The registry at a commit (full id or unique prefix), branch or tag; "
        "the served head of main when omitted. `minCommit` (the `extensions.registry.commit` of an earlier "
        "answer) makes a head answer come from that commit or a newer one: the server refreshes or waits "
        "briefly, else answers COMMIT_NOT_YET_AVAILABLE (retry) or COMMIT_NOT_ON_MAIN."
    )
    def registry(self, info: Info, at: str | None = None, min_commit: str | None = None) -> Snapshot | None:
        # Execution runs in a worker thread (api.service), so a pinned graph is built right here.
        graph = info.context.graph(at)
        if min_commit is not None and at is None:
            # The HTTP layer already waited for it (api.freshness); the head of this request is what it got.
            standing = info.context.snapshots.standing(min_commit)
            if standing != "served" or not info.context.snapshots.store().is_ancestor(min_commit, graph.commit):
                if standing == "off-main":
                    raise registry.errors.CommitNotOnMain(min_commit, "a branch or tag reaches it, main does not")
                raise registry.errors.CommitNotYetAvailable(min_commit, 0.0, "not served by this answer's head")
        return Snapshot(_graph=graph)


class _Schema(strawberry.Schema):
    def process_errors(self, errors: list[GraphQLError], execution_context: Any = None) -> None:
        """Nothing: `api.errors.ErrorCodes` logs the unexpected ones; a client's own mistakes are
        answers, not incidents."""


# The limit rules are made once: a limiter builds a new rule class each time it is made, and the
# validation cache is keyed by the rules, so per-request rules would never hit it (3x the cost
# of a first-time query).
_LIMIT_RULES = [
    *QueryDepthLimiter(max_depth=LIMITS["max_depth"]).validation_rules,
    *MaxAliasesLimiter(max_alias_count=LIMITS["max_aliases"]).validation_rules,
]

# Parsed and validated documents, shared by every request, bounded by what they hold (api.pipeline).
DOCUMENTS: ByteLRU[tuple[bytes, str], ParsedDocument] = ByteLRU(LIMITS["document_cache_bytes"], lambda p: p.weight)
_COST = CostModel(max_page=t.MAX_PAGE)

# Factories: strawberry builds fresh extensions per request.
schema = _Schema(
    query=Query,
    types=[Snapshot],
    extensions=[
        lambda: AddValidationRules(_LIMIT_RULES),
        lambda: MaxTokensLimiter(max_token_count=LIMITS["max_tokens"]),
        lambda: DocumentCache(DOCUMENTS),
        lambda: CostLimit(LIMITS["max_cost"], _COST),
        ErrorCodes,
    ],
)

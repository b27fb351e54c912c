"""The root of the API: `registry(at:)` and its head shortcuts, and the strawberry schema with its limits."""

from __future__ import annotations

import enum
from typing import Annotated, Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import AddValidationRules, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.schema.config import StrawberryConfig

from kernelindex import registry
from kernelindex.core.cache import ByteLRU
from kernelindex.core.errors import ErrorCodes
from kernelindex.core.settings import plain_mode
from kernelindex.engine.cost import CostModel
from kernelindex.engine.pipeline import CostLimit, DocumentCache, ParsedDocument
from kernelindex.registry import nodes as n
from kernelindex.registry import read
from kernelindex.registry.citation_check import check_citation, parse_citation
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.search import search_cost, tokens
from kernelindex.schema import types as t
from kernelindex.schema.types import serving_root as st
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.citation_checks import CitationCheck
from kernelindex.schema.types.deployment import facts_of
from kernelindex.schema.types.identity import find_cohort, find_manifest
from kernelindex.schema.types.manifest_types import MANIFEST_TYPES, check_manifest_types, manifest_type_names
from kernelindex.schema.types.node_root import NodeRoot
from kernelindex.schema.types.rate_limit import RateLimit
from kernelindex.schema.types.read_root import ReadRoot
from kernelindex.schema.types.scalars import SCALAR_MAP, DateTime
from kernelindex.schema.types.search_root import SearchRoot

__all__ = ["COST_MODEL", "DOCUMENTS", "LIMITS", "Query", "Snapshot", "schema"]

LIMITS = {
    "max_depth": 12,  # the deepest useful query (a dossier) is 7
    "max_aliases": 20,
    "max_tokens": 4000,  # the dossier query is ~250
    "max_query_bytes": 64 * 1024,
    "max_page": t.MAX_PAGE,
    # fields an operation may resolve (kernelindex.engine.cost); 10 x runs(first: 100) with 12 fields is ~12,000
    "max_cost": 25_000,
    "document_cache_bytes": 32 * 1024 * 1024,
}


@strawberry.input(description="Narrow a list of runs; every given condition must hold.")
class RunFilter:
    operation: str | None = strawberry.field(
        default=None, description="Runs of this operation: its digest, a unique prefix, name or `id`."
    )
    gpu: str | None = strawberry.field(
        default=None,
        description="A GPU product, a word of it or an architecture, any case: 'NVIDIA B200', 'b200', 'sm_100'.",
    )
    source: str | None = strawberry.field(
        default=None, description="Runs of this source, by its slug (`Source.slug`: sol-execbench, community...)."
    )
    status: list[t.RunStatus] | None = strawberry.field(
        default=None, description="Runs with one of these statuses (PASSED for results that can rank)."
    )
    min_trust: t.Trust | None = strawberry.field(
        default=None,
        description="Runs at or above this evidence level (VERIFIED keeps VERIFIED and REPLICATED): what a "
        "leaderboard's evidence filter wants.",
    )
    trust: list[t.Trust] | None = strawberry.field(
        default=None, description="Runs at exactly one of these levels (for facets: REPORTED alone, say)."
    )
    eligible_only: bool = strawberry.field(
        default=False, description="Only runs that rank (`eligible`); false by default: every run."
    )
    observed_since: DateTime | None = strawberry.field(
        default=None, description="Runs measured at or after this instant (`observedAt`)."
    )
    implementation: str | None = strawberry.field(
        default=None, description="Runs of this implementation: its digest, a unique prefix, name or `id`."
    )
    workload: str | None = strawberry.field(
        default=None, description="Runs on this workload: its digest, a unique prefix, name or `id`."
    )
    cohort: str | None = strawberry.field(
        default=None, description="Runs of this cohort: its key, a unique prefix of at least 12 hex digits, or `id`."
    )
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

    def to_domain(self, graph: Graph) -> read.RunFilter:
        """The read API's filter: each id resolved (one that names nothing keeps no run).

        Raises:
            BadUserInput: an id is malformed (says which and what was expected).
        """
        return read.RunFilter(
            operations=_refs(graph, ("OperationSpec",), self.operation),
            gpu=self.gpu,
            source=self.source,
            statuses=frozenset(s.name.lower() for s in self.status) if self.status else None,
            min_trust=t.trust_of_enum(self.min_trust) if self.min_trust else None,
            trusts=frozenset(t.trust_of_enum(x) for x in self.trust) if self.trust else None,
            eligible_only=self.eligible_only,
            observed_since_ns=n.instant_ns(self.observed_since) if self.observed_since else None,
            implementations=_refs(graph, ("ImplementationRevision",), self.implementation),
            workloads=_refs(graph, _WORKLOADS, self.workload),
            cohorts=None if self.cohort is None else _keys(_cohort(graph, self.cohort)),
            deployable_only=self.deployable_only,
            license_known=self.license_known,
            installable=self.installable,
        )


@strawberry.input(description="Narrow a list of cohorts; every given condition must hold.")
class CohortFilter:
    operation: str | None = strawberry.field(
        default=None, description="Cohorts of this operation: its digest, a unique prefix, name or `id`."
    )
    gpu: str | None = strawberry.field(
        default=None,
        description="Cohorts measured on this GPU: a product, a word of it or an architecture, any case "
        "('NVIDIA B200', 'b200', 'sm_100').",
    )
    workload: str | None = strawberry.field(
        default=None, description="Cohorts on this workload: its digest, a unique prefix, name or `id`."
    )
    min_size: int | None = strawberry.field(default=None, description="Cohorts of at least this many runs.")

    def to_domain(self, graph: Graph) -> read.CohortFilter:
        """The read API's filter (as `RunFilter.to_domain`)."""
        return read.CohortFilter(
            operations=_refs(graph, ("OperationSpec",), self.operation),
            gpu=self.gpu,
            workloads=_refs(graph, _WORKLOADS, self.workload),
            min_size=self.min_size,
        )


@strawberry.enum(description="The order of a list of cohorts.")
class CohortOrder(enum.Enum):
    LARGEST = strawberry.enum_value("largest", description="Most runs first, then by key; the default.")
    NEWEST_RECORD = strawberry.enum_value(
        "newest_record", description="The most recent change of record holder first; cohorts without a record last."
    )
    KEY = strawberry.enum_value("key", description="By key: a fixed order, for walking every cohort.")


@strawberry.input(description="Narrow the records ledger; every given condition must hold.")
class RecordFilter:
    operation: str | None = strawberry.field(
        default=None, description="Records of this operation's cohorts: its digest, a unique prefix, name or `id`."
    )
    gpu: str | None = strawberry.field(
        default=None,
        description="Records measured on this GPU: a product, a word of it or an architecture, any case "
        "('NVIDIA B200', 'b200', 'sm_100').",
    )
    source: str | None = strawberry.field(
        default=None, description="Records held by a run of this source (`Source.slug`: sol-execbench...)."
    )
    since: DateTime | None = strawberry.field(
        default=None, description="Records taken at or after this instant (`RecordEntry.since`)."
    )

    def to_domain(self, graph: Graph) -> read.RecordFilter:
        """The read API's filter (as `RunFilter.to_domain`)."""
        return read.RecordFilter(
            operations=_refs(graph, ("OperationSpec",), self.operation),
            gpu=self.gpu,
            source=self.source,
            since_ns=n.instant_ns(self.since) if self.since else None,
        )


_Id = Annotated[
    str,
    strawberry.argument(
        description="A digest (sha256:<64 lower-case hex>), a unique hex prefix of at least 12 digits, a "
        "metadata.name, or the object's `id`. Malformed: BAD_USER_INPUT; well-formed but absent: null."
    ),
]


def _lookup(graph: Graph, kinds: tuple[str, ...], ident: str) -> n.Node | None:
    """The manifest of one of `kinds` an id argument names (digest, prefix, name or Node id); None if none.

    Raises:
        BadUserInput: malformed (says what was expected).
    """
    spec = registry.KINDS[kinds[0]]  # its GraphQL type and noun, as the kind's spec names them
    found: n.Node | None = find_manifest(graph, kinds, ident, (spec.graphql,), spec.noun)
    return found


def _cohort(graph: Graph, key: str) -> registry.graph.Cohort | None:
    found: registry.graph.Cohort | None = find_cohort(graph.cohorts, key)
    return found


_WORKLOADS = ("WorkloadCase", "WorkloadSuite")


def _refs(graph: Graph, kinds: tuple[str, ...], ident: str | None) -> frozenset[str] | None:
    """What an id argument of a filter names, as the read API takes it: None when not given, else the digest it
    names (none: the empty set, which keeps nothing).

    Raises:
        BadUserInput: malformed.
    """
    if ident is None:
        return None
    node = _lookup(graph, kinds, ident)
    return frozenset() if node is None else frozenset((node.digest,))


def _keys(cohort: registry.graph.Cohort | None) -> frozenset[str]:
    return frozenset() if cohort is None else frozenset((cohort.key,))


def _has_words(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether the words of `needle` appear in order, the last as a prefix: "fused att" finds "fused attention"."""
    for i in range(len(haystack) - len(needle) + 1):
        window = haystack[i : i + len(needle)]
        if window[:-1] == needle[:-1] and window[-1].startswith(needle[-1]):
            return True
    return False


@strawberry.type(description="The registry at one commit. Every field answers for that commit only.")
class Snapshot(st.ServingRoot, SearchRoot, ReadRoot):
    _graph: strawberry.Private[Graph | None] = None

    def _g(self, info: Info) -> Graph:
        return self._graph if self._graph is not None else t.head_graph(info)

    def _at(self, graph: Graph) -> Snapshot:
        return Snapshot(_graph=graph)

    @strawberry.field(description="The commit this snapshot shows.")
    def commit(self, info: Info) -> t.Commit:
        return t.commit_type(info.context, self._g(info).commit)

    @strawberry.field(description="Its committer time, ISO 8601 UTC.")
    def committed_at(self, info: Info) -> DateTime:
        return utc_instant(self._g(info).committed_at)

    @strawberry.field(description="Manifests by kind.")
    def counts(self, info: Info) -> list[t.KindCount]:
        totals: dict[str, int] = {}
        for node in self._g(info).nodes.values():
            totals[node.kind] = totals.get(node.kind, 0) + 1
        return [t.KindCount(kind=t.ManifestKind[k], count=v) for k, v in sorted(totals.items())]

    @strawberry.field(
        description="Manifests this snapshot's commit first published on main, by kind, then name; `kind` narrows "
        "(`BenchmarkRun`). Empty for a commit off main. The publication record, not the diff: a manifest "
        "removed and added again stays with the commit that first published it."
    )
    @t.follows_cursor
    def published(
        self,
        info: Info,
        kind: Annotated[
            t.ManifestKind | None, strawberry.argument(description="Only manifests of this kind; all by default.")
        ] = None,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Manifest] | None:
        graph = self._g(info)
        t.page_bounds(first)
        digests = graph.first_published_here
        if kind is not None:
            digests = tuple(d for d in digests if graph.nodes[d].kind == kind.name)
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
        return [t.KindCount(kind=t.ManifestKind[k], count=v) for k, v in sorted(totals.items())]

    @strawberry.field(description="A run by digest, unique hex prefix (>= 12) or metadata.name.")
    def run(self, info: Info, id: _Id) -> t.Run | None:
        node = _lookup(self._g(info), ("BenchmarkRun",), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field(description="Runs, newest observation first.")
    @t.follows_cursor
    def runs(
        self,
        info: Info,
        filter: Annotated[
            RunFilter | None, strawberry.argument(description="Keep the runs that meet every condition given.")
        ] = None,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
        order: Annotated[t.RunOrder, strawberry.argument(description="The order; NEWEST_OBSERVED by default.")] = (
            t.RunOrder.NEWEST_OBSERVED
        ),
    ) -> t.Connection[t.Run] | None:
        graph = self._g(info)
        t.page_bounds(first)
        objects = info.context.objects
        digests = read.runs(
            graph,
            filter.to_domain(graph) if filter is not None else None,
            read.RunOrder[order.name],
            facts=lambda node: facts_of(objects, node),
        )
        return t.paginate(graph, digests, t.Window(first, after, last, before), lambda d: t.typed(graph, d, t.Run))

    @strawberry.field(description="A cohort by its key (or a unique prefix of >= 12 hex digits).")
    def cohort(
        self,
        info: Info,
        key: Annotated[
            str,
            strawberry.argument(
                description="Its key (sha256:<64 hex>), a unique hex prefix of at least 12 digits, or its `id`."
            ),
        ],
    ) -> t.Cohort | None:
        graph = self._g(info)
        cohort = _cohort(graph, key)
        return t.Cohort(_graph=graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="Cohorts, largest first unless ordered otherwise.")
    @t.follows_cursor
    def cohorts(
        self,
        info: Info,
        filter: Annotated[
            CohortFilter | None, strawberry.argument(description="Keep the cohorts that meet every condition given.")
        ] = None,
        order: Annotated[
            CohortOrder, strawberry.argument(description="The order; LARGEST by default.")
        ] = CohortOrder.LARGEST,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Cohort] | None:
        graph = self._g(info)
        t.page_bounds(first)
        keys = read.cohorts(
            graph, filter.to_domain(graph) if filter is not None else None, read.CohortOrder[order.name]
        )
        return t.paginate(
            graph,
            keys,
            t.Window(first, after, last, before),
            lambda k: t.Cohort(_graph=graph, _cohort=graph.cohorts[k]),
        )

    @strawberry.field(description="An operation (OperationSpec); null when the id names none.")
    def operation(self, info: Info, id: _Id) -> t.Operation | None:
        return t.node_type(self._g(info), _lookup(self._g(info), ("OperationSpec",), id))  # type: ignore[no-any-return]

    @strawberry.field(description="Operations by name; `family` narrows, `search` matches name or title.")
    @t.follows_cursor
    def operations(
        self,
        info: Info,
        family: Annotated[
            str | None, strawberry.argument(description="Only operations of this family (`rmsnorm`...).")
        ] = None,
        search: Annotated[
            str | None,
            strawberry.argument(
                description="Words matched against names and titles, any case, split on _, - and spaces."
            ),
        ] = None,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[t.Operation] | None:
        graph = self._g(info)
        t.page_bounds(first)
        # Words, case-insensitive, split on _, - and spaces: "fused attention" finds fused_attention_*.
        # Bounded as a search is (512 characters, 32 terms): SearchTooLarge past them.
        needle = tokens(search) if search and search_cost(search) else None

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

    @strawberry.field(description="A workload (case or suite); null when the id names none.")
    def workload(self, info: Info, id: _Id) -> t.Workload | None:
        node = _lookup(self._g(info), ("WorkloadCase", "WorkloadSuite"), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field(description="An implementation; null when the id names none.")
    def implementation(self, info: Info, id: _Id) -> t.Implementation | None:
        node = _lookup(self._g(info), ("ImplementationRevision",), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field(description="A software project; null when the id names none.")
    def project(self, info: Info, id: _Id) -> t.Project | None:
        return t.node_type(self._g(info), _lookup(self._g(info), ("SoftwareProject",), id))  # type: ignore[no-any-return]

    @strawberry.field(description="A benchmark protocol; null when the id names none.")
    def protocol(self, info: Info, id: _Id) -> t.Protocol | None:
        return t.node_type(self._g(info), _lookup(self._g(info), ("BenchmarkProtocol",), id))  # type: ignore[no-any-return]

    @strawberry.field(description="An execution environment; null when the id names none.")
    def environment(self, info: Info, id: _Id) -> t.Environment | None:
        node = _lookup(self._g(info), ("ExecutionEnvironment",), id)
        return t.node_type(self._g(info), node)  # type: ignore[no-any-return]

    @strawberry.field(
        description="Any manifest, by digest (or unique prefix, or name); `kind` narrows a name shared across kinds."
    )
    def manifest(
        self,
        info: Info,
        digest: Annotated[
            str,
            strawberry.argument(
                description="A digest (sha256:<64 hex>), a unique hex prefix of at least 12 digits, a name or an id."
            ),
        ],
        kind: Annotated[
            t.ManifestKind | None,
            strawberry.argument(
                description="Only a manifest of this kind (`BenchmarkRun`): names repeat across kinds (a run and "
                "its implementation may share one). Null: any kind."
            ),
        ] = None,
    ) -> t.Manifest | None:
        graph = self._g(info)
        kinds = (kind.name,) if kind is not None else registry.KINDS.keys()
        node = find_manifest(graph, kinds, digest, manifest_type_names(), "a manifest")
        return t.Manifest(_graph=graph, _node=node) if node else None

    @strawberry.field(description="The records ledger: one entry per cohort with a record, newest holder first.")
    @t.follows_cursor
    def records(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
        filter: Annotated[
            RecordFilter | None, strawberry.argument(description="Keep the records that meet every condition given.")
        ] = None,
        order: Annotated[
            t.RecordOrder, strawberry.argument(description="The order; NEWEST by default.")
        ] = t.RecordOrder.NEWEST,
    ) -> t.Connection[t.RecordEntry] | None:
        graph = self._g(info)
        return t.paginate(
            graph,
            read.records(graph, filter.to_domain(graph) if filter is not None else None, read.RecordOrder[order.name]),
            t.Window(first, after, last, before),
            lambda k: t.RecordEntry(_graph=graph, _cohort=graph.cohorts[k]),
        )

    @strawberry.field(description="Runs side by side; material differences first.")
    def compare(
        self,
        info: Info,
        runs: Annotated[
            list[str],
            strawberry.argument(
                description="Up to 20 runs: digests, unique hex prefixes of at least 12 digits, names or ids."
            ),
        ],
    ) -> t.Compare | None:
        if len(runs) > 20:
            raise t.PageSizeError(f"compare takes at most 20 runs (got {len(runs)})")
        st.refuse_serving_runs(self._g(info), runs)
        return t.compare_runs(self._g(info), runs, info)

    @strawberry.field(
        description="A citation checked against this registry as of this snapshot's commit (the served head of main "
        "at the root), as `kernelindex verify` checks it offline: the cited commit is in that commit's history, the "
        "manifest stored there has the cited digest (computed again from its bytes), the commit that published it "
        "verifies where it is signed; and whether the result has since been retracted, superseded or verified. A "
        "citation that names no digest, or no commit beside it, is NOT_A_CITATION."
    )
    def verify_citation(
        self,
        info: Info,
        citation: Annotated[
            str,
            strawberry.argument(
                description="A permalink (`/at/{commit}/runs/{digest}`), a BibTeX or CSL-JSON entry holding one, or a "
                "digest and a full commit id written side by side; up to 64 KiB is read."
            ),
        ],
    ) -> CitationCheck:
        claim = parse_citation(citation)
        graph = self._g(info)
        return CitationCheck(_graph=graph, _check=check_citation(info.context.snapshots, claim, graph))


@strawberry.type(
    description="The registry. The fields below answer for the served head of main; "
    "`registry(at:)` answers for any commit, branch or tag."
)
class Query(Snapshot, NodeRoot):
    @strawberry.field(
        description="Your budget of cost points: what this query was charged and what is left. Null when this "
        "server meters no budgets (started with `--budget 0`) or the query was not asked over HTTP (the CLI, MCP "
        "over stdio). An answer that selects it is about you, so it is never cached."
    )
    def rate_limit(self, info: Info) -> RateLimit | None:
        context = info.context
        if context.account is None:
            return None
        context.personal = True
        return RateLimit.of(context.account)

    @strawberry.field(
        description="The registry at a commit (full id or unique prefix), branch or tag; "
        "the served head of main when omitted. `minCommit` (the `extensions.registry.commit` of an earlier "
        "answer) makes a head answer come from that commit or a newer one: the server refreshes or waits "
        "briefly, else answers COMMIT_NOT_YET_AVAILABLE (retry) or COMMIT_NOT_ON_MAIN."
    )
    def registry(
        self,
        info: Info,
        at: Annotated[
            str | None,
            strawberry.argument(
                description="A commit (full id or unique prefix), a branch or a tag; the served head by default."
            ),
        ] = None,
        min_commit: Annotated[
            str | None,
            strawberry.argument(
                description="A full commit id the head answer must include (read-your-writes); only without `at`."
            ),
        ] = None,
    ) -> Snapshot | None:
        # Execution runs in a worker thread (kernelindex.service.queries), so a pinned graph is built right here.
        graph = t.head_graph(info) if at is None else info.context.graph(at)
        if at is not None:
            info.context.pinned_paths.add((info.path.key,))
        if min_commit is not None and at is None:
            # The HTTP layer already waited for it (kernelindex.service.freshness); the head of this request is what it
            # got.
            standing = info.context.snapshots.standing(min_commit)
            if standing != "served" or not info.context.snapshots.store().is_ancestor(min_commit, graph.commit):
                if standing == "off-main":
                    raise registry.errors.CommitNotOnMain(min_commit, "a branch or tag reaches it, main does not")
                raise registry.errors.CommitNotYetAvailable(min_commit, 0.0, "not served by this answer's head")
        return Snapshot(_graph=graph)


class _Schema(strawberry.Schema):
    def process_errors(self, errors: list[GraphQLError], execution_context: Any = None) -> None:
        """Nothing: `kernelindex.core.errors.ErrorCodes` logs the unexpected ones; a client's own mistakes are
        answers, not incidents."""


# The limit rules are made once: a limiter builds a new rule class each time it is made, and the
# validation cache is keyed by the rules, so per-request rules would never hit it (3x the cost
# of a first-time query).
_LIMIT_RULES = [
    *QueryDepthLimiter(max_depth=LIMITS["max_depth"]).validation_rules,
    *MaxAliasesLimiter(max_alias_count=LIMITS["max_aliases"]).validation_rules,
]

# Parsed and validated documents, shared by every request, bounded by what they hold (kernelindex.engine.pipeline).
DOCUMENTS: ByteLRU[tuple[bytes, str], ParsedDocument] = ByteLRU(LIMITS["document_cache_bytes"], lambda p: p.weight)
COST_MODEL = CostModel(max_page=t.MAX_PAGE)
"""How operations are costed against `LIMITS['max_cost']` (`kernelindex.engine.cost`)."""


def _execution_context_class() -> Any:
    """The executor: compiled programs (`kernelindex.engine.compiled`, else fields read straight); strawberry's own
    in plain mode (`kernelindex.core.settings.plain_mode`), which then never imports the compiled one."""
    if plain_mode():
        return None
    from kernelindex.engine.compiled import CompiledExecutor

    return CompiledExecutor


if _problems := check_manifest_types():  # a kind without its type would fail its first query instead
    raise TypeError("the kinds' specs and their GraphQL types disagree: " + "; ".join(_problems))

# Factories: strawberry builds fresh extensions per request.
schema = _Schema(
    query=Query,
    types=[Snapshot, *MANIFEST_TYPES.values()],  # a kind's type is in the schema once it is marked
    config=StrawberryConfig(scalar_map=SCALAR_MAP),
    execution_context_class=_execution_context_class(),
    extensions=[
        lambda: AddValidationRules(_LIMIT_RULES),
        lambda: MaxTokensLimiter(max_token_count=LIMITS["max_tokens"]),
        lambda: DocumentCache(DOCUMENTS),
        lambda: CostLimit(LIMITS["max_cost"], COST_MODEL),
        ErrorCodes,
    ],
)

"""The GraphQL output types. Each wraps a node of one snapshot's graph; names match the SDL.

Resolvers are thin: lookups in the graph's indexes (no N+1: every relation is a dict
lookup) and, for fields the graph does not keep, the stored manifest read by blob id.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar, cast

import strawberry
from strawberry.scalars import JSON

import registry
from api.context import Context
from api.errors import access_date
from api.leaderboard import LeaderboardRow, leaderboard_rows
from registry import nodes as n
from registry.cohorts import Trust as DomainTrust
from registry.graph import SOURCE_NATIVE, Graph
from registry.graph import Cohort as DomainCohort
from registry.present import Citation as CitationFacts
from registry.present import cite, format_value, source_native_summary, workload_label

__all__ = [
    "MAX_PAGE",
    "Cohort",
    "Compare",
    "Connection",
    "Environment",
    "Implementation",
    "Manifest",
    "Operation",
    "Project",
    "Protocol",
    "RecordEntry",
    "Run",
    "Workload",
    "node_type",
    "paginate",
]

MAX_PAGE = 100
DEFAULT_PAGE = 20

Info = strawberry.Info[Context, None]
T = TypeVar("T")


class PageSizeError(registry.RegistryError, ValueError):
    """`first` out of range: expected, so it reaches the client unmasked."""


class CursorError(registry.RegistryError, ValueError):
    pass


# Enums --------------------------------------------------------------------------------------------


@strawberry.enum(description="Evidence level of a run, weakest first: attestations never change it.")
class Trust(enum.Enum):
    REPORTED = "reported"
    REPRODUCIBLE = "reproducible"
    VERIFIED = "verified"
    REPLICATED = "replicated"


_TRUST = {
    DomainTrust.REPORTED: Trust.REPORTED,
    DomainTrust.REPRODUCIBLE: Trust.REPRODUCIBLE,
    DomainTrust.VERIFIED: Trust.VERIFIED,
    DomainTrust.REPLICATED: Trust.REPLICATED,
}
_DOMAIN_TRUST = {v: k for k, v in _TRUST.items()}


@strawberry.enum(description="How runs of a cohort compare (upstream's comparison profiles).")
class CohortProfile(enum.Enum):
    SOURCE_NATIVE = "source_native"
    STRICT_EXACT = "strict_exact"


@strawberry.enum
class RecordCause(enum.Enum):
    NEW_RUN = "new_run"
    RETRACTION = "retraction"


@strawberry.enum
class CitationFormat(enum.Enum):
    TEXT = "TEXT"
    BIBTEX = "BIBTEX"
    CSL_JSON = "CSL_JSON"


@strawberry.enum(description="A run's status as its source reported it.")
class RunStatus(enum.Enum):
    PASSED = "passed"
    INCORRECT_SHAPE = "incorrect_shape"
    INCORRECT_DTYPE = "incorrect_dtype"
    INCORRECT_NUMERICAL = "incorrect_numerical"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    RESOURCE_EXCEEDED = "resource_exceeded"
    INVALID_REFERENCE = "invalid_reference"
    POLICY_VIOLATION = "policy_violation"
    SUSPECTED_REWARD_HACK = "suspected_reward_hack"
    INCOMPLETE_EVIDENCE = "incomplete_evidence"
    REVOKED = "revoked"


# Connections --------------------------------------------------------------------------------------


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


@strawberry.type
class Edge(Generic[T]):
    cursor: str
    node: T


@strawberry.type
class Connection(Generic[T]):
    """A page of a list that is stable for a given commit; cursors are opaque."""

    edges: list[Edge[T]]
    page_info: PageInfo
    total_count: int


def _cursor(commit: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{commit[:12]}:{offset}".encode()).decode().rstrip("=")


def _offset(commit: str, cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, number = text.partition(":")
        offset = int(number)
    except (ValueError, UnicodeDecodeError):
        raise CursorError(f"invalid cursor {cursor!r}") from None
    if prefix != commit[:12] or offset < 0:
        raise CursorError(f"cursor {cursor!r} belongs to another snapshot; page again from the start")
    return offset


def page_bounds(first: int) -> int:
    if not 0 <= first <= MAX_PAGE:
        raise PageSizeError(f"first must be between 0 and {MAX_PAGE} (got {first})")
    return first


def paginate(
    graph: Graph, items: Sequence[Any], first: int, after: str | None, make: Callable[[Any], T]
) -> Connection[T]:
    size = page_bounds(first)
    start = _offset(graph.commit, after) + 1 if after else 0
    window = items[start : start + size]
    edges = [Edge(cursor=_cursor(graph.commit, start + i), node=make(item)) for i, item in enumerate(window)]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=start + size < len(items),
            has_previous_page=start > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=len(items),
    )


# Provenance ---------------------------------------------------------------------------------------


@strawberry.type
class Person:
    name: str
    email: str


@strawberry.type
class Trailer:
    key: str
    value: str


@strawberry.type(description="An SSH signature on a commit, checked against policy/maintainers.")
class Signature:
    signed: bool
    verified: bool
    signer: str | None
    reason: str | None


@strawberry.type(description="A commit of the manifests repository.")
class Commit:
    _info: strawberry.Private[registry.CommitInfo]
    _verified: strawberry.Private[bool]

    @strawberry.field
    def id(self) -> str:
        return self._info.id

    @strawberry.field
    def short_id(self) -> str:
        return self._info.id[:12]

    @strawberry.field(description="Committer time, ISO 8601 UTC.")
    def committed_at(self) -> str:
        return self._info.committer.when_utc

    @strawberry.field
    def authored_at(self) -> str:
        return self._info.author.when_utc

    @strawberry.field
    def author(self) -> Person:
        return Person(name=self._info.author.name, email=self._info.author.email)

    @strawberry.field
    def committer(self) -> Person:
        return Person(name=self._info.committer.name, email=self._info.committer.email)

    @strawberry.field
    def message(self) -> str:
        return self._info.message

    @strawberry.field
    def subject(self) -> str:
        return self._info.subject

    @strawberry.field
    def trailers(self) -> list[Trailer]:
        return [Trailer(key=k, value=v) for k, v in self._info.trailers]

    @strawberry.field
    def signature(self, info: Info) -> Signature | None:
        if self._info.signature is None:
            return None
        check = info.context.snapshots.signature(self._info.id)
        return Signature(signed=True, verified=check.verified, signer=check.signer, reason=check.reason or None)


def commit_type(context: Context, commit: str) -> Commit:
    info = context.documents.commit(commit)
    return Commit(_info=info, _verified=False)


@strawberry.type(description="Where results come from, and the terms of their data.")
class Source:
    slug: str
    name: str | None
    license: str | None
    attribution: str | None
    url: str | None


def source_type(context: Context, graph: Graph, slug: str | None) -> Source | None:
    if slug is None:
        return None
    found = context.snapshots.source_terms(graph.mainline, slug)
    return Source(
        slug=slug,
        name=found.get("Source-Name"),
        license=found.get("License"),
        attribution=found.get("Attribution"),
        url=found.get("Source-URL"),
    )


@strawberry.type(description="Who published a manifest, when, from where, under which terms.")
class Provenance:
    commit: Commit
    source: Source | None
    license: str | None
    attribution: str | None
    source_url: str | None
    snapshot: str | None = strawberry.field(description="Source-Snapshot: sha256 of the upstream bytes.")


def provenance_of(context: Context, graph: Graph, node: n.Node, source: str | None) -> Provenance | None:
    commit = _publishing_commit(graph, node)
    if commit is None:
        return None
    info = context.documents.commit(commit)
    return Provenance(
        commit=Commit(_info=info, _verified=False),
        source=source_type(context, graph, source or info.trailer("Source")),
        license=info.trailer("License"),
        attribution=info.trailer("Attribution"),
        source_url=info.trailer("Source-URL"),
        snapshot=info.trailer("Source-Snapshot"),
    )


def _publishing_commit(graph: Graph, node: n.Node) -> str | None:
    position = graph.publication(node.digest)
    return None if position is None else graph.mainline.commits[position]


# Shared leaves ------------------------------------------------------------------------------------


@strawberry.type
class Interval:
    low: float
    high: float


@strawberry.type(description="The measurement a run is ranked by (lower is better).")
class Primary:
    metric: str
    statistic: str
    unit: str
    value: float
    display: str = strawberry.field(description="The value as a reader wants it: 144.6 µs.")
    interval: Interval | None = strawberry.field(description="The 95% confidence interval, when reported.")


@strawberry.type
class Metric:
    name: str
    value: JSON


@strawberry.type(description="What the source itself reported, in its own terms.")
class SourceNative:
    source: str
    benchmark: str | None
    external_id: str | None
    metrics: list[Metric]
    summary: str | None = strawberry.field(description="e.g. SOL 0.6941 · 1.93× reference · 16/16 cases faster")


@strawberry.type
class Measurement:
    metric: str
    statistic: str
    unit: str
    value: float
    display: str
    sample_count: int | None


@strawberry.type(description="A file of evidence published with a run.")
class Artifact:
    role: str
    uri: str | None
    digest: str | None


@strawberry.type(description="Any manifest, as stored.")
class Manifest:
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Node]

    @strawberry.field
    def kind(self) -> str:
        return self._node.kind

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def name(self) -> str:
        return self._node.name

    @strawberry.field
    def title(self) -> str | None:
        return self._node.title

    @strawberry.field
    def path(self) -> str:
        return registry.manifest_path(self._node.kind, self._node.digest)

    @strawberry.field
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)

    @strawberry.field(description="The stored JSON document (metadata included).")
    def json(self, info: Info) -> JSON:
        return _json(info.context.documents.get(self._node.oid))

    @strawberry.field(description="The stored bytes, as text: what the permalink serves.")
    def text(self, info: Info) -> str:
        return info.context.documents.raw(self._node.oid).decode()

    @strawberry.field
    def permalink(self, info: Info) -> str:
        return info.context.permalink(self._graph, "manifests", self._node.digest)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


def _published_at(graph: Graph, node: n.Node) -> str | None:
    seconds = graph.published_at(node)
    return None if seconds is None else registry.provenance.utc_instant(seconds)


# Kinds --------------------------------------------------------------------------------------------


def _document(info: Info, node: n.Node) -> dict[str, Any]:
    return info.context.documents.get(node.oid)


@strawberry.type
class _Named:
    """The fields every manifest-backed type starts with (not itself in the schema)."""

    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Node]

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def name(self) -> str:
        return self._node.name

    @strawberry.field
    def title(self) -> str | None:
        return self._node.title


@strawberry.type(description="What is computed (OperationSpec): inputs, outputs, semantics.")
class Operation(_Named):
    _node: strawberry.Private[n.Operation]

    @strawberry.field
    def family(self) -> str:
        return self._node.family

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    def workloads(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Workload]:
        digests = sorted(self._graph.children["workloads"].get(self._node.digest, ()))
        return paginate(self._graph, digests, first, after, lambda d: _typed(self._graph, d, Workload))

    @strawberry.field
    def implementations(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Implementation]:
        digests = sorted(self._graph.children["implementations"].get(self._node.digest, ()))
        return paginate(self._graph, digests, first, after, lambda d: _typed(self._graph, d, Implementation))

    @strawberry.field
    def cohorts(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Cohort]:
        keys = _ordered_cohorts(self._graph, self._graph.cohorts_by["operation"].get(self._node.digest, set()))
        return paginate(
            self._graph, keys, first, after, lambda k: Cohort(_graph=self._graph, _cohort=self._graph.cohorts[k])
        )

    @strawberry.field
    def runs(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Run]:
        digests = _ordered_runs(self._graph, self._graph.runs_by["operation"].get(self._node.digest, set()))
        return paginate(self._graph, digests, first, after, lambda d: _typed(self._graph, d, Run))

    @strawberry.field
    def run_count(self) -> int:
        return len(self._graph.runs_by["operation"].get(self._node.digest, ()))


@strawberry.type(description="The inputs a run measured: one case, or a suite of cases.")
class Workload(_Named):
    _node: strawberry.Private[n.Workload]

    @strawberry.field(description="WorkloadCase or WorkloadSuite.")
    def kind(self) -> str:
        return self._node.kind

    @strawberry.field
    def cases(self) -> int:
        return self._node.cases

    @strawberry.field(description="e.g. suite of 16 cases · mean latency")
    def label(self, info: Info) -> str:
        return workload_label(_document(info, self._node))

    @strawberry.field
    def correctness_key(self) -> str:
        return self._node.correctness

    @strawberry.field(description="The workload's correctness policy, as published.")
    def correctness(self, info: Info) -> JSON:
        return _json(_document(info, self._node)["spec"]["correctness"])

    @strawberry.field
    def operation(self) -> Operation | None:
        return _operation(self._graph, self._node.operation)

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    def cohorts(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Cohort]:
        keys = _ordered_cohorts(self._graph, self._graph.cohorts_by["workload"].get(self._node.digest, set()))
        return paginate(
            self._graph, keys, first, after, lambda k: Cohort(_graph=self._graph, _cohort=self._graph.cohorts[k])
        )


@strawberry.type(description="Who maintains implementations: a library, a person, a vendor.")
class Project(_Named):
    _node: strawberry.Private[n.Project]

    @strawberry.field(description="The project's own name (spec.name).")
    def display_name(self) -> str:
        return self._node.display_name

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    def implementations(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Implementation]:
        digests = sorted(self._graph.children["project_implementations"].get(self._node.name, ()))
        return paginate(self._graph, digests, first, after, lambda d: _typed(self._graph, d, Implementation))


@strawberry.type(description="One revision of code that computes an operation.")
class Implementation(_Named):
    _node: strawberry.Private[n.Implementation]

    @strawberry.field(description="Who wrote it: the first author, else the project, else the name.")
    def display_name(self) -> str:
        return implementation_name(self._graph, self._node)

    @strawberry.field(description="projectRevision.version, or the commit it was built from.")
    def revision(self, info: Info) -> str | None:
        revision = _document(info, self._node)["spec"]["projectRevision"]
        return _text(revision.get("version") or revision.get("commit"))

    @strawberry.field
    def language(self) -> str:
        return self._node.language

    @strawberry.field
    def source_available(self) -> bool:
        return self._node.source_available

    @strawberry.field
    def operation(self) -> Operation | None:
        return _operation(self._graph, self._node.operation)

    @strawberry.field
    def project(self) -> Project | None:
        node = _project_of(self._graph, self._node)
        return Project(_graph=self._graph, _node=node) if node else None

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)

    @strawberry.field
    def runs(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Run]:
        digests = _ordered_runs(self._graph, self._graph.runs_by["implementation"].get(self._node.digest, set()))
        return paginate(self._graph, digests, first, after, lambda d: _typed(self._graph, d, Run))


@strawberry.type(description="How a run was measured: harness, timer, statistic, correctness reference.")
class Protocol(_Named):
    _node: strawberry.Private[n.Protocol]

    @strawberry.field(description="e.g. SOL-ExecBench evaluation stack v1.0")
    def harness(self, info: Info) -> str:
        harness = _document(info, self._node)["spec"]["harness"]
        return " ".join(p for p in (harness["name"], harness.get("version")) if p)

    @strawberry.field
    def timer(self, info: Info) -> str:
        return str(_document(info, self._node)["spec"]["measurement"]["timer"])

    @strawberry.field
    def primary_statistic(self, info: Info) -> str:
        return str(_document(info, self._node)["spec"]["measurement"]["primaryStatistic"])

    @strawberry.field
    def correctness_reference(self, info: Info) -> str | None:
        return (_document(info, self._node)["spec"].get("correctness") or {}).get("reference")

    @strawberry.field
    def comparability_family(self, info: Info) -> str | None:
        return (_document(info, self._node)["spec"].get("comparability") or {}).get("family")

    @strawberry.field(description="The whole protocol spec, as published.")
    def spec(self, info: Info) -> JSON:
        return _json(_document(info, self._node)["spec"])

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


@strawberry.type(description="Where a run was measured: hardware and software.")
class Environment(_Named):
    _node: strawberry.Private[n.Environment]

    @strawberry.field
    def vendor(self) -> str:
        return self._node.vendor

    @strawberry.field
    def product(self) -> str:
        return self._node.product

    @strawberry.field
    def architecture(self) -> str:
        return self._node.architecture

    @strawberry.field(description="e.g. NVIDIA B200 (sm_100)")
    def gpu(self) -> str:
        if self._node.architecture == "unknown":
            return self._node.product
        return f"{self._node.product} ({self._node.architecture})"

    @strawberry.field(description="The whole environment spec, as published.")
    def spec(self, info: Info) -> JSON:
        return _json(_document(info, self._node)["spec"])

    @strawberry.field
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._node)


# Lifecycle ----------------------------------------------------------------------------------------


@strawberry.type(
    description="A note on a run by anyone: a reproduction, a failure to reproduce... Never changes trust."
)
class Attestation:
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Attestation]

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def type(self) -> str:
        return self._node.type

    @strawberry.field
    def body(self, info: Info) -> str:
        return str(_document(info, self._node)["spec"]["body"])

    @strawberry.field
    def evidence_url(self, info: Info) -> str | None:
        return _text(_document(info, self._node)["spec"].get("evidenceUrl"))

    @strawberry.field
    def observed_ns(self, info: Info) -> float | None:
        value = _document(info, self._node)["spec"].get("observedNs")
        return None if value is None else float(value)

    @strawberry.field
    def environment_summary(self, info: Info) -> str | None:
        return _text(_document(info, self._node)["spec"].get("environmentSummary"))

    @strawberry.field
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@strawberry.type(description="A maintainer's withdrawal of a run: it stays visible but is not ranked.")
class Retraction:
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Retraction]

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def reason(self) -> str:
        return self._node.reason

    @strawberry.field
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@strawberry.type(description="A registry-controlled rerun that confirms a run.")
class Verification:
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Verification]

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def runner(self) -> str:
        return self._node.runner

    @strawberry.field
    def rerun(self) -> Run | None:
        return _run(self._graph, self._node.rerun)

    @strawberry.field
    def honoured(self) -> bool:
        return self._graph.honoured(self._node)

    @strawberry.field
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)


# Runs ---------------------------------------------------------------------------------------------


@strawberry.type(description="A benchmark result: implementation I on workload W, protocol P, environment E.")
class Run(_Named):
    _node: strawberry.Private[n.Run]

    def _facts(self) -> registry.graph.RunFacts:
        return self._graph.facts[self._node.digest]

    @strawberry.field
    def status(self) -> RunStatus:
        return RunStatus(self._node.status)

    @strawberry.field(description="When it was measured, as the manifest says (ISO 8601 UTC).")
    def observed_at(self) -> str:
        return self._node.observed_at

    @strawberry.field(description="Committer time of the first commit on main that contains it; null if unpublished.")
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)

    @strawberry.field
    def primary(self) -> Primary | None:
        primary = self._node.primary
        if primary is None:
            return None
        interval = (
            Interval(low=primary.low, high=primary.high)
            if primary.low is not None and primary.high is not None
            else None
        )
        return Primary(
            metric=primary.metric,
            statistic=primary.statistic,
            unit=primary.unit,
            value=primary.value,
            display=format_value(primary.value, primary.unit),
            interval=interval,
        )

    @strawberry.field
    def measurements(self, info: Info) -> list[Measurement]:
        spec = _document(info, self._node)["spec"]
        found = []
        timing = spec.get("timing")
        if timing:
            samples = timing.get("samples")
            for statistic, value in timing["latencyNs"].items():
                if statistic != "confidence95":
                    found.append(
                        Measurement(
                            metric="latency",
                            statistic=statistic,
                            unit="ns",
                            value=float(value),
                            display=format_value(value, "ns"),
                            sample_count=samples,
                        )
                    )
        for m in spec.get("measurements") or ():
            found.append(
                Measurement(
                    metric=m["metric"],
                    statistic=m["statistic"],
                    unit=m["unit"],
                    value=float(m["value"]),
                    display=format_value(m["value"], m["unit"]),
                    sample_count=m.get("sampleCount"),
                )
            )
        return found

    @strawberry.field
    def source_native(self, info: Info) -> SourceNative | None:
        native = _document(info, self._node)["spec"].get("sourceNative")
        if native is None:
            return None
        metrics = native.get("metrics") or {}
        return SourceNative(
            source=native["source"],
            benchmark=native.get("benchmark"),
            external_id=native.get("externalId"),
            metrics=[Metric(name=k, value=v) for k, v in metrics.items()],
            summary=source_native_summary(metrics),
        )

    @strawberry.field(description="The correctness verdict in words, as the run pages say it.")
    def correctness_note(self, info: Info) -> str:
        spec = _document(info, self._node)["spec"]
        report = spec.get("correctness")
        verdict = f"Marked {self._node.status.replace('_', ' ')} by the source"
        if not report:
            return f"{verdict}; the correctness policy was not published."
        details = [f"compared with {report['comparator']}"]
        for key, label in (
            ("maximumAbsoluteError", "max abs error"),
            ("maximumRelativeError", "max rel error"),
            ("matchedRatio", "matched"),
        ):
            if key in report:
                details.append(f"{label} {report[key]}")
        return f"{verdict}; {', '.join(details)}."

    @strawberry.field(description="The run's correctness report, as published.")
    def correctness(self, info: Info) -> JSON | None:
        return _json(_document(info, self._node)["spec"].get("correctness"))

    @strawberry.field
    def artifacts(self, info: Info) -> list[Artifact]:
        spec = _document(info, self._node)["spec"]
        found = []
        timing, evidence = spec.get("timing") or {}, spec.get("evidence") or {}
        for role, item in (
            ("raw_samples", timing.get("rawSamples")),
            ("raw_samples", evidence.get("rawSamples")),
            ("logs", evidence.get("logs")),
        ):
            if item:
                found.append(Artifact(role=role, uri=item.get("uri"), digest=item.get("digest")))
        harness = evidence.get("harness")
        if harness:
            found.append(Artifact(role="harness", uri=harness["repository"], digest=harness["commit"]))
        return found

    @strawberry.field(description="Rank in its cohort under ranking-v1; null when not eligible.")
    def rank(self) -> int | None:
        return self._graph.rank(self._node.digest)

    @strawberry.field
    def tied_with_previous(self) -> bool:
        return self._graph.tied(self._node.digest)

    @strawberry.field
    def eligible(self) -> bool:
        return self._facts().eligible

    @strawberry.field(description="UNPUBLISHED, STATUS_<STATUS>, RETRACTED, SUPERSEDED, MISSING_PRIMARY_METRIC.")
    def ineligibility_reasons(self) -> list[str]:
        return list(self._facts().reasons)

    @strawberry.field(description="Integrity warnings: data errors kept as published, dangling references...")
    def warnings(self) -> list[str]:
        return list(self._facts().warnings)

    @strawberry.field
    def cohort(self) -> Cohort | None:
        key = self._facts().cohort
        cohort = self._graph.cohorts.get(key) if key else None
        return Cohort(_graph=self._graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="The cohort's #1, for 'Compare with #1'.")
    def leader(self) -> Run | None:
        key = self._facts().cohort
        cohort = self._graph.cohorts.get(key) if key else None
        leader = cohort.leader(self._graph) if cohort else None
        return _run(self._graph, leader) if leader else None

    @strawberry.field
    def trust(self) -> Trust:
        return _TRUST[self._facts().trust]

    @strawberry.field
    def operation(self) -> Operation | None:
        operation = self._facts().operation
        return _operation(self._graph, operation) if operation else None

    @strawberry.field
    def workload(self) -> Workload | None:
        node = self._graph.nodes.get(self._node.workload)
        return Workload(_graph=self._graph, _node=node) if isinstance(node, n.Workload) else None

    @strawberry.field
    def implementation(self) -> Implementation | None:
        node = self._graph.nodes.get(self._node.implementation)
        return Implementation(_graph=self._graph, _node=node) if isinstance(node, n.Implementation) else None

    @strawberry.field
    def protocol(self) -> Protocol | None:
        node = self._graph.nodes.get(self._node.protocol)
        return Protocol(_graph=self._graph, _node=node) if isinstance(node, n.Protocol) else None

    @strawberry.field
    def environment(self) -> Environment | None:
        node = self._graph.nodes.get(self._node.environment)
        return Environment(_graph=self._graph, _node=node) if isinstance(node, n.Environment) else None

    @strawberry.field
    def attestations(self) -> list[Attestation]:
        digests = sorted(self._graph.overlays["attestations"].get(self._node.digest, ()))
        nodes_ = [self._graph.nodes[d] for d in digests]
        nodes_.sort(
            key=lambda a: (self._graph.publication(a.digest) is None, self._graph.publication(a.digest) or 0, a.digest)
        )
        return [Attestation(_graph=self._graph, _node=a) for a in nodes_ if isinstance(a, n.Attestation)]

    @strawberry.field
    def verifications(self) -> list[Verification]:
        digests = sorted(self._graph.overlays["verifications"].get(self._node.digest, ()))
        return [
            Verification(_graph=self._graph, _node=v)
            for d in digests
            if isinstance(v := self._graph.nodes[d], n.Verification)
        ]

    @strawberry.field
    def retraction(self) -> Retraction | None:
        digest = self._facts().retraction
        node = self._graph.nodes.get(digest) if digest else None
        return Retraction(_graph=self._graph, _node=node) if isinstance(node, n.Retraction) else None

    @strawberry.field(description="The corrected run that replaces this one, if any.")
    def superseded_by(self) -> Run | None:
        digest = self._facts().superseded_by
        return _run(self._graph, digest) if digest else None

    @strawberry.field(description="Who published it, when, from where, under which licence.")
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, self._facts().source)

    @strawberry.field
    def source(self, info: Info) -> Source | None:
        return source_type(info.context, self._graph, self._facts().source)

    @strawberry.field(description="The run dossier pinned to this snapshot's commit.")
    def permalink(self, info: Info) -> str:
        return info.context.permalink(self._graph, "runs", self._node.digest)

    @strawberry.field(
        description="How to cite this run, pinned to this snapshot's commit. `accessed` (YYYY-MM-DD, the day "
        "your reader accessed it) adds an access date; the server never adds its own, so an answer pinned "
        "to a published commit never changes."
    )
    def citation(self, info: Info, format: CitationFormat = CitationFormat.TEXT, accessed: str | None = None) -> str:
        day = access_date(accessed) if accessed is not None else info.context.today
        return cite(self._citation_facts(info, day.isoformat() if day else None), format.value)

    def _citation_facts(self, info: Info, accessed: str | None) -> CitationFacts:
        graph, run = self._graph, self._node
        implementation = graph.nodes.get(run.implementation)
        workload = graph.nodes.get(run.workload)
        slug = self._facts().source
        source_name = info.context.snapshots.source_terms(graph.mainline, slug).get("Source-Name") if slug else None
        primary = run.primary
        published = _published_at(graph, run)
        return CitationFacts(
            implementation=(implementation.title or implementation.name) if implementation else run.implementation,
            workload=workload_label(_document(info, workload)) if workload else run.workload,
            value=format_value(primary.value, primary.unit) if primary else "no primary value",
            statistic=primary.statistic if primary else "n/a",
            source=source_name or slug or "an unknown source",
            digest=run.digest,
            permalink=info.context.permalink(graph, "runs", run.digest),
            accessed=accessed,
            published=published[:10] if published else None,
            title=run.title or run.name,
        )

    @strawberry.field(description="The stored manifest JSON.")
    def manifest(self, info: Info) -> JSON:
        return _json(_document(info, self._node))

    @strawberry.field(description="The run with its protocol and environment, as the run pages show it.")
    def bundle(self, info: Info) -> JSON:
        bundle: dict[str, Any] = {"run": _document(info, self._node)}
        for key, digest in (("protocol", self._node.protocol), ("environment", self._node.environment)):
            node = self._graph.nodes.get(digest)
            if node is not None:
                bundle[key] = _document(info, node)
        return _json(bundle)


# Cohorts and records ------------------------------------------------------------------------------


@strawberry.type
class CohortEntry:
    rank: int
    tied_with_previous: bool
    run: Run


@strawberry.type(description="A change of record holder in a cohort.")
class RecordEvent:
    _graph: strawberry.Private[Graph]
    _event: strawberry.Private[registry.cohorts.RecordEvent]

    @strawberry.field
    def cohort(self) -> Cohort | None:
        cohort = self._graph.cohorts.get(self._event.cohort)
        return Cohort(_graph=self._graph, _cohort=cohort) if cohort else None

    @strawberry.field
    def run(self) -> Run | None:
        return _run(self._graph, self._event.run)

    @strawberry.field
    def previous_run(self) -> Run | None:
        return _run(self._graph, self._event.previous_run) if self._event.previous_run else None

    @strawberry.field
    def cause(self) -> RecordCause:
        return RecordCause(self._event.cause)

    @strawberry.field
    def policy_version(self) -> str:
        return self._event.policy_version

    @strawberry.field
    def at(self) -> str:
        return self._event.at

    @strawberry.field
    def value(self) -> float:
        return self._event.value

    @strawberry.field
    def previous_value(self) -> float | None:
        return self._event.previous_value

    @strawberry.field(description="How much faster than the previous record, in percent.")
    def improvement_pct(self) -> float | None:
        previous = self._event.previous_value
        if not previous or previous <= 0 or self._event.value >= previous:
            return None
        return (previous - self._event.value) / previous * 100


@strawberry.type(
    description="A comparison group: same operation, workload, protocol, environment, correctness policy and "
    "metric. Runs rank inside a cohort, never across."
)
class Cohort:
    _graph: strawberry.Private[Graph]
    _cohort: strawberry.Private[DomainCohort]

    @strawberry.field
    def key(self) -> str:
        return self._cohort.key

    @strawberry.field
    def profile(self) -> CohortProfile:
        return CohortProfile.SOURCE_NATIVE if self._cohort.profile == SOURCE_NATIVE else CohortProfile.STRICT_EXACT

    @strawberry.field
    def operation(self) -> Operation | None:
        return _operation(self._graph, self._cohort.operation)

    @strawberry.field
    def workload(self) -> Workload | None:
        node = self._graph.nodes.get(self._cohort.workload)
        return Workload(_graph=self._graph, _node=node) if isinstance(node, n.Workload) else None

    @strawberry.field
    def protocol(self) -> Protocol | None:
        node = self._graph.nodes.get(self._cohort.protocol)
        return Protocol(_graph=self._graph, _node=node) if isinstance(node, n.Protocol) else None

    @strawberry.field
    def environment(self) -> Environment | None:
        node = self._graph.nodes.get(self._cohort.environment)
        return Environment(_graph=self._graph, _node=node) if isinstance(node, n.Environment) else None

    @strawberry.field
    def correctness_key(self) -> str:
        return self._cohort.correctness_key

    @strawberry.field(description="metric:statistic:unit, or none")
    def metric_key(self) -> str:
        return self._cohort.metric_key

    @strawberry.field(description="Runs in the cohort, eligible or not.")
    def size(self) -> int:
        return len(self._cohort.members)

    @strawberry.field(description="Runs with a rank.")
    def ranked_count(self) -> int:
        return len(self._cohort.ranked(self._graph))

    @strawberry.field
    def leader(self) -> Run | None:
        leader = self._cohort.leader(self._graph)
        return _run(self._graph, leader) if leader else None

    @strawberry.field(
        description="The leaderboard: eligible runs in ranking-v1 order. `minTrust` keeps runs with at least "
        "that evidence level; ranks stay those of the whole cohort."
    )
    def entries(
        self, first: int = DEFAULT_PAGE, after: str | None = None, min_trust: Trust | None = None
    ) -> Connection[CohortEntry]:
        def make(entry: registry.cohorts.Ranked) -> CohortEntry:
            node = self._graph.nodes[entry.id]
            assert isinstance(node, n.Run)
            return CohortEntry(
                rank=entry.rank, tied_with_previous=entry.tied_with_previous, run=Run(_graph=self._graph, _node=node)
            )

        ranked: Sequence[registry.cohorts.Ranked] = self._cohort.ranked(self._graph)
        if min_trust is not None:
            floor = _DOMAIN_TRUST[min_trust]
            ranked = [entry for entry in ranked if self._graph.facts[entry.id].trust >= floor]
        return paginate(self._graph, ranked, first, after, make)

    @strawberry.field(
        description="The first page of `entries` as plain rows (rank, run, value, implementation): the same "
        "order and ranks, computed in one pass (api/leaderboard.py). Page further with `entries`."
    )
    def leaderboard(self, first: int = DEFAULT_PAGE, min_trust: Trust | None = None) -> list[LeaderboardRow]:
        return leaderboard_rows(self._graph, self._cohort, first, min_trust)

    @strawberry.field(description="Every run of the cohort, newest first, eligible or not.")
    def runs(self, first: int = DEFAULT_PAGE, after: str | None = None) -> Connection[Run]:
        digests = _ordered_runs(self._graph, set(self._cohort.members))
        return paginate(self._graph, digests, first, after, lambda d: _typed(self._graph, d, Run))

    @strawberry.field(description="Its record events, oldest first.")
    def history(self) -> list[RecordEvent]:
        return [RecordEvent(_graph=self._graph, _event=e) for e in self._cohort.events(self._graph)]

    @strawberry.field(description="The event that made the current record holder.")
    def holder(self) -> RecordEvent | None:
        event = self._cohort.holder(self._graph)
        return RecordEvent(_graph=self._graph, _event=event) if event else None


@strawberry.type(description="One cohort in the records ledger: its current holder and since when.")
class RecordEntry:
    _graph: strawberry.Private[Graph]
    _cohort: strawberry.Private[DomainCohort]

    @strawberry.field
    def cohort(self) -> Cohort:
        return Cohort(_graph=self._graph, _cohort=self._cohort)

    @strawberry.field
    def holder(self) -> Run | None:
        event = self._cohort.holder(self._graph)
        return _run(self._graph, event.run) if event else None

    @strawberry.field
    def since(self) -> str | None:
        event = self._cohort.holder(self._graph)
        return event.at if event else None

    @strawberry.field
    def event(self) -> RecordEvent | None:
        event = self._cohort.holder(self._graph)
        return RecordEvent(_graph=self._graph, _event=event) if event else None


# Compare ------------------------------------------------------------------------------------------

_MATERIAL = ("operation", "workload", "protocol", "environment", "correctness", "metric")


@strawberry.type
class CompareRow:
    field: str
    values: list[str | None]
    same: bool
    material: bool = strawberry.field(description="A difference here makes the runs incomparable.")


@strawberry.type
class CompareEntry:
    run: Run
    rank: int | None
    tied_with_previous: bool


@strawberry.type(description="Runs side by side, field by field; ranks only when they share an eligible cohort.")
class Compare:
    runs: list[Run]
    material: list[str] = strawberry.field(description="The material fields that differ, in DESIGN order.")
    rows: list[CompareRow]
    same_cohort: bool
    entries: list[CompareEntry] | None = strawberry.field(
        description="Ranks, when all share one cohort and are eligible."
    )
    missing: list[str] = strawberry.field(description="Ids that matched no run.")


def compare_runs(graph: Graph, ids: Sequence[str], info: Info) -> Compare:
    runs: list[n.Run] = []
    missing = []
    for ident in ids:
        node = graph.find(("BenchmarkRun",), ident)
        if isinstance(node, n.Run):
            runs.append(node)
        else:
            missing.append(ident)
    facts = [graph.facts[r.digest] for r in runs]

    def correctness(run: n.Run) -> str | None:
        workload = graph.nodes.get(run.workload)
        return workload.correctness if isinstance(workload, n.Workload) else None

    columns: list[tuple[str, Callable[[int], str | None], bool]] = [
        ("operation", lambda i: facts[i].operation, True),
        ("workload", lambda i: runs[i].workload, True),
        ("protocol", lambda i: runs[i].protocol, True),
        ("environment", lambda i: runs[i].environment, True),
        ("correctness", lambda i: correctness(runs[i]), True),
        ("metric", lambda i: registry.cohorts.metric_key(runs[i].primary), True),
        ("implementation", lambda i: runs[i].implementation, False),
        ("value", lambda i: _display(runs[i].primary), False),
        ("status", lambda i: runs[i].status, False),
        ("trust", lambda i: _TRUST[facts[i].trust].value, False),
        ("observedAt", lambda i: runs[i].observed_at, False),
        ("source", lambda i: facts[i].source, False),
        ("cohort", lambda i: facts[i].cohort, False),
    ]
    rows = []
    for name, value_of, material in columns:
        values = [value_of(i) for i in range(len(runs))]
        rows.append(CompareRow(field=name, values=values, same=len(set(values)) <= 1, material=material))
    differing = [row.field for row in rows if row.material and not row.same]
    cohorts = {f.cohort for f in facts}
    same_cohort = len(runs) >= 2 and len(cohorts) == 1 and None not in cohorts
    entries = None
    if same_cohort and all(f.eligible for f in facts):
        entries = [
            CompareEntry(
                run=Run(_graph=graph, _node=r), rank=graph.rank(r.digest), tied_with_previous=graph.tied(r.digest)
            )
            for r, f in zip(runs, facts, strict=True)
        ]
    rows.sort(key=lambda row: (not (row.material and not row.same), not row.material))
    return Compare(
        runs=[Run(_graph=graph, _node=r) for r in runs],
        material=differing,
        rows=rows,
        same_cohort=same_cohort,
        entries=entries,
        missing=missing,
    )


# Helpers ------------------------------------------------------------------------------------------


_W = TypeVar("_W")


def _typed(graph: Graph, digest: str, wrapper: type[_W]) -> _W:
    """The output type of a node the indexes say is of that type."""
    return wrapper(_graph=graph, _node=graph.nodes[digest])  # type: ignore[call-arg]


def _json(value: Any) -> JSON:
    return cast(JSON, value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _display(primary: registry.cohorts.Primary | None) -> str | None:
    return format_value(primary.value, primary.unit) if primary else None


def _run(graph: Graph, digest: str | None) -> Run | None:
    node = graph.nodes.get(digest) if digest else None
    return Run(_graph=graph, _node=node) if isinstance(node, n.Run) else None


def implementation_name(graph: Graph, implementation: n.Implementation) -> str:
    """Implementation.displayName: the first author, else the project, else the name."""
    if implementation.author is not None:
        return implementation.author
    project = _project_of(graph, implementation)
    return project.display_name if project else implementation.name


def _project_of(graph: Graph, implementation: n.Implementation) -> n.Project | None:
    """The project an implementation's `metadata.labels.project` names (the first by digest if several)."""
    if not implementation.project:
        return None
    found = sorted(d for d in graph.named(implementation.project) if graph.nodes[d].kind == "SoftwareProject")
    node = graph.nodes[found[0]] if found else None
    return node if isinstance(node, n.Project) else None


def _operation(graph: Graph, digest: str) -> Operation | None:
    node = graph.nodes.get(digest)
    return Operation(_graph=graph, _node=node) if isinstance(node, n.Operation) else None


def _ordered_runs(graph: Graph, digests: Iterable[str]) -> list[str]:
    """Newest observation first, then digest: a stable order for a given commit."""
    nodes = graph.nodes
    return sorted(digests, key=lambda d: (-nodes[d].observed_ns, d))  # type: ignore[union-attr]


def _ordered_cohorts(graph: Graph, keys: Iterable[str]) -> list[str]:
    """Largest first, then key."""
    cohorts = graph.cohorts
    return sorted(keys, key=lambda k: (-len(cohorts[k].members), k))


_TYPES: dict[type, Callable[[Graph, Any], Any]] = {
    n.Run: lambda g, node: Run(_graph=g, _node=node),
    n.Operation: lambda g, node: Operation(_graph=g, _node=node),
    n.Workload: lambda g, node: Workload(_graph=g, _node=node),
    n.Implementation: lambda g, node: Implementation(_graph=g, _node=node),
    n.Project: lambda g, node: Project(_graph=g, _node=node),
    n.Protocol: lambda g, node: Protocol(_graph=g, _node=node),
    n.Environment: lambda g, node: Environment(_graph=g, _node=node),
}


def node_type(graph: Graph, node: n.Node | None) -> Any:
    if node is None:
        return None
    return _TYPES[type(node)](graph, node)


def enum_of_trust(trust: DomainTrust) -> Trust:
    return _TRUST[trust]


def trust_of_enum(trust: Trust) -> DomainTrust:
    return _DOMAIN_TRUST[trust]

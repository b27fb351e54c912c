"""The resident form of each manifest: a small immutable tuple of the fields the graph needs.

A node keeps what ranking, filtering and listing need; everything else is read from the
manifest's blob on demand (`oid`). Strings that repeat across thousands of manifests
(digests, statuses, units, GPU names) are interned, so each exists once in memory.
Nodes are pure functions of the stored bytes: when a manifest was published is the
publication record's business (`snapshots.Publication`), so nodes load without it.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any, NamedTuple

from registry.cohorts import Primary, primary_of

__all__ = [
    "Attestation",
    "Environment",
    "Implementation",
    "Node",
    "Operation",
    "Other",
    "Project",
    "Protocol",
    "Retraction",
    "Run",
    "Supersession",
    "Verification",
    "Workload",
    "extract",
    "instant_ns",
]

_intern = sys.intern


def instant_ns(text: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 UTC instant (`...Z`), keeping every fraction digit
    that matters, so runs observed within one microsecond still order correctly.

    >>> instant_ns("2026-06-07T12:03:35.566Z") - instant_ns("2026-06-07T12:03:35Z")
    566000000
    >>> instant_ns("1970-01-01T00:00Z")
    0
    """
    head, dot, rest = text.rstrip("Z").partition(".")
    seconds = int(datetime.fromisoformat(head + "+00:00").timestamp())
    fraction = (rest + "000000000")[:9] if dot else "0"
    return seconds * 1_000_000_000 + int(fraction)


class Run(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    status: str
    observed_at: str
    observed_ns: int
    implementation: str
    workload: str
    protocol: str
    environment: str
    source: str | None  # spec.sourceNative.source
    primary: Primary | None
    raw_evidence: bool

    @property
    def kind(self) -> str:
        return "BenchmarkRun"

    @property
    def source_native(self) -> bool:
        return self.source is not None


class Workload(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    suite: bool
    operation: str
    correctness: str  # the correctness key (a digest of the workload's correctness policy)
    cases: int  # 1 for a WorkloadCase

    @property
    def kind(self) -> str:
        return "WorkloadSuite" if self.suite else "WorkloadCase"


class Implementation(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    operation: str
    project: str | None  # metadata.labels.project: a SoftwareProject's metadata.name
    source_available: bool
    language: str
    author: str | None  # the first of metadata.authors with a name (or GitHub handle): who leaderboards credit

    @property
    def kind(self) -> str:
        return "ImplementationRevision"


class Operation(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    family: str

    @property
    def kind(self) -> str:
        return "OperationSpec"


class Project(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    display_name: str

    @property
    def kind(self) -> str:
        return "SoftwareProject"


class Protocol(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None

    @property
    def kind(self) -> str:
        return "BenchmarkProtocol"


class Environment(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    vendor: str
    product: str
    architecture: str

    @property
    def kind(self) -> str:
        return "ExecutionEnvironment"


class Attestation(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    run: str
    type: str

    @property
    def kind(self) -> str:
        return "Attestation"


class Retraction(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    run: str
    reason: str

    @property
    def kind(self) -> str:
        return "Retraction"


class Supersession(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    run: str  # the correction
    supersedes: str  # the run it replaces
    reason: str

    @property
    def kind(self) -> str:
        return "Supersession"


class Verification(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    run: str
    rerun: str
    runner: str

    @property
    def kind(self) -> str:
        return "Verification"


class Other(NamedTuple):
    """Kinds the graph does not relate (the serving kinds): served by digest and name only."""

    digest: str
    oid: str
    name: str
    title: str | None
    kind: str


Node = (
    Run
    | Workload
    | Implementation
    | Operation
    | Project
    | Protocol
    | Environment
    | Attestation
    | Retraction
    | Supersession
    | Verification
    | Other
)


def extract(kind: str, digest: str, oid: str, document: dict[str, Any]) -> Node:
    """The node of one manifest. `document` is the stored JSON, trusted to be valid
    (every write validated it; the digest path names it)."""
    digest = _intern(digest)
    metadata = document["metadata"]
    spec = document["spec"]
    name = metadata["name"]
    title = metadata.get("title")
    if kind == "BenchmarkRun":
        native = spec.get("sourceNative")
        evidence = spec.get("evidence") or {}
        timing = spec.get("timing") or {}
        primary = primary_of(spec)
        observed = spec["observedAt"]
        return Run(
            digest,
            oid,
            name,
            title,
            _intern(spec["status"]),
            observed,
            instant_ns(observed),
            _intern(spec["implementationDigest"]),
            _intern(spec["workloadDigest"]),
            _intern(spec["protocolDigest"]),
            _intern(spec["environmentDigest"]),
            _intern(native["source"]) if native else None,
            primary,
            "rawSamples" in timing or "rawSamples" in evidence or "logs" in evidence,
        )
    if kind in ("WorkloadCase", "WorkloadSuite"):
        from registry.cohorts import correctness_key

        suite = kind == "WorkloadSuite"
        return Workload(
            digest,
            oid,
            name,
            title,
            suite,
            _intern(spec["operationSpecDigest"]),
            correctness_key(spec["correctness"]),
            len(spec["cases"]) if suite else 1,
        )
    if kind == "ImplementationRevision":
        labels = metadata.get("labels") or {}
        source_available = "repository" in spec["projectRevision"] or "source" in spec
        return Implementation(
            digest,
            oid,
            name,
            title,
            _intern(spec["operation"]["specDigest"]),
            labels.get("project"),
            source_available,
            _intern(spec["callable"]["language"]),
            _first_author(metadata.get("authors")),
        )
    if kind == "OperationSpec":
        return Operation(digest, oid, name, title, _intern(spec["family"]))
    if kind == "SoftwareProject":
        return Project(digest, oid, name, title, spec["name"])
    if kind == "BenchmarkProtocol":
        return Protocol(digest, oid, name, title)
    if kind == "ExecutionEnvironment":
        hardware = spec["hardware"]
        return Environment(
            digest,
            oid,
            name,
            title,
            _intern(hardware["vendor"]),
            _intern(hardware["product"]),
            _intern(hardware["architecture"]),
        )
    if kind == "Attestation":
        return Attestation(digest, oid, name, title, _intern(spec["runDigest"]), spec["type"])
    if kind == "Retraction":
        return Retraction(digest, oid, name, title, _intern(spec["runDigest"]), spec["reason"])
    if kind == "Supersession":
        return Supersession(
            digest,
            oid,
            name,
            title,
            _intern(spec["runDigest"]),
            _intern(spec["supersedesDigest"]),
            spec["reason"],
        )
    if kind == "Verification":
        return Verification(
            digest,
            oid,
            name,
            title,
            _intern(spec["runDigest"]),
            _intern(spec["rerunDigest"]),
            spec["runner"],
        )
    return Other(digest, oid, name, title, kind)


def _first_author(authors: Any) -> str | None:
    for author in authors or ():
        if isinstance(author, dict) and (author.get("name") or author.get("github")):
            return _intern(str(author.get("name") or author.get("github")))
    return None

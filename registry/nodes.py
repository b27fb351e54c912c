"""The resident form of each manifest: a small immutable tuple of the fields the graph needs.

A node keeps what ranking, filtering and listing need; everything else is read from the
manifest's blob on demand (`oid`). Strings that repeat across thousands of manifests
(digests, statuses, units, GPU names) are interned, so each exists once in memory.
Nodes are pure functions of the stored bytes: when a manifest was published is the
publication record's business (`snapshots.Publication`), so nodes load without it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from kernelindex.registry.cohorts import Primary, primary_of

__all__ = [
    "Attestation",
    "Environment",
    "Implementation",
    "Model",
    "Node",
    "Operation",
    "Other",
    "Project",
    "Protocol",
    "Retraction",
    "Run",
    "ServingConfiguration",
    "ServingRun",
    "ServingStack",
    "ServingWorkload",
    "Supersession",
    "Verification",
    "Workload",
    "extract",
    "first_author",
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
    if len(text) == 24 and text[19] == "." and text[23] == "Z" and text[10] == "T" and text[13] == ":" == text[16]:
        # `YYYY-MM-DDTHH:MM:SS.fffZ`, as nearly every run states it: one int of the nine clock digits.
        known = _DAYS.get(text[:10])
        clock = text[11:13] + text[14:16] + text[17:19] + text[20:23]
        if known is not None and clock.isascii() and clock.isdigit():
            value = int(clock)
            hh, mm, ss = value // 10_000_000, value // 100_000 % 100, value // 1000 % 100
            if hh < 24 and mm < 60 and ss < 60:
                return (known + hh * 3600 + mm * 60 + ss) * 1_000_000_000 + value % 1000 * 1_000_000
    head, dot, rest = text.rstrip("Z").partition(".")
    fraction = (rest + "000000000")[:9] if dot else "0"
    # A cold build reads one instant a run: `YYYY-MM-DDTHH:MM:SS` costs a lookup of its day and
    # integer arithmetic (a third of `fromisoformat` and `timestamp`); any other shape, or any
    # doubt, takes `fromisoformat`, which also says what is wrong.
    day = _DAYS.get(head[:10]) if len(head) == 19 and head[10] == "T" else None
    if day is None and len(head) == 19 and head[10] == "T":
        with contextlib.suppress(ValueError):
            day = _DAYS[head[:10]] = int(datetime.fromisoformat(head[:10] + "T00:00:00+00:00").timestamp())
    if day is not None and head[13] == ":" and head[16] == ":":
        hours, minutes, seconds = head[11:13], head[14:16], head[17:19]
        if (hours + minutes + seconds).isascii() and (hours + minutes + seconds).isdigit():
            h, m, s = int(hours), int(minutes), int(seconds)
            if h < 24 and m < 60 and s < 60:
                return (day + h * 3600 + m * 60 + s) * 1_000_000_000 + int(fraction)
    seconds_since = int(datetime.fromisoformat(head + "+00:00").timestamp())
    return seconds_since * 1_000_000_000 + int(fraction)


_DAYS: dict[str, int] = {}  # `YYYY-MM-DD` -> seconds since the epoch at its start (UTC)


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


class ServingRun(NamedTuple):
    """An LLM-serving result (serving-v1 compares these among themselves only: `kernelindex.registry.serving`)."""

    digest: str
    oid: str
    name: str
    title: str | None
    status: str  # valid, invalid, incomplete_evidence
    observed_at: str
    observed_ns: int
    model: str
    configuration: str
    workload: str
    harness: str
    harness_version: str
    placement: str | None
    accelerator_vendor: str | None
    accelerator_model: str
    accelerators_per_node: int
    node_count: int
    interconnect: str | None
    quality_policy: str
    measurements: tuple[tuple[str, str, str, float], ...]  # (metric, statistic, unit, value), as listed
    source: str | None  # spec.sourceNative.source
    scenario: str | None  # spec.sourceNative.scenario

    @property
    def kind(self) -> str:
        return "ServingRun"


class ServingWorkload(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    streaming: bool
    load_generation: str
    slo: tuple[tuple[str, str, str, float, str], ...]  # (metric, statistic, operator, value, unit)

    @property
    def kind(self) -> str:
        return "ServingWorkload"


class ServingConfiguration(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    stack: str

    @property
    def kind(self) -> str:
        return "ServingConfiguration"


class ServingStack(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    project: str  # spec.project.name: who serves (an MLPerf submitter)
    version: str | None

    @property
    def kind(self) -> str:
        return "ServingStackRevision"


class Model(NamedTuple):
    digest: str
    oid: str
    name: str
    title: str | None
    model: str
    tokenizer: str | None  # spec.tokenizer.name: part of a serving cohort's identity

    @property
    def kind(self) -> str:
        return "ModelRevision"


class Other(NamedTuple):
    """Kinds the graph does not relate: served by digest and name only."""

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
    | ServingRun
    | ServingWorkload
    | ServingConfiguration
    | ServingStack
    | Model
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
        from kernelindex.registry.cohorts import correctness_key

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
            _intern(labels["project"]) if labels.get("project") is not None else None,
            source_available,
            _intern(spec["callable"]["language"]),
            first_author(metadata.get("authors")),
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
    if kind in _SERVING:
        return _SERVING[kind](digest, oid, name, title, spec)
    return Other(digest, oid, name, title, kind)


def _serving_run(digest: str, oid: str, name: str, title: str | None, spec: dict[str, Any]) -> ServingRun:
    topology, harness = spec["topology"], spec["harness"]
    native = spec.get("sourceNative") or {}
    vendor = topology.get("acceleratorVendor")
    return ServingRun(
        digest,
        oid,
        name,
        _intern(title) if title is not None else None,  # a few hundred titles for its runs (sweeps)
        _intern(spec["status"]),
        _intern(spec["observedAt"]),
        instant_ns(spec["observedAt"]),
        _intern(spec["modelDigest"]),
        _intern(spec["configurationDigest"]),
        _intern(spec["workloadDigest"]),
        _intern(harness["name"]),
        _intern(harness["version"]),
        spec.get("placement"),
        _intern(vendor) if vendor else None,
        _intern(topology["acceleratorModel"]),
        topology["acceleratorsPerNode"],
        topology["nodeCount"],
        topology.get("interconnect"),
        _intern(spec["qualityPolicy"]),
        tuple(
            (_intern(m["metric"]), _intern(m["statistic"]), _intern(m["unit"]), float(m["value"]))
            for m in spec["measurements"]
        ),
        _intern(native["source"]) if native else None,
        _intern(native["scenario"]) if native else None,
    )


def _serving_workload(digest: str, oid: str, name: str, title: str | None, spec: dict[str, Any]) -> ServingWorkload:
    slo = tuple(
        (_intern(b["metric"]), _intern(b["statistic"]), b["operator"], float(b["value"]), _intern(b["unit"]))
        for b in spec.get("slo") or ()
    )
    return ServingWorkload(digest, oid, name, title, spec["streaming"], _intern(spec["loadGeneration"]), slo)


def _serving_configuration(
    digest: str, oid: str, name: str, title: str | None, spec: dict[str, Any]
) -> ServingConfiguration:
    return ServingConfiguration(digest, oid, name, title, _intern(spec["stackDigest"]))


def _serving_stack(digest: str, oid: str, name: str, title: str | None, spec: dict[str, Any]) -> ServingStack:
    return ServingStack(digest, oid, name, title, spec["project"]["name"], spec["revision"].get("version"))


def _model(digest: str, oid: str, name: str, title: str | None, spec: dict[str, Any]) -> Model:
    return Model(digest, oid, name, title, spec["model"], (spec.get("tokenizer") or {}).get("name"))


_SERVING: dict[str, Callable[[str, str, str, str | None, dict[str, Any]], Node]] = {
    "ServingRun": _serving_run,
    "ServingWorkload": _serving_workload,
    "ServingConfiguration": _serving_configuration,
    "ServingStackRevision": _serving_stack,
    "ModelRevision": _model,
}


def first_author(authors: Any) -> str | None:
    """Who leaderboards credit: the first of `metadata.authors` with a name (or GitHub handle)."""
    for author in authors or ():
        if isinstance(author, dict) and (author.get("name") or author.get("github")):
            return _intern(str(author.get("name") or author.get("github")))
    return None

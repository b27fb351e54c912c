"""The resident form of each manifest: a small immutable tuple of the fields the graph needs.

A node keeps what ranking, filtering and listing need; everything else is read from the
manifest's blob on demand (`oid`). Strings that repeat across thousands of manifests
(digests, statuses, units, GPU names) are interned, so each exists once in memory.
Nodes are pure functions of the stored bytes: when a manifest was published is the
publication record's business (`snapshots.Publication`), so nodes load without it.
"""

from __future__ import annotations

import collections
import contextlib
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from kernelindex.registry.cohorts import Primary, primary_of
from kernelindex.registry.kind_specs import KINDS, KindSpec, NodeField

__all__ = [
    "READERS",
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
    "node_class",
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
    """The node of one manifest, as its kind's spec (`kernelindex.registry.kind_specs`) declares it. `document`
    is the stored JSON, trusted to be valid (every write validated it; the digest path names it).

    Raises:
        KeyError, TypeError: not the manifest of its kind a write would have let in.
    """
    make = _MAKERS.get(kind)
    if make is None:
        make = _maker(kind)
        if kind in KINDS:  # kept for the kinds only: any other string is answered, never remembered
            _MAKERS[kind] = make
    return make(_intern(digest), oid, document)


def node_class(spec: KindSpec) -> type[Any]:
    """The class of a kind's nodes: the typed class its spec names (checked to hold the spec's fields, in its
    order), or one made from the spec's fields for a kind that names none.

    Raises:
        TypeError: the named class is not here, or its fields are not the spec's.
    """
    found = _CLASSES.get(spec.name)
    if found is not None:
        return found
    cls: type[Any] | None
    if spec.node:
        named = globals().get(spec.node)
        cls = named if isinstance(named, type) else None
        fields = getattr(cls, "_fields", None)
        if fields != spec.field_names:
            raise TypeError(f"kind {spec.name}: node class {spec.node!r} holds {fields}, its spec {spec.field_names}")
    else:
        made = collections.namedtuple(spec.name, spec.field_names)  # type: ignore[misc]
        cls = type(  # a named tuple of the spec's fields, whose `kind` is the spec's
            spec.name, (made,), {"__slots__": (), "kind": property(lambda node: spec.name), "__module__": __name__}
        )
    assert cls is not None
    _CLASSES[spec.name] = cls
    return cls


_CLASSES: dict[str, type[Any]] = {}
_MAKERS: dict[str, Callable[[str, str, dict[str, Any]], Node]] = {}
_new = tuple.__new__


def _maker(kind: str) -> Callable[[str, str, dict[str, Any]], Node]:
    """How a manifest of `kind` becomes its node: each field of its spec read from the document."""
    spec = KINDS.get(kind)
    if spec is None:
        return lambda digest, oid, document: Other(
            digest, oid, document["metadata"]["name"], document["metadata"].get("title"), kind
        )
    cls = node_class(spec)
    readers = tuple(_field_reader(kind, field) for field in spec.fields)
    title_reader = _reader(kind, spec.title)

    def make(digest: str, oid: str, document: dict[str, Any]) -> Node:
        metadata = document["metadata"]
        title = metadata.get("title")
        values = [read(document) for read in readers]
        node: Node = _new(cls, (digest, oid, metadata["name"], None if title is None else title_reader(title), *values))
        return node

    return make


def _field_reader(kind: str, field: NodeField) -> Callable[[dict[str, Any]], Any]:
    """A function of the document that reads one node field as the spec declares it."""
    if field.how == "const":
        value = field.value
        return lambda document: value
    if field.how == "present":
        tests = tuple((_path_getter(path.rpartition(".")[0]), path.rpartition(".")[2]) for path in field.paths)
        return lambda document: any(
            (parent := get(document)) is not None and key.rstrip("?") in parent for get, key in tests
        )
    get, read, missing = _path_getter(field.path), _reader(kind, field.how), field.missing
    if read is _identity and missing is None:
        return get

    def field_value(document: dict[str, Any]) -> Any:
        value = get(document)
        return missing if value is None else read(value)

    return field_value


def _path_getter(path: str) -> Callable[[dict[str, Any]], Any]:
    """The value at a dotted path of the document (a part ending in `?` may be absent: then None)."""
    steps = tuple((part.rstrip("?"), part.endswith("?")) for part in path.split(".") if part)

    def get(document: dict[str, Any]) -> Any:
        value: Any = document
        for key, optional in steps:
            value = value.get(key) if optional else value[key]
            if value is None:
                return None
        return value

    return get


def _reader(kind: str, how: str) -> Callable[[Any], Any]:
    found = READERS.get(how)
    if found is None:
        raise TypeError(f"kind {kind}: no node field reader {how!r} (readers: {', '.join(sorted(READERS))})")
    return found


def _identity(value: Any) -> Any:
    return value


def _correctness(policy: Any) -> str:
    from kernelindex.registry.cohorts import correctness_key

    return correctness_key(policy)


def _measurements(measurements: Any) -> tuple[tuple[str, str, str, float], ...]:
    """A serving run's measurements: (metric, statistic, unit, value), as listed."""
    return tuple(
        (_intern(m["metric"]), _intern(m["statistic"]), _intern(m["unit"]), float(m["value"])) for m in measurements
    )


def _slo(slo: Any) -> tuple[tuple[str, str, str, float, str], ...]:
    """A serving workload's declared bounds: (metric, statistic, operator, value, unit)."""
    return tuple(
        (_intern(b["metric"]), _intern(b["statistic"]), b["operator"], float(b["value"]), _intern(b["unit"]))
        for b in slo
    )


def first_author(authors: Any) -> str | None:
    """Who leaderboards credit: the first of `metadata.authors` with a name (or GitHub handle)."""
    for author in authors or ():
        if isinstance(author, dict) and (author.get("name") or author.get("github")):
            return _intern(str(author.get("name") or author.get("github")))
    return None


READERS: dict[str, Callable[[Any], Any]] = {
    "text": _identity,  # the value as stored
    "intern": _intern,  # a string that repeats across manifests: one copy
    "instant": instant_ns,  # an RFC 3339 instant as nanoseconds since the epoch
    "count": len,  # how many items a list holds
    "correctness": _correctness,  # a workload's correctness key (`kernelindex.registry.cohorts.correctness_key`)
    "primary": primary_of,  # a run's primary value, from its spec (`kernelindex.registry.cohorts.primary_of`)
    "author": first_author,  # who leaderboards credit, from `metadata.authors`
    "measurements": _measurements,
    "slo": _slo,
}
"""What a node field's `how` may name (`kernelindex.registry.kind_specs.NodeField`), besides `const` and `present`."""

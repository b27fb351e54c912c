"""Stored manifest bytes straight to nodes: the cold build's decoder.

`nodes.extract` reads a node out of a parsed document; parsing the whole document first
(`orjson.loads`) builds every dict, list and string of it, most of which the node never
keeps. Here msgspec decodes the frequent kinds against structs that name only the fields a
node keeps, skipping the rest of the bytes without building anything: about half the work
per manifest, which is most of what a cold build does beyond reading git.

`decode(kind, digest, oid, data)` equals `extract(kind, digest, oid, orjson.loads(data))` for
every manifest (tests/test_decode.py holds it to that on the embedded registry). The most frequent
kinds have decoders written here; every other kind's is derived from its spec's node fields
(`_derive`). A document the structs do not describe takes `extract` itself, so a malformed
manifest fails exactly as it did.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec
import orjson

from kernelindex.registry.cohorts import correctness_key, primary_from
from kernelindex.registry.kind_specs import KINDS, KindSpec
from kernelindex.registry.nodes import (
    READERS,
    Implementation,
    Node,
    Operation,
    Project,
    Run,
    Workload,
    extract,
    first_author,
    instant_ns,
    node_class,
)

__all__ = ["decode", "decode_stream"]

_intern = sys.intern
_new = tuple.__new__
_UNSET = msgspec.UNSET
_Present = msgspec.Raw | msgspec.UnsetType  # a field only tested for presence (any value, even null)


class _Metadata(msgspec.Struct, rename="camel"):
    name: str
    title: Any = None


class _ImplementationMetadata(msgspec.Struct, rename="camel"):
    name: str
    title: Any = None
    labels: Any = None
    authors: Any = None


class _Timing(msgspec.Struct, rename="camel"):
    primary_statistic: str
    latency_ns: dict[str, Any]
    raw_samples: _Present = _UNSET


class _Evidence(msgspec.Struct, rename="camel"):
    raw_samples: _Present = _UNSET
    logs: _Present = _UNSET


class _SourceNative(msgspec.Struct, rename="camel"):
    source: str


class _RunSpec(msgspec.Struct, rename="camel"):
    status: str
    observed_at: str
    implementation_digest: str
    workload_digest: str
    protocol_digest: str
    environment_digest: str
    source_native: _SourceNative | None = None
    timing: _Timing | None = None
    measurements: Any = None
    evidence: _Evidence | None = None


class _Run(msgspec.Struct, rename="camel"):
    metadata: _Metadata
    spec: _RunSpec


class _WorkloadSpec(msgspec.Struct, rename="camel"):
    operation_spec_digest: str
    correctness: msgspec.Raw


class _Workload(msgspec.Struct, rename="camel"):
    metadata: _Metadata
    spec: _WorkloadSpec


class _SuiteSpec(msgspec.Struct, rename="camel"):
    operation_spec_digest: str
    correctness: msgspec.Raw
    cases: list[msgspec.Raw]


class _Suite(msgspec.Struct, rename="camel"):
    metadata: _Metadata
    spec: _SuiteSpec


class _ProjectRevision(msgspec.Struct, rename="camel"):
    repository: _Present = _UNSET


class _OperationRef(msgspec.Struct, rename="camel"):
    spec_digest: str


class _Callable(msgspec.Struct, rename="camel"):
    language: str


class _ImplementationSpec(msgspec.Struct, rename="camel"):
    project_revision: _ProjectRevision
    operation: _OperationRef
    callable: _Callable
    source: _Present = _UNSET


class _Implementation(msgspec.Struct, rename="camel"):
    metadata: _ImplementationMetadata
    spec: _ImplementationSpec


class _OperationSpec(msgspec.Struct, rename="camel"):
    family: str


class _Operation(msgspec.Struct, rename="camel"):
    metadata: _Metadata
    spec: _OperationSpec


class _ProjectSpec(msgspec.Struct, rename="camel"):
    name: Any


class _Project(msgspec.Struct, rename="camel"):
    metadata: _Metadata
    spec: _ProjectSpec


_CORRECTNESS: dict[bytes, str] = {}


def _correctness(raw: msgspec.Raw) -> str:
    """The correctness key of a workload's policy, memoized by its stored bytes: a few hundred
    policies serve tens of thousands of workloads, and equal stored bytes are an equal value."""
    data = bytes(raw)
    found = _CORRECTNESS.get(data)
    if found is None:
        found = _CORRECTNESS[data] = correctness_key(orjson.loads(data))
    return found


def _run(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
    document = _RUN(data)
    metadata, spec = document.metadata, document.spec
    timing, evidence, native = spec.timing, spec.evidence, spec.source_native
    observed = shared.setdefault(spec.observed_at, spec.observed_at)
    title = metadata.title
    # `tuple.__new__` rather than `Run(...)`: the named tuple's own `__new__` is a Python function
    # around the same call (0.29 -> 0.16 us a run), and `_shared_title` inlined.
    return _new(
        Run,
        (
            digest,
            oid,
            metadata.name,
            title if title is None else shared.setdefault(title, title),
            _intern(spec.status),
            observed,
            instant_ns(observed),
            _intern(spec.implementation_digest),
            _intern(spec.workload_digest),
            _intern(spec.protocol_digest),
            _intern(spec.environment_digest),
            _intern(native.source) if native is not None else None,
            primary_from(None if timing is None else (timing.primary_statistic, timing.latency_ns), spec.measurements),
            (timing is not None and timing.raw_samples is not _UNSET)
            or (evidence is not None and (evidence.raw_samples is not _UNSET or evidence.logs is not _UNSET)),
        ),
    )


def _shared_title(title: str | None, shared: dict[str, str]) -> str | None:
    return title if title is None else shared.setdefault(title, title)


def _workload(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
    document = _WORKLOAD(data)
    spec, title = document.spec, document.metadata.title
    # As `_run`: `tuple.__new__` and the title shared inline (56k workloads at 10x).
    return _new(
        Workload,
        (
            digest,
            oid,
            document.metadata.name,
            title if title is None else shared.setdefault(title, title),
            False,
            _intern(spec.operation_spec_digest),
            _correctness(spec.correctness),
            1,
        ),
    )


def _suite(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
    document = _SUITE(data)
    spec = document.spec
    return Workload(
        digest,
        oid,
        document.metadata.name,
        _shared_title(document.metadata.title, shared),
        True,
        _intern(spec.operation_spec_digest),
        _correctness(spec.correctness),
        len(spec.cases),
    )


def _implementation(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
    document = _IMPLEMENTATION(data)
    metadata, spec = document.metadata, document.spec
    # A project's name is shared by its implementations (592 projects for 4,315 at 1x): one string each.
    project = (metadata.labels or {}).get("project")
    # As `_run`: `tuple.__new__` (43k implementations at 10x).
    return _new(
        Implementation,
        (
            digest,
            oid,
            metadata.name,
            metadata.title,
            _intern(spec.operation.spec_digest),
            None if project is None else _intern(project),
            spec.project_revision.repository is not _UNSET or spec.source is not _UNSET,
            _intern(spec.callable.language),
            first_author(metadata.authors),
        ),
    )


def _operation(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
    document = _OPERATION(data)
    return Operation(digest, oid, document.metadata.name, document.metadata.title, _intern(document.spec.family))


def _project(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
    document = _PROJECT(data)
    return Project(digest, oid, document.metadata.name, document.metadata.title, document.spec.name)


_RUN = msgspec.json.Decoder(_Run).decode
_WORKLOAD = msgspec.json.Decoder(_Workload).decode
_SUITE = msgspec.json.Decoder(_Suite).decode
_IMPLEMENTATION = msgspec.json.Decoder(_Implementation).decode
_OPERATION = msgspec.json.Decoder(_Operation).decode
_PROJECT = msgspec.json.Decoder(_Project).decode

_Decoder = Callable[[str, str, bytes, dict[str, str]], Node]

_DECODERS: dict[str, _Decoder] = {  # written by hand for the most frequent kinds; the others' are `_derive`d
    "BenchmarkRun": _run,
    "WorkloadCase": _workload,
    "WorkloadSuite": _suite,
    "ImplementationRevision": _implementation,
    "OperationSpec": _operation,
    "SoftwareProject": _project,
}


def decode_stream(manifests: Iterable[tuple[str, str, str, bytes]]) -> Iterator[Node]:
    """`decode` of each (kind, digest, blob id, bytes) of a stream, one `shared` dict for them all:
    the same nodes, with the dispatch made here rather than in a call of `decode` a manifest (a
    Python call and its arguments, ~0.1 us a manifest, 215k at 10x)."""
    shared: dict[str, str] = {}
    decoders = _DECODERS
    for kind, digest, oid, data in manifests:
        digest = _intern(digest)
        decoder = decoders.get(kind) or _derive(kind)
        if decoder is not None:
            try:
                node = decoder(digest, oid, data, shared)
            except (msgspec.DecodeError, AttributeError, TypeError):
                pass  # as in `decode`: `extract` fails (or not) as it always did
            else:
                yield node
                continue
        yield extract(kind, digest, oid, orjson.loads(data))


def decode(kind: str, digest: str, oid: str, data: bytes, shared: dict[str, str] | None = None) -> Node:
    """The node of one stored manifest (`data`: its blob), as `nodes.extract` makes it from the
    parsed document.

    `shared`, given the same dict for every manifest of a build, makes equal titles and observation
    instants of runs and workloads one string (at 1x, 9,508 runs hold 6,124 titles and 6,344 instants:
    ~0.9 MB of copies otherwise). Unlike `sys.intern` it is dropped with the build: a value held
    once costs no table entry for the server's life.

    Raises:
        ValueError: not JSON (orjson.JSONDecodeError).
        KeyError, TypeError: JSON, but not the manifest of its kind a write would have let in.
    """
    digest = _intern(digest)
    decoder = _DECODERS.get(kind) or _derive(kind)
    if decoder is not None:
        try:
            return decoder(digest, oid, data, {} if shared is None else shared)
        except (msgspec.DecodeError, AttributeError, TypeError):
            pass  # not the shape a valid manifest has: `extract` fails (or not) as it always did
    return extract(kind, digest, oid, orjson.loads(data))


_DERIVED: dict[str, _Decoder | None] = {}


def _derive(kind: str) -> _Decoder | None:
    """The decoder of a kind without one written here, made from its spec's node fields: msgspec structs that
    name only the paths the fields read (an absent `?` part defaults to None, a presence test to UNSET), and each
    field read from them as `nodes.extract` reads it from the parsed document. None when the spec cannot be
    described so (one field reads a path another reads inside): `extract` then serves it."""
    if kind in _DERIVED:
        return _DERIVED[kind]
    spec = KINDS.get(kind)
    if spec is None:
        return None  # not a kind: `extract` answers it, and nothing is remembered of it
    decoder = _DERIVED[kind] = _derived(spec)
    return decoder


_LEAF, _PRESENT = "leaf", "present"


def _derived(spec: KindSpec) -> _Decoder | None:
    tree: dict[str, Any] = {}  # key -> [optional, children | _LEAF | _PRESENT]
    getters: list[tuple[str, Any]] = []  # per field: (how, how to read it from the decoded structs)

    def place(parts: list[str], end: str) -> list[tuple[str, bool]] | None:
        level, steps = tree, []
        for index, part in enumerate(parts):
            key, optional = part.rstrip("?"), part.endswith("?")
            shape = end if index == len(parts) - 1 else None
            found = level.setdefault(key, [optional, shape if shape is not None else {}])
            if (
                found[0] != optional
                or (shape is None) != isinstance(found[1], dict)
                or (shape is not None and found[1] != shape)
            ):
                return None  # a path read both whole and inside, or both required and optional
            steps.append((f"f{key}", optional))
            if shape is None:
                level = found[1]
        return steps

    for field in spec.fields:
        if field.how == "const":
            getters.append(("const", field.value))
        elif field.how == "present":
            tests = []
            for path in field.paths:
                steps = place(path.split("."), _PRESENT)
                if steps is None:
                    return None
                tests.append(steps)
            getters.append(("present", tests))
        else:
            steps = place(field.path.split("."), _LEAF)
            if steps is None or not steps:
                return None
            getters.append((field.how, (steps, READERS[field.how], field.missing)))
    if "metadata" in tree:
        return None  # the title and name are read by the envelope's own struct below
    root = _struct(f"_{spec.name}", {"metadata": [False, {"name": [False, _LEAF], "title": [True, _LEAF]}], **tree})
    read = msgspec.json.Decoder(root).decode
    cls, title_reader = node_class(spec), READERS[spec.title]

    def value(document: Any, steps: list[tuple[str, bool]]) -> Any:
        for attr, _optional in steps:
            document = getattr(document, attr)
            if document is None:
                return None
        return document

    def decoder(digest: str, oid: str, data: bytes, shared: dict[str, str]) -> Node:
        document: Any = read(data)
        values: list[Any] = []
        for how, how_read in getters:
            if how == "const":
                values.append(how_read)
            elif how == "present":
                values.append(
                    any(
                        (parent := value(document, steps[:-1])) is not None
                        and getattr(parent, steps[-1][0]) is not _UNSET
                        for steps in how_read
                    )
                )
            else:
                found = value(document, how_read[0])
                values.append(how_read[2] if found is None else how_read[1](found))
        metadata = document.fmetadata
        title = metadata.ftitle
        node: Node = _new(cls, (digest, oid, metadata.fname, None if title is None else title_reader(title), *values))
        return node

    return decoder


def _struct(name: str, level: dict[str, Any]) -> type[msgspec.Struct]:
    """A struct of the keys of one level of the paths: required ones first, absent ones defaulted."""
    fields: list[Any] = []
    for key, (optional, shape) in level.items():
        kind: Any = _Present if shape == _PRESENT else Any if shape == _LEAF else _struct(f"{name}_{key}", shape)
        if shape == _PRESENT:
            fields.append((f"f{key}", kind, _UNSET))
        elif optional:
            fields.append((f"f{key}", kind | None if shape not in (_LEAF, _PRESENT) else kind, None))
        else:
            fields.append((f"f{key}", kind))
    return msgspec.defstruct(name, fields, kw_only=True, rename={f"f{key}": key for key in level})

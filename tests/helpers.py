"""Plain functions for tests: valid manifests on demand, committing them, and where the project's data is.

The `make_*` functions return plain dicts (the authoring form of a manifest) that pass
`kernelindex.registry.load_manifest`; they take the digests they reference either as strings or as the
referenced documents themselves, so a small registry reads like its own graph:

>>> op = make_operation("rmsnorm-a")
>>> workload = make_workload(op, tokens=2048)
>>> implementation = make_implementation(op, "kernel-a")
>>> run = make_run(implementation, workload, make_protocol(), make_environment(), 8120)
>>> run["spec"]["workloadDigest"] == digest_of(workload)
True
>>> run["metadata"]["name"].startswith("run-")
True

`commit_manifests(store, docs)` then publishes them as one commit with a fixed signature,
so commit ids are stable from one run of the suite to the next.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from kernelindex import registry

__all__ = [
    "API_VERSION",
    "DATA",
    "DOC_EXAMPLES",
    "EMBEDDED_REPO",
    "EXAMPLES",
    "EXPORT",
    "PROJECT_ROOT",
    "SEEDS",
    "TEST_DATA",
    "TEST_TIME",
    "UPSTREAM_SCHEMAS",
    "BasicScenario",
    "basic_scenario",
    "commit_manifests",
    "commit_meta",
    "digest_of",
    "load_scenario",
    "make_attestation",
    "make_environment",
    "make_implementation",
    "make_operation",
    "make_project",
    "make_protocol",
    "make_retraction",
    "make_run",
    "make_supersession",
    "make_verification",
    "make_workload",
    "make_workload_suite",
    "object_ids",
    "person",
    "to_manifest",
]

Doc = dict[str, Any]
Ref = str | Mapping[str, Any]  # a digest, or the document it is the digest of

API_VERSION = "kernelindex.dev/v1alpha1"
TEST_TIME = 1_700_000_000
"""The fixed instant of every test commit (2023-11-14T22:13:20Z): stable commit ids."""

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA = PROJECT_ROOT / "data"
"""Upstream data the project carries, each folder with its licence and origin (data/SOURCES.md)."""
TEST_DATA = PROJECT_ROOT / "tests" / "data"
"""The tests' own scenarios and the expected values extracted from upstream (scripts/extract-*)."""
EMBEDDED_REPO = PROJECT_ROOT / "manifests.git"
"""The committed registry. Tests only ever read it, and pass its path explicitly."""
EXAMPLES = DATA / "kernelindex" / "examples"
UPSTREAM_SCHEMAS = DATA / "kernelindex" / "schemas"
DOC_EXAMPLES = PROJECT_ROOT / "docs" / "examples"
"""Our own examples: `kinds/` (one per kind, digest-chained), `invalid/`, `bundles/`."""
SEEDS = DATA / "seeds"


def _export() -> Path:
    found = sorted((DATA / "corpus").glob("kernelindex-catalog-*.jsonl.zst"))
    return found[0] if found else DATA / "corpus" / "missing.jsonl.zst"


EXPORT = _export()
"""The upstream catalog export (zstd JSON lines)."""


# Identity ------------------------------------------------------------------------------------------


def to_manifest(document: Mapping[str, Any], source: str = "<test>") -> registry.Manifest:
    """Validate, normalize and name a document, as `kernelindex.registry.load_manifest` does for bytes."""
    return registry.manifest_from_document(copy.deepcopy(dict(document)), source)


def digest_of(document: Ref) -> str:
    """The digest of a document (or the string itself, when given a digest already)."""
    if isinstance(document, str):
        return document
    return str(to_manifest(document).digest)


def _envelope(kind: str, name: str | None, spec: Doc, title: str | None = None) -> Doc:
    metadata: Doc = {"name": name or f"{kind.lower()}-{_short(spec)}"}
    if title:
        metadata["title"] = title
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def _short(spec: Mapping[str, Any]) -> str:
    """12 hex digits that follow the spec: a default metadata.name that differs when the spec does."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


# Kernel kinds --------------------------------------------------------------------------------------


def make_operation(name: str, *, family: str = "rmsnorm", hidden: int = 4096) -> Doc:
    """An OperationSpec; its spec (and so its digest) depends on `name`, `family` and `hidden`."""
    tensor = {"shape": ["tokens", "hidden"], "dtype": "bf16", "layout": "row_major"}
    spec = {
        "family": family,
        "axes": {
            "tokens": {"role": "variable", "type": "integer", "minimum": 1},
            "hidden": {"role": "constant", "type": "integer", "value": hidden},
        },
        "inputs": [
            {"name": "input", "tensor": dict(tensor)},
            {"name": "epsilon", "scalar": {"dtype": "fp32"}},
        ],
        "outputs": [{"name": "output", "tensor": dict(tensor)}],
        "semantics": {
            "expression": f"output = {name.replace('-', '_')}(input, epsilon)",
            "mutation": "none",
            "determinism": "deterministic",
        },
    }
    return _envelope("OperationSpec", name, spec, title=f"Operation {name}")


def make_workload(
    operation: Ref,
    *,
    tokens: int = 2048,
    hidden: int = 4096,
    name: str | None = None,
    max_absolute_error: float = 0.01,
) -> Doc:
    """A WorkloadCase of `operation` (its correctness policy is part of the cohort key)."""
    spec = {
        "operationSpecDigest": digest_of(operation),
        "axes": {"tokens": tokens, "hidden": hidden},
        "tensors": {
            "input": {
                "shape": [tokens, hidden],
                "dtype": "bf16",
                "data": {"generator": "normal", "seed": 1, "parameters": {"mean": 0.0, "stddev": 1.0}},
            }
        },
        "scalars": {"epsilon": {"dtype": "fp32", "value": 0.000001}},
        "correctness": {
            "comparator": "elementwise_close",
            "maxAbsoluteError": max_absolute_error,
            "requiredMatchedRatio": 0.99,
        },
    }
    return _envelope("WorkloadCase", name, spec)


def make_workload_suite(operation: Ref, cases: Sequence[int] = (1024, 2048), *, name: str | None = None) -> Doc:
    """A WorkloadSuite of `operation`, one case per token count (an ordered list)."""
    spec = {
        "operationSpecDigest": digest_of(operation),
        "cases": [{"externalId": str(i), "axes": {"tokens": t, "hidden": 4096}} for i, t in enumerate(cases)],
        "correctness": {"comparator": "suite_eval"},
        "aggregation": {"metric": "latency", "statistic": "mean"},
    }
    return _envelope("WorkloadSuite", name, spec)


def make_project(name: str, *, repository: str | None = None) -> Doc:
    """A SoftwareProject."""
    spec = {"name": name, "kind": "library", "repository": repository or f"https://example.invalid/{name}"}
    return _envelope("SoftwareProject", name, spec)


def make_implementation(
    operation: Ref,
    name: str = "kernel",
    *,
    architectures: Sequence[str] = ("sm_100",),
    dtypes: Sequence[str] = ("bf16",),
    commit: str = "b81d40e0" * 5,
    repository: str | None = "https://example.invalid/kernels",
) -> Doc:
    """An ImplementationRevision of `operation`; `name` is also its callable's symbol (part of identity).
    `repository=None` leaves the revision without public source."""
    revision: Doc = {"commit": commit}
    if repository:
        revision["repository"] = repository
    spec = {
        "projectRevision": revision,
        "operation": {"specDigest": digest_of(operation)},
        "callable": {"language": "triton", "symbol": name.replace("-", "_")},
        "support": {"hardwareArchitectures": list(architectures), "dtypes": list(dtypes)},
        "licensing": {"declared": "Apache-2.0"},
    }
    return _envelope("ImplementationRevision", name, spec)


def make_protocol(name: str = "test-protocol", *, primary_statistic: str = "median") -> Doc:
    """A BenchmarkProtocol; its spec depends on `name` (as the harness name) and the statistic."""
    spec = {
        "harness": {"name": name, "version": "1.0"},
        "measurement": {"timer": "device_events", "samples": 100, "primaryStatistic": primary_statistic},
    }
    return _envelope("BenchmarkProtocol", name, spec)


def make_environment(name: str = "test-b200", *, product: str = "NVIDIA B200", architecture: str = "sm_100") -> Doc:
    """An ExecutionEnvironment; its spec depends on `product` and `architecture`."""
    spec = {
        "hardware": {"vendor": "nvidia", "product": product, "architecture": architecture},
        "software": {"driver": "580.00"},
    }
    return _envelope("ExecutionEnvironment", name, spec)


def make_run(
    implementation: Ref,
    workload: Ref,
    protocol: Ref,
    environment: Ref,
    latency_ns: int | str | None,
    observed_at: str = "2026-08-01T12:00:00Z",
    *,
    source_native: bool | str = False,
    statistic: str = "median",
    status: str = "passed",
    confidence95: tuple[int | str, int | str] | None = None,
    raw_samples: bool = False,
    name: str | None = None,
    extra_spec: Mapping[str, Any] | None = None,
) -> Doc:
    """A BenchmarkRun of `implementation` on `workload` under `protocol` in `environment`.

    `latency_ns` is the primary statistic's value (an int of ns or a string such as "8.12 us");
    None leaves out `timing` (a run without a primary metric). `source_native=True` (or a source
    slug) marks it as reported by an upstream source; `raw_samples` adds `timing.rawSamples`;
    `extra_spec` is merged into the spec last (for anything else).
    """
    spec: Doc = {
        "implementationDigest": digest_of(implementation),
        "workloadDigest": digest_of(workload),
        "protocolDigest": digest_of(protocol),
        "environmentDigest": digest_of(environment),
        "status": status,
        "observedAt": observed_at,
    }
    if latency_ns is not None:
        latency: Doc = {statistic: latency_ns}
        if confidence95 is not None:
            latency["confidence95"] = list(confidence95)
        spec["timing"] = {"primaryStatistic": statistic, "latencyNs": latency}
        if raw_samples:
            spec["timing"]["rawSamples"] = {
                "uri": "https://example.invalid/samples.json",
                "digest": "sha256:" + "ab" * 32,
            }
    if source_native:
        slug = source_native if isinstance(source_native, str) else "test-source"
        spec["sourceNative"] = {"source": slug, "benchmark": "test-benchmark"}
    spec.update(extra_spec or {})
    return _envelope("BenchmarkRun", name or f"run-{_short(spec)}", spec)


# Lifecycle kinds -----------------------------------------------------------------------------------


def make_attestation(run: Ref, kind: str = "reproduced", body: str = "Reproduced on our machine.") -> Doc:
    """An Attestation (anyone may add one; never changes trust)."""
    return _envelope("Attestation", None, {"runDigest": digest_of(run), "type": kind, "body": body})


def make_retraction(run: Ref, reason: str = "measurement error") -> Doc:
    """A Retraction (counts only in a commit signed by a maintainer)."""
    return _envelope("Retraction", None, {"runDigest": digest_of(run), "reason": reason})


def make_supersession(run: Ref, supersedes: Ref, reason: str = "corrected measurement") -> Doc:
    """A Supersession: `run` replaces `supersedes`."""
    spec = {"runDigest": digest_of(run), "supersedesDigest": digest_of(supersedes), "reason": reason}
    return _envelope("Supersession", None, spec)


def make_verification(run: Ref, rerun: Ref, runner: str = "registry-runner") -> Doc:
    """A Verification: the registry's `runner` reran `run` as `rerun`."""
    spec = {"runDigest": digest_of(run), "rerunDigest": digest_of(rerun), "runner": runner}
    return _envelope("Verification", None, spec)


# Scenarios -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BasicScenario:
    """One operation, one workload, two implementations, one protocol and environment, three runs
    (`runs[0]` and `runs[1]` by implementation a, `runs[2]` by b). `docs` in dependency order."""

    operation: Doc
    workload: Doc
    implementations: tuple[Doc, Doc]
    protocol: Doc
    environment: Doc
    runs: tuple[Doc, Doc, Doc]

    @property
    def docs(self) -> list[Doc]:
        return [
            self.operation,
            self.workload,
            *self.implementations,
            self.protocol,
            self.environment,
            *self.runs,
        ]


def basic_scenario() -> BasicScenario:
    """A small, fully resolvable registry."""
    operation = make_operation("rmsnorm-h4096")
    workload = make_workload(operation, name="rmsnorm-h4096-t2048")
    a = make_implementation(operation, "kernel-a")
    b = make_implementation(operation, "kernel-b")
    protocol = make_protocol()
    environment = make_environment()
    runs = (
        make_run(a, workload, protocol, environment, 8120, "2026-08-01T12:00:00Z", name="run-a1"),
        make_run(a, workload, protocol, environment, "7.9 us", "2026-08-02T12:00:00Z", name="run-a2"),
        make_run(b, workload, protocol, environment, 9000, "2026-08-03T12:00:00Z", name="run-b1"),
    )
    return BasicScenario(operation, workload, (a, b), protocol, environment, runs)


def load_scenario(name: str) -> list[Doc]:
    """The manifests of `tests/data/<name>/` (*.json and *.yaml), parsed, in file-name order."""
    from kernelindex.registry.parse import load_document

    folder = TEST_DATA / name
    files = sorted(p for p in folder.iterdir() if p.suffix in (".json", ".yaml", ".yml"))
    return [load_document(p.read_bytes(), p.name) for p in files]


# Committing ----------------------------------------------------------------------------------------


def person(when: int = TEST_TIME) -> registry.Person:
    """The fixed test identity at `when`."""
    return registry.Person("Test", "test@example.com", when, 0)


def commit_meta(
    when: int = TEST_TIME,
    *,
    subject: str = "Add test manifests",
    source: str = "test",
    trailers: Iterable[tuple[str, str]] = (),
) -> registry.CommitMeta:
    """Commit metadata with the fixed test identity, a `Source:` trailer and any others."""
    return registry.CommitMeta(
        author=person(when),
        committer=person(when),
        subject=subject,
        trailers=(("Source", source), *trailers),
    )


def commit_manifests(
    store: registry.GitStore,
    docs: Iterable[Mapping[str, Any] | registry.Manifest],
    when: int = TEST_TIME,
    *,
    subject: str = "Add test manifests",
    source: str = "test",
    trailers: Iterable[tuple[str, str]] = (),
    allowed_mismatches: Sequence[str] = (),
) -> str:
    """Load `docs` and add them to `store` as one commit at `when`; return main's commit afterwards
    (the new commit, or the unchanged head when everything was already published).

    Raises:
        kernelindex.registry.RejectedChange: as `GitStore.add`.
    """
    manifests = [d if isinstance(d, registry.Manifest) else to_manifest(d) for d in docs]
    meta = commit_meta(when, subject=subject, source=source, trailers=trailers)
    result = store.add(manifests, meta, allowed_mismatches=allowed_mismatches)
    head = result.commit or store.head()
    assert head is not None, "nothing was committed to an empty registry"
    return head


def object_ids(store: registry.GitStore) -> set[str]:
    """Every object in the repository's database (loose and packed)."""
    return {str(oid) for oid in pygit2.Repository(str(store.git_dir)).odb}

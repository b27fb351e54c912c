"""The catalog export of one commit: KernelIndex's `catalog-<date>-<sha8>.jsonl.zst`, streamed.

The format is upstream's (`data/corpus/` holds one): zstd-compressed JSON lines `{"table": T, "row": {...}}`,
the same tables and row shapes, manifests carried as upstream carries them (a `benchmark_runs` row
holds the bundle `{run, protocol, environment}`). The derived columns are ours, computed by the graph
of the exported commit: each run's comparison key and primary value, and the `record_events` table.
Columns upstream fills from its own database and no manifest says (install commands, shape summaries...)
are `null`.

Three things are added so that importing an export gives back exactly the exported manifests:
- `sources` has one row per commit of main that published manifests (its `Source:` trailer, licence
  and attribution as `policy`, and the commit id in `commit`), oldest first;
- every row that carries a manifest names the publication it came from in `sourceId`, so an import
  replays the registry's own order (a dependency is always imported no later than what needs it);
- `registry_manifests` carries what no upstream table holds on its own: every protocol and
  environment (also in the bundles of the runs that use them), and lifecycle facts.

Nothing is built in memory: rows are produced kind by kind from a `git ls-tree | git cat-file` pipe
and compressed as they come, so a consumer (a file, an HTTP response) sees bytes from the first rows on.
Ids are deterministic (a UUID-shaped prefix of the manifest's digest), so the same commit always
exports the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from kernelindex.registry.cohorts import Trust
from kernelindex.registry.errors import RevisionNotFound
from kernelindex.registry.export_ids import row_id
from kernelindex.registry.export_serving import SERVING_TABLES, serving_measurements, serving_row
from kernelindex.registry.graph import Graph
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.nodes import Environment, Implementation, Node, Project, Run, Workload
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.serving_graph import serving_index
from kernelindex.registry.store import GitStore

__all__ = [
    "CATALOG_FORMAT",
    "FORMATS",
    "TAR_FORMAT",
    "ExportDigest",
    "ExportPlan",
    "compressed",
    "export_name",
    "plan_export",
    "produce",
    "row_id",
    "tar_name",
    "write_export",
]

CATALOG_FORMAT = "kernelindex-jsonl-zst"
TAR_FORMAT = "manifests-tar"
FORMATS = (CATALOG_FORMAT, TAR_FORMAT)

_CHUNK = 256 * 1024  # compressed bytes handed on at a time
_LATENCY_NAMES = {"minimum": "min", "maximum": "max"}  # upstream's measurement rows say min/max


def export_name(commit: str, committed_at: int) -> str:
    """`catalog-<commit date, UTC>-<first 8 hex of the commit>.jsonl.zst`.

    >>> export_name("e775d39b6768675ff8eb086da76420493425c1a4", 1787529600)
    'catalog-2026-08-24-e775d39b.jsonl.zst'
    """
    return f"catalog-{datetime.fromtimestamp(committed_at, UTC):%Y-%m-%d}-{commit[:8]}.jsonl.zst"


def tar_name(commit: str, committed_at: int) -> str:
    return export_name(commit, committed_at).replace("catalog-", "manifests-").replace(".jsonl.zst", ".tar")


@dataclass(frozen=True, slots=True)
class _Source:
    position: int
    row: dict[str, Any]


@dataclass(slots=True)
class ExportPlan:
    """What to export and how to name its publications; `lines()` streams the rows.

    Built by `plan_export` (which reads commit metadata), then consumed by one thread at a time:
    the rows come from git subprocesses and the graph, so the stream may be driven from any thread.
    """

    repo_path: Path
    graph: Graph
    sources: list[_Source]
    _source_ids: dict[int, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return export_name(self.graph.commit, self.graph.committed_at)

    def rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(table, row) in upstream's table order."""
        store = GitStore(self.repo_path)
        graph = self.graph
        for source in self.sources:
            yield "sources", source.row
        for _, document, node in self._documents(store, ("SoftwareProject",)):
            yield "projects", self._project(document, node)
        for _, document, node in self._documents(store, ("OperationSpec",)):
            yield "operations", self._operation(document, node)
        for _, document, node in self._documents(store, ("OperationSpec",)):  # a second pass holds nothing
            yield "operation_aliases", {"operationId": row_id(node.digest), "alias": _operation_name(document)}
        for _, document, node in self._documents(store, ("WorkloadCase", "WorkloadSuite")):
            yield "workloads", self._workload(document, node)
        projects = {n.name: n.digest for n in graph.nodes.values() if isinstance(n, Project)}
        for _, document, node in self._documents(store, ("ImplementationRevision",)):
            yield "implementations", self._implementation(document, node, projects)
        shared = {
            node.digest: document
            for _, document, node in self._documents(store, ("BenchmarkProtocol", "ExecutionEnvironment"))
        }
        measurements: list[dict[str, Any]] = []
        for _, document, node in self._documents(store, ("BenchmarkRun",)):
            assert isinstance(node, Run)
            yield "benchmark_runs", self._run(document, node, shared)
            measurements.extend(_measurements(document, node))
            if len(measurements) >= 4096:  # keep the table together without holding it: flushed below
                yield from (("measurements", m) for m in measurements)
                measurements.clear()
        yield from (("measurements", m) for m in measurements)
        for cohort_key in sorted(graph.cohorts):
            for event in graph.cohorts[cohort_key].events(graph):
                yield "record_events", _event_row(graph, event)
        for _, document, node in self._documents(store, ("ImplementationRevision",)):
            artifact = _source_artifact(document, self._published(node))
            if artifact is not None:
                yield "artifacts", artifact
        by_spec_name = {n.display_name: n.digest for n in graph.nodes.values() if isinstance(n, Project)}
        serving = serving_index(graph).facts
        for table, kind in SERVING_TABLES:
            for _, document, node in self._documents(store, (kind,)):
                row = self._base(node) | serving_row(
                    table, document, node.digest, by_spec_name, serving.get(node.digest)
                )
                if table == "serving_runs":
                    row["publishedAt"] = row["createdAt"]
                yield table, row | {"manifest": document}
        for _, document, node in self._documents(store, ("ServingRun",)):
            for row in serving_measurements(document, node.digest):
                yield "serving_measurements", row
        lifecycle = tuple(name for name, info in KINDS.items() if info.lifecycle)
        for kind, document, node in self._documents(store, ("BenchmarkProtocol", "ExecutionEnvironment", *lifecycle)):
            yield "registry_manifests", self._base(node) | {"kind": kind, "digest": node.digest, "manifest": document}
        del shared

    def lines(self) -> Iterator[bytes]:
        """The export as uncompressed JSON lines."""
        for table, row in self.rows():
            yield orjson.dumps({"table": table, "row": row}) + b"\n"

    # Rows -----------------------------------------------------------------------------------------

    def _documents(self, store: GitStore, kinds: tuple[str, ...]) -> Iterator[tuple[str, dict[str, Any], Node]]:
        folders = [KINDS[kind].folder for kind in kinds]
        nodes = self.graph.nodes
        for kind, digest, _, data in store.manifests_with_bytes(self.graph.commit, folders):
            node = nodes.get(digest)
            if node is not None and node.kind == kind:
                yield kind, orjson.loads(data), node

    def _published(self, node: Node) -> str | None:
        at = self.graph.published_at(node)
        return None if at is None else utc_instant(at)

    def _source_id(self, node: Node) -> str | None:
        position = self.graph.publication(node.digest)
        return None if position is None else row_id(self.graph.mainline.commits[position])

    def _base(self, node: Node) -> dict[str, Any]:
        """The columns every manifest row starts with: its id, its publication, when."""
        return {"id": row_id(node.digest), "sourceId": self._source_id(node), "createdAt": self._published(node)}

    def _project(self, document: dict[str, Any], node: Node) -> dict[str, Any]:
        spec = document["spec"]
        return self._base(node) | {
            "slug": node.name,
            "name": spec["name"],
            "normalizedName": spec["name"].lower(),
            "canonicalUrl": spec.get("homepage") or spec.get("repository"),
            "licenseExpression": None,
            "manifest": document,
        }

    def _operation(self, document: dict[str, Any], node: Node) -> dict[str, Any]:
        return self._base(node) | {
            "slug": node.name,
            "family": document["spec"]["family"],
            "name": _operation_name(document),
            "schemaVersion": document["apiVersion"],
            "semanticDigest": node.digest,
            "manifest": document,
            "tags": sorted({document["spec"]["family"], *(document["metadata"].get("tags") or ())}),
            "supersedesId": None,
        }

    def _workload(self, document: dict[str, Any], node: Node) -> dict[str, Any]:
        assert isinstance(node, Workload)
        tensors = document["spec"].get("tensors") or {}
        return self._base(node) | {
            "operationId": row_id(node.operation),
            "workloadDigest": node.digest,
            "schemaVersion": document["apiVersion"],
            "manifest": document,
            "shapeSummary": None,
            "dtypes": sorted({t["dtype"] for t in tensors.values()}),
            "layoutKeys": None,
        }

    def _implementation(self, document: dict[str, Any], node: Node, projects: dict[str, str]) -> dict[str, Any]:
        assert isinstance(node, Implementation)
        spec = document["spec"]
        project = projects.get(node.project) if node.project else None
        revision = spec.get("projectRevision") or {}
        return self._base(node) | {
            "projectId": row_id(project) if project else None,
            "operationId": row_id(node.operation),
            "slug": node.name,
            "implementationDigest": node.digest,
            "sourceRevision": revision.get("version") or revision.get("commit"),
            "language": node.language,
            "framework": spec["callable"].get("framework"),
            "targetArchitectures": list((spec.get("support") or {}).get("hardwareArchitectures") or ()),
            "licenseExpression": (spec.get("licensing") or {}).get("spdx"),
            "sourceAvailable": node.source_available,
            "installable": False,
            "title": node.title,
            "installKind": None,
            "installCommand": None,
            "licenseDeclared": None,
            "manifest": document,
            "supersedesId": None,
        }

    def _run(self, document: dict[str, Any], node: Run, shared: dict[str, dict[str, Any]]) -> dict[str, Any]:
        graph = self.graph
        facts = graph.facts.get(node.digest)
        spec = document["spec"]
        environment = graph.nodes.get(node.environment)
        workload = graph.nodes.get(node.workload)
        implementation = graph.nodes.get(node.implementation)
        protocol = shared.get(node.protocol) or {}
        primary = node.primary
        retraction = graph.nodes.get(facts.retraction) if facts and facts.retraction else None
        hardware = environment if isinstance(environment, Environment) else None
        return {
            "id": row_id(node.digest),
            "runDigest": node.digest,
            "implementationId": row_id(node.implementation),
            "workloadId": row_id(node.workload),
            "sourceId": self._source_id(node),
            "status": node.status,
            "observedAt": node.observed_at,
            "publishedAt": self._published(node),
            "hardwareVendor": hardware.vendor if hardware else None,
            "hardwareModel": hardware.product if hardware else None,
            "hardwareArchitecture": hardware.architecture if hardware else None,
            "driverMajor": None,
            "cudaMajor": None,
            "protocolKey": node.protocol,
            "environmentKey": node.environment,
            "correctnessKey": workload.correctness if isinstance(workload, Workload) else None,
            "comparisonKey": facts.cohort if facts else None,
            "primaryMetric": primary.metric if primary else "none",
            "primaryValue": primary.value if primary else None,
            "primaryUnit": primary.unit if primary else None,
            "sampleCount": (spec.get("timing") or {}).get("samples"),
            "uncertaintyLow": primary.low if primary else None,
            "uncertaintyHigh": primary.high if primary else None,
            "reported": True,
            "reproducedByKernelindex": bool(facts and facts.trust >= Trust.VERIFIED),
            "independentReplicationCount": 2 if facts and facts.trust >= Trust.REPLICATED else 0,
            "sourceAvailable": isinstance(implementation, Implementation) and implementation.source_available,
            "installable": False,
            "licenseExpression": None,
            "primaryStatistic": primary.statistic if primary else None,
            "hasRawEvidence": node.raw_evidence,
            "sourceNative": node.source_native,
            "environmentSummary": ((protocol.get("spec") or {}).get("harness") or {}).get("name"),
            "manifest": {"run": document, "protocol": protocol or None, "environment": shared.get(node.environment)},
            "supersedesId": None,
            "retractedAt": self._published(retraction) if retraction is not None else None,
            "retractionReason": getattr(retraction, "reason", None),
        }


def _operation_name(document: dict[str, Any]) -> str:
    """Upstream names an operation by its title when it has one (`013_gqa_paged_decode_...`)."""
    metadata = document["metadata"]
    return str(metadata.get("title") or metadata["name"])


def _measurements(document: dict[str, Any], node: Run) -> Iterator[dict[str, Any]]:
    """A run's measurement rows: its timing statistics, then its other measurements."""
    spec = document["spec"]
    timing = spec.get("timing")
    rows: list[tuple[str, str, str, Any, Any]] = []
    if timing:
        for statistic, value in timing["latencyNs"].items():
            if isinstance(value, int | float):
                rows.append(("latency", _LATENCY_NAMES.get(statistic, statistic), "ns", value, timing.get("samples")))
    for m in spec.get("measurements") or ():
        rows.append((m["metric"], m["statistic"], m["unit"], m["value"], m.get("sampleCount")))
    for index, (metric, statistic, unit, value, samples) in enumerate(rows):
        yield {
            "id": row_id(f"{node.digest}#measurement/{index}"),
            "runId": row_id(node.digest),
            "metric": metric,
            "statistic": statistic,
            "unit": unit,
            "value": value,
            "sampleCount": samples,
        }


def _event_row(graph: Graph, event: Any) -> dict[str, Any]:
    return {
        "id": row_id(f"{event.cohort}#{event.cause}/{event.run}/{event.at}"),
        "comparisonKey": event.cohort,
        "runId": row_id(event.run),
        "previousRunId": row_id(event.previous_run) if event.previous_run else None,
        "policyVersion": event.policy_version,
        "cause": event.cause,
        "at": event.at,
        "createdAt": utc_instant(graph.committed_at),
    }


def _source_artifact(document: dict[str, Any], published: str | None) -> dict[str, Any] | None:
    source = document["spec"].get("source")
    if not isinstance(source, dict) or "contentDigest" not in source:
        return None
    return {
        "id": row_id(source["contentDigest"]),
        "contentDigest": source["contentDigest"],
        "kind": "source",
        "mediaType": None,
        "sizeBytes": source.get("sizeBytes"),
        "storage": None,
        "uri": source.get("url"),
        "license": None,
        "createdAt": published,
    }


def plan_export(store: GitStore, graph: Graph) -> ExportPlan:
    """Plan the export of `graph`'s commit, which must be on main (its manifests' publications are
    the export's sources).

    Raises:
        RevisionNotFound: the commit is not on main's first-parent history.
    """
    if graph.position is None:
        raise RevisionNotFound(graph.commit, "an export pins a commit of main (its publication record)")
    used = set(graph.published_in.values())
    sources = []
    for position in range(graph.position + 1):
        if position not in used:
            continue
        commit = graph.mainline.commits[position]
        info = store.commit_info(commit)
        slug = info.trailer("Source") or "registry"
        sources.append(
            _Source(
                position,
                {
                    "id": row_id(commit),
                    "slug": slug,
                    "kind": None,
                    "name": info.trailer("Source-Name") or slug,
                    "policy": {
                        "license": info.trailer("License"),
                        "attribution": info.trailer("Attribution"),
                        "url": info.trailer("Source-URL"),
                    },
                    "createdAt": utc_instant(graph.mainline.times[position]),
                    "commit": commit,
                },
            )
        )
    return ExportPlan(store.path, graph, sources)


def compressed(lines: Iterable[bytes], level: int = 6) -> Iterator[bytes]:
    """zstd frames of `lines`, in chunks of about 256 KiB, as they are produced.

    Level 6: the compressor's own tables are ~5 MB (level 10's are ~28 MB, the whole of a stream's
    memory), for a file 7% larger (1x: 4.37 MB against 4.09 MB) made in two thirds of the time."""
    import zstandard

    compressor = zstandard.ZstdCompressor(level=level).compressobj()
    pending: list[bytes] = []
    size = 0
    for line in lines:
        out = compressor.compress(line)
        if out:
            pending.append(out)
            size += len(out)
            if size >= _CHUNK:
                yield b"".join(pending)
                pending.clear()
                size = 0
    pending.append(compressor.flush())
    yield b"".join(pending)


@dataclass(frozen=True, slots=True)
class ExportDigest:
    """The catalog export of a commit as bytes: its file name, sha256, size and rows per table."""

    name: str
    sha256: str
    size: int  # bytes, compressed
    tables: tuple[tuple[str, int], ...]  # (table, rows) in the export's order

    def rows(self, table: str) -> int:
        return next((count for name, count in self.tables if name == table), 0)


def produce(plan: ExportPlan, out: IO[bytes] | None = None) -> ExportDigest:
    """Produce the catalog export of `plan`, the bytes the export route serves, writing them to `out` if
    given, and measure them as they go: sha256, size and rows per table. The one computation of an
    export's bytes: what a citation names (`kernelindex.registry.citations.export_digest`) is what is served. Costs one
    full export (seconds); a commit's answer never changes, so callers keep it (`kernelindex.registry.export_cache`)."""
    digest = hashlib.sha256()
    size = 0
    tables: dict[str, int] = {}

    def counted() -> Iterator[bytes]:
        for line in plan.lines():
            # Each line starts `{"table":"<name>",`: the table is read off the bytes being exported.
            end = line.index(b'"', 10)
            name = line[10:end].decode()
            tables[name] = tables.get(name, 0) + 1
            yield line

    for chunk in compressed(counted()):
        digest.update(chunk)
        size += len(chunk)
        if out is not None:
            out.write(chunk)
    return ExportDigest(plan.name, digest.hexdigest(), size, tuple(tables.items()))


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    size: int
    sha256: str


def write_export(plan: ExportPlan, target: Path, fmt: str = CATALOG_FORMAT) -> Written:
    """Write the export to `target` (a file, replaced atomically once complete).

    Raises:
        ValueError: an unknown format.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with partial.open("wb") as out:
            chunks = compressed(plan.lines()) if fmt == CATALOG_FORMAT else manifests_tar(plan)
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return Written(target, size, digest.hexdigest())


class _Sink:
    """A write-only file object that hands on what it was given."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def manifests_tar(plan: ExportPlan) -> Iterator[bytes]:
    """The manifests of the commit as a tar of their stored files (`<folder>/<hh>/<hex>.json`), in
    tree order, each entry dated by its publication: a plain copy of the registry's data."""
    store = GitStore(plan.repo_path)
    sink = _Sink()
    out: IO[bytes] = sink  # type: ignore[assignment]
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as archive:
        for kind, digest, _, data in store.manifests_with_bytes(plan.graph.commit):
            node = plan.graph.nodes.get(digest)
            info = tarfile.TarInfo(f"{KINDS[kind].folder}/{digest[7:9]}/{digest[7:]}.json")
            info.size = len(data)
            info.mode = 0o644
            published = plan.graph.published_at(node) if node is not None else None
            info.mtime = published if published is not None else plan.graph.committed_at
            archive.addfile(info, io.BytesIO(data))
            if sum(len(p) for p in sink.parts) >= _CHUNK:
                yield sink.take()
    yield sink.take()

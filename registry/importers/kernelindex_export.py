"""Import the upstream KernelIndex catalog export (zstd JSON lines) as one commit per source.

The export is a database dump: tables of rows, most carrying a `manifest` (a
`benchmark_runs` row carries a bundle `{run, protocol, environment}`). Each manifest is
validated like any contribution and lands in the commit of the first upstream source
that published it, so history reads like upstream's own import order. Everything that
decides the history (identities, dates, messages) comes from the export itself, so a
rebuild gives the same commit ids, and a second import finds nothing new.

Two things the manifests cannot say are kept from the export:
- An implementation's project (`implementations.projectId`): ImplementationRevision has no
  project field in v1alpha1, so the importer records it as `metadata.labels.project`
  (the project's `metadata.name`). Metadata is never part of identity.
- Upstream's 43 runs whose implementation and workload name different operations: imported
  as upstream published them, each named in an `Integrity-Warning:` trailer.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.errors import InvalidManifest, Problem
from kernelindex.registry.importers.sourcefiles import Progress
from kernelindex.registry.kinds.content import link_problem, text_problem
from kernelindex.registry.manifest import Manifest, manifest_from_document
from kernelindex.registry.provenance import CommitMeta, Person, trailer_pairs
from kernelindex.registry.store import AddResult, GitStore
from kernelindex.registry.validate import operation_mismatch

__all__ = [
    "IMPORTER",
    "Export",
    "SourceBatch",
    "import_export",
    "plan_import",
    "read_export",
]


IMPORTER = Person("KernelIndex registry importer", "importer@registry.kernelindex.invalid", 0)
"""The committer of every import commit; the time is set per commit from the export."""

# Terms for sources whose `policy` the export leaves empty, from upstream's source policy
# (data/corpus/README.md): the data keeps its licence, so every commit must say which.
_FALLBACK_POLICY: dict[str, dict[str, str]] = {
    "sol-execbench": {
        "license": "NVIDIA website terms (SOL-ExecBench leaderboard results, shown with attribution)",
        "attribution": "NVIDIA SOL-ExecBench leaderboard",
    },
}

# Tables whose rows carry one manifest, and the column with its upstream digest.
_MANIFEST_TABLES = {
    "operations": "semanticDigest",
    "workloads": "workloadDigest",
    "implementations": "implementationDigest",
    "projects": None,
    "model_revisions": "modelDigest",
    "serving_stack_revisions": "stackDigest",
    "serving_configurations": "configurationDigest",
    "serving_workloads": "workloadDigest",
    "serving_runs": "runDigest",
    # Ours (kernelindex.registry.export): protocols, environments and lifecycle facts, which upstream keeps
    # only inside run bundles or in database columns.
    "registry_manifests": "digest",
}
_BUNDLE_DIGESTS = (("run", "runDigest"), ("protocol", "protocolKey"), ("environment", "environmentKey"))


@dataclass(frozen=True, slots=True)
class Export:
    """The rows of an export, by table, and the sha256 of its bytes."""

    name: str
    sha256: str
    tables: dict[str, list[dict[str, Any]]]


@dataclass(slots=True)
class SourceBatch:
    """Everything one upstream source contributes: one commit."""

    position: int  # in upstream's import order
    slug: str
    name: str
    license: str
    attribution: str
    url: str | None
    created: datetime
    last_row: datetime
    manifests: list[tuple[str, Manifest]] = field(default_factory=list)
    mismatches: dict[str, str] = field(default_factory=dict)
    runs: int = 0

    def meta(self, export: Export) -> CommitMeta:
        kinds: dict[str, int] = defaultdict(int)
        for _, manifest in self.manifests:
            kinds[manifest.kind] += 1
        counts = ", ".join(f"{n:,} {kind}" for kind, n in sorted(kinds.items()))
        body = (
            f"{len(self.manifests):,} manifests from the {self.name} rows of the KernelIndex catalog export "
            f"{export.name}: {counts}.\n\nThe data keeps its upstream licence: {self.license.rstrip('.')}."
        )
        if self.mismatches:
            body += (
                f"\n\n{len(self.mismatches)} runs name an implementation and a workload of different "
                "operations "
                "(an upstream data error). They are imported as published, keep upstream's ranking, and are "
                "listed below as integrity warnings; new runs like them are refused."
            )
        trailers = trailer_pairs(
            [
                ("Source", self.slug),
                ("Source-Name", self.name),
                ("Source-URL", self.url),
                ("Source-Snapshot", "sha256:" + export.sha256),
                ("Source-Export", export.name),
                ("License", self.license),
                ("Attribution", self.attribution),
                *(("Integrity-Warning", f"{digest} operation-mismatch") for digest in sorted(self.mismatches)),
                ("Signed-off-by", f"{IMPORTER.name} <{IMPORTER.email}>"),
            ]
        )
        return CommitMeta(
            author=Person(
                f"{self.name} (via KernelIndex)",
                f"{self.slug}@sources.kernelindex.invalid",
                _floor(self.created),
            ),
            committer=Person(IMPORTER.name, IMPORTER.email, _ceil(self.last_row)),
            subject=f"Import {self.name} from the KernelIndex catalog export ({self.runs:,} runs)",
            body=body,
            trailers=trailers,
        )


MAX_EXPORT_BYTES = 1 << 30
"""Decompressed bytes an export may hold: upstream's catalog is 49 MB (20x below); a zstd bomb (98 KB
that inflates to gigabytes) is refused when it passes this, having held one line at a time."""
MAX_LINE_BYTES = 4 << 20
"""One row: a manifest (at most 1 MiB) and its columns; upstream's longest line is 9.4 KB."""
MAX_ROWS = 1_000_000
"""Rows kept in memory: upstream's export has ~25k; 40x that bounds a bomb of valid tiny rows."""


def _lines(path: Path, raw: bytes) -> Iterator[tuple[int, bytes]]:
    """The export's lines, numbered, decompressed as they are read, within the limits above."""
    import zstandard

    total = 0
    pending = b""
    number = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw)
        while chunk := reader.read(1 << 20):
            total += len(chunk)
            if total > MAX_EXPORT_BYTES:
                raise InvalidManifest(
                    [Problem(path.name, "", f"inflates past {MAX_EXPORT_BYTES:,} bytes (a decompression bomb?)")]
                )
            pending += chunk
            *complete, pending = pending.split(b"\n")
            if number + len(complete) > MAX_ROWS:
                raise InvalidManifest([Problem(path.name, "", f"more than {MAX_ROWS:,} lines")])
            for line in complete:
                number += 1
                yield number, line
            if len(pending) > MAX_LINE_BYTES:
                raise InvalidManifest(
                    [Problem(f"{path.name}:{number + 1}", "", f"a line longer than {MAX_LINE_BYTES:,} bytes")]
                )
    except zstandard.ZstdError as exc:
        raise InvalidManifest([Problem(path.name, "", f"not a zstd file: {exc}")]) from None
    if pending:
        yield number + 1, pending


def read_export(path: Path) -> Export:
    """Read a `.jsonl.zst` export, line by line, within `MAX_EXPORT_BYTES`, `MAX_LINE_BYTES`, `MAX_ROWS`.

    Raises:
        InvalidManifest: the file is not zstd, is too large once inflated, or a line is not
            `{"table": ..., "row": {...}}`.
    """
    raw = path.read_bytes()
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rows = 0
    for number, line in _lines(path, raw):
        if not line.strip():
            continue
        rows += 1
        if rows > MAX_ROWS:
            raise InvalidManifest([Problem(f"{path.name}:{number}", "", f"more than {MAX_ROWS:,} rows")])
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InvalidManifest([Problem(f"{path.name}:{number}", "", f"invalid JSON: {exc}")]) from None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("table"), str)
            or not isinstance(record.get("row"), dict)
        ):
            raise InvalidManifest([Problem(f"{path.name}:{number}", "$", 'expected {"table": <name>, "row": {...}}')])
        tables[record["table"]].append(record["row"])
    return Export(path.name, hashlib.sha256(raw).hexdigest(), dict(tables))


def plan_import(export: Export, progress: Progress | None = None) -> list[SourceBatch]:
    """Validate every manifest of the export and group them into one batch per source, oldest first.

    Raises:
        InvalidManifest: a manifest is invalid, or its digest is not the one the export claims.
    """
    sources = sorted(export.tables.get("sources", []), key=lambda s: s["createdAt"])
    if not sources:
        raise InvalidManifest([Problem(export.name, "", "the export has no sources table")])
    batches = {s["id"]: _batch(s, position) for position, s in enumerate(sources)}
    order = [(s["createdAt"], s["id"]) for s in sources]
    project_names = {row["id"]: row["manifest"]["metadata"]["name"] for row in export.tables.get("projects", [])}

    def by_time(stamp: str) -> SourceBatch:
        # Rows without a source column were created by the import of the latest source started before them.
        chosen = order[0][1]
        for created, source_id in order:
            if created <= stamp:
                chosen = source_id
        return batches[chosen]

    rows = list(_manifest_rows(export))
    placed: dict[str, tuple[int, str, Manifest]] = {}  # digest -> (source rank, where, manifest)
    problems: list[Problem] = _source_problems(export)
    for done, (table, index, row, key, document, claimed) in enumerate(rows, start=1):
        if progress and done % 500 == 0:
            progress("validate", done, len(rows))
        where = f"{export.name}: {table}[{index}]" + (f".{key}" if key else "")
        if table == "implementations" and row.get("projectId") in project_names:
            document = _with_label(document, "project", project_names[row["projectId"]])
        try:
            manifest = manifest_from_document(document, where)
        except InvalidManifest as exc:
            problems.extend(exc.problems)
            continue
        if claimed is not None and manifest.digest != claimed:
            problems.append(Problem(where, "", f"digest is {manifest.digest} but the export says {claimed}"))
            continue
        source_id = row.get("sourceId")
        batch = batches[source_id] if source_id in batches else by_time(row.get("createdAt") or row["publishedAt"])
        stamp = row.get("publishedAt") or row.get("createdAt")
        if stamp:
            batch.last_row = max(batch.last_row, _instant(stamp))
        position = batch.position
        earlier = placed.get(manifest.digest)
        if earlier is not None and earlier[2].document != manifest.document:
            problems.append(Problem(where, "$.metadata", f"same digest as {earlier[1]} but different metadata"))
        elif earlier is None or position < earlier[0]:
            placed[manifest.digest] = (position, where, manifest)
    if problems:
        raise InvalidManifest(problems)
    if progress:
        progress("validate", len(rows), len(rows))
    by_rank = {batch.position: batch for batch in batches.values()}
    documents = {digest: manifest.document for digest, (_, _, manifest) in placed.items()}
    for position, where, manifest in placed.values():
        batch = by_rank[position]
        batch.manifests.append((where, manifest))
        batch.runs += manifest.kind in ("BenchmarkRun", "ServingRun")
    for batch in batches.values():
        for _, manifest in batch.manifests:
            if manifest.kind != "BenchmarkRun":
                continue
            spec = manifest.document["spec"]
            implementation = documents.get(spec["implementationDigest"])
            workload = documents.get(spec["workloadDigest"])
            reason = operation_mismatch(implementation, workload) if implementation and workload else None
            if reason:
                batch.mismatches[manifest.digest] = reason
    return [batch for batch in batches.values() if batch.manifests]


def import_export(store: GitStore, path: Path, progress: Progress | None = None) -> list[AddResult]:
    """Import an export into `store`: one commit per source that adds anything.

    Raises:
        InvalidManifest: as `plan_import`; nothing is written.
        RejectedChange: a batch conflicts with what the registry already holds.
    """
    export = read_export(path)
    batches = plan_import(export, progress)
    results = []
    for number, batch in enumerate(batches, start=1):
        if progress:
            progress(f"commit {batch.slug}", number, len(batches))
        results.append(
            store.add(batch.manifests, batch.meta(export), allowed_mismatches=batch.mismatches, unique_names=False)
        )
    return results


def _batch(source: dict[str, Any], position: int) -> SourceBatch:
    policy = source.get("policy") or _FALLBACK_POLICY.get(source["slug"], {})
    license_text = policy.get("license") or "unknown (not stated by the source)"
    terms = policy.get("terms")
    if terms:
        license_text = f"{license_text.rstrip('.')}. {terms.rstrip('.')}"
    created = _instant(source["createdAt"])
    return SourceBatch(
        position=position,
        slug=source["slug"],
        name=source["name"],
        license=license_text,
        attribution=policy.get("attribution") or source["name"],
        url=policy.get("url"),
        created=created,
        last_row=created,
    )


def _source_problems(export: Export) -> list[Problem]:
    """What a source row may not put in its commit's trailers and message: a `Source-URL` that is not an
    http(s) link, a character XML cannot carry."""
    problems = []
    for index, source in enumerate(export.tables.get("sources", [])):
        where = f"{export.name}: sources[{index}]"
        policy = source.get("policy") or {}
        url = policy.get("url")
        if isinstance(url, str) and (reason := link_problem(url)) is not None:
            problems.append(Problem(where, "$.policy.url", f"{reason} (got {url!r})"))
        texts = [("$.slug", source.get("slug")), ("$.name", source.get("name"))]
        texts += [(f"$.policy.{key}", policy.get(key)) for key in ("license", "terms", "attribution")]
        for path, text in texts:
            if isinstance(text, str) and (reason := text_problem(text)) is not None:
                problems.append(Problem(where, path, reason))
    return problems


def _manifest_rows(export: Export) -> Iterator[tuple[str, int, dict[str, Any], str, Any, str | None]]:
    for table, column in _MANIFEST_TABLES.items():
        for index, row in enumerate(export.tables.get(table, [])):
            yield table, index, row, "manifest", row.get("manifest"), row.get(column) if column else None
    for index, row in enumerate(export.tables.get("benchmark_runs", [])):
        bundle = row.get("manifest") or {}
        for key, column in _BUNDLE_DIGESTS:
            yield "benchmark_runs", index, row, f"manifest.{key}", bundle.get(key), row.get(column)


def _with_label(document: Any, key: str, value: str) -> Any:
    if not isinstance(document, dict) or not isinstance(document.get("metadata"), dict):
        return document
    metadata = dict(document["metadata"])
    metadata["labels"] = {**metadata.get("labels", {}), key: value}
    return {**document, "metadata": metadata}


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _floor(moment: datetime) -> int:
    return math.floor(moment.timestamp())


def _ceil(moment: datetime) -> int:
    return math.ceil(moment.timestamp())

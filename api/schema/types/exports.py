"""The dataset: the catalog export of a commit of main (`kernelindex.registry.export`), what it holds, its bytes'
digest, and
how to cite it (`kernelindex.registry.citations`).

The export of a commit is deterministic, so its digest is measured once per commit and process (a full
export: seconds for the embedded registry), on the first request that asks for it, and kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import strawberry

from kernelindex.registry.citations import ExportDigest, cite_dataset, dataset_citation, export_digest
from kernelindex.registry.export import CATALOG_FORMAT, ExportPlan, export_name, plan_export
from kernelindex.registry.graph import Graph
from kernelindex.registry.store import GitStore
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.citing import Accessed, BaseUrl, Format, accessed_day, citation_urls
from kernelindex.schema.types.enums import CitationFormat
from kernelindex.schema.types.provenance import Commit, commit_type

__all__ = ["CatalogExport", "ExportTable", "catalog_export"]

_KEPT = 16
"""Commits whose export digest is kept (a digest is a few hundred bytes; commits asked are few)."""
_DIGESTS: OrderedDict[str, ExportDigest] = OrderedDict()
_LOCK = threading.Lock()  # held while measuring: two requests for one commit measure it once


def _digest(store: GitStore, graph: Graph) -> tuple[ExportPlan, ExportDigest]:
    plan = plan_export(store, graph)
    with _LOCK:
        found = _DIGESTS.get(graph.commit)
        if found is None:
            found = _DIGESTS[graph.commit] = export_digest(plan)
            while len(_DIGESTS) > _KEPT:
                _DIGESTS.popitem(last=False)
        else:
            _DIGESTS.move_to_end(graph.commit)
    return plan, found


@strawberry.type(description="A table of the catalog export and how many rows it holds.")
class ExportTable:
    table: str = strawberry.field(description="The table, as the export names it ('benchmark_runs', 'sources').")
    rows: int = strawberry.field(description="How many rows of it the export holds.")


@strawberry.type(
    description="The dataset: the catalog export of this snapshot's commit (one JSON line per row, zstd "
    "compressed; the same bytes for the same commit, always). `sha256`, `sizeBytes`, `tables` and `citation` "
    "measure the export itself: the first request for a commit produces it once (seconds), later ones reuse it."
)
class CatalogExport:
    _graph: strawberry.Private[Graph]

    def _measured(self, info: Info) -> tuple[ExportPlan, ExportDigest]:
        return _digest(info.context.snapshots.store(), self._graph)

    @strawberry.field(description="The commit exported.")
    def commit(self, info: Info) -> Commit:
        return commit_type(info.context, self._graph.commit)

    @strawberry.field(description="The export's file name ('catalog-2026-08-24-667fb1b3.jsonl.zst').")
    def name(self) -> str:
        return export_name(self._graph.commit, self._graph.committed_at)

    @strawberry.field(description="Its format's name: 'kernelindex-jsonl-zst' (JSON lines, zstd compressed).")
    def format(self) -> str:
        return CATALOG_FORMAT

    @strawberry.field(
        description="Where to download it, pinned to the commit (immutable). Absolute under the configured base "
        "URL, else relative to the server's root."
    )
    def url(self, info: Info) -> str:
        return info.context.urls.export(self._graph.commit)

    @strawberry.field(description="How many manifests the commit holds (of every kind).")
    def manifest_count(self) -> int:
        return len(self._graph.nodes)

    @strawberry.field(description="The sha256 of the export's bytes, 64 lowercase hex digits.")
    def sha256(self, info: Info) -> str:
        return self._measured(info)[1].sha256

    @strawberry.field(description="The export's size in bytes (compressed, as downloaded).")
    def size_bytes(self, info: Info) -> int:
        return self._measured(info)[1].size

    @strawberry.field(description="Its tables, in the export's order, with their row counts.")
    def tables(self, info: Info) -> list[ExportTable]:
        return [ExportTable(table=name, rows=rows) for name, rows in self._measured(info)[1].tables]

    @strawberry.field(description="The sources whose data it holds, by name, in the order main published them.")
    def sources(self, info: Info) -> list[str]:
        plan = plan_export(info.context.snapshots.store(), self._graph)
        return list(dict.fromkeys(str(source.row["name"]) for source in plan.sources))

    @strawberry.field(
        description="How to cite the dataset: this export, with its commit, digest, size and the sources it holds, "
        "and its download URL as the permalink (absolute: under the configured base URL or `baseUrl`; without "
        "either, the citation says it has none). `accessed` adds an access date; the server never adds its own."
        " Null, with a BAD_USER_INPUT error, when `accessed` is not a date or `baseUrl` not an http(s) URL."
    )
    def citation(
        self,
        info: Info,
        format: Format = CitationFormat.TEXT,
        accessed: Accessed = None,
        base_url: BaseUrl = None,
    ) -> str | None:
        urls = citation_urls(info, base_url)
        plan, measured = self._measured(info)
        permalink = urls.export(self._graph.commit) if urls else None
        return cite_dataset(dataset_citation(plan, measured, permalink, accessed_day(info, accessed)), format.name)


def catalog_export(graph: Graph) -> CatalogExport | None:
    """The export of `graph`'s commit; None for a commit off main (an export pins the publication record)."""
    return CatalogExport(_graph=graph) if graph.position is not None else None

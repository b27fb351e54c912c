"""Citations of more than a run: a cohort's leaderboard at a commit, and the dataset (the catalog export
of a commit), in the formats runs are cited in (`kernelindex.registry.present.cite`: TEXT, BIBTEX, CSL_JSON).

Both are pinned: a leaderboard to the commit its ranking was read at, the dataset to the commit
exported and to the export's own bytes (their sha256 and size; the export of a commit is
deterministic). The permalink is the caller's (the edge knows its base URL); without one the
citation says that it has none, rather than printing a URL that only works on one machine.

>>> c = LeaderboardCitation("sha256:" + "ab" * 32, "RMSNorm · rows = 2048 · NVIDIA A100", 2,
...     "sha256:" + "cd" * 32, "RMSNorm · Liger: 17.4 µs", "0123" * 10, "2026-08-24", None, None)
>>> cite_leaderboard(c).endswith("No permalink: this registry has no public base URL configured.")
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kernelindex.registry.export import ExportDigest, ExportPlan, produce
from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Environment, Implementation, Operation, Protocol, Run
from kernelindex.registry.present import (
    CITATION_FORMATS,
    NO_PERMALINK,
    bibtex_entry,
    date_parts,
    format_value,
    workload_label,
)

__all__ = [
    "PUBLISHER",
    "DatasetCitation",
    "ExportDigest",
    "LeaderboardCitation",
    "cite_dataset",
    "cite_leaderboard",
    "dataset_citation",
    "export_digest",
    "leaderboard_citation",
]

PUBLISHER = "KernelIndex registry"


@dataclass(frozen=True, slots=True)
class LeaderboardCitation:
    """What a citation of a cohort's leaderboard at a commit says."""

    cohort: str  # the comparison key
    title: str  # operation · workload · GPU · protocol
    size: int  # runs ranked in it at the commit
    leader: str | None  # the #1 run's digest
    leader_label: str | None  # its implementation and value
    commit: str
    date: str  # YYYY-MM-DD: the commit's date (committer time, UTC)
    permalink: str | None  # the leaderboard pinned to the commit; None when no absolute URL exists
    accessed: str | None  # YYYY-MM-DD, the reader's


@dataclass(frozen=True, slots=True)
class DatasetCitation:
    """What a citation of the dataset (the export of a commit) says."""

    export: ExportDigest
    commit: str
    date: str  # YYYY-MM-DD
    manifests: int  # manifests at the commit
    sources: tuple[str, ...]  # the sources whose data it holds, by name
    permalink: str | None  # the export's URL; None when no absolute URL exists
    accessed: str | None


def leaderboard_citation(
    graph: Graph,
    key: str,
    document: Callable[[str], Mapping[str, Any]],
    permalink: str | None,
    accessed: str | None = None,
) -> LeaderboardCitation | None:
    """The citation facts of the cohort `key` (a full comparison key) in `graph`; None when the graph
    has no such cohort. `document(oid)` reads a stored manifest (for the workload's label)."""
    cohort = graph.cohorts.get(key)
    if cohort is None:
        return None
    nodes = graph.nodes
    operation = nodes.get(cohort.operation)
    workload = nodes.get(cohort.workload)
    environment = nodes.get(cohort.environment)
    protocol = nodes.get(cohort.protocol)
    parts = [
        (operation.title or operation.name) if isinstance(operation, Operation) else cohort.operation,
        workload_label(document(workload.oid)) if workload is not None else cohort.workload,
        environment.product if isinstance(environment, Environment) else cohort.environment,
        protocol.name if isinstance(protocol, Protocol) else cohort.protocol,
    ]
    ranked = cohort.ranked(graph)
    leader = ranked[0].id if ranked else None
    label = None
    run = nodes.get(leader) if leader else None
    if isinstance(run, Run):
        implementation = nodes.get(run.implementation)
        who = (
            (implementation.title or implementation.name)
            if isinstance(implementation, Implementation)
            else run.implementation
        )
        value = format_value(run.primary.value, run.primary.unit) if run.primary else "no primary value"
        label = f"{who}: {value}"
    return LeaderboardCitation(
        cohort.key, " · ".join(parts), len(ranked), leader, label, graph.commit, _day(graph.committed_at), permalink,
        accessed,
    )  # fmt: skip


def cite_leaderboard(citation: LeaderboardCitation, fmt: str = "TEXT") -> str:
    """A leaderboard's citation as TEXT, BIBTEX or CSL_JSON.

    Raises:
        ValueError: an unknown format.
    """
    c = citation
    leader = f"leader {c.leader_label}" if c.leader_label else "no ranked run"
    summary = f"{c.size} ranked runs; {leader}"
    note = f"Cohort {c.cohort}, ranking-v1 at commit {c.commit}"
    key = f"kernelindex-cohort-{c.cohort.removeprefix('sha256:')[:12]}-{c.commit[:8]}"
    return _format(fmt, key, f"Leaderboard: {c.title}", summary, note, c.commit, c.date, c.permalink, c.accessed)


def export_digest(plan: ExportPlan) -> ExportDigest:
    """Produce the catalog export of `plan` (as the export route serves it) and measure it: sha256, size and
    rows per table. The same computation as the served export's (`kernelindex.registry.export.produce`); a server keeps
    its answer with the export (`kernelindex.registry.export_cache`), so a citation names the bytes a reader
    downloads."""
    return produce(plan)


def dataset_citation(
    plan: ExportPlan, export: ExportDigest, permalink: str | None, accessed: str | None = None
) -> DatasetCitation:
    """The citation facts of the export `plan` describes (`export` measured from it by `export_digest`):
    its commit, date, manifest count and the sources whose data it holds (its `sources` rows)."""
    graph = plan.graph
    names = tuple(dict.fromkeys(str(source.row["name"]) for source in plan.sources))
    return DatasetCitation(export, graph.commit, _day(graph.committed_at), len(graph.nodes), names, permalink, accessed)


def cite_dataset(citation: DatasetCitation, fmt: str = "TEXT") -> str:
    """A dataset citation as TEXT, BIBTEX or CSL_JSON.

    Raises:
        ValueError: an unknown format.
    """
    c = citation
    sources = f"; data from {', '.join(c.sources)}" if c.sources else ""
    summary = f"{c.manifests} manifests{sources}"
    note = f"Catalog export {c.export.name}, sha256:{c.export.sha256}, {c.export.size} bytes, commit {c.commit}"
    title = f"Catalog export {c.export.name}"
    key = f"kernelindex-catalog-{c.commit[:8]}"
    return _format(fmt, key, title, summary, note, c.commit, c.date, c.permalink, c.accessed)


def _format(
    fmt: str,
    key: str,
    title: str,
    summary: str,
    note: str,
    commit: str,
    date: str,
    permalink: str | None,
    accessed: str | None,
) -> str:
    if fmt == "TEXT":
        link = f"{permalink}." if permalink else NO_PERMALINK
        when = f" Accessed {accessed}." if accessed else ""
        return f"{PUBLISHER}. {title} ({date}). {summary}. {note}. {link}{when}"
    if fmt == "BIBTEX":
        fields = {
            "title": title,
            "author": PUBLISHER,
            "year": date[:4],
            "version": commit,
            "howpublished": f"\\url{{{permalink}}}" if permalink else None,
            "url": permalink,
            "urldate": accessed if permalink else None,
            "note": f"{summary}. {note}" + ("" if permalink else f". {NO_PERMALINK}"),
        }
        return bibtex_entry(key, fields)
    if fmt == "CSL_JSON":
        record: dict[str, Any] = {
            "id": key,
            "type": "dataset",
            "title": title,
            "author": [{"literal": PUBLISHER}],
            "publisher": PUBLISHER,
            "version": commit,
            "issued": {"date-parts": [date_parts(date)]},
            "note": f"{summary}. {note}" + ("" if permalink else f". {NO_PERMALINK}"),
        }
        if permalink:
            record["URL"] = permalink
            if accessed:
                record["accessed"] = {"date-parts": [date_parts(accessed)]}
        return json.dumps(record, ensure_ascii=False, sort_keys=True)
    raise ValueError(f"unknown citation format {fmt!r}; expected one of {', '.join(CITATION_FORMATS)}")


def _day(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")

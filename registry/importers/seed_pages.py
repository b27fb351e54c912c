"""Import KernelIndex run pages (the seed records): each page's `{run, protocol, environment}` bundle and
any implementation the registry lacks, in one commit per publication date.

A seed directory holds `NNN_<id>.txt` (the page as text, whose "Published YYYY-MM-DD"
line dates the commit) and `manifests/NNN_<id>.bundle.json` (plus
`manifests/NNN_<id>.implementation.json` when the implementation is not in the corpus).
The terms of the data are those of the source the run names: the importer copies the
`License:` and `Attribution:` trailers of the commit that imported that source.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.errors import InvalidManifest, Problem
from kernelindex.registry.importers.kernelindex_export import IMPORTER
from kernelindex.registry.manifest import Manifest, load_manifest, manifest_from_document
from kernelindex.registry.provenance import CommitInfo, CommitMeta, Person, trailer_pairs
from kernelindex.registry.store import AddResult, GitStore

__all__ = ["SeedPage", "import_seed_pages", "read_seed_pages"]

_PUBLISHED = re.compile(r"^Published (\d{4}-\d{2}-\d{2})\b", re.MULTILINE)


@dataclass(slots=True)
class SeedPage:
    name: str
    published: str
    page_sha256: str
    manifests: list[tuple[str, Manifest]] = field(default_factory=list)
    source: str = ""


def read_seed_pages(directory: Path) -> list[SeedPage]:
    """Read and validate every page of a seed directory, in file-name order.

    Raises:
        InvalidManifest: a page has no Published line, or a manifest is invalid.
    """
    pages = []
    problems: list[Problem] = []
    for text_file in sorted(directory.glob("*.txt")):
        stem = text_file.stem
        raw = text_file.read_bytes()
        match = _PUBLISHED.search(raw.decode("utf-8", errors="replace"))
        if not match:
            problems.append(Problem(text_file.name, "", 'no "Published YYYY-MM-DD" line'))
            continue
        page = SeedPage(stem, match.group(1), hashlib.sha256(raw).hexdigest())
        bundle_file = directory / "manifests" / f"{stem}.bundle.json"
        implementation_file = directory / "manifests" / f"{stem}.implementation.json"
        try:
            if implementation_file.exists():
                implementation = load_manifest(implementation_file.read_bytes(), implementation_file.name)
                page.manifests.append((implementation_file.name, implementation))
            bundle = orjson.loads(bundle_file.read_bytes())
            for key in ("run", "protocol", "environment"):
                where = f"{bundle_file.name}: {key}"
                page.manifests.append((where, manifest_from_document(bundle.get(key), where)))
        except InvalidManifest as exc:
            problems.extend(exc.problems)
            continue
        except (OSError, orjson.JSONDecodeError) as exc:
            problems.append(Problem(bundle_file.name, "", f"cannot read the bundle: {exc}"))
            continue
        run = next(m for _, m in page.manifests if m.kind == "BenchmarkRun")
        page.source = run.document["spec"].get("sourceNative", {}).get("source", "community")
        pages.append(page)
    if problems:
        raise InvalidManifest(problems)
    return pages


def import_seed_pages(store: GitStore, directory: Path) -> list[AddResult]:
    """Add what the registry lacks from each page; one commit per (publication date, source).

    Raises:
        InvalidManifest: as `read_seed_pages`.
        RejectedChange: a manifest does not fit the registry (a dangling reference...).
    """
    pages = read_seed_pages(directory)
    head = store.head()
    groups: dict[tuple[str, str], list[SeedPage]] = defaultdict(list)
    for page in pages:
        groups[(page.published, page.source)].append(page)
    results = []
    for (published, source), members in sorted(groups.items()):
        head = store.head()
        batch: list[tuple[str, Manifest]] = []
        for page in members:
            for where, manifest in page.manifests:
                if head and store.find_entry(head, manifest.digest, (manifest.kind,)):
                    continue  # already published (the corpus holds it)
                if manifest.kind == "ImplementationRevision" and head:
                    manifest = _with_project(store, head, manifest, source)
                batch.append((f"{page.name}/{where}", manifest))
        if batch:
            results.append(store.add(batch, _meta(store, head, published, source, members)))
    return results


def _with_project(store: GitStore, head: str, manifest: Manifest, source: str) -> Manifest:
    """Label a reconstructed implementation with its project, found the way the source's importer
    names projects (`<source>/user/<author>` as the project's host id)."""
    if manifest.document["metadata"].get("labels", {}).get("project"):
        return manifest
    authors = manifest.document["metadata"].get("authors") or []
    author = authors[0].get("name") if authors else None
    if not author:
        return manifest
    wanted = f"{source}/user/{author}"
    entries = [e for e in store.entries(head) if e.kind == "SoftwareProject"]
    for entry, data in zip(entries, store.read_blobs([e.oid for e in entries]), strict=True):
        document = orjson.loads(data)
        if document["spec"].get("host", {}).get("id") == wanted:
            labelled: dict[str, Any] = {
                **manifest.document,
                "metadata": {
                    **manifest.document["metadata"],
                    "labels": {
                        **manifest.document["metadata"].get("labels", {}),
                        "project": document["metadata"]["name"],
                    },
                },
            }
            return manifest_from_document(labelled, entry.path)
    return manifest


def _meta(store: GitStore, head: str | None, published: str, source: str, pages: list[SeedPage]) -> CommitMeta:
    terms = _source_terms(store, head, source)
    moment = int(datetime.fromisoformat(published).replace(tzinfo=UTC).timestamp())
    names = ", ".join(page.name for page in pages)
    return CommitMeta(
        author=Person(f"{source} (via KernelIndex run pages)", f"{source}@sources.kernelindex.invalid", moment),
        committer=Person(IMPORTER.name, IMPORTER.email, moment),
        subject=f"Add the seed records {names} (published {published})",
        body=(
            "Runs published on KernelIndex after the catalog export, as their record pages show them. "
            "Implementations missing from the corpus were reconstructed from the pages; their digests "
            "equal what the runs reference."
        ),
        trailers=trailer_pairs(
            [
                ("Source", source),
                *(("Source-Snapshot", f"sha256:{page.page_sha256} {page.name}.txt") for page in pages),
                ("License", terms.trailer("License") if terms else None),
                ("Attribution", terms.trailer("Attribution") if terms else None),
                ("Signed-off-by", f"{IMPORTER.name} <{IMPORTER.email}>"),
            ]
        ),
    )


def _source_terms(store: GitStore, head: str | None, source: str) -> CommitInfo | None:
    for commit in store.first_parents(head) if head else []:
        info = store.commit_info(commit)
        if info.trailer("Source") == source and info.trailer("License"):
            return info
    return None

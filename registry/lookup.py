"""Finding one manifest without building a graph: by digest, digest prefix or `metadata.name`,
when it was published on main, and the integrity warnings it carries. For the CLI."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import orjson

from kernelindex.registry.errors import AmbiguousName, ManifestNotFound
from kernelindex.registry.graph import MIN_PREFIX
from kernelindex.registry.provenance import CommitInfo
from kernelindex.registry.store import Entry, GitStore
from kernelindex.registry.validate import operation_mismatch

__all__ = ["MIN_PREFIX", "Found", "get_manifest", "integrity_warnings", "publication"]


_HEX = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True, slots=True)
class Found:
    entry: Entry
    data: bytes

    @property
    def document(self) -> dict[str, Any]:
        return orjson.loads(self.data)  # type: ignore[no-any-return]


def get_manifest(store: GitStore, commit: str, ident: str, kinds: Collection[str] | None = None) -> Found:
    """The manifest `ident` names at `commit`: `sha256:<hex>`, a hex prefix (>= 12 digits,
    with or without `sha256:`), or a `metadata.name`; only of `kinds` when given.

    Raises:
        ManifestNotFound: nothing matches.
        AmbiguousName: a prefix or name matches several manifests.
    """
    text = ident.strip()
    hexpart = text.removeprefix("sha256:")
    if _HEX.fullmatch(hexpart) and len(hexpart) == 64:
        entry = store.find_entry(commit, "sha256:" + hexpart, kinds)
        if entry is None:
            raise ManifestNotFound(ident, commit)
        return Found(entry, store.read_blob(entry.oid))
    entries = [e for e in store.entries(commit) if kinds is None or e.kind in kinds]
    if _HEX.fullmatch(hexpart) and len(hexpart) >= MIN_PREFIX:
        matches = [e for e in entries if e.hexdigest.startswith(hexpart)]
        if len(matches) == 1:
            return Found(matches[0], store.read_blob(matches[0].oid))
        if matches:
            raise AmbiguousName(ident, [m.digest for m in matches])
    named = []
    for entry, data in zip(entries, store.read_blobs([e.oid for e in entries]), strict=True):
        if b'"name": ' in data and orjson.loads(data)["metadata"]["name"] == text:
            named.append(Found(entry, data))
    if len(named) == 1:
        return named[0]
    if named:
        raise AmbiguousName(ident, [f"{f.entry.kind} {f.entry.digest}" for f in named])
    short = _HEX.fullmatch(hexpart) is not None and len(hexpart) < MIN_PREFIX
    raise ManifestNotFound(ident, commit, f"a digest prefix needs at least {MIN_PREFIX} hex digits" if short else "")


def publication(store: GitStore, path: str) -> CommitInfo | None:
    """The first commit on main's first-parent history that contains `path`, or None.

    Files on main are only ever added, so containment is monotonic along the chain and a
    binary search finds the first commit.
    """
    head = store.head()
    if head is None or store.find_path(head, path) is None:
        return None
    chain = store.first_parents(head)[::-1]  # oldest first
    low, high = 0, len(chain) - 1
    while low < high:
        middle = (low + high) // 2
        if store.find_path(chain[middle], path) is None:
            low = middle + 1
        else:
            high = middle
    return store.commit_info(chain[low])


def integrity_warnings(store: GitStore, commit: str, found: Found) -> list[str]:
    """What is known to be wrong with a published manifest (upstream data errors we keep)."""
    document = found.document
    warnings = []
    if found.entry.kind == "BenchmarkRun":
        spec = document["spec"]
        implementation = store.read_document(commit, spec["implementationDigest"], ("ImplementationRevision",))
        workload = store.read_document(commit, spec["workloadDigest"], ("WorkloadCase", "WorkloadSuite"))
        reason = operation_mismatch(implementation, workload) if implementation and workload else None
        if reason:
            warnings.append(f"operation-mismatch: {reason} (an upstream data error; imported as published)")
    return warnings

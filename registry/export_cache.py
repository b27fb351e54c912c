"""Catalog exports built once per commit and kept on disk, in the registry's cache folder (`exports/`), with
their sha256, size and rows per table: a download (or a citation) of a commit's export after the first
costs reading a file, not an export (3.7 s of CPU for the embedded registry).

Each export is `<commit>.<format version>.jsonl.zst` with its measure beside it (`.json`), both written to a
temporary name and renamed, the measure last: a file without its measure is not an entry. At most one
build per commit at a time in a process; processes that build the same commit together write the same
bytes, and the last rename wins. The directory holds at most `max_bytes` of exports: the least recently
served go first (never the one just asked for). Like the warm-start cache, it must be writable only by the
server: an entry is trusted as found.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernelindex.registry.cache_dir import cache_dir, make_folder
from kernelindex.registry.export import ExportDigest, ExportPlan, produce

__all__ = ["DEFAULT_BYTES", "FORMAT_VERSION", "CachedExport", "ExportCache", "exports_path"]

DEFAULT_BYTES = 1024 * 1024 * 1024
"""What the exports of one registry may hold on disk (the embedded registry's export is 4.4 MB)."""
FORMAT_VERSION = "1"
"""Part of an entry's name: a change of what an export holds names new files."""


def exports_path(repo_path: Path, root: Path | None = None) -> Path:
    """The exports of the registry at `repo_path`: `exports/` in its cache folder (`cache_dir`)."""
    return cache_dir(repo_path, root) / "exports"


@dataclass(frozen=True, slots=True)
class CachedExport:
    """An export on disk: its file and what it measures."""

    path: Path
    digest: ExportDigest


class ExportCache:
    """Exports by commit in `directory`, at most `max_bytes` of them."""

    def __init__(self, directory: Path, max_bytes: int = DEFAULT_BYTES) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self.builds = 0
        """Exports this cache built (a test reads it: a second download builds nothing)."""

    def _paths(self, commit: str) -> tuple[Path, Path]:
        stem = f"{commit}.{FORMAT_VERSION}"
        return self.directory / f"{stem}.jsonl.zst", self.directory / f"{stem}.json"

    def find(self, commit: str) -> CachedExport | None:
        """The export of `commit` if it is kept (and marks it as used now)."""
        data, measure = self._paths(commit)
        try:
            raw = json.loads(measure.read_text(encoding="utf-8"))
            found = ExportDigest(
                str(raw["name"]),
                str(raw["sha256"]),
                int(raw["size"]),
                tuple((str(table), int(rows)) for table, rows in raw["tables"]),
            )
            if data.stat().st_size != found.size:
                return None  # cut short (a full disk): built again
            os.utime(data)  # recently served: the last to go
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return CachedExport(data, found)

    def get(self, commit: str, plan: Callable[[], ExportPlan]) -> CachedExport:
        """The export of `commit`, built from `plan()` if it is not kept yet (once, however many ask).

        Raises:
            OSError: the directory cannot be written.
        """
        found = self.find(commit)
        if found is not None:
            return found
        with self._lock:
            building = self._building.setdefault(commit, threading.Lock())
        with building:
            found = self.find(commit)
            if found is None:
                found = self._build(commit, plan())
        with self._lock:
            self._building.pop(commit, None)
        self._trim(keep=found.path)
        return found

    def _build(self, commit: str, plan: ExportPlan) -> CachedExport:
        make_folder(self.directory)
        data, measure = self._paths(commit)
        token = f".{os.getpid()}.{threading.get_ident()}.partial"
        partial_data = data.with_name(data.name + token)
        partial_measure = measure.with_name(measure.name + token)
        try:
            with partial_data.open("wb") as out:
                digest = produce(plan, out)
            partial_data.replace(data)
            record = {"name": digest.name, "sha256": digest.sha256, "size": digest.size, "tables": digest.tables}
            partial_measure.write_text(json.dumps(record), encoding="utf-8")
            partial_measure.replace(measure)
        finally:
            partial_data.unlink(missing_ok=True)
            partial_measure.unlink(missing_ok=True)
        self.builds += 1
        return CachedExport(data, digest)

    def _trim(self, keep: Path) -> None:
        """Remove the least recently served exports until the directory holds at most `max_bytes`."""
        entries = []
        for path in self.directory.glob(f"*.{FORMAT_VERSION}.jsonl.zst"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if path == keep:
                continue
            with contextlib.suppress(OSError):
                path.with_name(path.name.removesuffix(".jsonl.zst") + ".json").unlink()
                path.unlink()
                total -= size

"""KernelIndex's own run ids: `kernelindex.com/runs/{uuid}` names the runs of the catalog export by a
UUID that no manifest carries. The export pairs each with its run digest; `scripts/
extract-kernelindex-run-ids` keeps the pairs in `data/kernelindex-run-ids.tsv.zst`, so a citation
that points at KernelIndex resolves to the same run here.
"""

from __future__ import annotations

import functools
import uuid
from pathlib import Path

__all__ = ["RUN_IDS", "digest_of", "id_of"]

RUN_IDS = Path(__file__).resolve().parent / "data" / "kernelindex-run-ids.tsv.zst"


@functools.cache
def _table() -> dict[str, str]:
    import zstandard  # here: a server that never resolves a KernelIndex id keeps its library out

    text = zstandard.ZstdDecompressor().decompress(RUN_IDS.read_bytes()).decode()
    table: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        key, sep, hexpart = line.partition("\t")
        if not sep or len(hexpart) != 64:
            raise ValueError(f"{RUN_IDS.name}: line {number}: expected <uuid> TAB <64 hex digits>")
        table[key] = f"sha256:{hexpart}"
    return table


@functools.cache
def _reverse() -> dict[str, str]:
    return {digest: key for key, digest in _table().items()}


def id_of(digest: str) -> str | None:
    """KernelIndex's id of the run with this digest, if the export names it."""
    return _reverse().get(digest)


def digest_of(run_id: uuid.UUID | str) -> str | None:
    """The digest of the run KernelIndex calls `run_id`, or None if the export names no such run."""
    return _table().get(str(run_id).lower())

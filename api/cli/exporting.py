"""`kernelindex export`: the registry at a commit of main, as the catalog export or a tar of its manifests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from kernelindex.cli.console import emit_json, guarded
from kernelindex.cli.options import AtOption, JsonOption, RepoOption
from kernelindex.cli.stores import open_snapshots, open_store

__all__ = ["export"]


@guarded
def export(
    repo: RepoOption = None,
    at: AtOption = None,
    fmt: Annotated[
        str, typer.Option("--format", help="kernelindex-jsonl-zst (the catalog export) or manifests-tar.")
    ] = "kernelindex-jsonl-zst",
    output: Annotated[
        Path, typer.Option("--output", "-o", help="A file, or a directory for the default name (default: here).")
    ] = Path("."),
    as_json: JsonOption = False,
) -> None:
    """Export the registry at a commit of main: catalog-<date>-<sha8>.jsonl.zst, or a tar of its manifests."""
    from kernelindex.registry.export import FORMATS, TAR_FORMAT, plan_export, tar_name, write_export

    if fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r}: expected {' or '.join(FORMATS)}", param_hint="--format")
    started = time.perf_counter()
    snapshots = open_snapshots(open_store(repo).path)
    snapshots.load()
    graph = snapshots.at(at)
    plan = plan_export(snapshots.store(), graph)
    name = tar_name(graph.commit, graph.committed_at) if fmt == TAR_FORMAT else plan.name
    target = output / name if output.is_dir() else output
    written = write_export(plan, target, fmt)
    seconds = time.perf_counter() - started
    if as_json:
        emit_json(
            {
                "path": str(written.path),
                "commit": graph.commit,
                "format": fmt,
                "bytes": written.size,
                "sha256": written.sha256,
                "seconds": round(seconds, 3),
            }
        )
        return
    typer.echo(
        f"{written.path}  {written.size:,} bytes  sha256:{written.sha256}  ({graph.commit[:12]}, {seconds:.1f} s)"
    )

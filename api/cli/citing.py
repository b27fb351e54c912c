"""`kernelindex cite`: a run's citation, pinned to a commit, with its digest and today's date."""

from __future__ import annotations

from typing import Annotated

import typer

import registry
from api.cli.console import guarded
from api.cli.options import AtOption, RepoOption
from api.cli.stores import kinds, read_settings, read_trust_root, repo_path

__all__ = ["cite"]


@guarded
def cite(
    ident: Annotated[
        str, typer.Argument(metavar="ID", help="A run or serving run: digest, hex prefix (>= 12) or metadata.name.")
    ],
    repo: RepoOption = None,
    at: AtOption = None,
    fmt: Annotated[str, typer.Option("--format", help="TEXT, BIBTEX or CSL_JSON.")] = "TEXT",
    kind: Annotated[str, typer.Option(help="The kind of ID: only runs are cited.")] = "BenchmarkRun",
    base_url: Annotated[
        str | None, typer.Option(help="Where the registry is served (default $KERNELINDEX_BASE_URL or local).")
    ] = None,
) -> None:
    """Print a citation of a run, pinned to a commit, with its digest and today's date."""
    import datetime as dt

    import anyio

    from api.context import StoredObjects
    from api.service import QueryService
    from registry.snapshots import Snapshots

    if kinds(kind) != ("BenchmarkRun",):
        raise typer.BadParameter(f"{kind!r}: only a BenchmarkRun is cited", param_hint="--kind")
    if fmt.upper() not in ("TEXT", "BIBTEX", "CSL_JSON"):
        raise typer.BadParameter(f"{fmt!r}: expected TEXT, BIBTEX or CSL_JSON", param_hint="--format")
    settings = read_settings()
    root = (base_url or settings.base_url or f"http://{settings.host}:{settings.port}").rstrip("/")
    snapshots = Snapshots(repo_path(repo), trust_root=read_trust_root(None))
    snapshots.load()
    graph = snapshots.at(at)
    queries = QueryService(snapshots, StoredObjects(snapshots), root, today=lambda: dt.datetime.now(dt.UTC).date())
    query = (
        "query($at: String, $id: String!) { registry(at: $at) { "
        "run(id: $id) { citation(format: %s) } servingRun(id: $id) { citation(format: %s) } } }"
    )
    answer = anyio.run(queries.answer, query % (fmt.upper(), fmt.upper()), {"at": graph.commit, "id": ident})
    if answer.errors:
        raise registry.RegistryError(answer.errors[0]["message"])
    found = (answer.data or {}).get("registry", {})
    run = found.get("run") or found.get("servingRun")
    if run is None:
        raise registry.ManifestNotFound(ident, graph.commit)
    typer.echo(run["citation"])

"""`kernelindex cite`: a run's citation, pinned to a commit, with its digest and today's date."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from kernelindex import registry
from kernelindex.cli.console import echo, guarded
from kernelindex.cli.options import API_TIMEOUT_SECONDS, ApiOption, ApiTimeoutOption, AtOption, RepoOption
from kernelindex.cli.stores import kinds

__all__ = ["cite"]


@guarded
def cite(
    ident: Annotated[
        str, typer.Argument(metavar="ID", help="A run or serving run: digest, hex prefix (>= 12) or metadata.name.")
    ],
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    fmt: Annotated[str, typer.Option("--format", help="TEXT, BIBTEX or CSL_JSON.")] = "TEXT",
    kind: Annotated[str, typer.Option(help="The kind of ID: only runs are cited.")] = "BenchmarkRun",
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Where the local registry is served (default $KERNELINDEX_BASE_URL or local); not with --api."
        ),
    ] = None,
) -> None:
    """Print a citation of a run, pinned to a commit, with its digest and today's date; asked of the query service,
    locally or of a served registry (`--api`), whose permalinks it carries."""
    from kernelindex.cli.ask import ask
    from kernelindex.cli.documents import CITE

    if kinds(kind) != ("BenchmarkRun",):
        raise typer.BadParameter(f"{kind!r}: only a BenchmarkRun is cited", param_hint="--kind")
    if fmt.upper() not in ("TEXT", "BIBTEX", "CSL_JSON"):
        raise typer.BadParameter(f"{fmt!r}: expected TEXT, BIBTEX or CSL_JSON", param_hint="--format")
    if api and base_url:
        raise typer.BadParameter("a served registry (--api) cites its own links", param_hint="--base-url")
    # The access date is the reader's (today, UTC), asked for by name: a served registry adds none of its own.
    variables = {"at": at, "id": ident, "format": fmt.upper(), "accessed": dt.datetime.now(dt.UTC).date().isoformat()}
    data = ask(CITE, variables, repo=repo, api=api, base_url=base_url, timeout=api_timeout)
    found = data.get("registry") or {}
    run = found.get("run") or found.get("servingRun")
    if run is None:
        raise registry.ManifestNotFound(ident, found.get("commit", {}).get("id", at or "main"))
    echo(run["citation"], lines=True)  # BibTeX spans lines

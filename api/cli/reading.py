"""The commands that read: `digest` (of manifest files), `show` (a manifest as stored, with its
publication) and `log` (the publication record)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

import registry
from api.cli.console import emit_json, guarded
from api.cli.options import AtOption, JsonOption, RepoOption
from api.cli.stores import kinds, open_store, read_manifests
from registry import lookup

__all__ = ["digest", "log", "show"]


@guarded
def digest(
    files: Annotated[list[Path], typer.Argument(help="Manifest files (JSON or YAML).")],
    as_json: JsonOption = False,
) -> None:
    """Print the digest (identity) of each manifest."""
    loaded = read_manifests(files)
    if as_json:
        emit_json([{"file": f, "kind": m.kind, "digest": m.digest} for f, m in loaded])
        return
    for file, manifest in loaded:
        typer.echo(f"{manifest.digest}  {file}")


@guarded
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A digest, a hex prefix (>= 12) or a metadata.name.")],
    repo: RepoOption = None,
    at: AtOption = None,
    kind: Annotated[
        str | None, typer.Option(help="Only this kind (e.g. BenchmarkRun): names repeat across kinds.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Print one manifest as stored, with its publication and any integrity warnings."""
    store = open_store(repo)
    commit = store.resolve(at) if at else store.head()
    if commit is None:
        raise registry.ManifestNotFound(ident, "an empty registry")
    found = lookup.get_manifest(store, commit, ident, kinds(kind))
    published = lookup.publication(store, found.entry.path)
    warnings = lookup.integrity_warnings(store, commit, found)
    if as_json:
        emit_json(
            {
                "kind": found.entry.kind,
                "digest": found.entry.digest,
                "name": found.document["metadata"]["name"],
                "path": found.entry.path,
                "commit": commit,
                "published": None
                if published is None
                else {
                    "commit": published.id,
                    "at": published.committer.when_utc,
                    "source": published.trailer("Source"),
                },
                "warnings": warnings,
                "manifest": found.document,
            }
        )
        return
    rows = [
        ("kind", found.entry.kind),
        ("digest", found.entry.digest),
        ("name", found.document["metadata"]["name"]),
        ("path", found.entry.path),
        ("at", commit),
        (
            "published",
            "no (not on main)"
            if published is None
            else f"{published.committer.when_utc} in {published.id[:12]} "
            f"(source: {published.trailer('Source') or 'unknown'})",
        ),
    ]
    rows.extend(("warning", w) for w in warnings)
    for key, value in rows:
        typer.echo(f"{key + ':':<11}{value}")
    typer.echo("")
    sys.stdout.write(found.data.decode())


@guarded
def log(
    repo: RepoOption = None,
    at: AtOption = None,
    limit: Annotated[int, typer.Option("-n", "--limit", min=1, help="At most this many commits.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """The publication record: main's first-parent history, newest first, with sources and counts."""
    store = open_store(repo)
    commit = store.resolve(at) if at else store.head()
    chain = store.first_parents(commit)[:limit] if commit else []
    entries = []
    for current in chain:
        info = store.commit_info(current)
        parent = info.parents[0] if info.parents else None
        added = sum(1 for change in store.diff(parent, current) if change.status == "added")
        entries.append((info, added))
    if as_json:
        emit_json(
            [
                {
                    "commit": info.id,
                    "committedAt": info.committer.when_utc,
                    "author": {"name": info.author.name, "email": info.author.email},
                    "committer": {"name": info.committer.name, "email": info.committer.email},
                    "subject": info.subject,
                    "trailers": [[k, v] for k, v in info.trailers],
                    "filesAdded": added,
                }
                for info, added in entries
            ]
        )
        return
    for info, added in entries:
        source = info.trailer("Source") or "-"
        typer.echo(f"{info.id[:12]}  {info.committer.when_utc}  +{added:<6} {source:<18} {info.subject}")

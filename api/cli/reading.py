"""The commands that read: `digest` (of manifest files), `show` (a manifest as stored, with its
publication) and `log` (the publication record)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from kernelindex import registry
from kernelindex.cli.console import echo, emit_json, guarded, visible
from kernelindex.cli.listing import cell
from kernelindex.cli.options import (
    API_TIMEOUT_SECONDS,
    ApiOption,
    ApiTimeoutOption,
    AtOption,
    JsonOption,
    RepoOption,
)
from kernelindex.cli.stores import kinds, open_store, read_manifests
from kernelindex.registry.merges import publication_source

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
        echo(f"{manifest.digest}  {file}")


@guarded
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A digest, a hex prefix (>= 12) or a metadata.name.")],
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    kind: Annotated[
        str | None, typer.Option(help="Only this kind (e.g. BenchmarkRun): names repeat across kinds.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Print one manifest as stored, with its publication; a run with its dossier (standing, cohort, leader) and
    any integrity warnings. Asked of the query service, locally or of a served registry (`--api`)."""
    from kernelindex.cli.ask import ask
    from kernelindex.cli.documents import SHOW, SHOW_RUN

    wanted = kinds(kind)
    variables: dict[str, Any] = {"id": ident, **({"at": at} if at else {}), **({"kind": wanted[0]} if wanted else {})}
    snapshot = ask(SHOW, variables, repo=repo, api=api, timeout=api_timeout)["registry"]
    commit, found = snapshot["commit"]["id"], snapshot["manifest"]
    if found is None:
        raise registry.ManifestNotFound(ident, commit)
    run: dict[str, Any] | None = None
    if found["kind"] == "BenchmarkRun":  # its dossier, from the same commit
        dossier = ask(SHOW_RUN, {"id": found["digest"], "at": commit}, repo=repo, api=api, timeout=api_timeout)
        run = dossier["registry"]["run"]
    provenance = found["provenance"]
    published = (
        None
        if provenance is None or found["publishedAt"] is None
        else {
            "commit": provenance["commit"]["id"],
            "at": found["publishedAt"],
            "source": (provenance["source"] or {}).get("slug"),
        }
    )
    warnings: list[str] = list(run["warnings"]) if run else []
    if as_json:
        emit_json(
            {
                "kind": found["kind"],
                "digest": found["digest"],
                "name": found["name"],
                "path": found["path"],
                "commit": commit,
                "published": published,
                "warnings": warnings,
                "manifest": found["json"],
                "run": run,
            }
        )
        return
    rows = [
        ("kind", found["kind"]),
        ("digest", found["digest"]),
        ("name", found["name"]),
        ("path", found["path"]),
        ("at", commit),
        (
            "published",
            "no (not on main)"
            if published is None
            else f"{published['at']} in {published['commit'][:12]} (source: {published['source'] or 'unknown'})",
        ),
    ]
    if run:
        rows.extend(_dossier(run))
    rows.extend(("warning", w) for w in warnings)
    for key, value in rows:
        typer.echo(f"{key + ':':<11}{cell(value)}")
    typer.echo("")
    # The manifest as stored, its lines and indentation kept; a control or U+202E in it (a manifest published
    # before the rules, or a server's) shown as its escape.
    sys.stdout.write(visible(found["text"], lines=True))
    sys.stdout.flush()


def _dossier(run: dict[str, Any]) -> list[tuple[str, Any]]:
    """The rows a run adds: its value, standing, where it ranks and what replaced it."""
    primary = run["primary"] or {}
    value = f"{primary['display']} ({primary['metric']}, {primary['statistic']})" if primary else None
    cohort = run["cohort"]
    rank = (
        f"{run['rank']}{' (tied)' if run['tiedWithPrevious'] else ''} of {cohort['rankedCount']:,} ranked"
        if run["rank"] is not None and cohort
        else "unranked: " + ", ".join(run["ineligibilityReasons"] or ["-"])
    )
    leader = run["leader"]
    rows: list[tuple[str, Any]] = [
        ("status", f"{run['status']}, trust {run['trust']}"),
        ("value", value),
        ("rank", rank),
        ("cohort", f"{cohort['key']} ({cohort['size']:,} runs)" if cohort else None),
        ("leader", f"{leader['name']} ({(leader['primary'] or {}).get('display') or '-'})" if leader else None),
        ("operation", (run["operation"] or {}).get("name")),
        ("impl", (run["implementation"] or {}).get("name")),
        ("gpu", (run["environment"] or {}).get("gpu")),
        ("workload", (run["workload"] or {}).get("label")),
    ]
    if run["retraction"]:
        rows.append(("retracted", run["retraction"]["reason"]))
    if run["supersededBy"]:
        rows.append(("superseded", f"by {run['supersededBy']['name']} ({run['supersededBy']['digest']})"))
    return rows


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
        source = publication_source(store, info) or "-"  # a merge's: its pull request's commits'
        echo(f"{info.id[:12]}  {info.committer.when_utc}  +{added:<6} {source:<18} {info.subject}")

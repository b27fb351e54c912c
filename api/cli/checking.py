"""`kernelindex validate`: manifest files alone and against the registry, or (`--base/--head`) a whole pull
request read from git, with what it would do at merge (`report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kernelindex import registry
from kernelindex.cli.console import echo, emit_json, err, guarded
from kernelindex.cli.options import AtOption, JsonOption, RepoOption, TrustRootOption
from kernelindex.cli.stores import Files, open_store, read_files, read_trust_root, try_open
from kernelindex.registry.validate import AtCommit

__all__ = ["validate"]


@guarded
def validate(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="Manifest files (JSON or YAML): one manifest, a YAML stream, or a submission bundle."),
    ] = None,
    base: Annotated[str | None, typer.Option(help="The PR check: the commit, branch or tag merged into.")] = None,
    head: Annotated[str | None, typer.Option(help="The PR check: the commit, branch or tag proposed.")] = None,
    repo: RepoOption = None,
    at: AtOption = None,
    output: Annotated[
        str, typer.Option("--format", help="text, markdown (a PR comment with the rank at merge) or json.")
    ] = "text",
    trust_root: TrustRootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check manifest files, or (--base/--head) a whole pull request read from git: every problem at once.

    Files are checked alone (the stored form of each manifest within 1 MiB), then, when a registry is present
    (the one you are in, or --repo), as one change, as `add` and the PR check judge it: their references
    resolve in it (or among the files), each run measures one operation, names are free, and nothing already
    published is given other metadata. A file may hold one
    manifest, several (a YAML stream), or KernelIndex's submission bundle; a problem names the entry
    (`bundle.yaml: $.runs[0].protocol.spec...`). A range may only add valid manifests at their digest
    paths; overlays and policy changes need a maintainer's signature. Exit status 0 only when everything
    passes.
    """
    fmt = "json" if as_json else output.lower()
    if fmt not in ("text", "markdown", "json"):
        raise typer.BadParameter(f"{output!r}: expected text, markdown or json", param_hint="--format")
    if base is not None or head is not None:
        if base is None or head is None or files:
            raise typer.BadParameter("the PR check takes --base and --head (and no files)", param_hint="--base/--head")
        _validate_range(open_store(repo), base, head, fmt, read_trust_root(trust_root))
        return
    if not files:
        raise typer.BadParameter("give manifest files, or --base and --head", param_hint="FILES")
    problems: list[registry.Problem] = []
    store = try_open(repo)
    commit = None
    if store is not None:
        current = store.head(store.current_branch() or registry.store.MAIN) or store.head()
        commit = store.resolve(at) if at else current
    # A bundle's implementations name their project by slug: among the registry's projects when there is one.
    projects = None if store is None else (store.names_of_kind(commit, "SoftwareProject") if commit else {})
    read = Files(())
    try:
        read = read_files(files, projects)
    except registry.InvalidManifest as exc:
        problems.extend(exc.problems)
    if read.bundles:
        # The one verdict `add`, the importers and the PR check take too (`validate.check_additions`): against
        # the registry when there is one (names, what is already published), the stored form's size always.
        from kernelindex.registry.validate import check_additions

        existing = AtCommit(store, commit) if store is not None else None
        problems.extend(read.locate(check_additions(read.sourced(), existing)))
    if fmt == "json":
        emit_json(
            {
                "ok": not problems,
                "manifests": [
                    {
                        "file": bundle.source,
                        "entry": entry.where or None,
                        "kind": entry.manifest.kind,
                        "digest": entry.manifest.digest,
                        "path": entry.manifest.path,
                    }
                    for bundle in read.bundles
                    for entry in bundle.entries
                ],
                "problems": [{"file": p.source, "path": p.path, "reason": p.reason} for p in problems],
            }
        )
    else:
        for problem in problems:
            err(str(problem))
        if not problems:
            for where, manifest in read.entries:
                echo(f"ok  {manifest.digest}  {manifest.kind}  {where}")
    if problems:
        raise typer.Exit(1)


def _validate_range(store: registry.GitStore, base: str, head: str, fmt: str, trust_root: bytes | None = None) -> None:
    from kernelindex.cli.report import range_report
    from kernelindex.registry.review import check_range

    base_commit, head_commit = store.resolve(base), store.resolve(head)
    if fmt == "text":
        report = check_range(store, base_commit, head_commit, trust_root=trust_root)
        echo(_review_comment(report, base, head), lines=True)
        ok = report.ok
    else:  # markdown and json add what the change would do at merge (api/cli/report.py)
        outcome = range_report(store, base_commit, head_commit, base, head, trust_root=trust_root)
        if fmt == "json":
            emit_json(outcome.json)
        else:
            echo(outcome.markdown, lines=True)
        ok = outcome.check.ok
    if not ok:
        raise typer.Exit(1)


def _review_comment(report: Any, base: str, head: str) -> str:
    """Plain text a CI job can post on the pull request as it is."""
    from kernelindex.cli.report import repository_files_text

    lines = [f"kernelindex validate {base}..{head}: {report.commits} commit(s), {len(report.added)} manifest(s) added"]
    if report.ok:
        lines.append("All checks passed.")
    else:
        lines.append(f"{len(report.problems)} problem(s); nothing can be merged until all are fixed:")
        lines.extend(f"- {problem}" for problem in report.problems)
    lines.extend(repository_files_text(report.repository_files))
    if report.added:
        lines.append("")
        lines.append("Added:")
        lines.extend(f"- {m.kind} {m.digest} ({m.name})" for m in report.added)
    return "\n".join(lines)

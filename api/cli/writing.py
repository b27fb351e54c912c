"""The commands that write a registry: `init` (an empty one, or one with its trust root) and `add` (manifests,
committed at their digest paths with provenance trailers, every file of one call in one commit)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from kernelindex import registry
from kernelindex.cli.console import emit_json, guarded
from kernelindex.cli.identity import git_config, identity, signer_for
from kernelindex.cli.options import JsonOption, RepoOption
from kernelindex.cli.stores import read_files, read_settings, repo_path, writable_store
from kernelindex.registry.validate import AtCommit

__all__ = ["add", "init"]


@guarded
def init(
    repo: RepoOption = None,
    maintainers: Annotated[
        Path | None,
        typer.Option(
            help="An allowed-signers file: the registry's trust root, written as its initial commit "
            "(the only way a first maintainers policy enters a registry's history)."
        ),
    ] = None,
    author: Annotated[str | None, typer.Option(help="'Name <email>' (default: git config user.*).")] = None,
) -> None:
    """Create an empty registry (a bare git repository whose main branch is the publication record)."""
    from kernelindex.registry.signatures import POLICY_PATH

    # Where nothing names a registry, the new one is ./manifests.git (found there next time), never the embedded one.
    path = Path("manifests.git") if repo is None and read_settings().repo_origin == "embedded" else repo_path(repo)
    existed = path.exists() and any(path.iterdir())
    if existed and not (path / "HEAD").exists():
        raise registry.StoreNotFound(str(path), "exists and is not an empty directory or a git repository")
    policy = None
    if maintainers is not None:
        try:
            policy = maintainers.read_bytes()
        except OSError as exc:
            raise typer.BadParameter(f"cannot read {maintainers}: {exc.strerror}", param_hint="--maintainers") from None
        registry.TrustChain.check_root(policy)
    store = registry.GitStore.init(path)
    if policy is not None:
        if store.head() is not None:
            raise registry.RegistryError(
                f"{store.path} already has commits: the root policy can only be the initial commit "
                "(for an existing registry, pin one with KERNELINDEX_TRUST_ROOT)"
            )
        settings = read_settings()
        name, email = identity(author, store, "author")
        when, offset = settings.author_date or (int(time.time()), 0)
        person = registry.Person(name, email, when, offset)
        meta = registry.CommitMeta(person, person, "Trust root: the first maintainers policy",
                                   trailers=(("Source", "community"),))  # fmt: skip
        commit = store.add([], meta, extra_files={POLICY_PATH: policy}).commit
        typer.echo(f"created registry {store.path} with its trust root in {commit}")
        return
    typer.echo(f"{'reusing' if existed else 'created'} registry {store.path}")


@guarded
def add(
    files: Annotated[
        list[Path],
        typer.Argument(help="Manifest files (JSON or YAML): one manifest, a YAML stream, or a submission bundle."),
    ],
    repo: RepoOption = None,
    branch: Annotated[
        str | None, typer.Option(help="Commit on this branch (default: the checked-out one; main in a bare registry).")
    ] = None,
    source: Annotated[str, typer.Option(help="Where the results come from (Source: trailer).")] = "community",
    source_url: Annotated[str | None, typer.Option(help="Source-URL: trailer.")] = None,
    license_: Annotated[str | None, typer.Option("--license", help="Licence of the data (License: trailer).")] = None,
    message: Annotated[str | None, typer.Option("--message", "-m", help="Commit subject.")] = None,
    author: Annotated[str | None, typer.Option(help="'Name <email>' (default: git config user.*).")] = None,
    signoff: Annotated[bool, typer.Option("--signoff", "-s", help="Add a Signed-off-by: trailer.")] = False,
    sign: Annotated[bool, typer.Option("--sign", "-S", help="SSH-sign the commit (maintainers' overlays).")] = False,
    signing_key: Annotated[Path | None, typer.Option(help="SSH key for --sign (default: user.signingkey).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Validate manifests and commit them at their digest paths, with provenance trailers.

    Every manifest of every file (a bundle's entries included) is checked as one change and committed in
    one commit, or, if any is refused, none is: each problem names its file and entry.
    In a clone (a work tree) the commit goes on the checked-out branch and the files appear in
    the work tree; push the branch and open a pull request. In a bare registry it goes on main.
    """
    settings = read_settings()
    store = writable_store(repo)
    work_tree = store.work_tree
    target = (
        f"refs/heads/{branch}" if branch else (store.current_branch() if work_tree else None) or registry.store.MAIN
    )
    if work_tree is not None and target == registry.store.MAIN and not branch:
        raise typer.BadParameter(
            "you are on main: contributions go on a branch (git switch -c add-my-run), or pass --branch",
            param_hint="--branch",
        )
    new_branch = store.head(target) is None and target != registry.store.MAIN
    start = store.head(target) or store.head(store.current_branch() or registry.store.MAIN) or store.head()
    # Read before anything is written (a new branch included): a bundle names its projects by slug, among
    # the registry's as of where the commit will go.
    read = read_files(files, store.names_of_kind(start, "SoftwareProject") if start else {})
    loaded = read.entries
    if new_branch:
        if start is None:
            raise registry.RegistryError("the registry is empty: a branch needs a commit to start from")
        from kernelindex.registry.validate import check_additions

        refused = check_additions(read.sourced(), AtCommit(store, start))
        if refused:  # before the branch is made: a refused change leaves no ref behind either
            raise registry.RejectedChange(read.locate(refused))
        store.create_branch(target, start)
    name, email = identity(author, store, "author")
    now = int(time.time())
    author_time, author_offset = settings.author_date or (now, 0)
    committer_time, committer_offset = settings.committer_date or (author_time, author_offset)
    trailers = [("Source", source), ("Source-URL", source_url), ("License", license_)]
    if signoff:
        trailers.append(("Signed-off-by", f"{name} <{email}>"))
    kinds = sorted({m.kind for _, m in loaded})
    meta = registry.CommitMeta(
        author=registry.Person(name, email, author_time, author_offset),
        committer=registry.Person(name, email, committer_time, committer_offset),
        subject=message or f"Add {len(loaded)} manifest{'s' if len(loaded) != 1 else ''} ({', '.join(kinds)})",
        trailers=tuple((k, v) for k, v in trailers if v),
    )
    before = store.head(target)
    signer = signer_for(store, signing_key) if sign else None
    try:
        result = store.add(read.sourced(), meta, ref=target, sign=signer)
    except registry.RejectedChange as exc:
        raise registry.RejectedChange(read.locate(exc.problems)) from None
    if result.commit and work_tree is not None and target == store.current_branch() and before is not None:
        store.sync_work_tree(before, result.commit)
    short = target.removeprefix("refs/heads/")
    if as_json:
        emit_json(
            {
                "commit": result.commit,
                "branch": short,
                "added": [{"kind": m.kind, "digest": m.digest, "path": m.path} for m in result.added],
                "unchanged": [{"kind": m.kind, "digest": m.digest, "path": m.path} for m in result.unchanged],
            }
        )
        return
    for manifest in result.added:
        typer.echo(f"added      {manifest.digest}  {manifest.kind}  {manifest.path}")
    for manifest in result.unchanged:
        typer.echo(f"unchanged  {manifest.digest}  {manifest.kind}  (already published)")
    if not result.commit:
        typer.echo("nothing to commit: every manifest is already there")
        return
    typer.echo(f"commit {result.commit} on {short}{' (signed)' if sign else ''}")
    if work_tree is not None and short != "main":
        remote = git_config(store, f"branch.{short}.remote") or "origin"
        typer.echo(f"next: git push {remote} {short}   # then open a pull request against main")

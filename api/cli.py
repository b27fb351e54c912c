"""The `kernelindex` command: init, add, validate, digest, show, log, import, export (and serve, cite, mcp).

Errors are one line per problem (`file: $.json.path: reason`) on stderr with exit status 1;
usage errors exit 2; no command prints a traceback (set KERNELINDEX_DEBUG=1 to see one).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

import registry
from api.settings import Settings
from registry import lookup

__all__ = ["app", "main"]

app = typer.Typer(
    name="kernelindex",
    help="A registry of GPU-kernel benchmark results: content-addressed manifests in git.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # usage errors as one plain line, not a box
)
import_app: typer.Typer = typer.Typer(
    help="Import manifests from upstream sources.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(import_app, name="import")

F = TypeVar("F", bound=Callable[..., Any])

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="The registry (a git repository). Default: $KERNELINDEX_REPO, ./manifests.git, or the embedded registry.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
AtOption = Annotated[str | None, typer.Option("--at", help="A commit, branch or tag (default: main).")]


def _settings() -> Settings:
    """The environment's settings; a malformed one is a usage error (exit 2) that names the variable."""
    try:
        return Settings.from_env()
    except ValueError as exc:
        _err(f"kernelindex: {exc}")
        raise typer.Exit(2) from None


def _repo_path(repo: Path | None) -> Path:
    return repo if repo is not None else _settings().repo_path


def _open(repo: Path | None) -> registry.GitStore:
    path = _repo_path(repo)
    if not path.exists():
        raise registry.StoreNotFound(str(path), "no such directory; create one with `kernelindex init`")
    return registry.GitStore(path)


def _err(line: str) -> None:
    typer.echo(line, err=True)


def _guard(fn: F) -> F:
    """Turn the registry's errors into located lines and exit status 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (registry.InvalidManifest, registry.RejectedChange) as exc:
            for problem in exc.problems:
                _err(str(problem))
            raise typer.Exit(1) from None
        except registry.RegistryError as exc:
            _err(f"kernelindex: {exc}")
            raise typer.Exit(1) from None
        except OSError as exc:
            _err(f"kernelindex: {exc.filename or ''}: {exc.strerror or exc}")
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def _emit_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar on stderr when it is a terminal; silent otherwise."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield lambda stage, done, total: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _read_manifests(files: list[Path]) -> list[tuple[str, registry.Manifest]]:
    """Load every file, collecting every problem of every file before failing."""
    loaded: list[tuple[str, registry.Manifest]] = []
    problems: list[registry.Problem] = []
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            problems.append(registry.Problem(str(file), "", f"cannot read: {exc.strerror or exc}"))
            continue
        try:
            loaded.append((str(file), registry.load_manifest(data, str(file))))
        except registry.InvalidManifest as exc:
            problems.extend(exc.problems)
    if problems:
        raise registry.InvalidManifest(problems)
    return loaded


# Commands ---------------------------------------------------------------------------------------------


@app.command()
@_guard
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
    from registry.signatures import POLICY_PATH

    path = _repo_path(repo)
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
        settings = _settings()
        name, email = _identity(author, store, "author")
        when, offset = settings.author_date or (int(time.time()), 0)
        person = registry.Person(name, email, when, offset)
        meta = registry.CommitMeta(person, person, "Trust root: the first maintainers policy",
                                   trailers=(("Source", "community"),))  # fmt: skip
        commit = store.add([], meta, extra_files={POLICY_PATH: policy}).commit
        typer.echo(f"created registry {store.path} with its trust root in {commit}")
        return
    typer.echo(f"{'reusing' if existed else 'created'} registry {store.path}")


@app.command()
@_guard
def digest(
    files: Annotated[list[Path], typer.Argument(help="Manifest files (JSON or YAML).")],
    as_json: JsonOption = False,
) -> None:
    """Print the digest (identity) of each manifest."""
    loaded = _read_manifests(files)
    if as_json:
        _emit_json([{"file": f, "kind": m.kind, "digest": m.digest} for f, m in loaded])
        return
    for file, manifest in loaded:
        typer.echo(f"{manifest.digest}  {file}")


@app.command()
@_guard
def validate(
    files: Annotated[list[Path] | None, typer.Argument(help="Manifest files (JSON or YAML).")] = None,
    base: Annotated[str | None, typer.Option(help="The PR check: the commit, branch or tag merged into.")] = None,
    head: Annotated[str | None, typer.Option(help="The PR check: the commit, branch or tag proposed.")] = None,
    repo: RepoOption = None,
    at: AtOption = None,
    output: Annotated[
        str, typer.Option("--format", help="text, markdown (a PR comment with the rank at merge) or json.")
    ] = "text",
    trust_root: Annotated[
        Path | None,
        typer.Option(help="The operator's pinned maintainers policy (default $KERNELINDEX_TRUST_ROOT)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Check manifest files, or (--base/--head) a whole pull request read from git: every problem at once.

    Files are checked alone, then, when a registry is present, that their references resolve in
    it (or among the files) and that each run measures one operation. A range may only add valid
    manifests at their digest paths; overlays and policy changes need a maintainer's signature.
    Exit status 0 only when everything passes.
    """
    fmt = "json" if as_json else output.lower()
    if fmt not in ("text", "markdown", "json"):
        raise typer.BadParameter(f"{output!r}: expected text, markdown or json", param_hint="--format")
    if base is not None or head is not None:
        if base is None or head is None or files:
            raise typer.BadParameter("the PR check takes --base and --head (and no files)", param_hint="--base/--head")
        _validate_range(_open(repo), base, head, fmt, _read_trust_root(trust_root))
        return
    if not files:
        raise typer.BadParameter("give manifest files, or --base and --head", param_hint="FILES")
    problems: list[registry.Problem] = []
    loaded: list[tuple[str, registry.Manifest]] = []
    try:
        loaded = _read_manifests(files)
    except registry.InvalidManifest as exc:
        problems.extend(exc.problems)
    store = _try_open(repo)
    if loaded and store is not None:
        from registry.validate import check_additions

        commit = (
            store.resolve(at) if at else (store.head(store.current_branch() or registry.store.MAIN) or store.head())
        )
        problems.extend(check_additions(loaded, _StoreView(store, commit)))
    if fmt == "json":
        _emit_json(
            {
                "ok": not problems,
                "manifests": [{"file": f, "kind": m.kind, "digest": m.digest, "path": m.path} for f, m in loaded],
                "problems": [{"file": p.source, "path": p.path, "reason": p.reason} for p in problems],
            }
        )
    else:
        for problem in problems:
            _err(str(problem))
        if not problems:
            for file, manifest in loaded:
                typer.echo(f"ok  {manifest.digest}  {manifest.kind}  {file}")
    if problems:
        raise typer.Exit(1)


def _kinds(kind: str | None) -> tuple[str, ...] | None:
    if kind is None:
        return None
    from registry.kinds import KINDS

    match = [name for name in KINDS if name.lower() == kind.strip().lower()]
    if not match:
        raise typer.BadParameter(f"{kind!r}: expected one of {', '.join(sorted(KINDS))}", param_hint="--kind")
    return (match[0],)


def _read_trust_root(path: Path | None) -> bytes | None:
    """The pinned trust root: `--trust-root`, else $KERNELINDEX_TRUST_ROOT, else none."""
    settings = _settings()
    if path is None:
        return settings.trust_root_policy()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint="--trust-root") from None


def _validate_range(store: registry.GitStore, base: str, head: str, fmt: str, trust_root: bytes | None = None) -> None:
    from api.cli_report import range_report
    from registry.review import check_range

    base_commit, head_commit = store.resolve(base), store.resolve(head)
    if fmt == "text":
        report = check_range(store, base_commit, head_commit, trust_root=trust_root)
        typer.echo(_review_comment(report, base, head))
        ok = report.ok
    else:  # markdown and json add what the change would do at merge (api/cli_report.py)
        outcome = range_report(store, base_commit, head_commit, base, head, trust_root=trust_root)
        if fmt == "json":
            _emit_json(outcome.json)
        else:
            typer.echo(outcome.markdown)
        ok = outcome.check.ok
    if not ok:
        raise typer.Exit(1)


def _review_comment(report: Any, base: str, head: str) -> str:
    """Plain text a CI job can post on the pull request as it is."""
    lines = [f"kernelindex validate {base}..{head}: {report.commits} commit(s), {len(report.added)} manifest(s) added"]
    if report.ok:
        lines.append("All checks passed.")
    else:
        lines.append(f"{len(report.problems)} problem(s); nothing can be merged until all are fixed:")
        lines.extend(f"- {problem}" for problem in report.problems)
    if report.added:
        lines.append("")
        lines.append("Added:")
        lines.extend(f"- {m.kind} {m.digest} ({m.name})" for m in report.added)
    return "\n".join(lines)


class _StoreView:
    def __init__(self, store: registry.GitStore, commit: str | None) -> None:
        self._store = store
        self._commit = commit

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        return self._store.read_document(self._commit, digest, kinds) if self._commit else None

    def find_named(self, kind: str, name: str) -> str | None:
        return self._store.names_of_kind(self._commit, kind).get(name) if self._commit else None


def _try_open(repo: Path | None) -> registry.GitStore | None:
    """The registry to check references against: the one named (which must exist), else the
    default one if there is one."""
    if repo is not None:
        return _open(repo)
    path = _repo_path(None)
    try:
        return registry.GitStore(path) if path.exists() else None
    except registry.StoreNotFound:
        return None


def _git_config(store: registry.GitStore, key: str) -> str:
    """A git setting as the repository sees it (its own config, then the user's)."""
    result = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "config", "--get", key], capture_output=True, text=True, check=False
    )
    return result.stdout.strip()


def _identity(value: str | None, store: registry.GitStore, which: str) -> tuple[str, str]:
    if value:
        name, _, rest = value.partition("<")
        if not rest.endswith(">") or not name.strip():
            raise typer.BadParameter(f"{value!r}: expected 'Name <email>'", param_hint=f"--{which}")
        return name.strip(), rest[:-1].strip()
    name, email = _git_config(store, "user.name"), _git_config(store, "user.email")
    if not name or not email:
        raise typer.BadParameter(
            "no identity: pass --author 'Name <email>' or set git config user.name/user.email",
            param_hint=f"--{which}",
        )
    return name, email


def _signer(store: registry.GitStore, key: Path | None) -> Callable[[bytes], bytes]:
    from registry.signatures import ssh_signer

    if key is None:
        configured = _git_config(store, "user.signingkey")
        if not configured:
            raise typer.BadParameter(
                "no key: pass --signing-key or set git config user.signingkey", param_hint="--sign"
            )
        if _git_config(store, "gpg.format") not in ("ssh", ""):
            raise typer.BadParameter("only SSH signatures count here: git config gpg.format ssh", param_hint="--sign")
        key = Path(configured).expanduser()
    return ssh_signer(key)


@app.command()
@_guard
def add(
    files: Annotated[list[Path], typer.Argument(help="Manifest files (JSON or YAML).")],
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

    In a clone (a work tree) the commit goes on the checked-out branch and the files appear in
    the work tree; push the branch and open a pull request. In a bare registry it goes on main.
    """
    settings = _settings()
    loaded = _read_manifests(files)
    store = _open(repo)
    work_tree = store.work_tree
    target = (
        f"refs/heads/{branch}" if branch else (store.current_branch() if work_tree else None) or registry.store.MAIN
    )
    if work_tree is not None and target == registry.store.MAIN and not branch:
        raise typer.BadParameter(
            "you are on main: contributions go on a branch (git switch -c add-my-run), or pass --branch",
            param_hint="--branch",
        )
    if store.head(target) is None and target != registry.store.MAIN:
        start = store.head(store.current_branch() or registry.store.MAIN) or store.head()
        if start is None:
            raise registry.RegistryError("the registry is empty: a branch needs a commit to start from")
        store.create_branch(target, start)
    name, email = _identity(author, store, "author")
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
    result = store.add(loaded, meta, ref=target, sign=_signer(store, signing_key) if sign else None)
    if result.commit and work_tree is not None and target == store.current_branch() and before is not None:
        store.sync_work_tree(before, result.commit)
    short = target.removeprefix("refs/heads/")
    if as_json:
        _emit_json(
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
        remote = _git_config(store, f"branch.{short}.remote") or "origin"
        typer.echo(f"next: git push {remote} {short}   # then open a pull request against main")


@app.command()
@_guard
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
    store = _open(repo)
    commit = store.resolve(at) if at else store.head()
    if commit is None:
        raise registry.ManifestNotFound(ident, "an empty registry")
    found = lookup.get_manifest(store, commit, ident, _kinds(kind))
    published = lookup.publication(store, found.entry.path)
    warnings = lookup.integrity_warnings(store, commit, found)
    if as_json:
        _emit_json(
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


@app.command()
@_guard
def log(
    repo: RepoOption = None,
    at: AtOption = None,
    limit: Annotated[int, typer.Option("-n", "--limit", min=1, help="At most this many commits.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """The publication record: main's first-parent history, newest first, with sources and counts."""
    store = _open(repo)
    commit = store.resolve(at) if at else store.head()
    chain = store.first_parents(commit)[:limit] if commit else []
    entries = []
    for current in chain:
        info = store.commit_info(current)
        parent = info.parents[0] if info.parents else None
        added = sum(1 for change in store.diff(parent, current) if change.status == "added")
        entries.append((info, added))
    if as_json:
        _emit_json(
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


@import_app.command("kernelindex-export")
@_guard
def import_kernelindex_export(
    export: Annotated[Path, typer.Argument(help="The catalog export, a .jsonl.zst file.")],
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import the upstream catalog export: one commit per source; a second import changes nothing."""
    from registry.importers import import_export  # importers load only for an import (issue 14: a server's memory)

    store = _open(repo)
    started = time.perf_counter()
    with _progress(not as_json) as progress:
        results = import_export(store, export, progress)
    _report_import(results, time.perf_counter() - started, as_json)


@import_app.command("kernelindex-seeds")
@_guard
def import_kernelindex_seeds(
    directory: Annotated[Path, typer.Argument(help="A directory of run pages (*.txt) and manifests/.")],
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import KernelIndex run pages (bundles and reconstructed implementations), dated as published."""
    from registry.importers import import_seed_pages

    store = _open(repo)
    started = time.perf_counter()
    results = import_seed_pages(store, directory)
    _report_import(results, time.perf_counter() - started, as_json)


def _report_import(results: list[registry.AddResult], seconds: float, as_json: bool) -> None:
    if as_json:
        _emit_json(
            {
                "commits": [r.commit for r in results if r.commit],
                "added": sum(len(r.added) for r in results),
                "unchanged": sum(len(r.unchanged) for r in results),
                "seconds": round(seconds, 3),
            }
        )
        return
    for result in results:
        if result.commit:
            typer.echo(
                f"commit {result.commit}: +{len(result.added)} manifests ({len(result.unchanged)} already there)"
            )
    added = sum(len(r.added) for r in results)
    if not added:
        typer.echo("nothing new: every manifest is already published")
    typer.echo(f"done in {seconds:.1f} s")


@app.command()
@_guard
def serve(
    repo: RepoOption = None,
    host: Annotated[str | None, typer.Option(help="Interface to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=0, max=65535, help="Port (default 8000).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes (default 1).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Public URL of links (default: root-relative).")] = None,
    poll: Annotated[float | None, typer.Option(help="Seconds between checks of main (default 2).")] = None,
    trust_root: Annotated[
        Path | None,
        typer.Option(help="The operator's pinned maintainers policy (default $KERNELINDEX_TRUST_ROOT)."),
    ] = None,
    mirror: Annotated[
        str | None,
        typer.Option(help="Serve a replica of this canonical repository (cloned to --repo, kept fresh by git fetch)."),
    ] = None,
    pid_file: Annotated[
        Path | None, typer.Option(help="Write the serving process's id here (SIGHUP it for a zero-downtime restart).")
    ] = None,
) -> None:
    """Serve the registry over HTTP: GraphQL at /graphql (GraphiQL in a browser), permalinks, /healthz."""
    import os

    import uvicorn

    settings = _settings()
    path = _repo_path(repo).resolve()
    mirror_url = mirror or settings.mirror_url
    if mirror_url:
        from registry.mirror import Mirror

        if Mirror(mirror_url, path).ensure():  # the first start of a replica clones (docs/deploy.md)
            _err(f"kernelindex: cloned {mirror_url} into {path}")
    registry.GitStore(path)  # fail here, with a clear line, rather than in every worker
    chosen = {
        "KERNELINDEX_REPO": str(path),
        "KERNELINDEX_HOST": host or settings.host,
        "KERNELINDEX_PORT": str(settings.port if port is None else port),
        "KERNELINDEX_WORKERS": str(workers or settings.workers),
        "KERNELINDEX_POLL_SECONDS": str(settings.poll_seconds if poll is None else poll),
    }
    if base_url or settings.base_url:
        chosen["KERNELINDEX_BASE_URL"] = base_url or settings.base_url or ""
    if trust_root is not None or settings.trust_root is not None:
        root = (trust_root or settings.trust_root or Path()).resolve()
        registry.TrustChain.check_root(_read_trust_root(root))  # a bad root fails here, with a clear line
        chosen["KERNELINDEX_TRUST_ROOT"] = str(root)
    if mirror_url:
        chosen["KERNELINDEX_MIRROR_URL"] = mirror_url
    os.environ.update(chosen)  # the workers build their app from the environment (api.app:app)
    final = Settings.from_env()
    options: dict[str, Any] = {
        "log_level": "info" if final.debug else "warning",
        "access_log": final.debug,
        "proxy_headers": True,
    }
    if final.workers > 1:
        _err(f"kernelindex: serving {path} on http://{final.host}:{final.port}/graphql ({final.workers} worker(s))")
        uvicorn.run("api.app:app", host=final.host, port=final.port, workers=final.workers, **options)
        return
    from api.app import app as application
    from api.handover import Draining, HandoverServer, listening_socket

    draining = Draining(application)
    config = uvicorn.Config(draining, host=final.host, port=final.port, lifespan="on", **options)
    listener = listening_socket(config, final.listen_fd)
    server = HandoverServer(
        config,
        draining,
        warm=application.state.server.serving,
        predecessor=final.handover_from,
        pid_file=pid_file.resolve() if pid_file else None,
    )
    if final.handover_from is None:
        _err(f"kernelindex: serving {path} on http://{final.host}:{final.port}/graphql (SIGHUP: hand over)")
    server.run(sockets=[listener])


@app.command()
@_guard
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
    from registry.export import FORMATS, TAR_FORMAT, plan_export, tar_name, write_export
    from registry.snapshots import Snapshots

    if fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r}: expected {' or '.join(FORMATS)}", param_hint="--format")
    started = time.perf_counter()
    snapshots = Snapshots(_open(repo).path, trust_root=_read_trust_root(None))
    snapshots.load()
    graph = snapshots.at(at)
    plan = plan_export(snapshots.store(), graph)
    name = tar_name(graph.commit, graph.committed_at) if fmt == TAR_FORMAT else plan.name
    target = output / name if output.is_dir() else output
    written = write_export(plan, target, fmt)
    seconds = time.perf_counter() - started
    if as_json:
        _emit_json(
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


@app.command()
@_guard
def mcp(
    repo: RepoOption = None,
    base_url: Annotated[
        str | None, typer.Option(help="Where the registry is served, for permalinks (default $KERNELINDEX_BASE_URL).")
    ] = None,
) -> None:
    """Serve the MCP tools over stdio (for an assistant's MCP configuration); stdout is the protocol."""
    import datetime as dt

    from api.mcp_server import run_stdio
    from registry.snapshots import Snapshots

    settings = _settings()
    snapshots = Snapshots(_open(repo).path, trust_root=_read_trust_root(None))
    run_stdio(snapshots, base_url or settings.base_url, lambda: dt.datetime.now(dt.UTC).date())


@app.command()
@_guard
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

    if _kinds(kind) != ("BenchmarkRun",):
        raise typer.BadParameter(f"{kind!r}: only a BenchmarkRun is cited", param_hint="--kind")
    if fmt.upper() not in ("TEXT", "BIBTEX", "CSL_JSON"):
        raise typer.BadParameter(f"{fmt!r}: expected TEXT, BIBTEX or CSL_JSON", param_hint="--format")
    settings = _settings()
    root = (base_url or settings.base_url or f"http://{settings.host}:{settings.port}").rstrip("/")
    snapshots = Snapshots(_repo_path(repo), trust_root=_read_trust_root(None))
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


def main() -> None:
    """Entry point: no traceback reaches a user unless KERNELINDEX_DEBUG is set."""
    try:
        app()
    except KeyboardInterrupt:
        _err("kernelindex: interrupted")
        raise SystemExit(130) from None
    except Exception as exc:  # the last line of defence: report, never dump a traceback
        if _settings().debug:
            raise
        _err(f"kernelindex: internal error: {type(exc).__name__}: {exc} (set KERNELINDEX_DEBUG=1 for details)")
        raise SystemExit(1) from None


from api import cli_import  # noqa: E402, F401  (registers the source importers on `import`)

if __name__ == "__main__":
    main()

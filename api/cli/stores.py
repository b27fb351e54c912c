"""The registry a command works on (`--repo`, else the environment's), the settings it reads, and the
manifest files and kinds it is given."""

from __future__ import annotations

from pathlib import Path

import typer

import registry
from api.cli.console import err
from api.settings import Settings

__all__ = ["kinds", "open_store", "read_manifests", "read_settings", "read_trust_root", "repo_path", "try_open"]


def read_settings() -> Settings:
    """The environment's settings; a malformed one is a usage error (exit 2) that names the variable."""
    try:
        return Settings.from_env()
    except ValueError as exc:
        err(f"kernelindex: {exc}")
        raise typer.Exit(2) from None


def repo_path(repo: Path | None) -> Path:
    return repo if repo is not None else read_settings().repo_path


def open_store(repo: Path | None) -> registry.GitStore:
    path = repo_path(repo)
    if not path.exists():
        raise registry.StoreNotFound(str(path), "no such directory; create one with `kernelindex init`")
    return registry.GitStore(path)


def try_open(repo: Path | None) -> registry.GitStore | None:
    """The registry to check references against: the one named (which must exist), else the
    default one if there is one."""
    if repo is not None:
        return open_store(repo)
    path = repo_path(None)
    try:
        return registry.GitStore(path) if path.exists() else None
    except registry.StoreNotFound:
        return None


def read_trust_root(path: Path | None) -> bytes | None:
    """The pinned trust root: `--trust-root`, else $KERNELINDEX_TRUST_ROOT, else none."""
    found = read_settings()
    if path is None:
        return found.trust_root_policy()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint="--trust-root") from None


def read_manifests(files: list[Path]) -> list[tuple[str, registry.Manifest]]:
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


def kinds(kind: str | None) -> tuple[str, ...] | None:
    """`--kind`, any case, as the kind's name (`benchmarkrun` -> `BenchmarkRun`)."""
    if kind is None:
        return None
    from registry.kinds import KINDS

    match = [name for name in KINDS if name.lower() == kind.strip().lower()]
    if not match:
        raise typer.BadParameter(f"{kind!r}: expected one of {', '.join(sorted(KINDS))}", param_hint="--kind")
    return (match[0],)

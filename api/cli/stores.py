"""The registry a command works on (`--repo`, else the environment's), the settings it reads, and the
manifest files and kinds it is given (each file one manifest, a YAML stream of them, or a submission bundle)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kernelindex import registry
from kernelindex.cli.console import err
from kernelindex.core.settings import Settings

if TYPE_CHECKING:
    from kernelindex.registry.bundle import Bundle
    from kernelindex.registry.snapshots import Snapshots

__all__ = [
    "Files",
    "describe_registry",
    "kinds",
    "open_snapshots",
    "open_store",
    "read_files",
    "read_manifests",
    "read_settings",
    "read_trust_root",
    "repo_path",
    "try_open",
    "writable_store",
]


def read_settings() -> Settings:
    """The environment's settings; a malformed one is a usage error (exit 2) that names the variable."""
    try:
        return Settings.from_env()
    except ValueError as exc:
        err(f"kernelindex: {exc}")
        raise typer.Exit(2) from None


def repo_path(repo: Path | None) -> Path:
    return repo if repo is not None else read_settings().repo_path


def describe_registry(repo: Path | None) -> str:
    """Which registry a command reads and how it was found, in words: the line `serve` prints at start.

    The order: `--repo`, `$KERNELINDEX_REPO`, `./manifests.git`, the working directory when it is a clone of a
    manifests repository, else the embedded registry (a clone's own `manifests.git`, or the wheel's copy)."""
    if repo is not None:
        return f"{repo} (--repo)"
    settings = read_settings()
    found = {
        "embedded": "the embedded registry",
        "the working directory": "the clone in the working directory",
    }.get(settings.repo_origin, settings.repo_origin)
    return f"{settings.repo_path} ({found})"


def writable_store(repo: Path | None) -> registry.GitStore:
    """The registry a command writes to: never the embedded one unless it is named (`--repo`): a write meant
    for a contributor's clone must not land in the registry shipped with the package.

    Raises:
        typer.BadParameter: no registry was named and the embedded one is the default.
    """
    if repo is None and read_settings().repo_origin == "embedded":
        raise typer.BadParameter(
            "no registry to write to: run inside a clone of a manifests repository, or name one with --repo "
            "or KERNELINDEX_REPO (the embedded registry is only read)",
            param_hint="--repo",
        )
    return open_store(repo)


def open_store(repo: Path | None) -> registry.GitStore:
    path = repo_path(repo)
    if not path.exists():
        raise registry.StoreNotFound(str(path), "no such directory; create one with `kernelindex init`")
    return registry.GitStore(path)


def open_snapshots(path: Path) -> Snapshots:
    """The graphs of the registry at `path`, as a server keeps them: the pinned trust root, and the registry's cache
    folder under $KERNELINDEX_CACHE_DIR (else the user's) for its integrity record."""
    from kernelindex.registry.snapshots import Snapshots

    return Snapshots(path, trust_root=read_trust_root(None), cache_root=read_settings().cache_dir)


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


@dataclass(frozen=True, slots=True)
class Files:
    """The manifests of the files a command was given, read as one change: every entry of every file."""

    bundles: tuple[Bundle, ...]

    @property
    def entries(self) -> list[tuple[str, registry.Manifest]]:
        """(where, manifest): the file, and the entry in it for a bundle or a stream (`a.yaml (runs[0].run)`)."""
        return [
            (f"{bundle.source} ({entry.where})" if entry.where else bundle.source, entry.manifest)
            for bundle in self.bundles
            for entry in bundle.entries
        ]

    def sourced(self) -> list[tuple[str, registry.Manifest]]:
        """What `validate.check_additions` and `GitStore.add` take; `locate` reads their problems back."""
        return [pair for bundle in self.bundles for pair in bundle.sourced()]

    def locate(self, problems: Sequence[registry.Problem]) -> list[registry.Problem]:
        """Problems of `sourced()` entries as places in the files (`bundle.yaml: $.runs[0].run.spec...`)."""
        located = list(problems)
        for bundle in self.bundles:
            located = bundle.locate(located)
        return located


def read_files(files: list[Path], projects: Collection[str] | None = None) -> Files:
    """Read every file (one manifest, a YAML stream, or a submission bundle whose implementations name their
    project by slug among `projects`, the registry's, or None without one), collecting every problem of every
    file before failing.

    Raises:
        kernelindex.registry.InvalidManifest: every problem, each located in its file.
    """
    from kernelindex.registry.bundle import read_bundle

    bundles: list[Bundle] = []
    problems: list[registry.Problem] = []
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            problems.append(registry.Problem(str(file), "", f"cannot read: {exc.strerror or exc}"))
            continue
        try:
            bundles.append(read_bundle(data, str(file), projects=projects))
        except registry.InvalidManifest as exc:
            problems.extend(exc.problems)
    if problems:
        raise registry.InvalidManifest(problems)
    return Files(tuple(bundles))


def read_manifests(files: list[Path]) -> list[tuple[str, registry.Manifest]]:
    """Every manifest of every file (as `read_files`, without a registry), with where it is."""
    return read_files(files).entries


def kinds(kind: str | None) -> tuple[str, ...] | None:
    """`--kind`, any case, as the kind's name (`benchmarkrun` -> `BenchmarkRun`)."""
    if kind is None:
        return None
    from kernelindex.registry.kinds import KINDS

    match = [name for name in KINDS if name.lower() == kind.strip().lower()]
    if not match:
        raise typer.BadParameter(f"{kind!r}: expected one of {', '.join(sorted(KINDS))}", param_hint="--kind")
    return (match[0],)

"""Fixtures: a guard that keeps every test away from the real manifests.git, fresh stores, the CLI runner, the
project built as a wheel."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import DATA, EMBEDDED_REPO, basic_scenario, commit_manifests
from signing import Key, make_key
from typer.testing import CliRunner
from wheels import Dists, build_dists

from kernelindex import registry


def pytest_configure(config: pytest.Config) -> None:
    """The tests read the project's data (upstream examples and fixtures, seed pages, the corpus export)
    under data/: say so plainly when a checkout lacks it (a sparse or partial clone)."""
    if not (DATA / "kernelindex" / "examples").is_dir() or not (DATA / "seeds").is_dir():
        raise pytest.UsageError(f"the tests need the project's data at {DATA} (not found)")


def _fingerprint(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and mtime: any write to the repository changes it."""
    found: dict[str, tuple[int, int]] = {}
    for folder, _, files in os.walk(root):
        for name in files:
            stat = (Path(folder) / name).stat()
            found[str(Path(folder, name).relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.fixture(scope="session", autouse=True)
def _embedded_registry_untouched() -> Iterator[None]:
    """Fail the session if any test wrote to the committed registry (refs, objects, config...)."""
    before = _fingerprint(EMBEDDED_REPO)
    yield
    after = _fingerprint(EMBEDDED_REPO)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"a test modified {EMBEDDED_REPO}: {changed[:10]}"


@pytest.fixture(autouse=True)
def _no_default_registry(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test (and every subprocess it starts) sees a default registry that does not exist:
    the CLI and settings can only reach a repository a test names with --repo or a path. Their caches go to a
    user cache folder of the session's (`$XDG_CACHE_HOME`), never the user's own."""
    nowhere = tmp_path_factory.getbasetemp() / "no-registry-here" / "manifests.git"
    monkeypatch.setenv("KERNELINDEX_REPO", str(nowhere))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "user-cache"))
    monkeypatch.delenv("KERNELINDEX_CACHE_DIR", raising=False)
    monkeypatch.delenv("KERNELINDEX_EXPORT_CACHE", raising=False)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("KERNELINDEX_DEBUG", raising=False)


@pytest.fixture
def store(tmp_path: Path) -> registry.GitStore:
    """An empty registry in tmp_path."""
    return registry.GitStore.init(tmp_path / "manifests.git")


@pytest.fixture
def basic_store(store: registry.GitStore) -> registry.GitStore:
    """A registry holding `helpers.basic_scenario()` in one commit."""
    commit_manifests(store, basic_scenario().docs)
    return store


@pytest.fixture(scope="session")
def embedded() -> registry.GitStore:
    """The committed registry, for reading only."""
    return registry.GitStore(EMBEDDED_REPO)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Key]:
    """Real SSH keys: alice, bob, carol (maintainers in the tests that list them) and mallory."""
    directory = tmp_path_factory.mktemp("keys")
    return {name: make_key(directory, f"{name}@example.com") for name in ("alice", "bob", "carol", "mallory")}


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """The project's sdist and wheel, built once a session without network (tests/wheels.py)."""
    return build_dists(tmp_path_factory.mktemp("dists"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The fault and abuse suite's counts (tests/probes.py), when any probe ran."""
    from probes import TALLY

    if not TALLY:
        return
    terminalreporter.section("fault and abuse probes")
    terminalreporter.write_line(f"{'family':<44}{'tried':>7}{'refused':>9}{'failed':>8}")
    for family, (tried, refused) in sorted(TALLY.items()):
        terminalreporter.write_line(f"{family:<44}{tried:>7}{refused:>9}{tried - refused:>8}")

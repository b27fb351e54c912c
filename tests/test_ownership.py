"""Repositories another user owns. One somebody names (`--repo`, `KERNELINDEX_REPO`) is refused as git refuses it,
with the cause and the remedy, and the remedy works; the embedded registry, the package's own data, is read whoever
owns it, and vouching for it vouches for nothing else. (tests/test_wheel.py serves an installed wheel as a user who
did not install it.)"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT
from typer.testing import CliRunner
from users import give_away, needs_root, unused_ids

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry import embedded
from kernelindex.registry.embedded import git_command


@pytest.fixture
def foreign(basic_store: registry.GitStore, tmp_path: Path) -> tuple[Path, int]:
    """A copy of `basic_store` that belongs to a user id no account has."""
    copy = tmp_path / "theirs" / "manifests.git"
    shutil.copytree(basic_store.path, copy, symlinks=True)
    (uid,) = unused_ids(1)
    give_away(copy.parent, uid)
    return copy, uid


def _refusal(path: Path, uid: int) -> str:
    return (
        f"kernelindex: registry not opened: {path}: it belongs to uid {uid} and this runs as root (uid 0), and git and "
        f"libgit2 refuse a repository another user owns; if you trust it, name it a safe directory: "
        f"git config --global --add safe.directory {path}\n"
    )


@needs_root
@pytest.mark.parametrize("command", [["log"], ["show", "run-a1"], ["runs"]])
def test_a_named_registry_of_another_user_is_refused_with_the_cause_and_the_remedy(
    foreign: tuple[Path, int], runner: CliRunner, command: list[str]
) -> None:
    path, uid = foreign
    result = runner.invoke(app, [*command, "--repo", str(path)])
    assert result.exit_code == 1, result.output
    assert result.stderr == _refusal(path, uid)


@needs_root
def test_the_environments_registry_of_another_user_is_refused_by_serve_before_it_listens(
    foreign: tuple[Path, int], tmp_path: Path
) -> None:
    path, uid = foreign
    env = {**os.environ, "KERNELINDEX_REPO": str(path), "KERNELINDEX_PORT": "0", "HOME": str(tmp_path)}
    refused = subprocess.run(
        [sys.executable, "-m", "kernelindex.cli", "serve"],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] + "\n" == _refusal(path, uid)


@needs_root
def test_the_remedy_it_gives_opens_the_registry(
    basic_store: registry.GitStore, foreign: tuple[Path, int], tmp_path: Path
) -> None:
    """The command the refusal ends with, run as given (in a home of the test's), makes git and libgit2 open it."""
    path, uid = foreign
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    remedy = _refusal(path, uid).rstrip("\n").rsplit(": ", 1)[1]
    assert shlex.split(remedy)[:4] == ["git", "config", "--global", "--add"]
    subprocess.run(shlex.split(remedy), env=env, check=True)
    logged = subprocess.run(
        [sys.executable, "-m", "kernelindex.cli", "log", "--repo", str(path), "-n", "1"],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert logged.returncode == 0, logged.stderr
    assert logged.stdout.startswith(str(basic_store.head())[:12])


@needs_root
def test_the_embedded_registry_is_read_whoever_owns_it(
    foreign: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named the embedded registry, the foreign copy opens, and git reads it; right after, another user's repository
    is refused again: the owner check was off for that one open only."""
    path, _ = foreign
    other = tmp_path / "also-theirs" / "manifests.git"
    shutil.copytree(path, other, symlinks=True)
    give_away(other.parent, unused_ids(2)[1])
    with pytest.raises(registry.StoreNotOwned):
        registry.GitStore(path)
    monkeypatch.setattr(embedded, "EMBEDDED_REPO", path)
    store = registry.GitStore(f"{path}/")  # however it is named
    head = store.head()
    assert head is not None
    listed = list(store.entries(head))
    # Through git's processes, the safe directory named: `ls-tree | cat-file --batch`, then `cat-file --batch`.
    streamed = list(store.manifests_with_bytes(head))
    assert sorted(oid for _, _, oid, _ in streamed) == sorted(entry.oid for entry in listed) and len(listed) == 9
    oids = [entry.oid for entry in listed]
    assert dict(zip(oids, store._cat_file(oids), strict=True)) == {oid: data for _, _, oid, data in streamed}
    with pytest.raises(registry.StoreNotOwned):
        registry.GitStore(other)


def test_git_is_told_the_embedded_registry_is_safe_and_nothing_else(tmp_path: Path) -> None:
    assert git_command(embedded.EMBEDDED_REPO) == ["git", "-c", f"safe.directory={embedded.EMBEDDED_REPO}"]
    assert git_command(tmp_path / "manifests.git") == ["git"]

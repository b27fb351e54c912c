"""Each registry's caches (the warm start, the integrity record, the exports) live in one folder of their own, under the
user's cache folder or the operator's `KERNELINDEX_CACHE_DIR`: never beside the repository, one folder per registry
however it is reached, two registries never in one."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest
from helpers import basic_scenario, commit_manifests

from kernelindex import registry
from kernelindex.core.settings import Settings
from kernelindex.registry.cache_dir import cache_dir, make_folder, user_cache_root
from kernelindex.registry.export_cache import exports_path
from kernelindex.registry.graphcache import cache_path
from kernelindex.registry.integrity import record_path
from kernelindex.registry.snapshots import Snapshots


def test_the_user_cache_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """On Linux the user's cache folder is `$XDG_CACHE_HOME`, else `~/.cache` (the XDG base directory rule)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_root() == tmp_path / "xdg" / "kernelindex"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache_root() == tmp_path / "home" / ".cache" / "kernelindex"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # set but empty: unset
    assert user_cache_root() == tmp_path / "home" / ".cache" / "kernelindex"


def test_a_registry_is_named_by_its_resolved_path(tmp_path: Path) -> None:
    repo = tmp_path / "srv" / "manifests.git"
    repo.mkdir(parents=True)
    digest = hashlib.sha256(str(repo.resolve()).encode()).hexdigest()
    assert cache_dir(repo, tmp_path / "root") == tmp_path / "root" / f"manifests.git-{digest[:16]}"
    assert cache_dir(repo) == user_cache_root() / f"manifests.git-{digest[:16]}"


def test_one_registry_however_reached_has_one_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "srv" / "manifests.git"
    repo.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "srv")
    monkeypatch.chdir(tmp_path / "srv")
    root = tmp_path / "root"
    reached = [
        repo,
        link / "manifests.git",
        Path("manifests.git"),
        Path(f"{repo}/"),
        tmp_path / "srv" / ".." / "srv" / "manifests.git",
    ]
    assert {cache_dir(path, root) for path in reached} == {cache_dir(repo, root)}


def test_two_registries_have_two_folders(tmp_path: Path) -> None:
    """The same last name in two places, and names that differ only where a file name may not (all `_` once made
    safe): the digest tells them apart."""
    root = tmp_path / "root"
    pairs = [
        (tmp_path / "a" / "manifests.git", tmp_path / "b" / "manifests.git"),
        (tmp_path / "x y", tmp_path / "x:y"),
        (tmp_path / "reg", tmp_path / "reg.git"),
    ]
    for one, other in pairs:
        assert cache_dir(one, root) != cache_dir(other, root), (one, other)
    assert cache_dir(tmp_path / "x y", root).name.startswith("x_y-")
    assert cache_dir(Path("/"), root).name.startswith("registry-")  # the root folder has no name


def test_every_cache_of_a_registry_is_in_its_folder(tmp_path: Path) -> None:
    repo, root = tmp_path / "manifests.git", tmp_path / "root"
    folder = cache_dir(repo, root)
    assert [cache_path(repo, root), record_path(repo, root), exports_path(repo, root)] == [
        folder / "graphcache",
        folder / "integrity",
        folder / "exports",
    ]


def test_the_integrity_record_goes_to_the_cache_folder_never_beside(
    basic_store: registry.GitStore, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    head = basic_store.head()
    beside = sorted(p.name for p in basic_store.path.parent.iterdir())
    root = tmp_path_factory.mktemp("operator") / "cache"
    snapshots = Snapshots(basic_store.path, cache_root=root)
    snapshots.load()
    assert snapshots.status.serving == head
    (folder,) = root.iterdir()
    assert folder == cache_dir(basic_store.path, root) and [p.name for p in folder.iterdir()] == ["integrity"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in basic_store.path.parent.iterdir()) == beside
    # A second registry of the same name elsewhere keeps its own record.
    other = registry.GitStore.init(tmp_path / "elsewhere" / "manifests.git")
    commit_manifests(other, basic_scenario().docs)
    again = Snapshots(other.path, cache_root=root)
    again.load()
    assert again.status.serving == other.head()
    assert sorted(p.name for p in root.iterdir()) == sorted([folder.name, cache_dir(other.path, root).name])


def test_an_unusable_cache_folder_still_serves(basic_store: registry.GitStore, tmp_path: Path) -> None:
    """A file where the cache root should be (root ignores file permissions, and CI runs as root): nothing is
    recorded, and the registry is served all the same."""
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"a file\n")
    snapshots = Snapshots(basic_store.path, cache_root=blocker)
    snapshots.load()
    assert snapshots.status.serving == basic_store.head()
    assert blocker.read_bytes() == b"a file\n"
    with pytest.raises(FileExistsError):
        make_folder(blocker / "registry")


def test_the_cache_root_is_read_from_the_environment(tmp_path: Path) -> None:
    assert Settings.from_env({}, cwd=tmp_path).cache_dir is None
    assert Settings.from_env({"KERNELINDEX_CACHE_DIR": ""}, cwd=tmp_path).cache_dir is None  # set but empty: unset
    absent = tmp_path / "not" / "yet"
    assert Settings.from_env({"KERNELINDEX_CACHE_DIR": str(absent)}, cwd=tmp_path).cache_dir == absent
    file = tmp_path / "a-file"
    file.write_text("")
    with pytest.raises(ValueError, match=f"^KERNELINDEX_CACHE_DIR='{file}': expected a folder"):
        Settings.from_env({"KERNELINDEX_CACHE_DIR": str(file)}, cwd=tmp_path)


def test_the_tests_never_write_to_the_users_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """tests/conftest.py points `$XDG_CACHE_HOME` at the session's folder: a run leaves the user's cache alone."""
    assert user_cache_root().is_relative_to(tmp_path_factory.getbasetemp())

"""`ObjectReader` alone, over a repository git wrote: every way it reads (libgit2, one `git cat-file --batch`,
`git ls-tree` piped into `git cat-file`) answers what git answers, and says what it cannot read."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from helpers import commit_manifests, make_operation

from kernelindex import registry
from kernelindex.registry.errors import RevisionNotFound, StoreCorrupt
from kernelindex.registry.git_binding import open_repository
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_objects import ObjectReader

_BATCH = 2048  # the reader's documented switch: from this many blobs on, one `git cat-file --batch` reads them


def _reader(git_dir: Path) -> ObjectReader:
    return ObjectReader(open_repository(str(git_dir)), GitCommand(git_dir))


def _git(git_dir: Path, *args: str) -> bytes:
    env = {**os.environ, "GIT_DIR": str(git_dir)}
    return subprocess.run(["git", *args], capture_output=True, env=env, check=True).stdout


@pytest.fixture
def basic(basic_store: registry.GitStore) -> tuple[ObjectReader, str, Path]:
    head = basic_store.head()
    assert head is not None
    return _reader(basic_store.git_dir), head, basic_store.git_dir


def test_the_manifests_of_a_commit_are_the_json_files_git_lists(basic: tuple[ObjectReader, str, Path]) -> None:
    reader, head, git_dir = basic
    listing = _git(git_dir, "ls-tree", "-r", "--format=%(objectname) %(path)", head).decode()
    listed = {path: oid for oid, path in (line.split(" ") for line in listing.splitlines()) if path.endswith(".json")}
    entries = list(reader.entries(head))
    assert {entry.path: entry.oid for entry in entries} == listed
    streamed = list(reader.manifests_with_bytes(head))
    assert {(kind, digest, oid) for kind, digest, oid, _ in streamed} == {(e.kind, e.digest, e.oid) for e in entries}
    for _, _, oid, data in streamed:
        assert data == _git(git_dir, "cat-file", "blob", oid)
    assert list(reader.manifests_with_bytes(head, folders=["no-such-folder"])) == []
    first = entries[0]
    assert reader.find_entry(head, first.digest) == first
    assert reader.find_path(head, first.path) == (first.oid, 0o100644)
    assert reader.find_path(head, "no/such/path") is None


def test_blobs_are_read_in_process_below_the_batch_and_by_git_from_it(tmp_path: Path) -> None:
    """The two ways say a missing blob in their own words: which one read is seen from outside, with no mock."""
    git_dir = tmp_path / "blobs.git"
    repo = pygit2.init_repository(str(git_dir), bare=True)
    oids = [str(repo.create_blob(f"blob {index}")) for index in range(_BATCH)]
    reader = _reader(git_dir)
    assert list(reader.read_blobs(oids)) == [f"blob {index}".encode() for index in range(_BATCH)]
    missing = "0" * 39 + "1"
    with pytest.raises(StoreCorrupt, match=r"missing blob$"):  # libgit2, in this process
        list(reader.read_blobs([*oids[: _BATCH - 2], missing]))
    with pytest.raises(StoreCorrupt, match=r"cannot read the blob: missing$"):  # git cat-file --batch
        list(reader.read_blobs([*oids[: _BATCH - 1], missing]))


def test_what_is_not_there_is_said(basic: tuple[ObjectReader, str, Path]) -> None:
    reader, head, _ = basic
    tree = reader.tree_id(head)
    with pytest.raises(StoreCorrupt, match="missing blob"):
        reader.read_blob(tree)  # a tree, not a blob
    with pytest.raises(StoreCorrupt, match="not a tree"):
        reader.tree_data(next(reader.entries(head)).oid)
    with pytest.raises(RevisionNotFound, match="not a commit"):
        reader.commit(tree)
    assert reader.tree_size(tree) == len(reader.tree_data(tree))
    assert reader.tree_size("0" * 40) is None


def test_names_of_a_kind_are_read_once_per_tree(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "names.git")
    first = commit_manifests(store, [make_operation("alpha")])
    reader = _reader(store.git_dir)
    names = reader.names_of_kind(first, "OperationSpec")
    assert set(names) == {"alpha"}
    assert reader.names_of_kind(first, "OperationSpec") is names  # cached by the kind's folder tree
    second = commit_manifests(store, [make_operation("beta")], 1_700_000_100)
    assert set(reader.names_of_kind(second, "OperationSpec")) == {"alpha", "beta"}
    assert reader.names_of_kind(second, "BenchmarkRun") == {}

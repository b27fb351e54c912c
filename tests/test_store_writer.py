"""`ObjectWriter` alone: loose objects and one `git fast-import` pack make the commit git's own plumbing makes of
the same files, neither moves a ref, and a bulk write clears the private refs a killed writer left."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from helpers import TEST_TIME, commit_meta

from kernelindex.registry.git_binding import open_repository
from kernelindex.registry.provenance import CommitMeta
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_lock import WriterLock
from kernelindex.registry.store_objects import ObjectReader
from kernelindex.registry.store_revisions import Revisions
from kernelindex.registry.store_writer import INCOMING, ObjectWriter

_FILES = {
    "operations/ab/" + "ab" + "1" * 62 + ".json": b'{"a":1}\n',
    "operations/cd/" + "cd" + "2" * 62 + ".json": b'{"b":2}\n',
    "policy/maintainers": b"maintainer@example.com ssh-ed25519 AAAA\n",
}


@pytest.fixture
def git_dir(tmp_path: Path) -> Path:
    path = tmp_path / "writer.git"
    pygit2.init_repository(str(path), bare=True, initial_head="main")
    return path


def _writer(git_dir: Path) -> tuple[ObjectWriter, WriterLock]:
    repo, git, lock = open_repository(str(git_dir)), GitCommand(git_dir), WriterLock(git_dir)
    objects = ObjectReader(repo, git)
    return ObjectWriter(repo, git, objects, Revisions(repo, git, objects), lock), lock


def _git(git_dir: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> str:
    full = {**os.environ, "GIT_DIR": str(git_dir), **(env or {})}
    return subprocess.run(["git", *args], input=stdin, capture_output=True, env=full, check=True).stdout.decode()


def _plumbing(git_dir: Path, files: dict[str, bytes], meta: CommitMeta, parent: str | None) -> str:
    """The commit git's own plumbing makes of `files` over `parent`: an index, `write-tree`, `commit-tree`."""
    env = {"GIT_INDEX_FILE": str(git_dir / "plumbing-index")}
    if parent:
        _git(git_dir, "read-tree", parent, env=env)
    else:
        _git(git_dir, "read-tree", "--empty", env=env)
    for path, data in files.items():
        blob = _git(git_dir, "hash-object", "-w", "--stdin", stdin=data).strip()
        _git(git_dir, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = _git(git_dir, "write-tree", env=env).strip()
    who = {
        "GIT_AUTHOR_NAME": meta.author.name,
        "GIT_AUTHOR_EMAIL": meta.author.email,
        "GIT_AUTHOR_DATE": f"{meta.author.time} +0000",
        "GIT_COMMITTER_NAME": meta.committer.name,
        "GIT_COMMITTER_EMAIL": meta.committer.email,
        "GIT_COMMITTER_DATE": f"{meta.committer.time} +0000",
    }
    parents = ["-p", parent] if parent else []
    return _git(git_dir, "commit-tree", tree, *parents, stdin=meta.message.encode(), env=who).strip()


def test_loose_and_packed_writes_make_the_commit_git_makes_and_move_no_ref(git_dir: Path) -> None:
    writer, lock = _writer(git_dir)
    first_meta, second_meta = commit_meta(TEST_TIME), commit_meta(TEST_TIME + 1)
    assert first_meta.author.offset == 0 and first_meta.committer.offset == 0  # the plumbing above writes +0000
    loose = writer.write_loose(None, dict(list(_FILES.items())[:1]), first_meta)
    assert loose == _plumbing(git_dir, dict(list(_FILES.items())[:1]), first_meta, None)
    with lock.hold():
        packed = writer.write_packed(loose, dict(list(_FILES.items())[1:]), second_meta)
    assert packed == _plumbing(git_dir, dict(list(_FILES.items())[1:]), second_meta, loose)
    assert _git(git_dir, "for-each-ref") == ""  # neither write moved or left a ref


def test_a_bulk_write_outside_the_writer_lock_is_refused(git_dir: Path) -> None:
    writer, _ = _writer(git_dir)
    with pytest.raises(AssertionError, match=r"^only under the writer lock$"):
        writer.write_packed(None, _FILES, commit_meta())


def test_a_killed_bulk_writers_private_ref_is_forgotten_by_the_next_bulk_write(git_dir: Path) -> None:
    """A writer killed between `git fast-import` and deleting its private ref leaves that ref, which keeps its
    objects alive: the next bulk write, holding the lock (no live writer has one then), deletes it."""
    writer, lock = _writer(git_dir)
    abandoned = writer.write_loose(None, _FILES, commit_meta())
    left = f"{INCOMING}host-1-0123456789ab"
    _git(git_dir, "update-ref", left, abandoned)
    with lock.hold():
        writer.write_packed(None, {"a/b.json": b"{}"}, commit_meta(TEST_TIME + 5))
    assert _git(git_dir, "for-each-ref") == ""

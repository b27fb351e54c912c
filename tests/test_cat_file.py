"""`CatFile`: one `git cat-file --batch` kept between reads. It must answer what the object database
holds now (objects and packs written after it started included), say what it cannot read with the
store's error, and start again after a read that did not end."""

from __future__ import annotations

import subprocess

import pygit2
import pytest

from kernelindex import registry
from kernelindex.registry.cat_file import CatFile
from kernelindex.registry.errors import StoreCorrupt


def _write(repo: pygit2.Repository, texts: list[str]) -> list[str]:
    return [str(repo.odb.write(pygit2.enums.ObjectType.BLOB, text.encode())) for text in texts]


def _kept(repo: pygit2.Repository, oids: list[str]) -> None:
    """Make blobs reachable (`git repack` packs only what a ref reaches), by a commit on a branch of their own."""
    builder = repo.TreeBuilder()
    for oid in oids:
        builder.insert(oid, pygit2.Oid(hex=oid), pygit2.enums.FileMode.BLOB)
    signature = pygit2.Signature("Test", "test@example.com", 1_700_000_000, 0)
    parents = [] if repo.references.get("refs/heads/kept") is None else [repo.references["refs/heads/kept"].target]
    repo.create_commit("refs/heads/kept", signature, signature, "kept", builder.write(), parents)


def _packs(store: registry.GitStore) -> set[str]:
    return {path.name for path in (store.git_dir / "objects" / "pack").glob("*.pack")}


def _pid(reader: CatFile) -> int:
    process = reader._process
    assert process is not None
    return process.pid


def test_one_git_answers_every_read_with_what_is_written_since(store: registry.GitStore) -> None:
    repo = pygit2.Repository(str(store.git_dir))
    reader = CatFile(store.git_dir)
    first = _write(repo, ["one", "two"])
    assert list(reader.read(first, b"blob")) == [b"one", b"two"]
    started = _pid(reader)
    later = _write(repo, ["three"])  # a loose object written after git started
    assert list(reader.read([*later, *first], b"blob")) == [b"three", b"one", b"two"]
    packed = _write(repo, ["four"])
    _kept(repo, [*later, *packed])
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-d", "-q"], check=True)
    assert _packs(store)  # ... and objects moved into a pack git did not know of
    assert list(reader.read([*packed, *later], b"blob")) == [b"four", b"three"]
    assert _pid(reader) == started
    many = _write(repo, [f"blob {n}" for n in range(2000)])  # a request larger than the pipe: fed by a thread
    assert list(reader.read(many, b"blob")) == [f"blob {n}".encode() for n in range(2000)]
    assert _pid(reader) == started
    reader.close()


def test_a_git_that_may_hold_a_deleted_pack_is_started_again(store: registry.GitStore) -> None:
    """After `git repack -a -d` deletes the packs git knew of, the next read is another git's: the kept
    one would hold the deleted packs open (and their disk space)."""
    repo = pygit2.Repository(str(store.git_dir))
    reader = CatFile(store.git_dir)
    first = _write(repo, ["one"])
    _kept(repo, first)
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-d", "-q"], check=True)
    assert list(reader.read(first, b"blob")) == [b"one"]
    started, packs = _pid(reader), _packs(store)
    second = _write(repo, ["two"])
    _kept(repo, second)
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-a", "-d", "-q"], check=True)
    assert packs and not packs & _packs(store)
    assert list(reader.read([*first, *second], b"blob")) == [b"one", b"two"]
    assert _pid(reader) != started
    restarted, packs = _pid(reader), _packs(store)
    third = _write(repo, ["three"])
    _kept(repo, third)
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-d", "-q"], check=True)  # adds a pack
    assert list(reader.read([*second, *third], b"blob")) == [b"two", b"three"]
    assert _pid(reader) == restarted
    added = _packs(store) - packs
    assert added
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-a", "-q"], check=True)  # one more, of all
    for pack in added:  # a pack git found after it started goes (its objects are in the new one)
        for path in (store.git_dir / "objects" / "pack").glob(pack.removesuffix(".pack") + ".*"):
            path.unlink()
    assert list(reader.read([*third, *first], b"blob")) == [b"three", b"one"]
    assert _pid(reader) != restarted
    reader.close()


def test_what_git_cannot_read_is_a_corrupt_store_and_the_next_read_starts_again(store: registry.GitStore) -> None:
    repo = pygit2.Repository(str(store.git_dir))
    reader = CatFile(store.git_dir)
    there = _write(repo, ["a", "b", "c"])
    reader.start()
    for oids, kind in (([there[0], "0" * 40, there[2]], b"blob"), (there, b"tree")):  # missing; not a tree
        before = _pid(reader)
        with pytest.raises(StoreCorrupt, match="cannot read the"):
            list(reader.read(oids, kind))
        assert reader._process is None  # its other answers were left unread: that git is stopped
        assert list(reader.read(there, b"blob")) == [b"a", b"b", b"c"]
        assert _pid(reader) != before
    reader.close()


def test_a_read_left_early_stops_git(store: registry.GitStore) -> None:
    repo = pygit2.Repository(str(store.git_dir))
    reader = CatFile(store.git_dir)
    there = _write(repo, ["x", "y"])
    reader.start()
    process = reader._process
    assert process is not None
    reading = reader.read(there, b"blob")
    assert next(reading) == b"x"
    reading.close()
    assert process.poll() is not None
    assert list(reader.read(there, b"blob")) == [b"x", b"y"]
    reader.close()
    assert reader._process is None

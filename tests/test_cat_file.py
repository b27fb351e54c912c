"""`CatFile`: one `git cat-file --batch` kept between reads. It must answer what the object database
holds now (objects and packs written after it started included), say what it cannot read with the
store's error, and start again after a read that did not end."""

from __future__ import annotations

import subprocess

import pygit2
import pytest

import registry
from registry.cat_file import CatFile
from registry.errors import StoreCorrupt


def _write(repo: pygit2.Repository, texts: list[str]) -> list[str]:
    return [str(repo.odb.write(pygit2.enums.ObjectType.BLOB, text.encode())) for text in texts]


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
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-a", "-d", "-q"], check=True)
    packed = _write(repo, ["four"])  # ... and objects moved into a pack git did not know of
    subprocess.run(["git", "--git-dir", str(store.git_dir), "repack", "-a", "-d", "-q"], check=True)
    assert list(reader.read([*packed, *later], b"blob")) == [b"four", b"three"]
    assert _pid(reader) == started
    many = _write(repo, [f"blob {n}" for n in range(2000)])  # a request larger than the pipe: fed by a thread
    assert list(reader.read(many, b"blob")) == [f"blob {n}".encode() for n in range(2000)]
    assert _pid(reader) == started
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

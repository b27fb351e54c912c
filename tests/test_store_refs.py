"""`RefLock` alone: a ref moves only from where its caller read it, a lost race is said as such, and a git lock
that stays is reported after exactly the tries it was given."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pygit2
import pytest

from kernelindex.registry.errors import RegistryError
from kernelindex.registry.git_binding import open_repository
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_lock import WriterLock
from kernelindex.registry.store_refs import RefLock

_MAIN = "refs/heads/main"
_SIGNATURE = pygit2.Signature("Test", "test@example.com", 1_700_000_000, 0)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "refs.git"), bare=True, initial_head="main")


def _commit(repo: pygit2.Repository, message: str, parents: list[str]) -> str:
    tree = repo.TreeBuilder().write()
    return str(repo.create_commit(None, _SIGNATURE, _SIGNATURE, message, tree, [pygit2.Oid(hex=p) for p in parents]))


def _refs(repo: pygit2.Repository) -> tuple[RefLock, WriterLock]:
    git_dir = Path(repo.path)
    lock = WriterLock(git_dir)
    return RefLock(open_repository(str(git_dir)), GitCommand(git_dir), lock), lock


def _at(repo: pygit2.Repository, ref: str) -> str | None:
    found = pygit2.Repository(repo.path).references.get(ref)
    return None if found is None else str(found.target)


def test_a_ref_moves_only_from_where_it_was_read(repo: pygit2.Repository) -> None:
    refs, _ = _refs(repo)
    first = _commit(repo, "first", [])
    second, other = _commit(repo, "second", [first]), _commit(repo, "other", [first])
    assert refs.compare_and_swap(_MAIN, None, first, tries=1)  # created: it did not exist
    assert not refs.compare_and_swap(_MAIN, None, second, tries=1)  # it exists now: a lost race
    assert refs.compare_and_swap(_MAIN, first, second, tries=1)
    assert not refs.compare_and_swap(_MAIN, first, other, tries=1)  # someone moved it from `first`
    assert _at(repo, _MAIN) == second


def test_a_branch_is_created_once(repo: pygit2.Repository) -> None:
    refs, lock = _refs(repo)
    first = _commit(repo, "first", [])
    refs.create("refs/heads/pr", first)
    assert _at(repo, "refs/heads/pr") == first and not lock.held
    with pytest.raises(RegistryError, match="git update-ref failed"):
        refs.create("refs/heads/pr", first)


def test_a_held_ref_lock_is_reported_after_exactly_the_tries_given(
    repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # the clock only: git's own lock timeout still runs
    refs, _ = _refs(repo)
    first = _commit(repo, "first", [])
    second = _commit(repo, "second", [first])
    assert refs.compare_and_swap(_MAIN, None, first, tries=1)
    (Path(repo.path) / "refs" / "heads" / "main.lock").write_text("held by another git")
    with pytest.raises(RegistryError, match=r"cannot move refs/heads/main: .*main\.lock"):
        refs.compare_and_swap(_MAIN, first, second, tries=3)
    assert slept == [0.15, 0.15, 0.15]
    assert _at(repo, _MAIN) == first


def test_a_dead_writers_ref_lock_is_cleared_by_the_lock_holder_on_the_second_try(
    repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Holding the writer lock, a ref lock older than git ever holds one is a dead writer's: it goes after the
    first refusal, so one try fails and two land."""
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    refs, lock = _refs(repo)
    first = _commit(repo, "first", [])
    second = _commit(repo, "second", [first])
    assert refs.compare_and_swap(_MAIN, None, first, tries=1)
    git_lock = Path(repo.path) / "refs" / "heads" / "main.lock"
    for tries, lands in ((1, False), (2, True)):
        with lock.hold():  # taking it clears what is stale then: this lock is left after
            git_lock.write_text("left by a killed writer")
            old = time.time() - 60
            os.utime(git_lock, (old, old))
            if lands:
                assert refs.compare_and_swap(_MAIN, first, second, tries=tries)
            else:
                with pytest.raises(RegistryError, match="cannot move"):
                    refs.compare_and_swap(_MAIN, first, second, tries=tries)
    assert _at(repo, _MAIN) == second

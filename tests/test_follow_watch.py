"""Following main's ref in process: each way git moves `refs/heads/main` wakes the watcher once, other refs
and files never do, and no thread is started for it. Real repositories moved by the real `git` command."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from helpers import TEST_TIME, commit_manifests, make_operation

from kernelindex import registry
from kernelindex.service.follow import follow_main

QUIET = 0.3  # seconds to wait for a refresh that must not come (the watcher debounces 20 ms)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True)


async def _refreshes_after(repo: Path, move: Callable[[], None]) -> int:
    """How many refreshes a watcher (polling off) makes after `move` runs, once it has settled."""
    calls: list[float] = []

    async def refresh() -> None:
        calls.append(asyncio.get_running_loop().time())

    threads = threading.active_count()
    following = asyncio.create_task(follow_main(repo, refresh, poll_seconds=3600))
    await asyncio.sleep(0.05)  # the watch is in place
    assert threading.active_count() == threads, "the watcher runs on the event loop, not in a thread"
    await asyncio.to_thread(move)
    await asyncio.sleep(QUIET)
    following.cancel()
    with pytest.raises(asyncio.CancelledError):
        await following
    return len(calls)


def _refreshes_while(repo: Path, poll_seconds: float, during: Callable[[], Awaitable[object]]) -> int:
    """How many refreshes a follower of `repo` (polling every `poll_seconds`) makes while `during` runs."""
    calls: list[int] = []

    async def refresh() -> None:
        calls.append(1)

    async def follow() -> None:
        following = asyncio.create_task(follow_main(repo, refresh, poll_seconds=poll_seconds))
        await during()
        following.cancel()
        with pytest.raises(asyncio.CancelledError):
            await following

    asyncio.run(follow())
    return len(calls)


@pytest.fixture
def repo(store: registry.GitStore) -> Path:
    commit_manifests(store, [make_operation("first")], TEST_TIME)
    return store.git_dir


def _new_commit(store: registry.GitStore) -> str:
    """A commit with main as parent that no ref names yet."""
    head = store.head()
    assert head is not None
    moved = commit_manifests(store, [make_operation("second")], TEST_TIME + 1)
    assert store._compare_and_swap(registry.store.MAIN, moved, head)
    return moved


def test_update_ref_on_main_wakes_the_watcher_once(store: registry.GitStore, repo: Path) -> None:
    new = _new_commit(store)
    assert asyncio.run(_refreshes_after(repo, lambda: _git(repo, "update-ref", "refs/heads/main", new))) == 1


def test_packing_refs_wakes_the_watcher(store: registry.GitStore, repo: Path) -> None:
    """`git pack-refs` moves main into packed-refs and deletes the loose file: main's ref changed on disk."""
    assert asyncio.run(_refreshes_after(repo, lambda: _git(repo, "pack-refs", "--all"))) >= 1


def test_other_refs_and_files_do_not(store: registry.GitStore, repo: Path) -> None:
    new = _new_commit(store)

    def elsewhere() -> None:
        _git(repo, "update-ref", "refs/heads/pr-1", new)
        (repo / "description").write_text("not a ref\n")
        (repo / "refs" / "heads" / "mainline").write_text(new + "\n")

    assert asyncio.run(_refreshes_after(repo, elsewhere)) == 0


def test_without_inotify_it_says_so_and_the_poll_carries_on(
    repo: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import inotify_simple

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(inotify_simple.INotify, "__init__", refuse)
    refreshes = _refreshes_while(repo, 0.05, lambda: asyncio.sleep(0.3))
    assert "following main by polling only" in caplog.text and "Too many open files" in caplog.text
    assert refreshes >= 2


def test_a_descriptor_that_breaks_is_let_go_and_the_poll_carries_on(
    store: registry.GitStore, repo: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import inotify_simple

    reads: list[int] = []

    def broken(self: object, timeout: int | None = None, read_delay: int | None = None) -> list[object]:
        reads.append(1)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(inotify_simple.INotify, "read", broken)
    new = _new_commit(store)

    async def during() -> None:
        await asyncio.sleep(0.05)
        await asyncio.to_thread(_git, repo, "update-ref", "refs/heads/main", new)
        await asyncio.sleep(0.35)

    refreshes = _refreshes_while(repo, 0.1, during)
    assert reads == [1], "read once, then let go: not once per turn of the loop"
    assert "stopped watching" in caplog.text and "Input/output error" in caplog.text
    assert refreshes >= 2  # the poll

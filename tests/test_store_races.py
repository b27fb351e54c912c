"""The store's write path against git processes that do not take kernelindex's writer lock (a push,
a `git pack-refs`, a hand-made ref): main moved or deleted while a batch is written, a ref lock held,
a private ref that cannot be created. A write either lands on what main is now, or fails saying why;
it never overwrites another's commit."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from helpers import TEST_TIME, commit_manifests, commit_meta, make_operation, to_manifest
from signing import Key

from kernelindex import registry
from kernelindex.registry.signatures import ssh_signer

# git's own identity for the commits another process pushes (commit-tree refuses to guess one).
_PUSHER = {
    "GIT_AUTHOR_NAME": "Pusher",
    "GIT_AUTHOR_EMAIL": "push@example.com",
    "GIT_AUTHOR_DATE": f"{TEST_TIME + 50} +0000",
    "GIT_COMMITTER_NAME": "Pusher",
    "GIT_COMMITTER_EMAIL": "push@example.com",
    "GIT_COMMITTER_DATE": f"{TEST_TIME + 50} +0000",
}


def _git(store: registry.GitStore, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **_PUSHER, "GIT_DIR": str(store.git_dir)}
    return subprocess.run(["git", *args], capture_output=True, env=env, check=check)


def _push(store: registry.GitStore, subject: str) -> str:
    """What a `git push` to main does: a new commit on main's tip, moved there by git alone."""
    tip = _git(store, "rev-parse", "refs/heads/main").stdout.decode().strip()
    new = _git(store, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", subject).stdout.decode().strip()
    _git(store, "update-ref", "refs/heads/main", new, tip)
    return new


def _racing(sign: Callable[[bytes], bytes], race: Callable[[int], None]) -> tuple[Callable[[bytes], bytes], list[int]]:
    """A signer that lets another git process act (`race(call number)`) while our commit is being
    signed: after the writer read main, before it moves main."""
    calls: list[int] = []

    def signer(payload: bytes) -> bytes:
        calls.append(len(calls) + 1)
        race(len(calls))
        return sign(payload)

    return signer, calls


def _refs(store: registry.GitStore) -> list[str]:
    return sorted(pygit2.Repository(str(store.git_dir)).references)


def test_main_moved_while_writing_is_written_again_on_the_new_tip(
    store: registry.GitStore, keys: dict[str, Key]
) -> None:
    """A push lands while our commit is signed: git refuses our move (main is not where we read it),
    and the batch is written again on the pushed commit. The pushed commit is kept, never overwritten."""
    commit_manifests(store, [make_operation("base")])
    pushed: list[str] = []

    def push_once(call: int) -> None:
        if call == 1:
            pushed.append(_push(store, "pushed"))

    signer, calls = _racing(ssh_signer(keys["alice"].private), push_once)
    result = store.add([to_manifest(make_operation("ours"))], commit_meta(TEST_TIME + 100), sign=signer)
    assert calls == [1, 2]  # one lost race, one retry
    assert result.commit is not None and store.head() == result.commit
    parent = _git(store, "rev-parse", f"{result.commit}^").stdout.decode().strip()
    assert parent == pushed[0]  # git says: our commit sits on the pushed one


def test_main_moving_on_every_attempt_is_store_busy(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """Main moves under every one of the 20 attempts (`add`'s documented retries): the writer gives up
    saying so, and main holds the last pushed commit, none of ours."""
    commit_manifests(store, [make_operation("base")])
    pushed: list[str] = []
    signer, calls = _racing(ssh_signer(keys["alice"].private), lambda _: pushed.append(_push(store, "pushed")))
    with pytest.raises(registry.StoreBusy) as caught:
        store.add([to_manifest(make_operation("ours"))], commit_meta(TEST_TIME + 100), sign=signer)
    assert caught.value.attempts == 20 and len(calls) == 20
    assert str(caught.value) == "main moved 20 times while writing; nothing was written, try again"
    assert store.head() == pushed[-1] and len(pushed) == 20


def test_main_deleted_while_writing_is_a_lost_race_too(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """`git update-ref -d refs/heads/main` while we sign: main is no longer where we read it (it is
    nowhere), so the batch is written again onto what main is now: an empty registry, a root commit."""
    commit_manifests(store, [make_operation("base")])

    def delete_main(call: int) -> None:
        if call == 1:
            _git(store, "update-ref", "-d", "refs/heads/main")

    signer, calls = _racing(ssh_signer(keys["alice"].private), delete_main)
    ours = to_manifest(make_operation("ours"))
    result = store.add([ours], commit_meta(TEST_TIME + 100), sign=signer)
    assert calls == [1, 2]
    assert result.commit is not None and store.head() == result.commit
    assert store.commit_info(result.commit).parents == ()
    listed = _git(store, "ls-tree", "-r", "--name-only", result.commit).stdout.decode().split()
    assert listed == [ours.path]


def test_a_held_ref_lock_is_waited_on_then_reported_in_gits_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another git process holds refs/heads/main.lock (and keeps it: its mtime is in the future, so it
    is never old enough to be anyone's leftover). The writer tries 20 times 150 ms apart, about 3 s,
    then reports git's own message. The repository sits under a directory whose name is not UTF-8
    (a Latin-1 file system): git's message names that path, and must still be reported, not crash."""
    folder = tmp_path / os.fsdecode(b"d\xe9p\xf4t")
    store = registry.GitStore.init(folder / "manifests.git")
    head = commit_manifests(store, [make_operation("base")])
    lock = store.git_dir / "refs" / "heads" / "main.lock"
    lock.write_text(head + "\n")
    future = time.time() + 3600
    os.utime(lock, (future, future))
    # git's words for this lock, from git itself (the ids do not appear in them).
    refused = _git(store, "update-ref", "-m", "probe", "refs/heads/main", head, head, check=False)
    assert refused.returncode != 0
    words = refused.stderr.decode(errors="replace").strip()
    assert "\ufffd" in words  # the path's bytes that are not UTF-8, replaced
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # the clock: git's own 100 ms lock timeout still runs
    with pytest.raises(registry.RegistryError) as caught:
        store.add([to_manifest(make_operation("ours"))], commit_meta(TEST_TIME + 100))
    assert str(caught.value) == (
        f"cannot move refs/heads/main: {words} (another git process, one that does not take kernelindex's "
        "writer lock, keeps holding it)"
    )
    assert slept == [0.15] * 20
    assert store.head() == head and lock.exists()


_PRIVATE = r"refs/kernelindex/incoming/[^/]+-{pid}-[0-9a-f]{{12}}"


def test_a_private_ref_that_cannot_be_created_fails_the_bulk_write_in_gits_words(store: registry.GitStore) -> None:
    """A ref named `refs/kernelindex/incoming` (made by hand) leaves no room for the private ref a bulk
    write goes through (`<host>-<pid>-<12 hex digits>` under it): fast-import's error alone is reported
    (not its statistics, not a failed cleanup's), and main does not move."""
    head = commit_manifests(store, [make_operation("base")])
    _git(store, "update-ref", "refs/kernelindex/incoming", head)
    batch = [to_manifest(make_operation(f"bulk-{number}")) for number in range(70)]  # >= 64: fast-import
    with pytest.raises(registry.RegistryError) as caught:
        store.add(batch, commit_meta(TEST_TIME + 100))
    private = _PRIVATE.format(pid=os.getpid())
    expected = (
        rf"git fast-import failed: error: cannot lock ref '({private})': "
        rf"'refs/kernelindex/incoming' exists; cannot create '\1'"
    )
    assert re.fullmatch(expected, str(caught.value)), str(caught.value)
    assert store.head() == head
    assert _refs(store) == ["refs/heads/main", "refs/kernelindex/incoming"]


def test_a_pack_refs_in_progress_does_not_fail_a_bulk_write(store: registry.GitStore) -> None:
    """`git pack-refs` holds packed-refs.lock, and every ref deletion waits for it (then gives up): a
    bulk write cannot forget a dead writer's private ref, nor delete its own, and still lands. Both
    refs are forgotten by the next bulk write, once the lock is gone."""
    head = commit_manifests(store, [make_operation("base")])
    dead = "refs/kernelindex/incoming/elsewhere-1-deadbeef0000"
    _git(store, "update-ref", dead, head)
    lock = store.git_dir / "packed-refs.lock"
    lock.write_bytes(b"")
    future = time.time() + 3600  # a live pack-refs: never old enough to be cleared
    os.utime(lock, (future, future))
    first = store.add([to_manifest(make_operation(f"a-{n}")) for n in range(70)], commit_meta(TEST_TIME + 100))
    assert first.commit is not None and store.head() == first.commit
    left = [name for name in _refs(store) if name not in ("refs/heads/main", dead)]
    assert len(left) == 1 and re.fullmatch(_PRIVATE.format(pid=os.getpid()), left[0]), left
    assert _git(store, "rev-parse", left[0]).stdout.decode().strip() == first.commit
    assert dead in _refs(store)
    lock.unlink()
    second = store.add([to_manifest(make_operation(f"b-{n}")) for n in range(70)], commit_meta(TEST_TIME + 200))
    assert second.commit is not None and store.head() == second.commit
    assert _refs(store) == ["refs/heads/main"]

"""`WriterLock` alone: one holder at a time, re-entrant within one lock, released by the OS when its holder is
killed, and what a killed holder left in git's way cleared by the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from kernelindex.registry.errors import StoreBusy
from kernelindex.registry.store_lock import WriterLock


@pytest.fixture
def git_dir(tmp_path: Path) -> Path:
    path = tmp_path / "lock.git"
    pygit2.init_repository(str(path), bare=True, initial_head="main")
    return path


def test_the_lock_is_reentrant_and_held_until_the_outermost_release(git_dir: Path) -> None:
    lock = WriterLock(git_dir)
    assert not lock.held
    with lock.hold():
        with lock.hold():
            assert lock.held
        assert lock.held
        holder = (git_dir / "kernelindex-writer.lock").read_text()
        assert holder.startswith(f"pid {os.getpid()} on ")
    assert not lock.held
    assert (git_dir / "kernelindex-writer.lock").read_bytes() == b""  # a clean exit empties it


def test_a_second_lock_waits_then_says_who_holds_it(git_dir: Path) -> None:
    first, second = WriterLock(git_dir), WriterLock(git_dir)
    busy = rf"another writer \(pid {os.getpid()} on .+\) holds"
    with first.hold(), pytest.raises(StoreBusy, match=busy), second.hold(wait_seconds=0.0):
        pass
    with second.hold(wait_seconds=0.0):  # released: taken at once
        assert second.held and not first.held


def test_a_holder_killed_with_sigkill_leaves_the_lock_free_and_its_git_locks_cleared(git_dir: Path) -> None:
    """A fresh ref lock is another git's in use unless the writer lock's last holder died: then it is the dead
    writer's, and goes however young it is."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from kernelindex.registry.store_lock import WriterLock\n"
            "lock = WriterLock(Path(sys.argv[1]))\n"
            "with lock.hold():\n"
            "    (Path(sys.argv[1]) / 'refs' / 'heads' / 'main.lock').write_text('half')\n"
            "    print('held', flush=True); time.sleep(60)\n",
            str(git_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "held\n"
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    git_lock = git_dir / "refs" / "heads" / "main.lock"
    assert git_lock.exists()
    with WriterLock(git_dir).hold(wait_seconds=0.0):
        assert not git_lock.exists()


def test_a_young_git_lock_stays_when_the_last_holder_left_cleanly(git_dir: Path) -> None:
    git_lock = git_dir / "refs" / "heads" / "main.lock"
    git_lock.write_text("a push in progress")
    with WriterLock(git_dir).hold():
        assert git_lock.exists()
    assert WriterLock(git_dir).clear_stale(older_than=0.0) == [git_lock]

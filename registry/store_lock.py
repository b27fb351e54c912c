"""WriterLock: one writer at a time per repository, and the git locks a dead writer left cleared.

An advisory `flock` on `<git-dir>/kernelindex-writer.lock`, which the OS releases when its holder exits however it
exits (SIGKILL included), so a writer that died never blocks the next one. The holder writes who it is into the file
and empties it on the way out: a file found non-empty was left by a writer that died holding the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from kernelindex.registry.errors import StoreBusy

__all__ = ["ATTEMPTS", "HOST", "STALE_LOCK_SECONDS", "WRITER_WAIT_SECONDS", "WriterLock"]

ATTEMPTS = 20
"""How many times a write is tried against a branch that keeps moving before `StoreBusy`."""
HOST = socket.gethostname().replace("/", "_").replace(" ", "_") or "host"
"""This machine, as a lock's holder and a private ref name it (no `/`, no space)."""
WRITER_WAIT_SECONDS = 120.0
"""A bulk import holds the lock for seconds; past this, report who holds it."""
STALE_LOCK_SECONDS = 2.0
"""git's own commands hold a ref lock for milliseconds."""
_WRITER_LOCK = "kernelindex-writer.lock"
_STALE_GIT_LOCKS = ("HEAD.lock", "packed-refs.lock", "index.lock", "config.lock")


class WriterLock:
    """The writer lock of one repository, re-entrant within this object (not across threads: one store per
    thread)."""

    def __init__(self, git_dir: Path) -> None:
        self._git_dir = git_dir
        self._writer_depth = 0

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._writer_depth > 0

    @contextlib.contextmanager
    def hold(self, wait_seconds: float = WRITER_WAIT_SECONDS) -> Iterator[None]:
        """Hold the repository's writer lock: an advisory `flock` on `<git-dir>/kernelindex-writer.lock`.

        The OS releases it when its holder exits, however it exits (SIGKILL included), so a
        writer that died never blocks the next one. Holding it, git lock files that a dead writer
        left behind are provably not ours in use, and are removed once they are older than git's
        own commands ever hold one (`clear_stale`). Re-entrant within one `WriterLock`.

        Raises:
            StoreBusy: another live writer held it for `wait_seconds`.
        """
        if self._writer_depth:
            self._writer_depth += 1
            try:
                yield
            finally:
                self._writer_depth -= 1
            return
        path = self._git_dir / _WRITER_LOCK
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + wait_seconds
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN) or time.monotonic() >= deadline:
                        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                        raise StoreBusy(ATTEMPTS, f"another writer ({holder}) holds {path}") from exc
                    time.sleep(0.02)
            # A holder that exits cleanly empties the file; one that died mid-write could not, and
            # every git lock it left is as dead as it is.
            died_holding = os.pread(fd, 64, 0).strip() != b""
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {HOST}\n".encode(), 0)
            self._writer_depth = 1
            try:
                self.clear_stale(older_than=0.0 if died_holding else STALE_LOCK_SECONDS)
                yield
            finally:
                self._writer_depth = 0
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def clear_stale(self, *, older_than: float = STALE_LOCK_SECONDS) -> list[Path]:
        """Remove git lock files (and temporary packs) a killed writer left, holding the writer lock.

        Every kernelindex writer holds the writer lock for its whole write, so none of these is a
        live kernelindex write. Other git commands (a push, a gc) do not take it, but hold a ref
        lock for milliseconds: a lock older than `older_than` seconds is nobody's.
        """
        now = time.time()
        git_dir = self._git_dir
        candidates = [git_dir / name for name in _STALE_GIT_LOCKS]
        candidates += list((git_dir / "refs").rglob("*.lock"))
        candidates += list((git_dir / "objects" / "pack").glob("tmp_*"))
        removed = []
        for path in candidates:
            try:
                if now - path.lstat().st_mtime < older_than:
                    continue
                path.unlink()
            except OSError:
                continue
            removed.append(path)
        return removed

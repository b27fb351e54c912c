"""A long-lived `git cat-file --batch`: objects of one repository read without starting git each time.

A refresh reads its changed fan-out trees through git, which inflates them in a process of its own
while this one compares what has arrived (`GitStore.diff`). Starting git for each refresh cost ~3.5 ms
before the first tree arrived at 10x (the process alone 1.5-2.5 ms), a tenth of a 100-manifest refresh.
One process, kept as long as the snapshots that refresh, answers at once.

git looks for an object it does not find in the packs it knows in the packs written since (a new
commit's), so a process started before a commit reads it. What git hands over is not verified here:
the caller checks each object against its id.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import threading
import weakref
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import IO

from kernelindex.registry.embedded import git_command
from kernelindex.registry.errors import StoreCorrupt

__all__ = ["CatFile", "answers", "start_batch", "widen_pipe"]

_PIPE_BYTES = 1 << 20
_DIRECT_BYTES = 32 * 1024  # a request this small fits the pipe: written at once, git never waits on us


def widen_pipe(fd: int) -> None:
    """Let git write up to 1 MB ahead of the reader (Linux; elsewhere, or past the system's
    limit, the pipe keeps its size).

    With the default 64 KB, git stops each time this process is busy with ~45 manifests and
    both wait on each other by turns (a 10x cold build: 7.5 s of stream and indexing, against
    5.3 s with 1 MB, the same CPU): the overlap the stream is read for is lost.
    """
    with contextlib.suppress(AttributeError, OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)


class CatFile:
    """One `git cat-file --batch` of a repository, started on first use (or by `start`) and kept until
    `close` or until this object is collected. One reader at a time (a refresh holds its lock); a read
    left before its end stops git, and the next read starts another. Once a pack that git knew of is
    deleted (`git gc`, `git repack -a -d`), the next read starts another git too: one kept running would
    hold the deleted pack open, and its disk space, until it stopped."""

    def __init__(self, git_dir: Path) -> None:
        self._git_dir = git_dir
        self._process: subprocess.Popen[bytes] | None = None
        self._pid = 0  # the process that started git: a forked child starts its own
        self._stop: weakref.finalize[[subprocess.Popen[bytes]], CatFile] | None = None
        self._packs: frozenset[str] = frozenset()  # the packs git may have open

    def start(self) -> None:
        """Start git now, if it is not running (a server does this before its first refresh)."""
        process = self._process
        running = process is not None and self._pid == os.getpid() and process.poll() is None
        packs = _packs(self._git_dir)
        if running and self._packs <= packs:
            self._packs = packs  # git may open those written since from now on
            return
        self.close()
        self._packs = packs
        process = start_batch(self._git_dir)
        self._process, self._pid = process, os.getpid()
        self._stop = weakref.finalize(self, _stop, process)

    def close(self) -> None:
        """Stop git (it is started again by the next read)."""
        if self._stop is not None:
            if self._pid == os.getpid():
                self._stop()
            else:  # a forked child's copy: the parent's git is the parent's to stop
                self._stop.detach()
        self._process, self._stop = None, None

    def read(self, oids: Sequence[str], kind: bytes) -> Generator[bytes, None, None]:
        """The bytes of objects of `kind`, in order, each given as soon as git has read it.

        Raises:
            StoreCorrupt: an object is missing or of another type, or git's answer ends early.
        """
        self.start()
        process = self._process
        assert process is not None
        stdin, out = process.stdin, process.stdout
        assert stdin is not None
        assert out is not None
        request = "".join(oid + "\n" for oid in oids).encode()
        writer = None
        if len(request) <= _DIRECT_BYTES:
            _write(stdin, request)
        else:  # in a thread: git answers while we still ask, and pipes are small
            writer = threading.Thread(target=_write, args=(stdin, request), daemon=True)
            writer.start()
        try:
            yield from answers(out, oids, kind, abandon=self.close)  # left early: this git is out of step
        finally:
            if writer is not None:
                writer.join()


def start_batch(git_dir: Path) -> subprocess.Popen[bytes]:
    """`git cat-file --batch` of a repository, its answers' pipe widened (`widen_pipe`)."""
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_TERMINAL_PROMPT": "0"}
    process = subprocess.Popen(
        [*git_command(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        bufsize=1 << 20,
    )
    assert process.stdout is not None
    widen_pipe(process.stdout.fileno())
    return process


def answers(
    out: IO[bytes], oids: Sequence[str], kind: bytes, abandon: Callable[[], object] | None = None
) -> Iterator[bytes]:
    """The objects `git cat-file --batch` answers on `out` for `oids`, in their order, each checked to be a
    `kind` (`b"blob"`, `b"tree"`) and whole. `abandon` is called when they are not all read (a problem, or
    the caller stopped early): git's answers may still be on their way, and its pipe is out of step.

    Raises:
        StoreCorrupt: an object is missing or of another type, or git's answer ends early.
    """
    what = kind.decode()
    done = False
    try:
        for oid in oids:
            header = out.readline().rstrip(b"\n").split(b" ")
            if len(header) != 3 or header[1] != kind:
                shown = b" ".join(header[1:]).decode(errors="replace") or "git gave no answer"
                raise StoreCorrupt(oid, f"cannot read the {what}: {shown}")
            size = int(header[2])
            data = out.read(size)
            if len(data) != size or out.read(1) != b"\n":
                raise StoreCorrupt(oid, f"cannot read the {what}: git's answer ends early")
            yield data
        done = True
    finally:
        if not done and abandon is not None:
            abandon()


def _packs(git_dir: Path) -> frozenset[str]:
    try:
        return frozenset(name for name in os.listdir(git_dir / "objects" / "pack") if name.endswith(".pack"))
    except OSError:
        return frozenset()


def _write(stdin: IO[bytes], request: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):  # git gone, or the reader stopped it: the reader says why
        stdin.write(request)
        stdin.flush()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End git: at the end of its input it exits; one that does not is killed."""
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()

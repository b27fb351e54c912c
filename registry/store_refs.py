"""RefLock: the store's refs moved only by compare-and-swap, through `git update-ref <ref> <new> <old>`.

git takes the ref's own lock file (`<ref>.lock`) and moves the ref only if it still points at `<old>`: a writer
that lost a race learns it and writes again on the new tip, never over another's commit. Each move is logged as
kernelindex's in the reflog (`kernelindex add`, `kernelindex branch`) when the repository keeps one.
"""

from __future__ import annotations

import time

from kernelindex.registry.errors import RegistryError
from kernelindex.registry.git_binding import pygit2
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_lock import WriterLock

__all__ = ["RefLock"]

_ZERO = "0" * 40  # `git update-ref`'s old value for "the ref must not exist"


class RefLock:
    """Moves and creates the refs of one repository; `lock` is its writer lock, whose holder may clear the git
    locks a dead writer left."""

    def __init__(self, repo: pygit2.Repository, git: GitCommand, lock: WriterLock) -> None:
        self._repo = repo
        self._git = git
        self._lock = lock

    def compare_and_swap(self, ref: str, old: str | None, new: str, *, tries: int) -> bool:
        """Move `ref` from `old` (None: it must not exist) to `new` atomically; False if someone else moved it
        first.

        A failure while `ref` still points at `old` is not a lost race: another writer holds the
        ref's lock for a moment, or a writer killed inside `git update-ref` left its lock behind.
        Only the ref is retried then (never the objects), `tries` times in all with 150 ms between tries
        (git itself waits 100 ms for a held lock each time), and a lock that stays is reported.

        Raises:
            RegistryError: git kept refusing to move `ref` although nobody else moved it.
        """
        for _ in range(tries):
            result = self._git.run("update-ref", "-m", "kernelindex add", ref, new, old or _ZERO, check=False)
            if result.returncode == 0:
                return True
            current = self._repo.references.get(ref)
            if (None if current is None else str(current.target)) != old:
                return False
            if self._lock.held:
                self._lock.clear_stale()
            time.sleep(0.15)
        reason = result.stderr.decode(errors="replace").strip()
        raise RegistryError(
            f"cannot move {ref}: {reason} (another git process, one that does not take kernelindex's writer "
            "lock, keeps holding it)"
        )

    def create(self, ref: str, commit: str) -> None:
        """Create `ref` at `commit`, holding the writer lock.

        Raises:
            RegistryError: it exists already, or the name is not a valid ref.
        """
        with self._lock.hold():
            self._git.run("update-ref", "-m", "kernelindex branch", ref, commit, _ZERO)

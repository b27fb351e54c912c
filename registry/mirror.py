"""A mirror: a local bare repository kept equal to a canonical one by `git fetch` (`serve --mirror URL`).

A replica never validates what it fetches here: fetching only moves its refs to the canonical
repository's, and the server's normal refresh decides what is served (a new head must pass the
pull-request check and descend from the served commit; `kernelindex.registry.snapshots.Snapshots.refresh`). A
canonical repository that rewrites its history or publishes a bad head moves the mirror's `main`,
and the replica keeps serving its last good commit, saying why in `/healthz`.

With `pull_requests`, a mirror also fetches the heads of pull requests as a forge keeps them
(`refs/pull/<n>/head`, GitHub's and Gitea's layout): a pull request from a fork has no branch in the
canonical repository, only that ref, and a preview of it needs its commits. They are served only as
previews, which pass the pull-request check first (`api/core/previews.py`); main is never taken from them.

Fetches are plain `git fetch` over whatever transport git speaks (`git://` from `git daemon`,
`http(s)://` from `git http-backend`, ssh, a path), with a time limit, and one at a time per
repository: the processes of one server share a lock file, and a fetch that finds it taken is
skipped (another is bringing the same refs).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kernelindex.registry.errors import MirrorFailed

__all__ = ["FETCH_SECONDS", "Fetched", "Mirror"]

FETCH_SECONDS = 60.0
"""The longest a fetch may take before it is abandoned (a hung server must not stall refreshes)."""

_REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
_PULL_REQUESTS = "+refs/pull/*/head:refs/pull/*/head"
_QUIET_GIT = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}


@dataclass(frozen=True, slots=True)
class Fetched:
    """What one fetch did: main before and after (None: no main), and when it finished."""

    before: str | None
    after: str | None
    at: float
    skipped: bool = False

    @property
    def moved(self) -> bool:
        return self.before != self.after


class Mirror:
    """The canonical repository at `url`, mirrored into the bare repository at `path`."""

    def __init__(self, url: str, path: Path, *, timeout: float = FETCH_SECONDS, pull_requests: bool = False) -> None:
        """`pull_requests`: also fetch `refs/pull/*/head` (the heads of pull requests, forks' included).

        Raises:
            MirrorFailed: the URL could be read as an option by git."""
        if not url or url.startswith("-"):
            raise MirrorFailed(url, "not a repository URL (it must not start with '-')")
        self.url = url
        self.path = path
        self.timeout = timeout
        self.refspecs = (*_REFSPECS, _PULL_REQUESTS) if pull_requests else _REFSPECS
        self.last: Fetched | None = None
        self.error: str | None = None

    def ensure(self) -> bool:
        """Make the local repository (bare, empty) and fetch into it if it does not exist yet;
        True if it was made.

        Raises:
            MirrorFailed: git could not create it or fetch from the canonical repository.
        """
        if self.path.exists():
            return False
        temporary = self.path.with_name(f"{self.path.name}.cloning-{os.getpid()}")
        self._git("init", "--quiet", "--bare", "--initial-branch=main", str(temporary), cwd=None)
        try:
            self._fetch_into(temporary)
            os.replace(temporary, self.path)  # a half-made clone never looks like a registry
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        return True

    def fetch(self) -> Fetched:
        """Bring the canonical repository's branches and tags (and pull requests' heads, when asked) here
        (forced: the server decides what to serve); skipped when another process of this server is fetching.

        Raises:
            MirrorFailed: the fetch failed or took longer than the time limit (the refs are unchanged).
        """
        lock_path = self.path.with_name(self.path.name + ".mirror.lock")
        with open(lock_path, "a+b") as lock:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                main = self._main(self.path)
                return Fetched(main, main, time.time(), skipped=True)
            try:
                before = self._main(self.path)
                try:
                    self._fetch_into(self.path)
                except MirrorFailed as exc:
                    self.error = exc.reason
                    raise
                self.error = None
                self.last = Fetched(before, self._main(self.path), time.time())
                return self.last
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def _fetch_into(self, repository: Path) -> None:
        fetch = ("fetch", "--quiet", "--prune", "--no-write-fetch-head", "--", self.url)
        self._git(*fetch, *self.refspecs, cwd=repository)

    def _main(self, repository: Path) -> str | None:
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "refs/heads/main^{commit}"],
            cwd=repository,
            capture_output=True,
            text=True,
            check=False,
        )
        return found.stdout.strip() or None

    def _git(self, *args: str, cwd: Path | None) -> None:
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
                env={**os.environ, **_QUIET_GIT},
            )
        except subprocess.TimeoutExpired:
            raise MirrorFailed(self.url, f"git {args[0]} took longer than {self.timeout:g} s") from None
        except OSError as exc:
            raise MirrorFailed(self.url, f"cannot run git: {exc.strerror}") from None
        if done.returncode != 0:
            said = " ".join(line.strip() for line in done.stderr.splitlines() if line.strip())
            raise MirrorFailed(self.url, f"git {args[0]}: {said or f'exit status {done.returncode}'}")

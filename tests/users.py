"""Other users, for the tests of files that belong to someone else: numeric user ids that no account of this machine
has (so nothing is created or changed outside the test's files), and commands run as one of them.

Only root can give a file away or run as another user (CI runs as root); elsewhere the tests that need it skip.
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

import pytest

__all__ = ["as_user", "give_away", "needs_root", "unused_ids"]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
_FIRST = 40000  # above the ids distributions give to people and to system accounts


def unused_ids(count: int) -> list[int]:
    """`count` user ids no account has (each also free as a group id)."""
    taken = {entry.pw_uid for entry in pwd.getpwall()} | {entry.pw_gid for entry in pwd.getpwall()}
    found: list[int] = []
    candidate = _FIRST
    while len(found) < count:
        if candidate not in taken:
            found.append(candidate)
        candidate += 1
    return found


def give_away(path: Path, uid: int) -> None:
    """Make `uid` (and the group of the same number) own `path` and everything under it, links themselves included."""
    os.chown(path, uid, uid, follow_symlinks=False)
    for folder, folders, files in os.walk(path):
        for name in folders + files:
            os.chown(Path(folder, name), uid, uid, follow_symlinks=False)


def as_user(uid: int) -> list[str]:
    """The start of a command line that runs the rest as `uid` (its own group, no other): util-linux's setpriv."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]

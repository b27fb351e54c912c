"""The registry shipped with the project, and the one trust the registry layer gives it.

`EMBEDDED_REPO` is what is served when nothing else is named: a clone's own `manifests.git`, or, installed from a
wheel, the copy `setup.py` puts inside the package (`PACKAGED_REPO`). It is the package's own data, installed with
the code that reads it, so whoever installed the package owns it, and that need not be the user who runs it (a
virtual environment installed by another account, a system-wide install). git and libgit2 refuse to open a
repository its current user does not own unless it is named a safe directory; for this one repository only, the
registry vouches for it instead (`kernelindex.registry.git_binding.open_repository`, and `-c safe.directory=` on
every git command the store runs against it): trusting the files the running code was installed with is no more
than running that code. A repository anyone names (`--repo`, `KERNELINDEX_REPO`) is checked as git checks it.
"""

from __future__ import annotations

from pathlib import Path

import kernelindex

__all__ = ["EMBEDDED_REPO", "PACKAGED_REPO", "git_command", "is_embedded"]

_PACKAGE = Path(kernelindex.__file__).resolve().parent
_CLONE_REPO = _PACKAGE.parent / "manifests.git"
PACKAGED_REPO = _PACKAGE / "embedded" / "manifests.git"
"""Where a wheel carries the embedded registry (setup.py copies the clone's `manifests.git` there)."""
EMBEDDED_REPO = _CLONE_REPO if (_CLONE_REPO / "HEAD").is_file() or not PACKAGED_REPO.exists() else PACKAGED_REPO
"""The registry shipped with the project (real data), served when nothing else is named: a clone's own
`manifests.git`, or, installed from a wheel, the same repository inside the package."""


def is_embedded(path: str | Path) -> bool:
    """Whether `path` is the embedded registry, however it is reached (a symbolic link, a trailing slash)."""
    return Path(path).resolve() == EMBEDDED_REPO.resolve()


def git_command(git_dir: Path) -> list[str]:
    """The start of a `git` command line against the repository at `git_dir`: for the embedded registry, with it named
    a safe directory for that one command (`-c safe.directory=`), as libgit2 opens it without the owner check. (git
    checks the owner of a repository it finds, not yet of one named by `GIT_DIR` as the store names it; the option
    keeps the embedded registry readable should that change.)"""
    return ["git", "-c", f"safe.directory={git_dir}"] if is_embedded(git_dir) else ["git"]

"""Where what the server and the commands write about a registry is kept: one folder per registry.

The warm-start cache (`kernelindex.registry.graphcache`), the integrity record (`kernelindex.registry.integrity`) and
the catalog exports (`kernelindex.registry.export_cache`) of a registry live in its cache folder, never beside the
repository: an installed package's folder may be read-only or another user's, and `pip uninstall` would leave them
behind. The folders are under the user's cache folder (`platformdirs.user_cache_dir("kernelindex")`:
`$XDG_CACHE_HOME/kernelindex`, by default `~/.cache/kernelindex`, on Linux), or under the folder the operator names
(`kernelindex serve --cache-dir`, `KERNELINDEX_CACHE_DIR`). Each is named by the registry: the last part of its
resolved path, for people, and a digest of the whole resolved path, so two registries never share a folder and one
registry reached by two paths (a symbolic link) has one.

Everything in it can be rebuilt from git, and it is trusted as found, like the code: it is made readable and
writable by its user only. Caches that older versions wrote beside a clone's repository (`manifests.git.graphcache`,
`manifests.git.integrity`, `manifests.git.exports/`) are neither read nor removed.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

__all__ = ["cache_dir", "make_folder", "user_cache_root"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NAME_CHARACTERS = 64
_DIGEST_CHARACTERS = 16  # 64 bits of sha256: no two paths of one machine collide


def user_cache_root() -> Path:
    """The user's cache folder for kernelindex (platformdirs: `$XDG_CACHE_HOME/kernelindex` on Linux)."""
    import platformdirs  # here: a server given its cache folder (`--cache-dir`) never holds it

    return platformdirs.user_cache_path("kernelindex", appauthor=False)


def cache_dir(repo_path: Path, root: Path | None = None) -> Path:
    """The cache folder of the registry at `repo_path`: under `root`, else under `user_cache_root()`.

    >>> cache_dir(Path("/srv/registry/manifests.git"), Path("/var/cache/kernelindex")).parent
    PosixPath('/var/cache/kernelindex')
    >>> cache_dir(Path("/srv/registry/manifests.git"), Path("/c")).name.startswith("manifests.git-")
    True
    """
    resolved = repo_path.resolve()
    name = _UNSAFE.sub("_", resolved.name)[:_NAME_CHARACTERS].strip("._") or "registry"
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:_DIGEST_CHARACTERS]
    return (user_cache_root() if root is None else root) / f"{name}-{digest}"


def make_folder(folder: Path) -> None:
    """Make `folder` and each missing folder above it, readable and writable by this user only.

    Raises:
        OSError: a folder cannot be made (read-only, another user's, a file in the way).
    """
    missing = []
    for path in (folder, *folder.parents):
        if path.is_dir():
            break
        missing.append(path)
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)

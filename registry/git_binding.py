"""pygit2, loaded without the TLS trust store that libgit2 would build when it starts.

When libgit2 initializes (on `import pygit2`) its OpenSSL context reads the CA bundle (`SSL_CERT_FILE`, else
OpenSSL's default; ~140 certificates on Debian), and pygit2 then reads it again from
`ssl.get_default_verify_paths()`. That was 2.6 MB resident and ~7 ms of every process's start (a server, each
worker, every `kernelindex` command) for TLS that none of them speaks through libgit2: the registry reads and
writes local repositories, and a mirror fetches with the `git` command (`kernelindex.registry.mirror`), which keeps its
own
trust store. While pygit2 loads, `SSL_CERT_FILE` names an empty file, so both readings find no certificates;
the variable is then put back as it was, for this process's other libraries and for the commands it starts.
Should libgit2 ever be asked for HTTPS, it would refuse every certificate rather than trust one.

The import runs once, when `kernelindex.registry.store` is first imported (before a server starts its threads); a
process that imported pygit2 earlier keeps the store it built.

Every repository is opened here (`open_repository`). libgit2 refuses a repository that another user owns (its owner
validation, git's `safe.directory` rule); the embedded registry is opened without that check
(`kernelindex.registry.embedded` says why). The switch is process-wide, so it is turned off only while that one
repository is opened, and every open holds the same lock: no other repository is ever opened while it is off.
"""

from __future__ import annotations

import os
import threading

_TRUST_STORE = "SSL_CERT_FILE"
"""OpenSSL's variable for the CA bundle; Python's `ssl.get_default_verify_paths` reads it too."""

_before = os.environ.get(_TRUST_STORE)
os.environ[_TRUST_STORE] = os.devnull
try:
    import pygit2
finally:
    if _before is None:
        del os.environ[_TRUST_STORE]
    else:
        os.environ[_TRUST_STORE] = _before

__all__ = ["init_repository", "open_repository", "pygit2"]

_Option = pygit2.enums.Option
_OPENING = threading.Lock()
"""Held by every open: libgit2's owner validation is process-wide, and off only inside `open_repository`."""


def open_repository(path: str, *, vouched: bool = False) -> pygit2.Repository:
    """`pygit2.Repository(path)`; `vouched`: without libgit2's check that the current user owns it.

    Raises:
        pygit2.GitError: as `pygit2.Repository` (not a repository; owned by another user, when not vouched for).
    """
    with _OPENING:
        if not vouched:
            return pygit2.Repository(path)
        # `pygit2.option`, not `pygit2.settings.owner_validation`: the property is younger than pygit2 1.15.
        before = bool(pygit2.option(_Option.GET_OWNER_VALIDATION))
        pygit2.option(_Option.SET_OWNER_VALIDATION, False)
        try:
            return pygit2.Repository(path)
        finally:
            pygit2.option(_Option.SET_OWNER_VALIDATION, before)


def init_repository(path: str) -> None:
    """A new empty bare repository whose HEAD is `main` (under the same lock: nothing is opened while the check is
    off)."""
    with _OPENING:
        pygit2.init_repository(path, bare=True, initial_head="main")

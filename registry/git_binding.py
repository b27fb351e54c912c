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
"""

from __future__ import annotations

import os

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

__all__ = ["pygit2"]

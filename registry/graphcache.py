"""The warm-start cache: a derived graph and its publication record, saved next to the repository.

A cache file is keyed by the commit it describes and by the code that derived it (a hash of
the modules that compute derived facts), written atomically, and ignored whenever it is
stale, corrupt, or describes a commit main no longer contains. It holds nothing that cannot
be recomputed from git. Like any pickle it must be as protected as the code itself: it lives
beside the repository, written only by the server that reads it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from registry.graph import Graph
from registry.snapshots import Publication
from registry.store import GitStore

__all__ = ["cache_path", "code_fingerprint", "load_cache", "save_cache"]

_FORMAT = 1
_DERIVING_MODULES = ("nodes", "graph", "cohorts", "snapshots", "validate", "kinds/__init__")


def code_fingerprint() -> str:
    """Changes whenever the code that derives facts changes: a cache from other code is stale."""
    digest = hashlib.sha256(str(_FORMAT).encode())
    package = Path(__file__).resolve().parent
    for name in _DERIVING_MODULES:
        digest.update((package / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]


def cache_path(repo_path: Path) -> Path:
    """`manifests.git` -> `manifests.git.graphcache`, beside it."""
    resolved = repo_path.resolve()
    return resolved.with_name(resolved.name + ".graphcache")


def save_cache(path: Path, graph: Graph, publication: Publication) -> bool:
    """Write the cache atomically; False (and nothing written) if the directory is not writable."""
    payload = (_FORMAT, code_fingerprint(), graph.commit, publication, graph)
    try:
        handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(payload, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
        return True
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        return False


def load_cache(path: Path, store: GitStore) -> tuple[Graph, Publication] | None:
    """The cached graph if it is usable with this repository and this code, else None."""
    try:
        with path.open("rb") as source:
            payload = pickle.load(source)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
        return None
    if not isinstance(payload, tuple) or len(payload) != 5:
        return None
    version, fingerprint, commit, publication, graph = payload
    if version != _FORMAT or fingerprint != code_fingerprint():
        return None
    if not isinstance(graph, Graph) or not isinstance(publication, Publication) or graph.commit != commit:
        return None
    main = store.head()
    if main is None or commit not in publication.mainline.positions:
        return None
    if not store.is_ancestor(publication.mainline.commits[-1], main):
        return None  # main was rewritten since (or this cache is another repository's)
    return graph, publication

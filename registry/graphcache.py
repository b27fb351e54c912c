"""The warm-start cache: a derived graph and its publication record, saved next to the repository.

A cache file is keyed by the commit it describes and by the code that derived it (a hash of
the modules that compute derived facts), written atomically, and ignored whenever it is
stale, corrupt, or describes a commit main no longer contains. It holds nothing that cannot
be recomputed from git.

The graph is written as plain tuples, lists and dicts with `marshal` (which shares repeated
strings and reads ~10x faster than unpickling named tuples one by one), and turned back into
nodes with `tuple.__new__`. Like any such file it must be as protected as the code itself: it
lives beside the repository, written only by the server that reads it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

from registry import nodes as n
from registry.cohorts import Primary, Ranked, RecordEvent, Trust
from registry.graph import Cohort, Graph, Mainline, RunFacts
from registry.snapshots import Publication, gc_paused
from registry.store import GitStore

__all__ = ["cache_path", "code_fingerprint", "decode", "encode", "load_cache", "save_cache"]

_FORMAT = 2
_DERIVING_MODULES = ("nodes", "graph", "members", "cohorts", "snapshots", "validate", "graphcache", "kinds/__init__")
_NODE_CLASSES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (n.Run, n.Workload, n.Implementation, n.Operation, n.Project, n.Protocol, n.Environment,
                n.Attestation, n.Retraction, n.Supersession, n.Verification, n.ServingRun, n.ServingWorkload,
                n.ServingConfiguration, n.ServingStack, n.Model, n.Other)
}  # fmt: skip
_PRIMARY = n.Run._fields.index("primary")
_new = tuple.__new__
_TRUST = {int(trust): trust for trust in Trust}


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


def encode(graph: Graph, publication: Publication) -> bytes:
    """The graph and its publication record as bytes (rankings and ledgers included: prepare first)."""
    nodes: dict[str, list[tuple[Any, ...]]] = {}
    for node in graph.nodes.values():
        row = tuple(node)
        if type(node) is n.Run and node.primary is not None:
            row = (*row[:_PRIMARY], tuple(node.primary), *row[_PRIMARY + 1 :])  # type: ignore[arg-type]
        nodes.setdefault(type(node).__name__, []).append(row)
    facts = [(digest, *f[:2], int(f.trust), *f[3:]) for digest, f in graph.facts.items()]
    cohorts = [
        (
            c.key, c.profile, c.operation, c.workload, c.protocol, c.environment, c.correctness_key, c.metric_key,
            c.gpu, c.members,
            [tuple(r) for r in c.ranked(graph)],
            [(e.cohort, e.run, e.previous_run, e.cause, e.at, e.at_ns, e.value, e.previous_value, e.policy_version)
             for e in c.events(graph)],
        )
        for c in graph.cohorts.values()
    ]  # fmt: skip
    mainline = publication.mainline
    payload = {
        "format": _FORMAT,
        "fingerprint": code_fingerprint(),
        "commit": graph.commit,
        "mainline": (list(mainline.commits), list(mainline.times), list(mainline.sources)),
        "first": dict(publication.first),
        "graph": {
            "commit": graph.commit,
            "committed_at": graph.committed_at,
            "position": graph.position,
            "honoured": sorted(graph.honoured_commits),
            "nodes": nodes,
            "facts": facts,
            "cohorts": cohorts,
            "names": dict(graph.names),
            "unpublished": sorted(graph.unpublished),
            **{name: _plain(getattr(graph, name)) for name in ("runs_by", "cohorts_by", "children", "overlays")},
        },
    }
    return marshal.dumps(payload)


def _plain(indexes: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    return {name: {key: list(members) for key, members in index.items()} for name, index in indexes.items()}


def decode(data: bytes) -> tuple[Graph, Publication]:
    """The graph and publication record `encode` wrote.

    The cyclic garbage collector is paused meanwhile (`gc_paused`): the millions of containers
    this creates hold no cycles, and collecting them as they appear would double the time.

    Raises:
        ValueError: not a cache of this format and code.
    """
    with gc_paused():
        return _decode(data)


def _decode(data: bytes) -> tuple[Graph, Publication]:
    try:
        payload = marshal.loads(data)
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError(f"unreadable cache: {exc}") from None
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise ValueError("a cache of another format")
    if payload.get("fingerprint") != code_fingerprint():
        raise ValueError("a cache written by other code")
    commits, times, sources = payload["mainline"]
    mainline = Mainline.of(commits, times, sources)
    publication = Publication(mainline, payload["first"])
    saved = payload["graph"]
    graph = Graph(
        saved["commit"],
        saved["committed_at"],
        mainline,
        saved["position"],
        frozenset(saved["honoured"]),
        publication.first,
    )
    nodes = graph.nodes
    for name, rows in saved["nodes"].items():
        cls = _NODE_CLASSES[name]
        if cls is n.Run:
            for row in rows:
                primary = row[_PRIMARY]
                if primary is not None:
                    row = (*row[:_PRIMARY], _new(Primary, primary), *row[_PRIMARY + 1 :])
                nodes[row[0]] = _new(cls, row)
        else:
            for row in rows:
                nodes[row[0]] = _new(cls, row)
    graph.facts = {row[0]: _new(RunFacts, (*row[1:3], _TRUST[row[3]], *row[4:])) for row in saved["facts"]}
    for row in saved["cohorts"]:
        cohort = Cohort(*row[:10])
        cohort.restore([_new(Ranked, r) for r in row[10]], [RecordEvent(*e) for e in row[11]])
        graph.cohorts[cohort.key] = cohort
    graph.names = saved["names"]
    graph.unpublished = set(saved["unpublished"])
    for name in ("runs_by", "cohorts_by", "children", "overlays"):
        setattr(graph, name, {index: {key: set(members) for key, members in keys.items()}
                              for index, keys in saved[name].items()})  # fmt: skip
    if graph.commit != payload["commit"]:
        raise ValueError("an inconsistent cache")
    return graph, publication


def save_cache(path: Path, graph: Graph, publication: Publication) -> bool:
    """Write the cache atomically; False (and nothing written) if the directory is not writable."""
    data = encode(graph, publication)
    try:
        handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
        return True
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        return False


def load_cache(path: Path, store: GitStore) -> tuple[Graph, Publication] | None:
    """The cached graph if it is usable with this repository and this code, else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        graph, publication = decode(data)
    except Exception:  # whatever a damaged file makes decoding raise, it means "no cache"
        return None
    main = store.head()
    if main is None or graph.commit not in publication.mainline.positions:
        return None
    if not store.is_ancestor(publication.mainline.commits[-1], main):
        return None  # main was rewritten since (or this cache is another repository's)
    return graph, publication

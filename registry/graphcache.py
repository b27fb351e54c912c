"""The warm-start cache: a derived graph and its publication record, saved in the registry's cache folder
(`kernelindex.registry.cache_dir`).

A cache file is keyed by the commit it describes and by the code that derived it (a hash of
the modules that compute derived facts), written atomically, and ignored whenever it is
stale, corrupt (a CRC-32 of the whole file), or describes a commit main no longer contains. It
holds nothing that cannot be recomputed from git.

Format 3 is memory-mapped and materialized lazily: a small header (`marshal`: the
commit, main's history, the small sets) and, for each big map of the graph (nodes, facts, cohorts
with their rankings and ledgers, names, the indexes, the publication record), buckets of rows that
`kernelindex.registry.lazymap.LazyMap` decodes when a key of theirs is first read. A start reads the header and
checks the CRC; what requests touch is decoded as they touch it. Rows are plain tuples, lists, sets
and dicts (`marshal` shares repeated strings and reads ~10x faster than unpickling), turned back
into nodes with `tuple.__new__`. Like any such file it must be as protected as the code itself: it
lives in a folder of the user who serves, written only by the server that reads it.
"""

from __future__ import annotations

import hashlib
import marshal
import mmap
import os
import struct
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelindex.registry import nodes as n
from kernelindex.registry.cache_dir import cache_dir, make_folder
from kernelindex.registry.cohorts import Primary, Ranked, RecordEvent, Trust
from kernelindex.registry.graph import Cohort, Graph, Index, Mainline
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.lazymap import LazyMap, write_buckets
from kernelindex.registry.members import LAYER_FROM
from kernelindex.registry.run_facts import RunFacts
from kernelindex.registry.run_indexes import RunIndexes
from kernelindex.registry.snapshots import Publication, gc_paused
from kernelindex.registry.store import GitStore

__all__ = ["cache_path", "code_fingerprint", "decode", "encode", "load_cache", "materialize", "save_cache"]

_FORMAT = 4  # 4: node class ids follow the kinds' specs (`_classes`)
_DERIVING_MODULES = (
    "nodes", "graph", "graph_cohort", "graph_derive", "graph_build", "graph_apply", "run_facts", "mainline",
    "members", "cohorts", "snapshots", "validate", "graphcache", "lazymap", "kinds/__init__", "kind_specs", "merges",
)  # fmt: skip
_PRIMARY = n.Run._fields.index("primary")
_new = tuple.__new__
_TRUST = {int(trust): trust for trust in Trust}


def _classes() -> tuple[type[Any], ...]:
    """The node classes, by class id: each kind's, in the order of `KINDS` (kinds sharing a class share its id),
    then `Other`. Read at each use, so that a kind registered after this module was imported is cached too."""
    return (*dict.fromkeys(n.node_class(spec) for spec in KINDS.values()), n.Other)


def code_fingerprint() -> str:
    """Changes whenever the code that derives facts, or the set of kinds, changes: a cache from other code is
    stale."""
    digest = hashlib.sha256(str(_FORMAT).encode())
    digest.update(
        " ".join(f"{spec.name}/{spec.folder}/{','.join(spec.field_names)}" for spec in KINDS.values()).encode()
    )
    package = Path(__file__).resolve().parent
    for name in _DERIVING_MODULES:
        digest.update((package / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]


def cache_path(repo_path: Path, root: Path | None = None) -> Path:
    """The warm-start cache of the registry at `repo_path`: `graphcache` in its cache folder (`cache_dir`)."""
    return cache_dir(repo_path, root) / "graphcache"


_MAGIC = b"KIGRAPH\x04"
_PREFIX = struct.Struct("<8sQI")  # magic, header length, CRC-32 of everything after the prefix
_INDEXES = ("runs_by", "cohorts_by", "children")  # big indexes, bucketed (overlays are small: in the header)


def encode(graph: Graph, publication: Publication) -> bytes:
    """The graph and its publication record as bytes (rankings and ledgers included: prepare first)."""
    class_ids = {cls: index for index, cls in enumerate(_classes())}
    maps: dict[str, dict[str, Any]] = {
        "nodes": {d: _node_row(node, class_ids) for d, node in graph.nodes.items()},
        "facts": {d: (*f[:2], int(f.trust), *f[3:]) for d, f in graph.facts.items()},
        "cohorts": {
            c.key: (
                c.key, c.profile, c.operation, c.workload, c.protocol, c.environment, c.correctness_key,
                c.metric_key, c.gpu, c.members,
                [tuple(r) for r in c.ranked(graph)],
                [(e.cohort, e.run, e.previous_run, e.cause, e.at, e.at_ns, e.value, e.previous_value,
                  e.policy_version) for e in c.events(graph)],
            )
            for c in graph.cohorts.values()
        },
        "names": dict(graph.names.items()),
        "first": dict(publication.first.items()),
    }  # fmt: skip
    for index in _INDEXES:
        for name, keys in getattr(graph, index).items():
            # As a built graph holds them (`kernelindex.registry.members.compact`): a warm start serves from these.
            maps[f"{index}/{name}"] = {
                key: set(members) if len(members) >= LAYER_FROM else tuple(members) for key, members in keys.items()
            }
    body = bytearray()
    layout: dict[str, tuple[int, list[tuple[int, int]]]] = {}
    for name, rows in maps.items():
        base = len(body)
        size, spans = write_buckets(rows, lambda blob: _append(body, blob))
        layout[name] = (size, [(base + offset, length) for offset, length in spans])
    mainline = publication.mainline
    header = marshal.dumps(
        {
            "format": _FORMAT,
            "fingerprint": code_fingerprint(),
            "commit": graph.commit,
            "mainline": (list(mainline.commits), list(mainline.times), list(mainline.sources)),
            "graph": {
                "commit": graph.commit,
                "committed_at": graph.committed_at,
                "position": graph.position,
                "honoured": sorted(graph.honoured_commits),
                "unpublished": sorted(graph.unpublished),
                "records": list(graph.records),  # the ledger's order: a first `records` query costs nothing
                "overlays": {
                    name: {key: list(members) for key, members in index.items()}
                    for name, index in graph.overlays.items()
                },
            },
            "layout": layout,
        }
    )
    rest = header + bytes(body)
    return _PREFIX.pack(_MAGIC, len(header), zlib.crc32(rest)) + rest


def _append(body: bytearray, blob: bytes) -> int:
    body += blob
    return len(blob)


def _node_row(node: n.Node, class_ids: dict[type[Any], int]) -> tuple[Any, ...]:
    row = tuple(node)
    if type(node) is n.Run and node.primary is not None:
        row = (*row[:_PRIMARY], tuple(node.primary), *row[_PRIMARY + 1 :])  # type: ignore[arg-type]
    return (class_ids[type(node)], *row)


def decode(data: bytes | mmap.mmap, *, checked: bool = False) -> tuple[Graph, Publication]:
    """The graph and publication record `encode` wrote; its big maps are decoded as they are read
    (`kernelindex.registry.lazymap`), so `data` must stay readable as long as the graph lives (an mmap does).

    Raises:
        ValueError: not a cache of this format and code, or damaged (unless `checked`: the caller
            verified the CRC already).
    """
    if len(data) < _PREFIX.size:
        raise ValueError("not a cache: too short")
    magic, header_length, crc = _PREFIX.unpack(data[: _PREFIX.size])
    if magic != _MAGIC:
        raise ValueError("a cache of another format")
    if not checked and zlib.crc32(memoryview(data)[_PREFIX.size :]) != crc:
        raise ValueError("a damaged cache (its CRC differs)")
    try:
        payload = marshal.loads(data[_PREFIX.size : _PREFIX.size + header_length])
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError(f"unreadable cache: {exc}") from None
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise ValueError("a cache of another format")
    if payload.get("fingerprint") != code_fingerprint():
        raise ValueError("a cache written by other code")
    with gc_paused():
        return _decode(data, _PREFIX.size + header_length, payload)


def _decode(data: bytes | mmap.mmap, start: int, payload: dict[str, Any]) -> tuple[Graph, Publication]:
    buffer = memoryview(data)[start:]

    def lazy(name: str, convert: Any = None) -> LazyMap[Any]:
        size, spans = payload["layout"][name]
        return LazyMap(buffer, spans, size, convert)

    commits, times, sources = payload["mainline"]
    mainline = Mainline.of(commits, times, sources)
    publication = Publication(mainline, lazy("first"))
    saved = payload["graph"]
    graph = Graph(
        saved["commit"],
        saved["committed_at"],
        mainline,
        saved["position"],
        frozenset(saved["honoured"]),
        publication.first,
    )
    classes = _classes()
    graph.nodes = lazy("nodes", lambda rows: _nodes(rows, classes))
    graph.facts = lazy("facts", _facts)
    graph.cohorts = lazy("cohorts", _cohorts)
    graph.names = lazy("names")
    graph.unpublished = set(saved["unpublished"])
    graph.__dict__["records"] = tuple(saved["records"])  # what the cached property would compute
    indexes: dict[str, dict[str, Index]] = {index: {} for index in _INDEXES}
    for name in payload["layout"]:
        group, slash, key = name.partition("/")
        if slash and group in indexes:
            indexes[group][key] = lazy(name)
    graph.runs_by = RunIndexes(graph.nodes, graph.facts, indexes["runs_by"])
    graph.cohorts_by, graph.children = indexes["cohorts_by"], indexes["children"]
    graph.overlays = {name: {key: set(members) for key, members in keys.items()}
                      for name, keys in saved["overlays"].items()}  # fmt: skip
    if graph.commit != payload["commit"]:
        raise ValueError("an inconsistent cache")
    return graph, publication


def _nodes(rows: dict[str, tuple[Any, ...]], classes: tuple[type[Any], ...]) -> dict[str, n.Node]:
    # Not under gc_paused: its freeze would also keep the garbage of requests running meanwhile.
    found: dict[str, n.Node] = {}
    for digest, row in rows.items():
        cls = classes[row[0]]
        if cls is n.Run and row[_PRIMARY + 1] is not None:
            primary = row[_PRIMARY + 1]
            found[digest] = _new(cls, (*row[1 : _PRIMARY + 1], _new(Primary, primary), *row[_PRIMARY + 2 :]))
        else:
            found[digest] = _new(cls, row[1:])
    return found


def _facts(rows: dict[str, tuple[Any, ...]]) -> dict[str, RunFacts]:
    return {digest: _new(RunFacts, (*row[:2], _TRUST[row[2]], *row[3:])) for digest, row in rows.items()}


def _cohorts(rows: dict[str, tuple[Any, ...]]) -> dict[str, Cohort]:
    found: dict[str, Cohort] = {}
    for key, row in rows.items():
        cohort = Cohort(*row[:10])
        cohort.restore([_new(Ranked, r) for r in row[10]], [RecordEvent(*e) for e in row[11]])
        found[key] = cohort
    return found


def materialize(graph: Graph, publication: Publication, pause: Callable[[], object] | None = None) -> None:
    """Decode every bucket of a cached graph now, so that first requests find everything decoded: at once in
    a process that replaces a serving one (it has the time), or in the background after a warm start,
    calling `pause` after each bucket (a server's: let the requests in flight go first).

    Once every map is decoded the cache file is no longer mapped (`LazyMap.decode_all`)."""
    maps = [graph.nodes, graph.facts, graph.cohorts, graph.names, publication.first]
    maps += [index for group in (graph.runs_by, graph.cohorts_by, graph.children) for index in group.values()]
    for found in maps:
        if isinstance(found, LazyMap):
            found.decode_all(pause)


def save_cache(path: Path, graph: Graph, publication: Publication) -> bool:
    """Write the cache atomically (its folder made if missing); False (and nothing written) if the folder cannot be
    made or written."""
    data = encode(graph, publication)
    try:
        make_folder(path.parent)
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
    """The cached graph if it is usable with this repository and this code, else None. The file is
    memory-mapped (its pages are read as the graph's maps are), after a CRC check that reads it
    through the page cache rather than into this process."""
    try:
        with open(path, "rb") as handle:
            prefix = handle.read(_PREFIX.size)
            if len(prefix) < _PREFIX.size or prefix[:8] != _MAGIC:
                return None
            crc = 0
            while chunk := handle.read(1 << 20):
                crc = zlib.crc32(chunk, crc)
            if crc != _PREFIX.unpack(prefix)[2]:
                return None
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        graph, publication = decode(mapped, checked=True)
    except Exception:  # whatever a damaged file makes decoding raise, it means "no cache"
        return None
    main = store.head()
    if main is None or graph.commit not in publication.mainline.positions:
        return None
    if not store.is_ancestor(publication.mainline.commits[-1], main):
        return None  # main was rewritten since (or this cache is another repository's)
    return graph, publication

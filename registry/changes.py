"""What each commit of main changed, newest first, a page of commits at a time: what it published (by
kind), the runs it retracted, superseded or verified, and the records that changed hands because of it.

The history is main's first-parent history (the publication record). A commit's
changes are read from git, not from a scan of the registry: its tree is compared with its first
parent's one fan-out subtree at a time (equal subtree ids are skipped), so a page costs what its
commits added, however long the history or large the registry. What the additions mean comes from
the graph the caller reads at (usually main's head):

- **published**: the manifests the commit first published (a manifest main held before is not
  published again), grouped by kind, each group ordered by name then digest.
- **retracted / superseded / verified**: the Retraction, Supersession and Verification manifests it
  published that count, i.e. whose commit a maintainer signed (the graph knows which
  commits are honoured). Those that do not count are listed apart, in `ignored`, so a reader sees them
  without mistaking them for facts.
- **moved**: the record events (the records ledger) this commit caused: a `new_run`
  event for a run it published, a `retraction` event for a retraction it published. The ledger is the
  graph's: a later run observed earlier can rewrite history, and the events are those the ledger keeps.

Each commit has a stable position (its index on main's first-parent history, oldest 0): main only
grows, so a position names the same commit forever and serves as a cursor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kernelindex.registry.cohorts import RecordEvent
from kernelindex.registry.errors import RevisionNotFound
from kernelindex.registry.graph import Graph
from kernelindex.registry.kinds import KIND_BY_FOLDER
from kernelindex.registry.nodes import Retraction, Run, Supersession, Verification
from kernelindex.registry.store import GitStore

__all__ = [
    "ChangesPage",
    "CommitChanges",
    "KindCount",
    "Retracted",
    "Superseded",
    "Verified",
    "added_digests",
    "changes",
    "commit_changes",
]

_TREE_MODE = 0o040000
_NAME_LENGTH = 64 + len(".json")


@dataclass(frozen=True, slots=True)
class KindCount:
    """The manifests of one kind a commit published, by name then digest."""

    kind: str
    digests: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.digests)


@dataclass(frozen=True, slots=True)
class Retracted:
    run: str
    retraction: str  # the Retraction manifest
    reason: str


@dataclass(frozen=True, slots=True)
class Superseded:
    run: str  # the run replaced
    by: str  # the correction that replaces it
    supersession: str  # the Supersession manifest
    reason: str


@dataclass(frozen=True, slots=True)
class Verified:
    run: str
    rerun: str  # the registry's rerun (a BenchmarkRun in the same cohort)
    runner: str
    verification: str  # the Verification manifest


@dataclass(frozen=True, slots=True)
class CommitChanges:
    """What one commit of main's first-parent history changed."""

    commit: str
    position: int  # its index on main's first-parent history, oldest 0: stable, a cursor
    committed_at: int  # committer time, seconds
    source: str | None  # its Source: trailer
    published: tuple[KindCount, ...]  # by kind name
    retracted: tuple[Retracted, ...]
    superseded: tuple[Superseded, ...]
    verified: tuple[Verified, ...]
    ignored: tuple[str, ...]  # lifecycle overlays it published that do not count (no maintainer signed it)
    moved: tuple[RecordEvent, ...]  # record events it caused, by cohort key then time

    @property
    def total(self) -> int:
        """How many manifests it published."""
        return sum(group.count for group in self.published)

    def count(self, kind: str) -> int:
        return next((group.count for group in self.published if group.kind == kind), 0)


@dataclass(frozen=True, slots=True)
class ChangesPage:
    """Commits newest first; `total` counts the whole range asked for, `has_next` says whether
    commits older than the last one listed remain in it (ask again with `after` = its position)."""

    entries: tuple[CommitChanges, ...]
    total: int
    has_next: bool


def changes(
    store: GitStore, graph: Graph, *, since: str | None = None, first: int = 20, after: int | None = None
) -> ChangesPage:
    """The commits of main after `since` (all of main's history when None) up to `graph`'s commit,
    newest first: at most `first` of them, starting below position `after` when given (the position
    of the last commit of the previous page). A graph off main has no history of its own: no changes.

    Cost: the commits listed, each in proportion to what it added (`commit_changes`); never the whole
    history or the whole registry.

    Raises:
        RevisionNotFound: `since` is not a commit of main's first-parent history at or before the
            graph's commit (a full commit id is expected).
        ValueError: `first` is negative.
    """
    if first < 0:
        raise ValueError(f"first must be 0 or more, not {first}")
    top = graph.position if graph.position is not None else -1
    bottom = -1
    if since is not None:
        found = graph.mainline.positions.get(since)
        if found is None or found > top:
            where = graph.commit[:12]
            raise RevisionNotFound(since, f"not a commit of main's first-parent history up to {where}")
        bottom = found
    start = top if after is None else min(top, after - 1)
    positions = range(start, max(bottom, start - first), -1)
    entries = tuple(commit_changes(store, graph, position) for position in positions)
    last = positions[-1] if entries else start + 1
    return ChangesPage(entries, top - bottom, last - 1 > bottom)


def commit_changes(store: GitStore, graph: Graph, position: int) -> CommitChanges:
    """What the commit at `position` on the graph's mainline changed, as the graph reads it."""
    mainline = graph.mainline
    commit = mainline.commits[position]
    parent = mainline.commits[position - 1] if position > 0 else None
    nodes = graph.nodes
    first = [d for d in added_digests(store, commit, parent) if graph.published_in.get(d[1]) == position]
    groups: dict[str, list[tuple[str, str]]] = {}
    for folder_kind, digest in first:
        node = nodes.get(digest)
        kind = node.kind if node is not None else folder_kind
        groups.setdefault(kind, []).append((node.name if node is not None else "", digest))
    published = tuple(
        KindCount(kind, tuple(digest for _, digest in sorted(members))) for kind, members in sorted(groups.items())
    )
    retracted: list[Retracted] = []
    superseded: list[Superseded] = []
    verified: list[Verified] = []
    ignored: list[str] = []
    moved: list[RecordEvent] = []
    runs: list[str] = []
    for _, digest in first:
        node = nodes.get(digest)
        if isinstance(node, Run):
            runs.append(digest)
        elif isinstance(node, Retraction | Supersession | Verification) and not graph.honoured(node):
            ignored.append(digest)
        elif isinstance(node, Retraction):
            retracted.append(Retracted(node.run, digest, node.reason))
        elif isinstance(node, Supersession) and isinstance(nodes.get(node.run), Run):
            superseded.append(Superseded(node.supersedes, node.run, digest, node.reason))
        elif isinstance(node, Verification):
            verified.append(Verified(node.run, node.rerun, node.runner, digest))
    moved.extend(_events_caused(graph, runs, retracted, mainline.times[position]))
    return CommitChanges(
        commit,
        position,
        mainline.times[position],
        mainline.sources[position],
        published,
        tuple(sorted(retracted, key=lambda r: (r.run, r.retraction))),
        tuple(sorted(superseded, key=lambda s: (s.run, s.supersession))),
        tuple(sorted(verified, key=lambda v: (v.run, v.verification))),
        tuple(sorted(ignored)),
        tuple(sorted(moved, key=lambda e: (e.cohort, e.at_ns, e.run))),
    )


def _events_caused(
    graph: Graph, runs: Iterable[str], retracted: Iterable[Retracted], committed_at: int
) -> list[RecordEvent]:
    """The ledger's events for runs published here (`new_run`) and retractions published here
    (`retraction`, at this commit's time). Only the cohorts these runs belong to are replayed."""
    wanted_runs: dict[str, set[str]] = {}
    for digest in runs:
        facts = graph.facts.get(digest)
        if facts is not None and facts.cohort is not None:
            wanted_runs.setdefault(facts.cohort, set()).add(digest)
    withdrawn: dict[str, set[str]] = {}
    for retraction in retracted:
        facts = graph.facts.get(retraction.run)
        if facts is not None and facts.cohort is not None:
            withdrawn.setdefault(facts.cohort, set()).add(retraction.run)
    at_ns = committed_at * 1_000_000_000
    found: list[RecordEvent] = []
    for key in wanted_runs.keys() | withdrawn.keys():
        cohort = graph.cohorts.get(key)
        if cohort is None:
            continue
        mine, gone = wanted_runs.get(key, set()), withdrawn.get(key, set())
        for event in cohort.events(graph):
            caused = event.run in mine if event.cause == "new_run" else event.previous_run in gone
            if caused and (event.cause == "new_run" or event.at_ns == at_ns):
                found.append(event)
    return found


def added_digests(store: GitStore, commit: str, parent: str | None) -> list[tuple[str, str]]:
    """(kind, digest) of every manifest file `commit`'s tree holds and `parent`'s does not.

    Kind folders and fan-out subtrees whose ids equal the parent's are skipped, so the cost follows
    the subtrees the commit changed. Files that are not manifests at their digest path are not listed.
    """
    before = _folders(store, parent) if parent is not None else {}
    added: list[tuple[str, str]] = []
    for mode, folder, tree in store.tree_entries(store.tree_id(commit)):
        info = KIND_BY_FOLDER.get(folder)
        if mode != _TREE_MODE or info is None or before.get(folder) == tree:
            continue
        old_fans = _fans(store, before[folder]) if folder in before else {}
        for fan_mode, fan, fan_tree in store.tree_entries(tree):
            if fan_mode != _TREE_MODE or old_fans.get(fan) == fan_tree:
                continue
            names = store.fan_out_names(fan_tree)
            if fan in old_fans:
                names -= store.fan_out_names(old_fans[fan])
            for name in names:
                if len(name) == _NAME_LENGTH and name.endswith(b".json") and name[:2].decode() == fan:
                    added.append((info.name, "sha256:" + name[:64].decode()))
    added.sort(key=lambda item: item[1])
    return added


def _folders(store: GitStore, commit: str) -> dict[str, str]:
    return {
        name: tree
        for mode, name, tree in store.tree_entries(store.tree_id(commit))
        if mode == _TREE_MODE and name in KIND_BY_FOLDER
    }


def _fans(store: GitStore, tree: str) -> dict[str, str]:
    return {name: sub for mode, name, sub in store.tree_entries(tree) if mode == _TREE_MODE}

"""Graphs by commit: the publication record, cold builds, moves by tree diff, and the snapshot set a
server holds (the validated head of main plus an LRU of pinned commits).

A graph for any commit is made from a graph it already has, by applying the tree diff
between the two commits: cost grows with the difference, not with the registry. Only the
first graph is built from scratch (or loaded from the warm cache).
"""

from __future__ import annotations

import gc
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, filterfalse, repeat
from pathlib import Path
from sys import intern

import orjson

from kernelindex.registry.append_only import first_violation
from kernelindex.registry.cat_file import CatFile
from kernelindex.registry.decode import decode, decode_stream
from kernelindex.registry.errors import RegistryError, RevisionNotFound
from kernelindex.registry.graph import Graph, Mainline
from kernelindex.registry.graph_apply import apply
from kernelindex.registry.graph_build import ColdBuild
from kernelindex.registry.integrity import (
    IntegrityCheck,
    IntegrityFailure,
    IntegrityRecord,
    check_entries,
    record_path,
    verify_commit,
)
from kernelindex.registry.kinds import KIND_BY_FOLDER, KINDS
from kernelindex.registry.manifest import Manifest, stored_manifest
from kernelindex.registry.members import LayeredMap, layered_over
from kernelindex.registry.merges import publication_source
from kernelindex.registry.nodes import Implementation, Node, Retraction, Supersession, Verification, Workload
from kernelindex.registry.provenance import SignatureCheck
from kernelindex.registry.review import check_range
from kernelindex.registry.store import Entry, FanOutMoves, GitStore, TreeChange
from kernelindex.registry.trust import TrustChain
from kernelindex.registry.validate import operation_found

__all__ = [
    "HeadStatus",
    "Honour",
    "Publication",
    "Snapshots",
    "build_graph",
    "gc_paused",
    "load_nodes",
    "move_graph",
    "overlay_commits",
    "publication_of",
]

Honour = Callable[[Iterable[str]], frozenset[str]]
"""Given commits that introduce overlays, the ones whose overlays count (signed by a maintainer)."""

_OVERLAYS = (Retraction, Supersession, Verification)
_REGULAR = 0o100644


@contextmanager
def gc_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector out of bulk loads: it would scan every new tuple
    again and again (it doubles load time at 100k manifests). Nodes hold no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()  # what we loaded is long-lived: keep it out of future collections too


@dataclass(frozen=True, slots=True)
class Publication:
    """When each manifest was published: its first commit on main's first-parent history."""

    mainline: Mainline
    first: Mapping[str, int] = field(repr=False)  # digest -> position in mainline.commits

    def position(self, digest: str) -> int:
        return self.first.get(digest, -1)


def publication_of(
    store: GitStore, head: str, previous: Publication | None = None, changes: list[TreeChange] | None = None
) -> Publication:
    """Replay main's first-parent history up to `head`, reusing `previous` when head extends it.

    Which manifest files each commit added to its first parent comes from one `git log` of the
    new commits (`GitStore.added_manifest_names`): git diffs each commit in C, skipping equal
    subtrees, so the cost follows what the history added, and Python makes one pass over the names.
    """
    known = previous.mainline.commits[-1] if previous and previous.mainline.commits else None
    chain = store.first_parents(head, stop=known)[::-1]
    if previous is not None and known is not None and chain == [known, head] and changes is not None:
        # One new commit on main, whose diff with its first parent the caller already has.
        info = store.commit_info(head)
        first = layered_over(previous.first)
        position = len(previous.mainline.commits)
        for change in changes:
            digest = _digest_of_path(change.path)
            if change.new is not None and digest is not None:
                first.setdefault(digest, position)
        source = publication_source(store, info)  # a merge's: its pull request's commits' (`registry.merges`)
        return Publication(previous.mainline.extended([head], [info.committer.time], [source]), first)
    if previous is not None and known is not None and chain[0] == known:
        mainline, new, stop = previous.mainline, chain[1:], known
    else:
        mainline, new, stop = Mainline.of((), (), ()), chain, None
    added = store.added_manifest_names(head, stop=stop)
    offset = len(mainline.commits)
    times, sources = [], []
    found: dict[str, int] = {}
    # Newest first, each commit's names overwriting a later one's: a manifest keeps the first commit
    # that added it (removed and added again, it was published the first time).
    for index in range(len(new) - 1, -1, -1):
        names = added.get(new[index])
        if names:
            # Interned: the nodes' digests are the same strings (120 bytes a manifest saved).
            found.update(zip(map(intern, map("sha256:".__add__, names)), repeat(offset + index)))
    if previous is not None and stop is not None:
        found.update(previous.first)  # published before: kept as it was
    for commit in new:
        info = store.commit_info(commit)
        times.append(info.committer.time)
        sources.append(publication_source(store, info))
    return Publication(mainline.extended(new, times, sources), found)


def _digest_of_path(path: str) -> str | None:
    rest = path.partition("/")[2]
    if not rest.endswith(".json") or len(rest) != 3 + 64 + 5:
        return None
    return "sha256:" + rest[3:-5]


def _entry_of(path: str, oid: str | None) -> Entry | None:
    if oid is None:
        return None
    folder, _, rest = path.partition("/")
    info = KIND_BY_FOLDER.get(folder)
    digest = _digest_of_path(path)
    if info is None or digest is None or rest[:2] != digest[7:9]:
        return None
    return Entry(info.name, digest[7:], oid)


def load_nodes(store: GitStore, entries: Sequence[Entry], blobs: Mapping[str, bytes] | None = None) -> list[Node]:
    """Read and extract some manifests (no validation: every file was validated when written,
    and its path names its digest); `blobs`: bytes already read, by blob id."""
    known = blobs or {}
    unread = [e.oid for e in entries if e.oid not in known]
    read = dict(zip(unread, store.read_blobs(unread), strict=True))
    return [decode(e.kind, e.digest, e.oid, known[e.oid] if e.oid in known else read[e.oid]) for e in entries]


def stream_nodes(store: GitStore, commit: str) -> Iterator[Node]:
    """Every manifest at `commit` as a node, while git is still reading the rest: every other kind
    first, then the runs, so that a run's facts can be derived as it arrives (`ColdBuild.take`).
    Equal titles and instants are one string, for this build only (`decode_stream`)."""
    # `chain` starts the runs' `git` pipeline once the first one is drained, as a loop would.
    return decode_stream(chain.from_iterable(store.manifests_with_bytes(commit, f) for f in _STREAM_ORDER))


_RUNS_FOLDER = KINDS["BenchmarkRun"].folder
_STREAM_ORDER = (sorted(set(KIND_BY_FOLDER) - {_RUNS_FOLDER}), [_RUNS_FOLDER])


def overlay_commits(
    digests: Iterable[str], node_of: Callable[[str], Node | None], publication: Publication
) -> set[str]:
    """The commits that published those of `digests` that are overlays needing a signature."""
    found = set()
    for digest in digests:
        position = publication.first.get(digest)
        if position is not None and isinstance(node_of(digest), _OVERLAYS):
            found.add(publication.mainline.commits[position])
    return found


def _overlays(graph: Graph) -> set[str]:
    return {d for name in ("retractions", "supersessions", "verifications") for ds in graph.overlays[name].values()
            for d in ds}  # fmt: skip


def build_graph(
    store: GitStore, commit: str, publication: Publication | None = None, honour: Honour | None = None
) -> tuple[Graph, Publication]:
    """A graph from scratch: every manifest at `commit`, with main's publication record (replayed
    from main's head when not given).

    The publication replay runs in a thread with its own repository handle while this thread
    indexes the manifests `git cat-file` streams in: the replay fills the time spent waiting on git.
    """
    info = store.commit_info(commit)
    replay: list[Publication | BaseException] = []

    def replay_history() -> None:
        try:
            own = GitStore(store.path)
            head = own.head()
            replay.append(publication_of(own, head if head is not None else commit))
            own.release()
        except BaseException as exc:
            replay.append(exc)

    worker = None
    if publication is None:
        worker = threading.Thread(target=replay_history, name="publication-replay", daemon=True)
        worker.start()
    with gc_paused():
        builder = ColdBuild(commit, info.committer.time)
        builder.take(stream_nodes(store, commit), derive_runs=True)
        graph = builder.graph
        if worker is not None:
            worker.join()
            found = replay[0]
            if isinstance(found, BaseException):
                raise found
            publication = found
        assert publication is not None
        overlays = _overlays(graph)
        honoured = honour(overlay_commits(overlays, graph.nodes.get, publication)) if honour else frozenset()
        position = publication.mainline.positions.get(commit)
        graph = builder.derive(publication.mainline, position, publication.first, honoured)
    return graph, publication


def move_graph(
    store: GitStore,
    graph: Graph,
    commit: str,
    publication: Publication,
    honour: Honour | None = None,
    changes: list[TreeChange] | None = None,
    blobs: Mapping[str, bytes] | None = None,
) -> Graph:
    """The graph of `commit`, made from `graph` by applying the tree diff between their commits
    (`changes`, when the caller has it already; `blobs`, bytes of its files already read)."""
    info = store.commit_info(commit)
    added_entries: list[Entry] = []
    removed: list[str] = []
    for change in store.diff(graph.commit, commit) if changes is None else changes:
        digest = _digest_of_path(change.path)
        if digest is None:
            continue
        if _entry_of(change.path, change.old) is not None:
            removed.append(digest)
        entry = _entry_of(change.path, change.new)
        if entry is not None:
            added_entries.append(entry)
    with gc_paused():
        added = load_nodes(store, added_entries, blobs)
        honoured = graph.honoured_commits
        if honour is not None:
            fresh = {node.digest: node for node in added}
            candidates = [*fresh, *(d for d in graph.unpublished if d in publication.first)]
            honoured = honoured | honour(
                overlay_commits(candidates, lambda d: fresh.get(d) or graph.nodes.get(d), publication)
            )
        position = publication.mainline.positions.get(commit)
        return apply(
            graph,
            commit,
            info.committer.time,
            publication.mainline,
            position,
            added,
            removed,
            honoured,
            publication.first,
        )


@dataclass(frozen=True, slots=True)
class HeadStatus:
    """What a server tells `/healthz`: what it serves, what main is, and why they differ."""

    serving: str | None
    main: str | None
    reason: str | None = None
    checked_at: float = 0.0
    build_seconds: float = 0.0
    verified: str | None = None  # the last commit whose every manifest passed the integrity check
    verify_seconds: float = 0.0


class Snapshots:
    """The graphs one process serves: the validated head of main, and an LRU of pinned commits.

    Thread-safe. Every thread gets its own `GitStore` (libgit2 repositories must not be shared).
    """

    def __init__(
        self,
        repo_path: Path,
        *,
        capacity: int = 4,
        validate: bool = True,
        trust_root: bytes | None = None,
        cache_root: Path | None = None,
    ) -> None:
        """`trust_root`: the operator's pinned maintainers policy (see `kernelindex.registry.trust`). `cache_root`:
        where the registry's cache folder, with its integrity record, is made (`kernelindex.registry.cache_dir`;
        None: the user's cache folder).

        Raises:
            RegistryError: the pinned trust root is not a readable policy.
        """
        self.repo_path = repo_path
        self.trust_root = trust_root
        TrustChain.check_root(trust_root)
        self._local = threading.local()
        self._lock = threading.RLock()
        self._refresh_lock = threading.Lock()
        self._capacity = capacity
        self._pinned: OrderedDict[str, Graph] = OrderedDict()
        self._validate = validate
        self._signatures: dict[str, SignatureCheck] = {}
        self._terms: dict[tuple[int, str], dict[str, str]] = {}
        self._head: Graph | None = None
        self._publication: Publication | None = None
        self._record = IntegrityRecord(record_path(repo_path, cache_root))
        self._verified: str | None = None
        self._known: dict[str, str] = {}  # fan-out trees verified sound (`kernelindex.registry.integrity`)
        self._verify_seconds = 0.0
        self._trees: CatFile | None = None  # the refreshes' `git cat-file`, kept between them
        self.status = HeadStatus(None, None, "not loaded yet")

    def store(self) -> GitStore:
        """This thread's repository handle."""
        store: GitStore | None = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = GitStore(self.repo_path)
        return store

    @property
    def head(self) -> Graph:
        """The graph served for the head of main.

        Raises:
            RegistryError: nothing could be loaded (an empty registry, or no valid head).
        """
        graph = self._head
        if graph is None:
            raise RegistryError(f"no valid head to serve: {self.status.reason}")
        return graph

    @property
    def publication(self) -> Publication | None:
        return self._publication

    # Signatures -----------------------------------------------------------------------------------

    def trust(self) -> TrustChain:
        """This thread's view of the maintainers policies in force (see `kernelindex.registry.trust`)."""
        chain: TrustChain | None = getattr(self._local, "chain", None)
        if chain is None:
            chain = self._local.chain = TrustChain(self.store(), self.trust_root)
        return chain

    def signature(self, commit: str) -> SignatureCheck:
        """Whether a maintainer of the policy in force before `commit` signed it (cached: a
        commit's place in history never changes)."""
        with self._lock:
            found = self._signatures.get(commit)
        if found is None:
            found = self.trust().verify(commit)
            with self._lock:
                self._signatures[commit] = found
        return found

    def honour(self, commits: Iterable[str]) -> frozenset[str]:
        return frozenset(c for c in commits if self.signature(c).verified)

    def source_terms(self, mainline: Mainline, slug: str) -> dict[str, str]:
        """The trailers describing a source (name, licence, attribution, URL), from the commits of
        main that published its data, earliest first."""
        key = (len(mainline.commits), slug)
        with self._lock:
            found = self._terms.get(key)
        if found is not None:
            return found
        terms: dict[str, str] = {}
        store = self.store()
        for position, source in enumerate(mainline.sources):
            if source != slug:
                continue
            for name, value in store.commit_info(mainline.commits[position]).trailers:
                if name in ("Source-Name", "License", "Attribution", "Source-URL"):
                    terms.setdefault(name, value)
        with self._lock:
            self._terms[key] = terms
        return terms

    # Loading and refreshing -----------------------------------------------------------------------

    def load(self, graph: Graph | None = None, publication: Publication | None = None) -> None:
        """Serve main's head: from `graph` (a warm cache) when given, else built from scratch.

        The head is integrity-checked first (`kernelindex.registry.integrity`): in full once, then from the
        last recorded commit. A head that fails is not served: the last recorded good commit is,
        if main still descends from it, else nothing (the status says why). Never raises for what
        is in the repository: a corrupt one is a status, not a crash.
        """
        store = self.store()
        try:
            head = store.head()
        except RegistryError as exc:
            self.status = HeadStatus(None, None, f"cannot read main: {exc}")
            return
        if head is None:
            self.status = HeadStatus(None, None, "the registry is empty (main has no commits)")
            return
        started = time.perf_counter()
        try:
            target, reason = self._verified_target(store, head)
            if target is None:
                self.status = HeadStatus(None, head, reason, time.time(), 0.0, None, self._verify_seconds)
                return
            if (
                target == head
                and graph is not None
                and publication is not None
                and publication.mainline.positions.get(graph.commit) is not None
            ):
                self._install(graph, publication, head, started)
                if graph.commit != head:
                    self.refresh()
                return
            built, replayed = build_graph(store, target, None, self.honour)
            store.release()
            self._install(built, replayed, head, started, reason)
        except (RegistryError, ValueError, KeyError, OSError) as exc:  # orjson.JSONDecodeError is a ValueError
            self.status = HeadStatus(None, head, f"cannot load commit {head[:12]}: {_why(exc)}", time.time())

    def _verified_target(self, store: GitStore, head: str) -> tuple[str | None, str | None]:
        """The commit to serve at a start (head, or the last good one) and why it is not head.

        Two checks, each run in full once per registry and recorded, then only over what changed
        since the record: main's first-parent history never modified or deleted a published file
        (`kernelindex.registry.append_only`; a head whose history did is not served, its last good ancestor
        is), and every manifest of the commit to serve is intact (`kernelindex.registry.integrity`).
        """
        started = time.perf_counter()
        recorded, known = self._record.load()
        try:
            if recorded == head:
                self._verify_seconds = time.perf_counter() - started
                self._verified, self._known = head, known or store.fan_out_trees(head)
                if not known:
                    self._record.write(head, self._known)
                return head, None
            base = recorded if recorded is not None and store.is_ancestor(recorded, head) else None
            violation = first_violation(store, base, head)
            target = head if violation is None else violation.parent
            check = self._check(store, target, recorded if base is not None else None, known)
        except RegistryError as exc:  # StoreCorrupt, or a commit of the history that cannot be read
            self._verify_seconds = time.perf_counter() - started
            return self._fallback(store, recorded, head, f"commit {head[:12]} cannot be read: {exc}")
        self._verify_seconds = time.perf_counter() - started
        if check.problems:
            failed = str(IntegrityFailure(target, check.problems))
            return self._fallback(store, recorded, head, failed if violation is None else f"{violation}; {failed}")
        self._verified, self._known = target, check.trees
        self._record.write(target, check.trees)
        return target, None if violation is None else f"main {head[:12]} is not served: {violation}"

    @staticmethod
    def _check(store: GitStore, target: str, base: str | None, known: dict[str, str]) -> IntegrityCheck:
        """The integrity check of `target`, given the recorded commit when `target` descends from
        it and the fan-out trees remembered sound."""
        if base == target:
            return IntegrityCheck([], known or store.fan_out_trees(target))
        if known or base is None:
            return verify_commit(store, target, known)
        # A record without remembered trees: check what changed since the recorded commit.
        entries = [e for e in (_entry_of(c.path, c.new) for c in store.diff(base, target)) if e is not None]
        problems = check_entries(store, entries)
        bad = {problem.source.rpartition("/")[0] for problem in problems}
        trees = {key: tree for key, tree in store.fan_out_trees(target).items() if key not in bad}
        return IntegrityCheck(problems, trees, len(entries))

    def _fallback(self, store: GitStore, recorded: str | None, head: str, why: str) -> tuple[str | None, str]:
        if recorded is not None and recorded != head and store.is_ancestor(recorded, head):
            self._verified = recorded
            return recorded, f"main {head[:12]} is not served: {why}"
        return None, f"nothing valid to serve: {why}"

    def _install(
        self, graph: Graph, publication: Publication, main: str, started: float, reason: str | None = None
    ) -> None:
        with self._lock:
            self._head = graph
            self._publication = publication
            self._pinned.clear()  # derived against an older publication record
            self.status = HeadStatus(
                graph.commit,
                main,
                reason,
                time.time(),
                time.perf_counter() - started,
                self._verified,
                self._verify_seconds,
            )

    def refresh(self) -> HeadStatus:
        """Serve the new head of main if it moved and passes validation; otherwise keep the last good one."""
        with self._refresh_lock:
            store = self.store()
            main = store.head()
            current = self._head
            if current is None:
                self.load()
                return self.status
            if main is None or main == current.commit:
                self.status = HeadStatus(
                    current.commit, main, None, time.time(), self.status.build_seconds, *self._verification()
                )
                return self.status
            started = time.perf_counter()
            # Started by the first refresh and kept for the next ones (git's start was ~3.5 ms of a 100-manifest
            # refresh at 10x), not with the server: a git process holds 4 MB resident at rest (12 MB once it
            # has read a 1x registry's trees), which a server that never refreshes would hold for nothing.
            if self._trees is None:
                self._trees = CatFile(store.git_dir)
            blobs: dict[str, bytes] = {}  # the new files, read once: validated, then loaded
            stored: dict[str, Manifest | None] = {}  # what validation makes of them, while git reads trees
            moves = FanOutMoves()
            changes = store.diff(
                current.commit,
                main,
                absent=_absent_from(current),
                held=current.fan_out,
                arrived=_stored_as_they_arrive(store, blobs, stored) if self._validate else None,
                trees=self._trees,
                moves=moves,
            )
            reason = self._rejection(store, current.commit, main, changes, blobs, stored)
            if reason is not None:
                self.status = HeadStatus(
                    current.commit, main, reason, time.time(), self.status.build_seconds, *self._verification()
                )
                return self.status
            assert self._publication is not None
            try:
                publication = publication_of(store, main, self._publication, changes)
                graph = move_graph(store, current, main, publication, self.honour, changes, blobs)
            except (RegistryError, ValueError, KeyError) as exc:
                self.status = HeadStatus(
                    current.commit,
                    main,
                    f"main {main[:12]} cannot be loaded: {_why(exc)}",
                    time.time(),
                    self.status.build_seconds,
                    *self._verification(),
                )
                return self.status
            if self._validate:
                # check_range read every new manifest through libgit2 (hash-verified) at its digest
                # path, and the served commit was verified: every fan-out tree of main is sound.
                # (Unvalidated, nothing checked main: the record stays at the last verified commit.)
                if self._verified == current.commit and self._known and moves.complete:
                    self._known = {**self._known, **moves.moved}  # what the diff saw change is all that did
                else:
                    since = (current.commit, self._known) if self._verified == current.commit and self._known else None
                    self._known = store.fan_out_trees(main, since)
                self._verified = main
                self._record.write(main, self._known)
            self._install(graph, publication, main, started)
            return self.status

    def _verification(self) -> tuple[str | None, float]:
        return self._verified, self._verify_seconds

    def _rejection(
        self,
        store: GitStore,
        served: str,
        main: str,
        changes: list[TreeChange],
        blobs: dict[str, bytes],
        stored: Mapping[str, Manifest | None],
    ) -> str | None:
        """Why the new head of main may not be served, or None (`blobs` gets the new files' bytes;
        `stored`, what `stored_manifest` made of some already)."""
        if not store.is_ancestor(served, main):
            return f"main {main[:12]} does not descend from the served commit {served[:12]} (history was rewritten)"
        if not self._validate:
            return None
        # Unsigned overlays on main are not refused here: the graph simply does not honour them.
        # The PR limit of 10,000 files is for pull requests; a maintainer's bulk import on main may be larger.
        report = check_range(
            store,
            served,
            main,
            signatures=False,
            changes=changes,
            existing=_Served(self, store),
            max_files=max(len(changes), 1),
            blobs=blobs,
            stored=stored,
        )
        if report.ok:
            # The range's diff shows what main holds now; a commit inside it may still have edited a
            # published file that a later one restored. (One commit whose first parent is the served
            # one: its diff is the range's, which check_range just judged.)
            if store.commit_info(main).parents[:1] == (served,):
                return None
            violation = first_violation(store, served, main)
            return None if violation is None else f"main {main[:12]} fails validation: {violation}"
        shown = "; ".join(str(p) for p in report.problems[:5])
        more = f" (and {len(report.problems) - 5} more)" if len(report.problems) > 5 else ""
        return f"main {main[:12]} fails validation: {shown}{more}"

    def at(self, rev: str | None) -> Graph:
        """The graph of a commit, branch or tag (None: the served head).

        Raises:
            RevisionNotFound: unknown, or not a commit any branch or tag of the registry reaches.
        """
        head = self.head
        if rev is None:
            return head
        store = self.store()
        commit = store.resolve(rev)
        if commit == head.commit:
            return head
        with self._lock:
            found = self._pinned.get(commit)
            if found is not None:
                self._pinned.move_to_end(commit)
                return found
        if not self.reachable(commit):
            raise RevisionNotFound(rev, "not reachable from any branch or tag of the registry")
        publication = self._publication
        assert publication is not None
        graph = move_graph(store, head, commit, publication, self.honour)
        with self._lock:
            if self._publication is publication:
                self._pinned[commit] = graph
                while len(self._pinned) > self._capacity:
                    self._pinned.popitem(last=False)
        return graph

    def standing(self, commit: str) -> str:
        """Where a commit id stands for a reader who must not go back in time (monotonic reads):

        - `served`: the served head is it or descends from it (answers may be given now);
        - `on-main`: main has it but it is not served yet (a refresh serves it, if it validates);
        - `off-main`: a commit some other branch or tag reaches, main does not (never valid);
        - `unknown`: not in the repository (a mirror has not fetched it yet) or not yet on any ref.
        """
        store = self.store()
        served = self.head.commit
        try:
            if commit == served or store.is_ancestor(commit, served):
                return "served"
            main = store.head()
            if main is not None and store.is_ancestor(commit, main):
                return "on-main"
            if any(store.is_ancestor(commit, tip) for tip in store.branches().values()):
                return "off-main"
        except RegistryError:
            return "unknown"
        return "unknown"

    def reachable(self, commit: str, *, from_main_only: bool = False) -> bool:
        """Whether `commit` is on main (or, unless `from_main_only`, on any branch or tag)."""
        store = self.store()
        main = store.head()
        if main is not None and store.is_ancestor(commit, main):
            return True
        if from_main_only:
            return False
        return any(store.is_ancestor(commit, tip) for tip in store.branches().values())


def _absent_from(graph: Graph) -> Callable[[list[str]], list[str]]:
    """Which of some digests `graph` does not hold: the tree diff's guess of what a change added
    (a guess it proves, so a graph that differs from its commit costs time, not correctness)."""
    nodes = graph.nodes
    if isinstance(nodes, LayeredMap):  # a refreshed graph: its parent's nodes plus the change
        return nodes.absent
    holds = nodes.__contains__
    return lambda digests: list(filterfalse(holds, digests))


def _stored_as_they_arrive(
    store: GitStore, blobs: dict[str, bytes], stored: dict[str, Manifest | None]
) -> Callable[[list[TreeChange]], None]:
    """For `GitStore.diff(arrived=)`: each new manifest file's bytes and what `stored_manifest` makes
    of them, while git reads the next trees (`check_range` takes both, and judges each file as if it
    had read it itself). A file that cannot be read is left to `check_range`, which says why."""

    def arrived(changes: list[TreeChange]) -> None:
        for change in changes:
            if change.old is not None or change.new is None or change.mode != _REGULAR or change.new in stored:
                continue
            try:
                data = store.read_blob(change.new)
            except RegistryError:
                continue
            blobs[change.new] = data
            stored[change.new] = stored_manifest(data, change.path)

    return arrived


def _why(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, RegistryError) else f"{type(exc).__name__}: {exc}"


class _Served:
    """`validate.Existing` over the served head: references resolve through its graph."""

    def __init__(self, snapshots: Snapshots, store: GitStore) -> None:
        self._graph = snapshots.head
        self._store = store
        self._read: dict[str, dict[str, object]] = {}  # new runs share protocols, environments, workloads

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, object] | None:
        node = self._graph.nodes.get(digest)
        if node is None or node.kind not in kinds:
            return None
        found = self._read.get(digest)
        if found is None:
            found = self._read[digest] = orjson.loads(self._store.read_blob(node.oid))
        return found

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        node = self._graph.nodes.get(digest)
        return node is not None and node.kind in kinds

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        # An implementation's or workload's node holds the operation its document names (kernelindex.registry.decode):
        # reading each new run's workload again was ~1.4 ms of a 100-manifest refresh at 10x.
        node = self._graph.nodes.get(digest)
        if node is None or node.kind not in kinds:
            return False, None
        if isinstance(node, Implementation | Workload):
            return True, node.operation
        return operation_found(self.find_document(kinds, digest))

    def find_named(self, kind: str, name: str) -> str | None:
        return next((d for d in self._graph.named(name) if self._graph.nodes[d].kind == kind), None)

"""What each commit of main changed (`kernelindex.registry.changes`): what it published, by kind and as a paged list of
manifests, the runs it retracted, superseded or verified, and the records that moved because of it.

A commit's changes are read as the snapshot asked reads them (the ledger's events are that snapshot's), so
an answer names its snapshot, like every other object.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry

from kernelindex.registry import nodes as n
from kernelindex.registry.changes import CommitChanges as DomainChanges
from kernelindex.registry.changes import changes as domain_changes
from kernelindex.registry.changes import commit_changes
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.store import GitStore
from kernelindex.schema.types.base import Info, build
from kernelindex.schema.types.enums import ManifestKind
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.lifecycle import Retraction, Supersession, Verification
from kernelindex.schema.types.manifests import KindCount, Manifest
from kernelindex.schema.types.pages import (
    After,
    Before,
    Connection,
    First,
    Last,
    Window,
    follows_cursor,
    page_bounds,
    paginate,
)
from kernelindex.schema.types.provenance import Commit, Source, commit_type, source_type

if TYPE_CHECKING:
    from kernelindex.schema.types.cohorts import RecordEvent
    from kernelindex.schema.types.runs import Run

__all__ = ["CommitChanges", "RetractedRun", "SupersededRun", "VerifiedRun", "changes_connection"]

RunRef = Annotated["Run", strawberry.lazy("kernelindex.schema.types.runs")]
RecordEventRef = Annotated["RecordEvent", strawberry.lazy("kernelindex.schema.types.cohorts")]


def _run(graph: Graph, digest: str) -> Run | None:
    node = graph.nodes.get(digest)
    return cast("Run", build(RunRef, _graph=graph, _node=node)) if isinstance(node, n.Run) else None


@strawberry.type(description="A run a commit retracted: a maintainer withdrew it (it stays visible, unranked).")
class RetractedRun:
    run_digest: str = strawberry.field(description="The retracted run's digest (`sha256:<hex>`).")
    run: RunRef | None = strawberry.field(description="The run, as this snapshot holds it; null if it does not.")
    reason: str = strawberry.field(description="Why, in the maintainers' words.")
    retraction: Retraction = strawberry.field(description="The signed Retraction manifest.")


@strawberry.type(description="A run a commit superseded: a maintainer replaced it by a corrected run.")
class SupersededRun:
    run_digest: str = strawberry.field(description="The replaced run's digest (`sha256:<hex>`).")
    run: RunRef | None = strawberry.field(description="The replaced run; null if this snapshot does not hold it.")
    by_digest: str = strawberry.field(description="The correction's digest (`sha256:<hex>`).")
    by: RunRef | None = strawberry.field(description="The correction; null if this snapshot does not hold it.")
    reason: str = strawberry.field(description="Why, in the maintainers' words.")
    supersession: Supersession = strawberry.field(description="The signed Supersession manifest.")


@strawberry.type(description="A run a commit verified: a registry-controlled rerun in the same cohort confirmed it.")
class VerifiedRun:
    run_digest: str = strawberry.field(description="The verified run's digest (`sha256:<hex>`).")
    run: RunRef | None = strawberry.field(description="The verified run; null if this snapshot does not hold it.")
    rerun: RunRef | None = strawberry.field(description="The registry's rerun; null if this snapshot does not hold it.")
    runner: str = strawberry.field(description="Who ran the rerun, as the Verification names it.")
    verification: Verification = strawberry.field(description="The signed Verification manifest.")


@strawberry.type(
    description="What one commit of main's first-parent history changed: the manifests it first published, the "
    "runs it retracted, superseded or verified (only lifecycle facts a maintainer signed count; the others are "
    "listed in `ignored`), and the record events it caused. Read as of the snapshot asked."
)
class CommitChanges(Node):
    _graph: strawberry.Private[Graph]
    _store: strawberry.Private[GitStore]
    _changes: strawberry.Private[DomainChanges]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._changes.commit

    def _state(self, info: Info) -> Hashable:
        # What a commit of main published, retracted or superseded never changes once it is on main.
        return ("CommitChanges", self._changes.commit)

    def _at(self, graph: Graph) -> CommitChanges | None:
        """The same commit's changes as another snapshot reads them (None if that snapshot's history lacks it)."""
        position = graph.mainline.positions.get(self._changes.commit)
        if position is None or graph.position is None or position > graph.position:
            return None
        return CommitChanges(_graph=graph, _store=self._store, _changes=commit_changes(self._store, graph, position))

    @strawberry.field(description="The commit: its id, message, author, committer, trailers and signature.")
    def commit(self, info: Info) -> Commit:
        return commit_type(info.context, self._changes.commit)

    @strawberry.field(
        description="Its place on main's first-parent history, the oldest commit 0: main only grows, so a "
        "position names the same commit for ever."
    )
    def position(self) -> int:
        return self._changes.position

    @strawberry.field(description="Its committer time, ISO 8601 UTC: when its manifests were published.")
    def committed_at(self) -> str:
        return utc_instant(self._changes.committed_at)

    @strawberry.field(
        description="The source its `Source:` trailer names, with the terms of its data; null when it has none."
    )
    def source(self, info: Info) -> Source | None:
        return source_type(info.context, self._graph, self._changes.source)

    @strawberry.field(description="How many manifests it first published on main, of every kind.")
    def published_count(self) -> int:
        return self._changes.total

    @strawberry.field(description="How many manifests of each kind it first published, by kind name.")
    def published_counts(self) -> list[KindCount]:
        return [KindCount(kind=ManifestKind[group.kind], count=group.count) for group in self._changes.published]

    @strawberry.field(
        description="The manifests it first published on main, by kind name, then by name and digest: a page at a "
        "time (a commit can publish millions). `kind` narrows to one kind (`BenchmarkRun`). A manifest main "
        "held before is never listed again."
    )
    @follows_cursor
    def published(
        self,
        info: Info,
        kind: Annotated[
            ManifestKind | None,
            strawberry.argument(description="One manifest kind (`BenchmarkRun`); null: every kind."),
        ] = None,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Manifest]:
        page_bounds(first)
        digests = [
            digest
            for group in self._changes.published
            if kind is None or group.kind == kind.name
            for digest in group.digests
        ]
        graph = self._graph
        return paginate(
            graph, digests, Window(first, after, last, before), lambda d: Manifest(_graph=graph, _node=graph.nodes[d])
        )

    @strawberry.field(description="The runs it retracted (signed retractions only), by run digest.")
    def retracted(self) -> list[RetractedRun]:
        graph = self._graph
        return [
            RetractedRun(
                run_digest=item.run,
                run=_run(graph, item.run),
                reason=item.reason,
                retraction=Retraction(_graph=graph, _node=cast(n.Retraction, graph.nodes[item.retraction])),
            )
            for item in self._changes.retracted
        ]

    @strawberry.field(description="The runs it superseded (signed supersessions only), by replaced run's digest.")
    def superseded(self) -> list[SupersededRun]:
        graph = self._graph
        return [
            SupersededRun(
                run_digest=item.run,
                run=_run(graph, item.run),
                by_digest=item.by,
                by=_run(graph, item.by),
                reason=item.reason,
                supersession=Supersession(_graph=graph, _node=cast(n.Supersession, graph.nodes[item.supersession])),
            )
            for item in self._changes.superseded
        ]

    @strawberry.field(description="The runs it verified (signed verifications only), by run digest.")
    def verified(self) -> list[VerifiedRun]:
        graph = self._graph
        return [
            VerifiedRun(
                run_digest=item.run,
                run=_run(graph, item.run),
                rerun=_run(graph, item.rerun),
                runner=item.runner,
                verification=Verification(_graph=graph, _node=cast(n.Verification, graph.nodes[item.verification])),
            )
            for item in self._changes.verified
        ]

    @strawberry.field(
        description="The retractions, supersessions and verifications it published that count for nothing: no "
        "maintainer signed the commit (or it names no run of the registry). Listed so a reader sees them without "
        "mistaking them for facts; by digest."
    )
    def ignored(self) -> list[Manifest]:
        graph = self._graph
        return [Manifest(_graph=graph, _node=graph.nodes[digest]) for digest in self._changes.ignored]

    @strawberry.field(
        description="The record events it caused, as this snapshot's records ledger keeps them: a NEW_RUN event "
        "for each record a run it published set, a RETRACTION event for each record a retraction it published "
        "handed on. By cohort key, then time."
    )
    @follows_cursor
    def moved(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[RecordEventRef]:
        graph = self._graph
        return paginate(
            graph,
            self._changes.moved,
            Window(first, after, last, before),
            lambda event: build(RecordEventRef, _graph=graph, _event=event),
        )


def changes_connection(info: Info, graph: Graph, since: str | None, window: Window) -> Connection[CommitChanges]:
    """The commits of main after `since` (a revision of main's first-parent history; None: all) up to
    `graph`'s commit, newest first, a page of them.

    Raises:
        kernelindex.registry.RevisionNotFound: `since` names no commit, or one off main's first-parent history up to the
            graph's commit.
    """
    store = info.context.snapshots.store()
    full = store.resolve(since) if since is not None else None
    total = domain_changes(store, graph, since=full, first=0).total
    top = graph.position if graph.position is not None else -1
    positions: Any = range(top, top - total, -1)

    def make(position: int) -> CommitChanges:
        return CommitChanges(_graph=graph, _store=store, _changes=commit_changes(store, graph, position))

    return paginate(graph, positions, window, make)

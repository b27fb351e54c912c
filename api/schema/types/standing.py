"""Whether a result still stands (`kernelindex.registry.status`): a run's standing at a snapshot, usually the head of
main,
for a reader who found it at an older commit (a pinned page, a citation), with the signed lifecycle facts
that changed it and which of them came after what the reader saw."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated, cast

import strawberry

from kernelindex.registry import nodes as n
from kernelindex.registry import status as domain
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.schema.types.base import Info, build
from kernelindex.schema.types.enums import _TRUST, Trust
from kernelindex.schema.types.manifests import Manifest
from kernelindex.schema.types.provenance import Commit, commit_type

if TYPE_CHECKING:
    from kernelindex.schema.types.runs import Run

__all__ = ["LifecycleFact", "LifecycleKind", "RunStanding", "RunStandingState", "standing_of"]

RunRef = Annotated["Run", strawberry.lazy("kernelindex.schema.types.runs")]


@strawberry.enum(description="Where a run stands.")
class RunStandingState(enum.Enum):
    CURRENT = strawberry.enum_value(
        domain.CURRENT, description="It stands: published on main, neither retracted nor superseded."
    )
    RETRACTED = strawberry.enum_value(
        domain.RETRACTED, description="A maintainer withdrew it (signed Retraction): it is kept, never ranked."
    )
    SUPERSEDED = strawberry.enum_value(
        domain.SUPERSEDED, description="A maintainer replaced it by a corrected run (signed Supersession)."
    )
    UNPUBLISHED = strawberry.enum_value(
        domain.UNPUBLISHED, description="The snapshot holds it, but no commit of main published it (a preview)."
    )
    MISSING = strawberry.enum_value(domain.MISSING, description="The snapshot holds no run with this digest.")


@strawberry.enum(description="The lifecycle facts that change a run's standing (each a signed manifest).")
class LifecycleKind(enum.Enum):
    RETRACTION = strawberry.enum_value("Retraction", description="A withdrawal of the run.")
    SUPERSESSION = strawberry.enum_value("Supersession", description="A replacement of the run by a correction.")
    VERIFICATION = strawberry.enum_value("Verification", description="A registry-controlled rerun confirming it.")


@strawberry.type(
    description="A lifecycle fact that counts for a run (its commit was signed by a maintainer), and where it "
    "came from: the commit of main that published it and who signed it."
)
class LifecycleFact:
    _graph: strawberry.Private[Graph]
    _fact: strawberry.Private[domain.Lifecycle]

    @strawberry.field(description="What it is.")
    def kind(self) -> LifecycleKind:
        return LifecycleKind(self._fact.kind)

    @strawberry.field(description="The lifecycle manifest itself (its digest, its stored JSON, its permalink).")
    def manifest(self) -> Manifest:
        return Manifest(_graph=self._graph, _node=self._graph.nodes[self._fact.overlay])

    @strawberry.field(
        description="A retraction's or supersession's reason, in the maintainers' words; null for a verification."
    )
    def reason(self) -> str | None:
        return self._fact.reason

    @strawberry.field(description="A supersession's corrected run; null for the other kinds.")
    def successor(self) -> RunRef | None:
        node = self._graph.nodes.get(self._fact.successor or "")
        return cast("Run", build(RunRef, _graph=self._graph, _node=node)) if isinstance(node, n.Run) else None

    @strawberry.field(description="A verification's runner (who reran it); null for the other kinds.")
    def runner(self) -> str | None:
        return self._fact.runner

    @strawberry.field(description="The commit of main that published it.")
    def commit(self, info: Info) -> Commit:
        return commit_type(info.context, self._fact.commit)

    @strawberry.field(description="That commit's place on main's first-parent history (the oldest commit is 0).")
    def position(self) -> int:
        return self._fact.position

    @strawberry.field(description="That commit's committer time, ISO 8601 UTC: when the fact was published.")
    def committed_at(self) -> str:
        return utc_instant(self._fact.committed_at)

    @strawberry.field(
        description="The maintainer whose verified signature on that commit made it count (the principal of the "
        "maintainers policy, usually an email address); null when the signature cannot be checked here."
    )
    def signed_by(self) -> str | None:
        return self._fact.signed_by


@strawberry.type(
    description="Whether a result still stands: a run's standing at this snapshot, and which lifecycle facts "
    "came after the commit a reader saw it at (`readAt`). Ask it of the head of main: a pinned page never "
    "changes, this answer is where it points."
)
class RunStanding:
    _graph: strawberry.Private[Graph]
    _status: strawberry.Private[domain.RunStatus]
    _read_at: strawberry.Private[str | None]

    @strawberry.field(description="The run's digest (`sha256:<hex>`), as asked.")
    def run_digest(self) -> str:
        return self._status.run

    @strawberry.field(description="The run at this snapshot; null when it holds none with that digest (MISSING).")
    def run(self) -> RunRef | None:
        node = self._graph.nodes.get(self._status.run)
        return cast("Run", build(RunRef, _graph=self._graph, _node=node)) if isinstance(node, n.Run) else None

    @strawberry.field(description="Where it stands.")
    def state(self) -> RunStandingState:
        return RunStandingState(self._status.state)

    @strawberry.field(description="Whether it ranks in its cohort at this snapshot.")
    def eligible(self) -> bool:
        return self._status.eligible

    @strawberry.field(
        description="Why it does not rank, in order: UNPUBLISHED, STATUS_<STATUS>, RETRACTED, SUPERSEDED, "
        "MISSING_PRIMARY_METRIC; empty when it ranks."
    )
    def ineligibility_reasons(self) -> list[str]:
        return list(self._status.reasons)

    @strawberry.field(description="Its evidence level at this snapshot; null when MISSING.")
    def trust(self) -> Trust | None:
        return _TRUST[self._status.trust] if self._status.trust is not None else None

    @strawberry.field(description="The retraction that withdrew it (the first that counts); null when none did.")
    def retraction(self) -> LifecycleFact | None:
        fact = self._status.retraction
        return LifecycleFact(_graph=self._graph, _fact=fact) if fact else None

    @strawberry.field(description="The supersession that replaced it (the first that counts); null when none did.")
    def supersession(self) -> LifecycleFact | None:
        fact = self._status.supersession
        return LifecycleFact(_graph=self._graph, _fact=fact) if fact else None

    @strawberry.field(description="The verifications that count for it, oldest first.")
    def verifications(self) -> list[LifecycleFact]:
        return [LifecycleFact(_graph=self._graph, _fact=fact) for fact in self._status.verifications]

    @strawberry.field(
        description="Lifecycle manifests that name the run but count for nothing (no maintainer signed their "
        "commit), by digest: shown so that nobody mistakes them for facts."
    )
    def ignored(self) -> list[Manifest]:
        return [Manifest(_graph=self._graph, _node=self._graph.nodes[d]) for d in self._status.ignored]

    @strawberry.field(
        description="The commit of main the reader saw the run at (`readAt`, resolved); null when none was given "
        "or it is not a commit of main's first-parent history (then every fact counts as later)."
    )
    def read_at(self, info: Info) -> Commit | None:
        if self._read_at is None or self._read_at not in self._graph.mainline.positions:
            return None
        return commit_type(info.context, self._read_at)

    @strawberry.field(description="The lifecycle facts published after `readAt`, oldest first (all when no `readAt`).")
    def later(self) -> list[LifecycleFact]:
        return [LifecycleFact(_graph=self._graph, _fact=fact) for fact in self._status.later]

    @strawberry.field(
        description="Whether the reader's view is out of date: a lifecycle fact came after `readAt` (a verification "
        "counts: the result still stands, with more evidence)."
    )
    def changed(self) -> bool:
        return self._status.changed


def standing_of(info: Info, graph: Graph, run: str, read_at: str | None) -> RunStanding:
    """The standing of `run` (a full digest) at `graph`, for a reader who saw it at `read_at` (a full commit id)."""
    snapshots = info.context.snapshots
    status = domain.run_status(graph, run, read_at=read_at, signer=lambda commit: snapshots.signature(commit).signer)
    return RunStanding(_graph=graph, _status=status, _read_at=read_at)

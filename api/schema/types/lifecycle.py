"""Lifecycle facts about runs: attestations, retractions, supersessions, verifications."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Annotated

import strawberry

from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.base import Info, build, document, published_at, text
from kernelindex.schema.types.enums import AttestationType
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.manifest_types import manifest_type
from kernelindex.schema.types.provenance import Provenance, provenance_of
from kernelindex.schema.types.scalars import DateTime
from kernelindex.schema.types.states import manifest_state

if TYPE_CHECKING:
    from kernelindex.schema.types.runs import Run

__all__ = ["Attestation", "Retraction", "Supersession", "Verification"]

RunRef = Annotated["Run", strawberry.lazy("kernelindex.schema.types.runs")]


@manifest_type
@strawberry.type(
    description="A note on a run by anyone: a reproduction, a failure to reproduce... Never changes trust."
)
class Attestation(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Attestation]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _state(self, info: Info) -> Hashable:
        return manifest_state(self._graph, self._node)

    @strawberry.field(description="Its content address: `sha256:` and 64 lower-case hex digits.")
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field(description="What it says about the run.")
    def type(self) -> AttestationType:
        return AttestationType(self._node.type)

    @strawberry.field(
        description="Its text, as written (at most 2000 characters; plain text: escape it when you show it)."
    )
    def body(self, info: Info) -> str:
        return str(document(info, self._node)["spec"]["body"])

    @strawberry.field(description="A link to its evidence (http or https); null when it gives none.")
    def evidence_url(self, info: Info) -> str | None:
        return text(document(info, self._node)["spec"].get("evidenceUrl"))

    @strawberry.field(description="The latency its author observed, in nanoseconds; null when it gives none.")
    def observed_ns(self, info: Info) -> float | None:
        value = document(info, self._node)["spec"].get("observedNs")
        return None if value is None else float(value)

    @strawberry.field(description="Where its author ran it, in words; null when it says nothing.")
    def environment_summary(self, info: Info) -> str | None:
        return text(document(info, self._node)["spec"].get("environmentSummary"))

    @strawberry.field(description="When main first published it (committer time); null when main does not hold it yet.")
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

    @strawberry.field(
        description="Who published it, when, from where and under which terms: its publishing commit's trailers; "
        "null when not on main."
    )
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@manifest_type
@strawberry.type(description="A maintainer's withdrawal of a run: it stays visible but is not ranked.")
class Retraction(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Retraction]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _state(self, info: Info) -> Hashable:
        return manifest_state(self._graph, self._node)

    @strawberry.field(description="Its content address: `sha256:` and 64 lower-case hex digits.")
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field(description="Why the run was withdrawn, as the maintainer wrote it.")
    def reason(self) -> str:
        return self._node.reason

    @strawberry.field(description="When main first published it (committer time); null when main does not hold it yet.")
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

    @strawberry.field(
        description="Who published it, when, from where and under which terms: its publishing commit's trailers; "
        "null when not on main."
    )
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@manifest_type
@strawberry.type(
    description="A maintainer's replacement of a run by a corrected one: the old run stays visible, not ranked, "
    "and points to its correction."
)
class Supersession(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Supersession]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    @strawberry.field(description="The Supersession manifest's digest (`sha256:<hex>`).")
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field(description="Why the run was replaced, in the maintainers' words.")
    def reason(self) -> str:
        return self._node.reason

    @strawberry.field(description="The corrected run that replaces it; null if this snapshot does not hold it.")
    def run(self) -> RunRef | None:
        node = self._graph.nodes.get(self._node.run)
        return build(RunRef, _graph=self._graph, _node=node) if isinstance(node, n.Run) else None

    @strawberry.field(description="The run replaced; null if this snapshot does not hold it.")
    def supersedes(self) -> RunRef | None:
        node = self._graph.nodes.get(self._node.supersedes)
        return build(RunRef, _graph=self._graph, _node=node) if isinstance(node, n.Run) else None

    @strawberry.field(
        description="Whether it counts: the commit that published it was signed by a maintainer. One that does "
        "not count changes nothing."
    )
    def honoured(self) -> bool:
        return self._graph.honoured(self._node)

    @strawberry.field(description="Committer time of the commit of main that published it (ISO 8601 UTC).")
    def published_at(self) -> str | None:
        return published_at(self._graph, self._node)

    @strawberry.field(description="The commit that published it: who signed it, when, with which message.")
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@manifest_type
@strawberry.type(description="A registry-controlled rerun that confirms a run.")
class Verification(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Verification]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _state(self, info: Info) -> Hashable:
        rerun = self._node.rerun if self._node.rerun in self._graph.nodes else None
        return (*manifest_state(self._graph, self._node), self._graph.honoured(self._node), rerun)

    @strawberry.field(description="Its content address: `sha256:` and 64 lower-case hex digits.")
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field(
        description="Who reran it (a registry runner's name): two different runners make a run REPLICATED."
    )
    def runner(self) -> str:
        return self._node.runner

    @strawberry.field(description="The rerun (a run of the same cohort); null if the registry lacks it.")
    def rerun(self) -> RunRef | None:
        node = self._graph.nodes.get(self._node.rerun)
        return build(RunRef, _graph=self._graph, _node=node) if isinstance(node, n.Run) else None

    @strawberry.field(
        description="Whether it counts: published on main in a commit signed by a maintainer. Unsigned ones are "
        "shown but never raise trust."
    )
    def honoured(self) -> bool:
        return self._graph.honoured(self._node)

    @strawberry.field(description="When main first published it (committer time); null when main does not hold it yet.")
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

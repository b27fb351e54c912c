"""Lifecycle facts about runs: attestations, retractions, supersessions, verifications."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry

from api.types.base import Info, build, document, published_at, text
from api.types.identity import Node
from api.types.provenance import Provenance, provenance_of
from registry import nodes as n
from registry.graph import Graph

if TYPE_CHECKING:
    from api.types.runs import Run

__all__ = ["Attestation", "Retraction", "Supersession", "Verification"]

RunRef = Annotated["Run", strawberry.lazy("api.types.runs")]


@strawberry.type(
    description="A note on a run by anyone: a reproduction, a failure to reproduce... Never changes trust."
)
class Attestation(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Attestation]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def type(self) -> str:
        return self._node.type

    @strawberry.field
    def body(self, info: Info) -> str:
        return str(document(info, self._node)["spec"]["body"])

    @strawberry.field
    def evidence_url(self, info: Info) -> str | None:
        return text(document(info, self._node)["spec"].get("evidenceUrl"))

    @strawberry.field
    def observed_ns(self, info: Info) -> float | None:
        value = document(info, self._node)["spec"].get("observedNs")
        return None if value is None else float(value)

    @strawberry.field
    def environment_summary(self, info: Info) -> str | None:
        return text(document(info, self._node)["spec"].get("environmentSummary"))

    @strawberry.field
    def published_at(self) -> str | None:
        return published_at(self._graph, self._node)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@strawberry.type(description="A maintainer's withdrawal of a run: it stays visible but is not ranked.")
class Retraction(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Retraction]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def reason(self) -> str:
        return self._node.reason

    @strawberry.field
    def published_at(self) -> str | None:
        return published_at(self._graph, self._node)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


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


@strawberry.type(description="A registry-controlled rerun that confirms a run.")
class Verification(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Verification]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def runner(self) -> str:
        return self._node.runner

    @strawberry.field
    def rerun(self) -> RunRef | None:
        node = self._graph.nodes.get(self._node.rerun)
        return build(RunRef, _graph=self._graph, _node=node) if isinstance(node, n.Run) else None

    @strawberry.field
    def honoured(self) -> bool:
        return self._graph.honoured(self._node)

    @strawberry.field
    def published_at(self) -> str | None:
        return published_at(self._graph, self._node)

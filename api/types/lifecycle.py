"""Lifecycle facts about runs: attestations, retractions, verifications."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Annotated

import strawberry

from api.types.base import Info, build, document, published_at, text
from api.types.identity import Node
from api.types.provenance import Provenance, provenance_of
from api.types.scalars import DateTime
from api.types.states import manifest_state
from registry import nodes as n
from registry.graph import Graph

if TYPE_CHECKING:
    from api.types.runs import Run

__all__ = ["Attestation", "Retraction", "Verification"]

RunRef = Annotated["Run", strawberry.lazy("api.types.runs")]


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
    def published_at(self) -> DateTime | None:
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

    def _state(self, info: Info) -> Hashable:
        return manifest_state(self._graph, self._node)

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def reason(self) -> str:
        return self._node.reason

    @strawberry.field
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


@strawberry.type(description="A registry-controlled rerun that confirms a run.")
class Verification(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Verification]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _state(self, info: Info) -> Hashable:
        rerun = self._node.rerun if self._node.rerun in self._graph.nodes else None
        return (*manifest_state(self._graph, self._node), self._graph.honoured(self._node), rerun)

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
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

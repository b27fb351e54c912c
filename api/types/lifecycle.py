"""Lifecycle facts about runs: attestations, retractions, verifications."""

from __future__ import annotations

import strawberry

from api.context import Context
from api.types.identity import Node
from api.types.manifests import _document, _published_at, _text
from api.types.provenance import Provenance, provenance_of
from registry import nodes as n
from registry.graph import Graph

__all__ = ["Attestation", "Retraction", "Verification"]

Info = strawberry.Info[Context, None]


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
        return str(_document(info, self._node)["spec"]["body"])

    @strawberry.field
    def evidence_url(self, info: Info) -> str | None:
        return _text(_document(info, self._node)["spec"].get("evidenceUrl"))

    @strawberry.field
    def observed_ns(self, info: Info) -> float | None:
        value = _document(info, self._node)["spec"].get("observedNs")
        return None if value is None else float(value)

    @strawberry.field
    def environment_summary(self, info: Info) -> str | None:
        return _text(_document(info, self._node)["spec"].get("environmentSummary"))

    @strawberry.field
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)

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
        return _published_at(self._graph, self._node)

    @strawberry.field
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
    def rerun(self) -> Run | None:
        return _run(self._graph, self._node.rerun)

    @strawberry.field
    def honoured(self) -> bool:
        return self._graph.honoured(self._node)

    @strawberry.field
    def published_at(self) -> str | None:
        return _published_at(self._graph, self._node)


# Kinds, runs, cohorts and lifecycle facts name each other: their modules import each other last,
# once their own classes exist (strawberry resolves the annotations when the schema is built).
from api.types.runs import Run, _run  # noqa: E402

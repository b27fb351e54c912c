"""Any manifest, as stored."""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

import registry
from api.types.base import Info, as_json, published_at
from api.types.identity import Node
from api.types.provenance import Provenance, provenance_of
from registry import nodes as n
from registry.graph import Graph

__all__ = ["KindCount", "Manifest"]


@strawberry.type(description="How many manifests of one kind.")
class KindCount:
    kind: str = strawberry.field(description="A manifest kind: BenchmarkRun, OperationSpec, Retraction...")
    count: int = strawberry.field(description="How many.")


@strawberry.type(description="Any manifest, as stored.")
class Manifest(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Node]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    @strawberry.field
    def kind(self) -> str:
        return self._node.kind

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def name(self) -> str:
        return self._node.name

    @strawberry.field
    def title(self) -> str | None:
        return self._node.title

    @strawberry.field
    def path(self) -> str:
        return registry.manifest_path(self._node.kind, self._node.digest)

    @strawberry.field
    def published_at(self) -> str | None:
        return published_at(self._graph, self._node)

    @strawberry.field(description="The stored JSON document (metadata included).")
    def json(self, info: Info) -> JSON:
        return as_json(info.context.objects.get(self._node.oid))

    @strawberry.field(description="The stored bytes, as text: what the permalink serves.")
    def text(self, info: Info) -> str:
        return info.context.objects.raw(self._node.oid).decode()

    @strawberry.field
    def permalink(self, info: Info) -> str:
        return info.context.urls.manifest(self._graph.commit, self._node.digest)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)

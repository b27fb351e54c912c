"""Any manifest as stored, and the fields every manifest-backed type shares."""

from __future__ import annotations

from typing import Any, TypeVar, cast

import strawberry
from strawberry.scalars import JSON

import registry
from api.context import Context
from api.types.identity import Node
from api.types.provenance import Provenance, provenance_of
from registry import nodes as n
from registry.graph import Graph

__all__ = ["Manifest"]

Info = strawberry.Info[Context, None]


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
        return _published_at(self._graph, self._node)

    @strawberry.field(description="The stored JSON document (metadata included).")
    def json(self, info: Info) -> JSON:
        return _json(info.context.objects.get(self._node.oid))

    @strawberry.field(description="The stored bytes, as text: what the permalink serves.")
    def text(self, info: Info) -> str:
        return info.context.objects.raw(self._node.oid).decode()

    @strawberry.field
    def permalink(self, info: Info) -> str:
        return info.context.urls.manifest(self._graph.commit, self._node.digest)

    @strawberry.field
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)


def _published_at(graph: Graph, node: n.Node) -> str | None:
    seconds = graph.published_at(node)
    return None if seconds is None else registry.provenance.utc_instant(seconds)


def _document(info: Info, node: n.Node) -> dict[str, Any]:
    return info.context.objects.get(node.oid)


@strawberry.type
class _Named(Node):
    """The fields every manifest-backed type starts with (not itself in the schema)."""

    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Node]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _at(self, graph: Graph) -> Any:
        """The same manifest in another snapshot's graph (None if it is not there)."""
        node = graph.nodes.get(self._node.digest)
        return None if node is None else type(self)(_graph=graph, _node=node)

    @strawberry.field
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field
    def name(self) -> str:
        return self._node.name

    @strawberry.field
    def title(self) -> str | None:
        return self._node.title


_W = TypeVar("_W")


def _typed(graph: Graph, digest: str, wrapper: type[_W]) -> _W:
    """The output type of a node the indexes say is of that type."""
    return wrapper(_graph=graph, _node=graph.nodes[digest])  # type: ignore[call-arg]


def _json(value: Any) -> JSON:
    return cast(JSON, value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)

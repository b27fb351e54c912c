"""Any manifest, as stored."""

from __future__ import annotations

from collections.abc import Hashable

import strawberry
from strawberry.scalars import JSON

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.base import Info, as_json, published_at
from kernelindex.schema.types.enums import ManifestKind
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.provenance import Provenance, provenance_of
from kernelindex.schema.types.scalars import DateTime
from kernelindex.schema.types.states import manifest_state

__all__ = ["KindCount", "Manifest"]


@strawberry.type(description="How many manifests of one kind.")
class KindCount:
    kind: ManifestKind = strawberry.field(description="The kind.")
    count: int = strawberry.field(description="How many manifests of it.")


@strawberry.type(description="Any manifest, as stored.")
class Manifest(Node):
    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Node]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _state(self, info: Info) -> Hashable:
        return manifest_state(self._graph, self._node)

    @strawberry.field(description="Its kind.")
    def kind(self) -> ManifestKind:
        return ManifestKind(self._node.kind)

    @strawberry.field(description="Its content address: `sha256:` and 64 lower-case hex digits.")
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field(description="Its `metadata.name`.")
    def name(self) -> str:
        return self._node.name

    @strawberry.field(description="Its `metadata.title`; null when it gives none.")
    def title(self) -> str | None:
        return self._node.title

    @strawberry.field(description="Where it is stored in the manifests repository (`benchmark-runs/7f/7f6d….json`).")
    def path(self) -> str:
        return registry.manifest_path(self._node.kind, self._node.digest)

    @strawberry.field(description="When main first published it (committer time); null when main does not hold it yet.")
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

    @strawberry.field(description="The stored JSON document (metadata included).")
    def json(self, info: Info) -> JSON:
        return as_json(info.context.objects.get(self._node.oid))

    @strawberry.field(description="The stored bytes, as text: what the permalink serves.")
    def text(self, info: Info) -> str:
        return info.context.objects.raw(self._node.oid).decode()

    @strawberry.field(description="Its stored bytes, pinned to this snapshot's commit (a URL that never changes).")
    def permalink(self, info: Info) -> str:
        return info.context.urls.manifest(self._graph.commit, self._node.digest)

    @strawberry.field(
        description="Who published it, when, from where and under which terms: its publishing commit's trailers; "
        "null when not on main."
    )
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, None)

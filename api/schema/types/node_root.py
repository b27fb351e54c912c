"""The root fields of global object identification (Relay's): `node(id:)` and `nodes(ids:)`, which let a
normalized client cache refetch any object it holds.

An id names its type, the commit it was read from and its key (`kernelindex.schema.types.identity`); the object is
looked up in that commit's graph, so a refetch answers what the id was read as, even after main moved.
"""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from kernelindex import registry
from kernelindex.core.errors import BadUserInput
from kernelindex.registry.changes import commit_changes
from kernelindex.registry.graph import Graph
from kernelindex.registry.serving_graph import serving_index
from kernelindex.registry.store import GitStore
from kernelindex.schema import types as t
from kernelindex.schema.types import serving as sv
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.changes import CommitChanges
from kernelindex.schema.types.identity import Node, decode_id
from kernelindex.schema.types.manifest_types import types_by_name

__all__ = ["MAX_NODES", "NodeRoot"]

MAX_NODES = 100


def _in_graph(graph: Graph, type_name: str, key: str, store: GitStore) -> Any:
    if type_name == "Manifest":  # any kind
        node = graph.nodes.get(key)
        return None if node is None else t.Manifest(_graph=graph, _node=node)
    typed = types_by_name().get(type_name)  # the kinds' own types (`kernelindex.schema.types.manifest_types`)
    if typed is not None:
        kind, wrap = typed
        node = graph.nodes.get(key)
        return wrap(_graph=graph, _node=node) if isinstance(node, kind) else None
    if type_name == "Cohort":
        cohort = graph.cohorts.get(key)
        return t.Cohort(_graph=graph, _cohort=cohort) if cohort else None
    if type_name == "RecordEntry":
        cohort = graph.cohorts.get(key)
        return t.RecordEntry(_graph=graph, _cohort=cohort) if cohort and cohort.holder(graph) else None
    if type_name == "CommitChanges":
        position = graph.mainline.positions.get(key)
        if position is None or graph.position is None or position > graph.position:
            return None
        return CommitChanges(_graph=graph, _store=store, _changes=commit_changes(store, graph, position))
    if type_name == "ServingCohort":
        found = serving_index(graph).cohorts.get(key)
        return sv.ServingCohort(_graph=graph, _cohort=found) if found else None
    return None


def _node(info: Info, ident: str, path: tuple[str | int, ...]) -> Node | None:
    context = info.context
    if len(ident) == 40 and all(c in "0123456789abcdef" for c in ident):  # a Commit's id is its sha
        try:
            commit = context.snapshots.store().resolve(ident)
        except registry.RevisionNotFound:
            return None
        return t.commit_type(context, commit) if context.snapshots.reachable(commit) else None
    decoded = decode_id(ident)
    if decoded is None:
        raise BadUserInput(f"not an id of this registry: {ident!r} (ids come from the `id` field of a Node)")
    if decoded.commit is not None:
        context.pinned_paths.add(path)
        graph = context.graph(decoded.commit)
    else:
        graph = t.head_graph(info)
    found: Node | None = _in_graph(graph, decoded.type_name, decoded.key, context.snapshots.store())
    return found


@strawberry.type
class NodeRoot:
    """`node` and `nodes` (the `Query` type extends this; not itself in the schema)."""

    @strawberry.field(
        description="The object an id names: for a pinned id, as of its commit; for a head id, as the object "
        "stands at the head now (its `id` is new if it changed since). Null when it names nothing; "
        "BAD_USER_INPUT when it is not an id of this registry."
    )
    def node(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description="An `id` read from a Node.")]
    ) -> Node | None:
        return _node(info, id, (info.path.key,))

    @strawberry.field(
        description="The objects ids name, in order, as `node` answers each; null for each that names none."
    )
    def nodes(
        self,
        info: Info,
        ids: Annotated[list[strawberry.ID], strawberry.argument(description="At most 100 ids read from Nodes.")],
    ) -> list[Node | None] | None:
        if len(ids) > MAX_NODES:
            raise t.PageSizeError(f"nodes takes at most {MAX_NODES} ids (got {len(ids)})")
        return [_node(info, ident, (info.path.key, index)) for index, ident in enumerate(ids)]

"""The output type of any graph node, by the node's kind."""

from __future__ import annotations

from typing import Any

from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.manifest_types import wrapper_of
from kernelindex.schema.types.manifests import Manifest

__all__ = ["node_type"]


def node_type(graph: Graph, node: n.Node | None) -> Any:
    """The GraphQL object of a node: its kind's type (`kernelindex.schema.types.manifest_types`), else `Manifest`."""
    if node is None:
        return None
    wrap = wrapper_of(node)
    return (Manifest if wrap is None else wrap)(_graph=graph, _node=node)

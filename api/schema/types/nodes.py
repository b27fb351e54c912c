"""The output type of any graph node, by the node's kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.kinds import Environment, Implementation, Operation, Project, Protocol, Workload
from kernelindex.schema.types.runs import Run

__all__ = ["node_type"]

_TYPES: dict[type, Callable[[Graph, Any], Any]] = {
    n.Run: lambda g, node: Run(_graph=g, _node=node),
    n.Operation: lambda g, node: Operation(_graph=g, _node=node),
    n.Workload: lambda g, node: Workload(_graph=g, _node=node),
    n.Implementation: lambda g, node: Implementation(_graph=g, _node=node),
    n.Project: lambda g, node: Project(_graph=g, _node=node),
    n.Protocol: lambda g, node: Protocol(_graph=g, _node=node),
    n.Environment: lambda g, node: Environment(_graph=g, _node=node),
}


def node_type(graph: Graph, node: n.Node | None) -> Any:
    if node is None:
        return None
    return _TYPES[type(node)](graph, node)

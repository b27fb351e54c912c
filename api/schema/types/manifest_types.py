"""The GraphQL type of each manifest kind: a type marks itself with `@manifest_type`, and the tables that map kinds,
nodes and type names to types derive from those marks and the kinds' specs (`kernelindex.registry.kind_specs`).

A kind's spec names its type (`graphql`); `check_manifest_types` says which kind has no type marked by that name,
or whose type holds another node class, and the schema is not built while one does (`kernelindex.schema.root`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from kernelindex.registry import nodes as n
from kernelindex.registry.kinds import KINDS

__all__ = [
    "MANIFEST_TYPES",
    "check_manifest_types",
    "manifest_type",
    "manifest_type_names",
    "types_by_name",
    "wrapper_of",
]

_T = TypeVar("_T", bound=type)

MANIFEST_TYPES: dict[str, type] = {}
"""Every GraphQL type marked with `manifest_type`, by its GraphQL name."""


def manifest_type(cls: _T) -> _T:
    """Mark a strawberry type as the GraphQL type of the kinds whose spec names it (`graphql`). Put it above
    `@strawberry.type`: the type's GraphQL name is read from strawberry's definition."""
    MANIFEST_TYPES[cls.__strawberry_definition__.name] = cls  # type: ignore[attr-defined]
    return cls


def check_manifest_types() -> list[str]:
    """What is wrong between the kinds' specs and the marked types: each a sentence; empty when they agree."""
    problems = []
    for spec in KINDS.values():
        if spec.graphql == "Manifest":
            continue  # served as any manifest (`Manifest`), with no type of its own
        if spec.graphql not in MANIFEST_TYPES:
            problems.append(f"kind {spec.name}: no GraphQL type {spec.graphql!r} is marked with @manifest_type")
    for name in MANIFEST_TYPES:
        if not any(spec.graphql == name for spec in KINDS.values()):
            problems.append(f"GraphQL type {name!r} is marked with @manifest_type, but no kind's spec names it")
    return problems


@functools.cache
def types_by_name() -> dict[str, tuple[type, type]]:
    """GraphQL type name -> (the node class its objects wrap, the type), for every kind's type (`node(id:)`)."""
    found: dict[str, tuple[type, type]] = {}
    for spec in KINDS.values():
        if spec.graphql in MANIFEST_TYPES:
            found.setdefault(spec.graphql, (n.node_class(spec), MANIFEST_TYPES[spec.graphql]))
    return found


def manifest_type_names() -> tuple[str, ...]:
    """Every type whose id names a manifest by its digest: `Manifest`, then each kind's type, in the specs' order."""
    return ("Manifest", *dict.fromkeys(spec.graphql for spec in KINDS.values() if spec.graphql in MANIFEST_TYPES))


@functools.cache
def _wrappers() -> dict[type, Callable[..., Any]]:
    return dict(types_by_name().values())


def wrapper_of(node: n.Node) -> Callable[..., Any] | None:
    """The GraphQL type that wraps a node of this class (called with `_graph=` and `_node=`); None for a kind
    with no type of its own."""
    return _wrappers().get(type(node))

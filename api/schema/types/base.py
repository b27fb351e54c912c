"""What the output types share: the resolver's `Info`, the fields every manifest-backed type starts with
(`Named`) and every kind of run (`Observed`), the stored document of a node, the orders of lists, and
`build` for a type of a module that imports this one's (named by `strawberry.lazy`, never imported back).

Types of different modules name each other (a run its cohort, a cohort its runs): the module lower in
`api/schema/types` imports the higher one's type lazily,
`Annotated["Cohort", strawberry.lazy("kernelindex.schema.types.cohorts")]`,
which strawberry resolves when the schema is built, and makes its objects with `build`.
"""

from __future__ import annotations

import enum
import functools
import importlib
import typing
from collections.abc import Callable, Hashable, Iterable
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

import strawberry
from strawberry.scalars import JSON

from kernelindex import registry
from kernelindex.core.context import Context
from kernelindex.registry import nodes as n
from kernelindex.registry import read
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.enums import RunOrder
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.scalars import DateTime
from kernelindex.schema.types.states import manifest_state

__all__ = [
    "Info",
    "Named",
    "Observed",
    "as_json",
    "build",
    "document",
    "fact",
    "implementation_name",
    "ordered_runs",
    "project_of",
    "published_at",
    "text",
    "typed",
]

Info = strawberry.Info[Context, None]

W = TypeVar("W")
T = TypeVar("T")
E = TypeVar("E", bound=enum.Enum)


def published_at(graph: Graph, node: n.Node) -> str | None:
    """Committer time of the first commit on main that contains the node (ISO 8601 UTC); None if unpublished."""
    seconds = graph.published_at(node)
    return None if seconds is None else registry.provenance.utc_instant(seconds)


def document(info: Info, node: n.Node) -> dict[str, Any]:
    """The node's stored manifest, parsed (kept in the request's stored objects)."""
    return info.context.objects.get(node.oid)


def fact(info: Info, node: n.Node, derive: Callable[[dict[str, Any]], T]) -> T:
    """What `derive` makes of the node's stored manifest, made once per manifest (`StoredObjects.fact`)."""
    return info.context.objects.fact(node.oid, derive)


def as_json(value: Any) -> JSON:
    return cast(JSON, value)


def text(value: Any) -> str | None:
    return None if value is None else str(value)


def typed(graph: Graph, digest: str, wrapper: type[W]) -> W:
    """The output type of a node the indexes say is of that type."""
    return wrapper(_graph=graph, _node=graph.nodes[digest])  # type: ignore[call-arg]


@functools.cache
def _resolved(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


def build(reference: Any, **fields: Any) -> Any:
    """An object of the type a lazy reference names
    (`Annotated["Run", strawberry.lazy("kernelindex.schema.types.runs")]`)."""
    name, lazy = typing.get_args(reference)
    return _resolved(lazy.module, name.__forward_arg__)(**fields)


def ordered_runs(graph: Graph, digests: Iterable[str], order: RunOrder = RunOrder.NEWEST_OBSERVED) -> list[str]:
    """Runs in `order` (newest observation first by default), then by digest (`kernelindex.registry.read`)."""
    return read.ordered_runs(graph, digests, read.RunOrder[order.name])


def project_of(graph: Graph, implementation: n.Implementation) -> n.Project | None:
    """The project an implementation's `metadata.labels.project` names (the first by digest if several)."""
    if not implementation.project:
        return None
    found = sorted(d for d in graph.named(implementation.project) if graph.nodes[d].kind == "SoftwareProject")
    node = graph.nodes[found[0]] if found else None
    return node if isinstance(node, n.Project) else None


def implementation_name(graph: Graph, implementation: n.Implementation) -> str:
    """Implementation.displayName: the first author, else the project, else the name."""
    if implementation.author is not None:
        return implementation.author
    project = project_of(graph, implementation)
    return project.display_name if project else implementation.name


@strawberry.type
class Named(Node):
    """The fields every manifest-backed type starts with (not itself in the schema)."""

    _graph: strawberry.Private[Graph]
    _node: strawberry.Private[n.Node]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._node.digest

    def _state(self, info: Any) -> Hashable:
        return manifest_state(self._graph, self._node)

    def _at(self, graph: Graph) -> Any:
        """The same manifest in another snapshot's graph (None if it is not there)."""
        node = graph.nodes.get(self._node.digest)
        return None if node is None else type(self)(_graph=graph, _node=node)

    @strawberry.field(
        description="Its content address: `sha256:` and 64 lower-case hex digits, the same in every commit and "
        "replica (what permalinks and citations name)."
    )
    def digest(self) -> str:
        return self._node.digest

    @strawberry.field(
        description="Its `metadata.name` (lower-case letters, digits, '.', '_', '-'): readable, usually unique, "
        "but not guaranteed to be (use the digest to name one manifest)."
    )
    def name(self) -> str:
        return self._node.name

    @strawberry.field(description="Its `metadata.title`, for display; null when the manifest gives none.")
    def title(self) -> str | None:
        return self._node.title


class _RunNode(Protocol):
    status: str
    observed_at: str


@strawberry.type
class Observed(Named, Generic[E]):
    """The fields every kind of run starts with: its status (each kind has its vocabulary, `statuses`), when
    it was measured and when it was published (not itself in the schema)."""

    statuses: ClassVar[type[enum.Enum]]

    @strawberry.field(description="Its status as its source reported it; only a passing run can rank.")
    def status(self) -> E:
        return cast(E, self.statuses(cast(_RunNode, self._node).status))

    @strawberry.field(description="When it was measured, as its manifest says.")
    def observed_at(self) -> DateTime:
        return cast(_RunNode, self._node).observed_at

    @strawberry.field(
        description="When it was published: the committer time of the first commit on main that holds it; null "
        "when main does not hold it yet (a pull request previewed with `registry(at:)`)."
    )
    def published_at(self) -> DateTime | None:
        return published_at(self._graph, self._node)

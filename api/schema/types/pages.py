"""Relay connections, both ways: pages of a list stable for one commit, cursors that carry their commit.

A cursor names the commit its page was cut from and a position in that commit's list. **A page and
everything around it come from one commit**: a request that pages on at the head (root fields, `registry`
without `at`) with a cursor of commit A is answered from A as a whole (the connection's parent too: a
cohort's `size`, `leader` and `id` are A's, and so is every other head field of the request), so a
leaderboard paged across a publication neither skips nor repeats a run, and a normalized client cache
merges pages of one list only. `pageInfo.commit` says which commit the page is from; restarting from the
first page (no cursor) answers from the new head. Inside `registry(at: B)` a cursor of another commit is
refused (`CURSOR_ERROR`), as are cursors of two commits in one request's head fields, or of a commit main
does not hold. `first`/`after` pages forward, `last`/`before` backward; with neither size, a page is the
first 20.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import inspect
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

import strawberry
from graphql import (
    FieldNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    ListValueNode,
    SelectionSetNode,
    StringValueNode,
    ValueNode,
    VariableNode,
)

from kernelindex import registry
from kernelindex.engine.cost import counts_only
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.identity import decode_id

__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "After",
    "Before",
    "Connection",
    "CursorError",
    "Edge",
    "First",
    "Last",
    "PageInfo",
    "PageSizeError",
    "Window",
    "cursor_at",
    "cursor_commit",
    "follows_cursor",
    "head_graph",
    "page_bounds",
    "paginate",
]

MAX_PAGE = 100
DEFAULT_PAGE = 20

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

_COMMIT = re.compile(r"[0-9a-f]{40}")


class PageSizeError(registry.RegistryError, ValueError):
    """`first` or `last` out of range, or both given: expected, so it reaches the client unmasked."""


class CursorError(registry.RegistryError, ValueError):
    """A cursor that is not one of ours, or that cannot continue this list (another commit): `CURSOR_ERROR`."""


First = Annotated[
    int | None,
    strawberry.argument(
        description="How many items from the start (or after `after`): 0 to 100. With neither `first` nor "
        "`last`, a page is the first 20."
    ),
]
After = Annotated[
    str | None,
    strawberry.argument(
        description="Continue after this cursor (an `endCursor` or an edge's `cursor` of the same list, with the "
        "same other arguments). The page comes from the cursor's commit."
    ),
]
Last = Annotated[
    int | None,
    strawberry.argument(description="How many items from the end (or before `before`): 0 to 100. Not with `first`."),
]
Before = Annotated[
    str | None,
    strawberry.argument(description="Continue before this cursor (a `startCursor` of the same list), backwards."),
]


@strawberry.type(description="Where a page sits in its list, and how to get the next or the previous one.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether items follow this page (ask `after: endCursor`).")
    has_previous_page: bool = strawberry.field(
        description="Whether items precede this page (ask `before: startCursor`)."
    )
    start_cursor: str | None = strawberry.field(description="The first item's cursor; null for an empty page.")
    end_cursor: str | None = strawberry.field(description="The last item's cursor; null for an empty page.")
    commit: str = strawberry.field(
        description="The commit this page is from: its cursors page on from it, even after main moves (restart "
        "from the first page to see the new head)."
    )


@strawberry.type(description="One item of a page, with its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Opaque: pass it as `after` (or `before`) to page from this item.")
    node: T = strawberry.field(description="The item.")


@strawberry.type(
    description="A page of a list, cut from one commit (`pageInfo.commit`); cursors are opaque. Page with "
    "`first`/`after` (or `last`/`before`); in Apollo Client use `relayStylePagination()`, in urql's Graphcache "
    "`relayPagination()`."
)
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The page's items, in the list's order.")
    page_info: PageInfo = strawberry.field(description="How to get the next or the previous page.")
    total_count: int = strawberry.field(description="How many items the whole list holds (at this commit).")


@dataclass(frozen=True, slots=True)
class Window:
    """The Relay arguments of one connection field."""

    first: int | None = None
    after: str | None = None
    last: int | None = None
    before: str | None = None


def cursor_at(commit: str, offset: int) -> str:
    """The cursor of the item at `offset` of a list as of `commit` (what its edge's `cursor` is)."""
    return base64.urlsafe_b64encode(f"{commit}:{offset}".encode()).decode().rstrip("=")


def _decode(cursor: str) -> tuple[str, int]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        commit, _, number = text.partition(":")
        offset = int(number)
    except (ValueError, UnicodeDecodeError):
        raise CursorError(f"invalid cursor {cursor!r}") from None
    if not _COMMIT.fullmatch(commit) or offset < 0:
        raise CursorError(
            f"cursor {cursor!r} names no commit of this registry (an older cursor, or one of another snapshot's "
            "format): page again from the start"
        )
    return commit, offset


def cursor_commit(cursor: str | None) -> str | None:
    """The commit a cursor was cut from (None without a cursor).

    Raises:
        CursorError: not a cursor of ours.
    """
    return None if cursor is None else _decode(cursor)[0]


def _offset(commit: str, cursor: str) -> int:
    found, offset = _decode(cursor)
    if found != commit:
        raise CursorError(f"cursor {cursor!r} belongs to another snapshot ({found}); page again from the start")
    return offset


def page_bounds(first: int | None, name: str = "first") -> int | None:
    if first is not None and not 0 <= first <= MAX_PAGE:
        raise PageSizeError(f"{name} must be between 0 and {MAX_PAGE} (got {first})")
    return first


def paginate(graph: Graph, items: Sequence[Any], window: Window, make: Callable[[Any], T]) -> Connection[T]:
    """One page of `items` (the list as of `graph`) as Relay's connection algorithm cuts it."""
    start, end = _cut(graph, len(items), window)
    edges = [
        Edge(cursor=cursor_at(graph.commit, start + i), node=make(item)) for i, item in enumerate(items[start:end])
    ]
    return Connection(edges=edges, page_info=_page_info(graph, start, end, len(items)), total_count=len(items))


def _page_info(graph: Graph, start: int, end: int, total: int) -> PageInfo:
    """The page info of items `start` to `end` (excluded) of `total`: a cursor is its item's position."""
    return PageInfo(
        has_next_page=end < total,
        has_previous_page=start > 0,
        start_cursor=cursor_at(graph.commit, start) if end > start else None,
        end_cursor=cursor_at(graph.commit, end - 1) if end > start else None,
        commit=graph.commit,
    )


def counted(graph: Graph, items: Collection[Any], window: Window) -> Connection[Any]:
    """A connection asked for its `totalCount` alone (`kernelindex.engine.cost.counts_only`): `items` need no
    order and no page is cut (an implementation's runs on a project's page, 100 times over), the window is
    refused as `paginate` refuses it. Its page info is the page's (cursors are positions); its edges, never
    asked for, are not made."""
    start, end = _cut(graph, len(items), window)
    return Connection(edges=[], page_info=_page_info(graph, start, end, len(items)), total_count=len(items))


def asks_count_only(info: Any) -> bool:
    """Whether the connection field being resolved asks for its count alone (`counted` answers it)."""
    raw = getattr(info, "_raw_info", info)  # graphql-core's resolve info
    return all(counts_only(node) for node in raw.field_nodes)


def _cut(graph: Graph, total: int, window: Window) -> tuple[int, int]:
    """Where a page of `total` items starts and ends, by Relay's connection algorithm.

    Raises:
        PageSizeError: a page size out of bounds, or both `first` and `last`.
        CursorError: a cursor of another commit, or none of ours.
    """
    first, last = page_bounds(window.first), page_bounds(window.last, "last")
    if first is not None and last is not None:
        raise PageSizeError("give first (forward) or last (backward), not both")
    start, end = 0, total
    if window.after:
        start = min(_offset(graph.commit, window.after) + 1, end)
    if window.before:
        end = max(min(_offset(graph.commit, window.before), end), start)
    if last is not None:
        start = max(start, end - last)
    else:
        end = min(end, start + (first if first is not None else DEFAULT_PAGE))
    return start, end


def follows_cursor(resolver: F) -> F:
    """Refuse a cursor of another commit than the connection's own (`CURSOR_ERROR`, saying what to do).

    At the head, `head_graph` has already moved the whole request to its cursors' commit, so a cursor and
    its connection disagree only inside `registry(at:)` (or under an object `node(id:)` found by a pinned
    id). The resolver must take `info`.
    """

    signature = inspect.signature(resolver)

    @functools.wraps(resolver)
    def resolve(self: Any, *args: Any, **kwargs: Any) -> Any:
        # strawberry passes every argument by name: binding them to the signature (~5 µs a call, a
        # leaderboard's `entries`) would only give back `kwargs`.
        given = signature.bind(self, *args, **kwargs).arguments if args else kwargs
        cursor = given.get("after") or given.get("before")
        commit = cursor_commit(cursor)
        if commit is not None:
            current = self._g(given["info"]) if hasattr(self, "_g") else self._graph
            if commit != current.commit:
                raise CursorError(
                    f"cursor {cursor!r} was cut from commit {commit}, and this list answers for {current.commit}: "
                    "page again from the first page, or ask registry(at:) for the cursor's commit"
                )
        return resolver(self, *args, **kwargs)

    return resolve  # type: ignore[return-value]


def head_graph(info: Any) -> Graph:
    """The graph the head fields of this request answer from: the served head, or the one commit their
    cursors were cut from (decided once per request).

    Raises:
        CursorError: head fields carry cursors of two commits, or of a commit main does not hold.
    """
    context = info.context
    if context.head_scope is not None:
        return context.head_scope  # type: ignore[no-any-return]
    commits = sorted(_head_cursor_commits(info))
    if len(commits) > 1:
        raise CursorError(
            f"this request pages on with cursors of {len(commits)} commits ({', '.join(c[:12] for c in commits)}): "
            "a request answers from one commit; page each list again from the first page"
        )
    graph: Graph = context.graph(None)
    if commits and commits[0] != graph.commit:
        commit = commits[0]
        if not context.snapshots.store().is_ancestor(commit, graph.commit):
            raise CursorError(
                f"cursor of commit {commit}, which the served main does not hold: page again from the first page"
            )
        graph = context.snapshots.at(commit)
        context.seen[graph.commit] = graph
    context.head_scope = graph
    return graph


def _head_cursor_commits(info: Any) -> set[str]:
    """The commits of the cursors the head fields of the operation carry (not those under `registry(at:)`
    or `node(id:)`/`nodes(ids:)` with pinned ids, which answer for their own commits)."""
    raw = getattr(info, "_raw_info", info)  # graphql-core's resolve info: strawberry's keeps no fragments
    location = raw.operation.loc
    if location is not None and not any(word in location.source.body for word in ("after", "before")):
        return set()  # no argument of the document is named so: nothing to walk (most first-time answers)
    variables: dict[str, Any] = raw.variable_values or {}
    fragments = raw.fragments
    found: set[str] = set()
    seen_fragments: set[tuple[str, bool]] = set()

    def value(node: ValueNode) -> Any:
        if isinstance(node, VariableNode):
            return variables.get(node.name.value)
        if isinstance(node, StringValueNode):
            return node.value
        if isinstance(node, ListValueNode):
            return [value(item) for item in node.values]
        return None

    def pinned_root(field: FieldNode, arguments: dict[str, Any]) -> bool:
        name = field.name.value
        if name == "registry":
            return arguments.get("at") is not None
        if name in ("node", "nodes"):
            ids = arguments.get("ids") if name == "nodes" else [arguments.get("id")]
            decoded = [decode_id(i) for i in ids or () if isinstance(i, str)]
            return any(d is not None and d.pinned for d in decoded)
        return False

    def walk(selections: SelectionSetNode | None, root: bool) -> None:
        for selection in selections.selections if selections else ():
            if isinstance(selection, FieldNode):
                arguments = {a.name.value: value(a.value) for a in selection.arguments or ()}
                if root and pinned_root(selection, arguments):
                    continue
                for name in ("after", "before"):
                    cursor = arguments.get(name)
                    if isinstance(cursor, str):
                        with contextlib.suppress(CursorError):  # the field itself says what is wrong with it
                            found.add(_decode(cursor)[0])
                walk(selection.selection_set, False)
            elif isinstance(selection, InlineFragmentNode):
                walk(selection.selection_set, root)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name in fragments and (name, root) not in seen_fragments:
                    seen_fragments.add((name, root))
                    walk(fragments[name].selection_set, root)

    walk(raw.operation.selection_set, True)
    return found

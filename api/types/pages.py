"""Relay connections, both ways: pages of a list stable for one commit, cursors that carry their commit.

A cursor names the commit its page was cut from and a position in that commit's list. Paging on with
it (`after:` or `before:`) answers from that commit, even when main has moved since the first page,
so a leaderboard paged across a publication neither skips nor repeats a run; `pageInfo.commit`
says which commit the page is from. `first`/`after` pages forward, `last`/`before` backward; with
neither size, a page is the first 20.
"""

from __future__ import annotations

import base64
import functools
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

import strawberry

import registry
from registry.graph import Graph

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
    "cursor_commit",
    "follows_cursor",
    "page_bounds",
    "paginate",
]

MAX_PAGE = 100
DEFAULT_PAGE = 20

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

_COMMIT = re.compile(r"[0-9a-f]{40}")

First = Annotated[
    int | None,
    strawberry.argument(
        description="How many items to answer from the start (or after `after`), 0 to 100; 20 when neither "
        "`first` nor `last` is given."
    ),
]
After = Annotated[
    str | None,
    strawberry.argument(description="The `endCursor` of the previous page: answer the items after it."),
]
Last = Annotated[
    int | None,
    strawberry.argument(description="How many items to answer from the end (or before `before`), 0 to 100."),
]
Before = Annotated[
    str | None,
    strawberry.argument(description="The `startCursor` of the next page: answer the items before it."),
]


class PageSizeError(registry.RegistryError, ValueError):
    """`first` or `last` out of range, or both given: expected, so it reaches the client unmasked."""


class CursorError(registry.RegistryError, ValueError):
    pass


@strawberry.type(description="Where a page sits in its list (Relay's page info).")
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether items follow this page (ask with `after: endCursor`).")
    has_previous_page: bool = strawberry.field(
        description="Whether items come before this page (ask with `before: startCursor`)."
    )
    start_cursor: str | None = strawberry.field(description="The first item's cursor; null for an empty page.")
    end_cursor: str | None = strawberry.field(description="The last item's cursor; null for an empty page.")
    commit: str = strawberry.field(
        description="The commit this page is from: its cursors page on from it, even after main moves."
    )


@strawberry.type(description="An item of a page and its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Opaque: where this item is, for `after`/`before`.")
    node: T = strawberry.field(description="The item.")


@strawberry.type(
    description="A page of a list that is stable for a given commit (Relay's connection); cursors are opaque."
)
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The page's items, in the list's order.")
    page_info: PageInfo = strawberry.field(description="Where the page sits, and the commit it was cut from.")
    total_count: int = strawberry.field(description="How many items the whole list holds (every page together).")


@dataclass(frozen=True, slots=True)
class Window:
    """The Relay arguments of one connection field."""

    first: int | None = None
    after: str | None = None
    last: int | None = None
    before: str | None = None


def _cursor(commit: str, offset: int) -> str:
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
    first, last = page_bounds(window.first), page_bounds(window.last, "last")
    if first is not None and last is not None:
        raise PageSizeError("give first (forward) or last (backward), not both")
    start, end = 0, len(items)
    if window.after:
        start = min(_offset(graph.commit, window.after) + 1, end)
    if window.before:
        end = max(min(_offset(graph.commit, window.before), end), start)
    if last is not None:
        start = max(start, end - last)
    else:
        end = min(end, start + (first if first is not None else DEFAULT_PAGE))
    edges = [Edge(cursor=_cursor(graph.commit, start + i), node=make(item)) for i, item in enumerate(items[start:end])]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=end < len(items),
            has_previous_page=start > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
            commit=graph.commit,
        ),
        total_count=len(items),
    )


def follows_cursor(resolver: F) -> F:
    """Answer a connection field from the commit its cursor was cut from.

    The resolver's object is moved to that commit's graph (its `_at(graph)` gives the same object there,
    or None when it did not exist then) before the page is cut. The resolver must take `info`.
    """

    signature = inspect.signature(resolver)

    @functools.wraps(resolver)
    def resolve(self: Any, *args: Any, **kwargs: Any) -> Any:
        given = signature.bind(self, *args, **kwargs).arguments
        cursor = given.get("after") or given.get("before")
        commit = cursor_commit(cursor)
        if commit is not None:
            info = given["info"]
            current = self._g(info) if hasattr(self, "_g") else self._graph
            if commit != current.commit:
                moved = self._at(info.context.graph(commit))
                if moved is None:
                    raise CursorError(f"cursor {cursor!r}: this list did not exist at {commit}")
                self = moved
        return resolver(self, *args, **kwargs)

    return resolve  # type: ignore[return-value]

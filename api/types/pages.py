"""Relay connections: pages of a list stable for one commit, opaque cursors, page size limits."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import strawberry

import registry
from registry.graph import Graph

__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "Connection",
    "CursorError",
    "Edge",
    "PageInfo",
    "PageSizeError",
    "page_bounds",
    "paginate",
]

MAX_PAGE = 100
DEFAULT_PAGE = 20

T = TypeVar("T")


class PageSizeError(registry.RegistryError, ValueError):
    """`first` out of range: expected, so it reaches the client unmasked."""


class CursorError(registry.RegistryError, ValueError):
    pass


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


@strawberry.type
class Edge(Generic[T]):
    cursor: str
    node: T


@strawberry.type
class Connection(Generic[T]):
    """A page of a list that is stable for a given commit; cursors are opaque."""

    edges: list[Edge[T]]
    page_info: PageInfo
    total_count: int


def _cursor(commit: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{commit[:12]}:{offset}".encode()).decode().rstrip("=")


def _offset(commit: str, cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, number = text.partition(":")
        offset = int(number)
    except (ValueError, UnicodeDecodeError):
        raise CursorError(f"invalid cursor {cursor!r}") from None
    if prefix != commit[:12] or offset < 0:
        raise CursorError(f"cursor {cursor!r} belongs to another snapshot; page again from the start")
    return offset


def page_bounds(first: int) -> int:
    if not 0 <= first <= MAX_PAGE:
        raise PageSizeError(f"first must be between 0 and {MAX_PAGE} (got {first})")
    return first


def paginate(
    graph: Graph, items: Sequence[Any], first: int, after: str | None, make: Callable[[Any], T]
) -> Connection[T]:
    size = page_bounds(first)
    start = _offset(graph.commit, after) + 1 if after else 0
    window = items[start : start + size]
    edges = [Edge(cursor=_cursor(graph.commit, start + i), node=make(item)) for i, item in enumerate(window)]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=start + size < len(items),
            has_previous_page=start > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=len(items),
    )

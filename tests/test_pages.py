"""Relay's connection algorithm (https://relay.dev/graphql/connections.htm, "Pagination algorithm") on a
list of ten, each window worked out by hand: which items, `hasNextPage`/`hasPreviousPage` exactly, the
limits at 0, 100 and one past, and the cursors' errors. The API tests page real cohorts; these pin
`kernelindex.schema.types.pages.paginate` itself at every edge."""

from __future__ import annotations

import base64
from types import SimpleNamespace
from typing import cast

import pytest

from kernelindex.registry.graph import Graph
from kernelindex.schema.types.pages import CursorError, PageSizeError, Window, follows_cursor, paginate

COMMIT = "c" * 40
OTHER = "d" * 40
ITEMS = list("abcdefghij")
GRAPH = cast(Graph, SimpleNamespace(commit=COMMIT))


def cursor(offset: int, commit: str = COMMIT) -> str:
    """A cursor as docs/api.md's example shows one: base64url of `<commit>:<offset>`, unpadded."""
    return base64.urlsafe_b64encode(f"{commit}:{offset}".encode()).decode().rstrip("=")


def offsets(window: Window) -> tuple[str, bool, bool, int | None, int | None]:
    page = paginate(GRAPH, ITEMS, window, str.upper)
    nodes = "".join(edge.node for edge in page.edges)
    assert [edge.cursor for edge in page.edges] == [cursor(ITEMS.index(n.lower())) for n in nodes]
    assert page.total_count == 10 and page.page_info.commit == COMMIT
    info = page.page_info
    assert info.start_cursor == (page.edges[0].cursor if page.edges else None)
    assert info.end_cursor == (page.edges[-1].cursor if page.edges else None)
    first = ITEMS.index(nodes[0].lower()) if nodes else None
    last = ITEMS.index(nodes[-1].lower()) if nodes else None
    return nodes, info.has_next_page, info.has_previous_page, first, last


# (window, the page as Relay cuts it by hand: nodes, hasNextPage, hasPreviousPage)
CASES = [
    (Window(), "ABCDEFGHIJ", False, False),  # 20 by default: all ten
    (Window(first=3), "ABC", True, False),
    (Window(first=9), "ABCDEFGHI", True, False),  # one short of the end: there is a next page
    (Window(first=10), "ABCDEFGHIJ", False, False),  # exactly to the end: there is none
    (Window(first=11), "ABCDEFGHIJ", False, False),
    (Window(first=0), "", True, False),
    (Window(first=100), "ABCDEFGHIJ", False, False),
    (Window(first=3, after=cursor(2)), "DEF", True, True),  # after C: from D on
    (Window(first=3, after=cursor(6)), "HIJ", False, True),  # the last page, exactly full
    (Window(first=3, after=cursor(7)), "IJ", False, True),
    (Window(first=3, after=cursor(0)), "BCD", True, True),
    (Window(after=cursor(9)), "", False, True),  # after the last item
    (Window(after=cursor(15)), "", False, True),  # past the end: empty, never an error
    (Window(last=3), "HIJ", False, True),
    (Window(last=10), "ABCDEFGHIJ", False, False),
    (Window(last=9), "BCDEFGHIJ", False, True),
    (Window(last=0), "", False, True),
    (Window(last=2, before=cursor(3)), "BC", True, True),  # before D
    (Window(last=5, before=cursor(3)), "ABC", True, False),
    (Window(before=cursor(3)), "ABC", True, False),  # no size: the first 20 before D
    (Window(before=cursor(0)), "", True, False),
    (Window(before=cursor(50)), "ABCDEFGHIJ", False, False),
    (Window(after=cursor(1), before=cursor(5)), "CDE", True, True),  # between B and F
    (Window(after=cursor(1), before=cursor(5), first=2), "CD", True, True),
    (Window(after=cursor(1), before=cursor(5), last=2), "DE", True, True),
    (Window(after=cursor(5), before=cursor(2)), "", True, True),  # crossed cursors: nothing between
]


@pytest.mark.parametrize(("window", "nodes", "has_next", "has_previous"), CASES)
def test_each_window_is_cut_as_relay_says(window: Window, nodes: str, has_next: bool, has_previous: bool) -> None:
    assert offsets(window)[:3] == (nodes, has_next, has_previous)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 9, 10])
def test_a_walk_forward_and_back_visits_each_item_once(size: int) -> None:
    seen, after = "", None
    while True:
        page = paginate(GRAPH, ITEMS, Window(first=size, after=after), str.upper)
        seen += "".join(e.node for e in page.edges)
        if not page.page_info.has_next_page:
            break
        after = page.page_info.end_cursor
    assert seen == "ABCDEFGHIJ"
    back, before = "", None
    while True:
        page = paginate(GRAPH, ITEMS, Window(last=size, before=before), str.upper)
        back = "".join(e.node for e in page.edges) + back
        if not page.page_info.has_previous_page:
            break
        before = page.page_info.start_cursor
    assert back == "ABCDEFGHIJ"


@pytest.mark.parametrize(
    ("window", "message"),
    [
        (Window(first=101), "first must be between 0 and 100 (got 101)"),
        (Window(last=101), "last must be between 0 and 100 (got 101)"),
        (Window(first=-1), "first must be between 0 and 100 (got -1)"),
        (Window(last=-1), "last must be between 0 and 100 (got -1)"),
        (Window(first=1, last=1), "give first (forward) or last (backward), not both"),
        (Window(first=0, last=0), "give first (forward) or last (backward), not both"),
    ],
)
def test_page_sizes_out_of_range_are_refused(window: Window, message: str) -> None:
    with pytest.raises(PageSizeError) as caught:
        paginate(GRAPH, ITEMS, window, str.upper)
    assert str(caught.value) == message


def test_cursors_of_another_commit_or_form_are_refused() -> None:
    other = cursor(2, OTHER)
    with pytest.raises(CursorError) as caught:
        paginate(GRAPH, ITEMS, Window(after=other), str.upper)
    assert str(caught.value) == f"cursor {other!r} belongs to another snapshot ({OTHER}); page again from the start"
    with pytest.raises(CursorError) as caught:
        paginate(GRAPH, ITEMS, Window(before=other), str.upper)
    assert "belongs to another snapshot" in str(caught.value)
    for bad in (cursor(-1), cursor(2, "C" * 40), cursor(2, "c" * 39)):
        with pytest.raises(CursorError) as caught:
            paginate(GRAPH, ITEMS, Window(after=bad), str.upper)
        assert str(caught.value) == (
            f"cursor {bad!r} names no commit of this registry (an older cursor, or one of another snapshot's "
            "format): page again from the start"
        )
    for junk in ("!!!", base64.urlsafe_b64encode(f"{COMMIT}:two".encode()).decode()):
        with pytest.raises(CursorError) as caught:
            paginate(GRAPH, ITEMS, Window(after=junk), str.upper)
        assert str(caught.value) == f"invalid cursor {junk!r}"


class _Listing:
    """A list's object as the types have one: its snapshot's graph, and a resolver that follows cursors."""

    _graph = GRAPH

    @follows_cursor
    def items(self, info: object, first: int | None = None, after: str | None = None) -> str:
        return f"{first} after {after}"


@pytest.mark.parametrize("by_name", [True, False])
def test_a_cursor_of_another_commit_is_refused_whether_arguments_come_by_name_or_by_position(by_name: bool) -> None:
    listing, other, own = _Listing(), cursor(2, OTHER), cursor(2)

    def ask(after: str | None) -> str:
        # strawberry passes every argument by name; a direct caller may pass them by position
        return listing.items(info=None, first=3, after=after) if by_name else listing.items(None, 3, after)

    assert ask(own) == f"3 after {own}" and ask(None) == "3 after None"
    with pytest.raises(CursorError) as caught:
        ask(other)
    assert str(caught.value).startswith(f"cursor {other!r} was cut from commit {OTHER}, and this list answers for ")

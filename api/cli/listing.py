"""How a read command prints a GraphQL answer: a table for people, the answer's `data` (`--json`), or one object per
line for each item of its list (`--jsonl`); and where the next page starts (`--cursor`).

Everything printed is a function of the answer alone, so a command prints the same bytes whether the query
service answered it locally or a served registry did (`kernelindex.cli.ask`). A table's cells are plain text: a name
from a contributor or a server is never read as markup, and a character a terminal would act on is shown as its
escape (`kernelindex.cli.console.visible`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import typer

from kernelindex.cli.console import dumps, emit_json, visible

__all__ = ["Column", "Listing", "cell", "dig", "nodes", "output", "print_listing"]


def dig(value: Any, *path: str | int) -> Any:
    """`value[path[0]][path[1]]...`, or None where a step is missing or null.

    >>> dig({"a": {"b": [1, 2]}}, "a", "b", 1), dig({"a": None}, "a", "b")
    (2, None)
    """
    for step in path:
        if isinstance(step, int):
            value = value[step] if isinstance(value, list) and -len(value) <= step < len(value) else None
        else:
            value = value.get(step) if isinstance(value, dict) else None
        if value is None:
            return None
    return value


def cell(value: Any) -> str:
    """A value as one line of a table: `-` for nothing, integers with thousands separators, lists joined by `, `,
    and a character a terminal would act on (a control, a tab or newline, U+202E) as its escape.

    >>> cell(None), cell(12345), cell(True), cell(["a", "b"]), cell("x\\x1b[31my\\r")
    ('-', '12,345', 'yes', 'a, b', 'x\\\\x1b[31my\\\\r')
    """
    if value is None or value == [] or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(cell(item) for item in value)
    return visible(str(value))


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a table: its header and how a row's item gives its value."""

    header: str
    value: Callable[[dict[str, Any]], Any]
    right: bool = False


@dataclass(frozen=True, slots=True)
class Listing:
    """What a read command prints: the answer's `data`, a heading line, the items of its list and where the list
    continues (an `endCursor` when there is a next page)."""

    data: Mapping[str, Any]
    heading: str
    items: Sequence[dict[str, Any]]
    columns: Sequence[Column]
    more: str | None = None
    notes: Sequence[str] = ()


def nodes(connection: Mapping[str, Any] | None) -> tuple[list[dict[str, Any]], str | None]:
    """A connection's nodes and the cursor after them when there is a next page."""
    if not connection:
        return [], None
    found = [edge["node"] for edge in connection.get("edges") or []]
    info = connection.get("pageInfo") or {}
    return found, (info.get("endCursor") if info.get("hasNextPage") else None)


def output(as_json: bool, as_jsonl: bool) -> str:
    """`json`, `jsonl` or `table`; both flags at once is a usage error (exit 2)."""
    if as_json and as_jsonl:
        raise typer.BadParameter("give one of --json and --jsonl", param_hint="--json/--jsonl")
    return "json" if as_json else "jsonl" if as_jsonl else "table"


def print_listing(listing: Listing, mode: str) -> None:
    """Print `listing` as `mode` (`output`). A table ends with the next page's cursor when there is one; JSON Lines
    say it on stderr (stdout holds only the items)."""
    if mode == "json":
        emit_json(listing.data)
        return
    if mode == "jsonl":
        for item in listing.items:
            typer.echo(dumps(item, separators=(",", ":")))
        if listing.more:
            typer.echo(f"next page: --cursor {cell(listing.more)}", err=True)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(soft_wrap=False, highlight=False)
    piped = not console.is_terminal
    if piped:  # as wide as the rows (a digest is never folded), recorded to drop the padding at each line's end
        console = Console(file=io.StringIO(), width=400, soft_wrap=False, highlight=False, color_system=None)
    console.print(Text(cell(listing.heading)))
    for note in listing.notes:
        console.print(Text(cell(note)))
    if listing.items:
        table = Table(box=None, pad_edge=False, highlight=False)
        for column in listing.columns:
            header = Text(cell(column.header))  # a run's name heads a column of `compare`
            table.add_column(header, justify="right" if column.right else "left", no_wrap=True)
        for item in listing.items:
            table.add_row(*(Text(cell(column.value(item))) for column in listing.columns))
        console.print(table)
    if listing.more:
        console.print(Text(f"next page: --cursor {cell(listing.more)}"))
    if piped:
        assert isinstance(console.file, io.StringIO)
        typer.echo("\n".join(line.rstrip() for line in console.file.getvalue().splitlines()))

"""Reading a page as a browser would, with the standard library's HTML parser: its elements' attributes
(the head's meta and link tags, every link), its tables' cells as text, and its readable text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Page", "read_page"]

_VOID = {"meta", "link", "br", "img", "input", "hr", "circle", "line", "path", "rect"}


@dataclass
class Page:
    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (tag, attributes), in order
    tables: list[list[list[str]]] = field(default_factory=list)  # each table: rows of cells' text
    text: str = ""  # what a reader reads in <main>, whitespace collapsed

    def meta(self, key: str) -> list[str]:
        """The content of every <meta property=key> or <meta name=key>."""
        return [
            a.get("content", "") for t, a in self.elements if t == "meta" and key in (a.get("property"), a.get("name"))
        ]

    def links(self, rel: str, type: str | None = None) -> list[dict[str, str]]:
        """Every <link rel=...> (of this type, if given)."""
        return [a for t, a in self.elements if t == "link" and a.get("rel") == rel and type in (None, a.get("type"))]

    def hrefs(self) -> list[str]:
        return [a["href"] for t, a in self.elements if t == "a" and "href" in a]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.cell: list[str] | None = None
        self.row: list[str] | None = None
        self.main = 0
        self.words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag == "main":
            self.main += 1
        elif tag == "table":
            self.page.tables.append([])
        elif tag == "tr" and self.page.tables:
            self.row = []
            self.page.tables[-1].append(self.row)
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "main":
            self.main -= 1
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)
        if self.main:
            self.words.append(data)


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    reader.page.text = " ".join(" ".join(reader.words).split())
    return reader.page

"""Link previews: what a page says of itself when its URL is shared (Open Graph, Twitter cards).

Every page has a title and a description. The canonical URL and the preview image are absolute URLs
(the Open Graph protocol says so), built from the configured base URL, never from a request's Host: a
page is cached and would carry one client's Host to every later one. Without a base URL they are left
out, and the preview falls back to the title and description (a `summary` card).

A preview image (`web/cards.py`) is always pinned to the commit the page shows: it never changes, so
a preview service may keep it forever, and it shows what the page showed when it was shared.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelindex.core.urls import Urls

__all__ = [
    "CARD_HEIGHT",
    "CARD_WIDTH",
    "DESCRIPTION",
    "MAX_DESCRIPTION",
    "MAX_TITLE",
    "SITE",
    "Preview",
    "brief",
    "head_links",
    "preview",
]

SITE = "KernelIndex registry"
DESCRIPTION = (
    "Public GPU-kernel benchmark results: content-addressed manifests in git, ranked only inside comparable "
    "cohorts, every answer pinned to a commit."
)
"""What a page without a description of its own says of itself."""

CARD_WIDTH = 1200
CARD_HEIGHT = 630
"""A preview image's size in pixels (the 1.91:1 that Open Graph and Twitter's large card both show whole)."""

MAX_TITLE = 200
MAX_DESCRIPTION = 300
"""Characters of a page's title and description as its head says them (`<title>`, the description, Open
Graph and Twitter): search results and previews show a line or two, and a description made of a
workload's axes once ran to 100,151 characters."""


def brief(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: cut at a word where there is one in its last third, marked
    with an ellipsis; runs of white space (line breaks included) are one space, as a page shows them.

    >>> brief("Leaderboard of  the\\nrmsnorm   kernels", 100)
    'Leaderboard of the rmsnorm kernels'
    >>> brief("the quick brown fox jumps", 18), brief("x" * 30, 10)
    ('the quick brown …', 'xxxxxxxxx…')
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= (limit * 2) // 3:
        return cut[:space].rstrip() + " …"
    return cut + "…"


@dataclass(frozen=True, slots=True)
class Preview:
    """A page's link preview: `url` (canonical) and `image` are absolute, or None without a base URL."""

    title: str
    description: str
    url: str | None
    image: str | None

    @property
    def card(self) -> str:
        """The Twitter card type: a large image when there is one."""
        return "summary_large_image" if self.image else "summary"


def preview(links: Urls, *, title: str, description: str, path: str, image: str | None) -> Preview:
    """The preview of the page at `path` (with its query) whose image is at `image` (a URL from `links`).

    >>> preview(Urls(), title="t", description="d", path="/records", image="/at/ab/runs/x/card.png").url is None
    True
    >>> found = preview(Urls("https://r.example"), title="t", description="d", path="/records", image=None)
    >>> found.url, found.card
    ('https://r.example/records', 'summary')
    """
    if not links.absolute:
        return Preview(title, description, None, None)
    return Preview(title, description, links.base + path, image)


def head_links(links: Urls) -> Urls:
    """The links of main's head under the same base: where a page's Atom feeds are, pinned page or not (a
    subscription follows main; a feed pinned to a commit never changes)."""
    return Urls(links.base)

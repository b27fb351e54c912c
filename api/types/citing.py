"""What every `citation` field shares: its arguments, and where its permalink comes from.

A citation's permalink is absolute or absent, never root-relative (a reader of a paper cannot follow
`/at/...`): it comes from the registry's configured base URL, or from a `baseUrl` the client gives (a
frontend that serves the registry under its own address; the pages' copy buttons ask for a placeholder
origin and put the browser's `location.origin` in its place). With neither, the citation says it has no
permalink.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated
from urllib.parse import urlsplit

import strawberry

from api.errors import BadUserInput, access_date
from api.types.base import Info
from api.types.enums import CitationFormat
from api.urls import Urls
from registry.kinds.content import link_problem

__all__ = ["Accessed", "BaseUrl", "Format", "accessed_day", "citation_urls"]

Format = Annotated[
    CitationFormat,
    strawberry.argument(description="TEXT (one line), BIBTEX (an @misc entry) or CSL_JSON (one CSL-JSON item)."),
]
Accessed = Annotated[
    str | None,
    strawberry.argument(
        description="The day your reader accessed it, YYYY-MM-DD: added as the access date. The server never adds "
        "its own, so an answer pinned to a published commit never changes."
    ),
]
BaseUrl = Annotated[
    str | None,
    strawberry.argument(
        description="An absolute http(s) URL to build the permalink under (`https://mirror.example/kernelindex`), "
        "for a frontend that serves this registry at its own address; null: the registry's configured base URL. "
        "Without either, the citation carries no permalink and says that it needs one."
    ),
]


def citation_urls(info: Info, base_url: str | None) -> Urls | None:
    """The URLs a citation's permalink is built from: under `base_url` when given, else under the configured
    base URL; None when neither exists (a root-relative permalink is no permalink to a reader).

    Raises:
        BadUserInput: `base_url` is not an absolute http(s) URL without a query or a fragment.
    """
    if base_url is not None:
        problem = link_problem(base_url)
        parts = urlsplit(base_url) if problem is None else None
        if parts is None or parts.query or parts.fragment or base_url.endswith(("?", "#")):
            why = problem or "a base URL has no query or fragment"
            raise BadUserInput(f"baseUrl: {why} (got {base_url[:80]!r})")
        return Urls.of(base_url)
    urls = info.context.urls
    return urls if urls.absolute else None


def accessed_day(info: Info, accessed: str | None) -> str | None:
    """The access date a citation carries: the one given, else the reader's day where the edge has one (the
    command line), else none."""
    day: dt.date | None = access_date(accessed) if accessed is not None else info.context.today
    return day.isoformat() if day else None

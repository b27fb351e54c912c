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

from kernelindex.core.errors import BadUserInput, access_date
from kernelindex.core.urls import Urls
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.enums import CitationFormat

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
        problem = _base_url_problem(base_url)
        if problem is not None:
            raise BadUserInput(f"baseUrl: {problem} (got {base_url[:80]!r})")
        return Urls.of(base_url)
    urls = info.context.urls
    return urls if urls.absolute else None


def _base_url_problem(text: str) -> str | None:
    """Why `text` is no base URL, or None: an allow-list, as the registry's link rule (`http` or `https`, any
    case, `//`, a host; no user part, no white space or control characters), and no query or fragment.

    >>> [_base_url_problem(u) is None for u in ("https://r.example", "HTTP://r.example:8080/ki/")]
    [True, True]
    >>> [_base_url_problem(u) is None for u in ("javascript:x", "//r.example", "https://", "https://u@r", "https://r/?q")]
    [False, False, False, False, False]
    """
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return "no white space or control characters"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        return "not a well-formed URL"
    if parts.scheme.lower() not in ("http", "https") or not text.lower().startswith(f"{parts.scheme.lower()}://"):
        return "not an http(s) URL"
    if not parts.hostname or "@" in parts.netloc or "\\" in text:
        return "a base URL needs a host, without a user part"
    if parts.query or parts.fragment or "?" in text or "#" in text:
        return "a base URL has no query or fragment"
    return None


def accessed_day(info: Info, accessed: str | None) -> str | None:
    """The access date a citation carries: the one given, else the reader's day where the edge has one (the
    command line), else none."""
    day: dt.date | None = access_date(accessed) if accessed is not None else info.context.today
    return day.isoformat() if day else None

"""What every page shares: ask the query service for its GraphQL document's answer, then answer a browser
with HTML and an API client with the JSON the API gives for the same document (one URL, two audiences).

A page names one document and its variables; `$at` pins it. A pinned page (`/at/{commit}/...`) must
name a commit of main: a prefix redirects to the full id, anything else is 404. Pinned pages of
published commits never change (immutable caching); head pages revalidate and say which commit they
show. Links come from the configured base URL or are root-relative, never from the request's Host.

A rendered page depends only on its cache key: the links it holds to itself (its pin, its JSON twin) are
built from the parameters it read (`Spec.query`), never from the raw query string, which may carry anything.
Every value from the registry is hostile wherever it is shown: the templates escape it (autoescape), make
characters XML cannot carry visible (`escape_forbidden`, as every `{{ }}` is shown) and link only
http(s) URLs (`kernelindex.web.names.link`); headers come from `finish`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kernelindex.core.cache import IMMUTABLE, REVALIDATE, Representation
from kernelindex.core.codes import (
    AMBIGUOUS_NAME,
    BAD_USER_INPUT,
    CURSOR_ERROR,
    INTERNAL,
    NOT_FOUND,
    PAGE_SIZE_ERROR,
    PERSISTED_QUERY_NOT_ALLOWED,
    PREVIEW_REJECTED,
    REVISION_NOT_FOUND,
    SEARCH_TOO_LARGE,
)
from kernelindex.core.json_text import pretty_json
from kernelindex.core.urls import Urls, twin, unpinned
from kernelindex.http.requests import not_ready, server_of, wants_json
from kernelindex.http.responses import JSON, error_body, finish
from kernelindex.service.queries import Answer
from kernelindex.service.server import Server
from kernelindex.web.link_previews import DESCRIPTION, MAX_DESCRIPTION, MAX_TITLE, brief, preview
from kernelindex.web.names import FILTERS, shown

if TYPE_CHECKING:
    from starlette.templating import Jinja2Templates

__all__ = [
    "HTML",
    "ORIGIN",
    "STATIC",
    "Format",
    "PageError",
    "Spec",
    "cached",
    "copy_citations",
    "error_page",
    "guarded",
    "json_asked",
    "render",
    "strip_json",
    "templates",
]

HTML = "text/html; charset=utf-8"
STATIC = Path(__file__).resolve().parent / "static"
"""The pages' stylesheet and script, served at `/static`."""

ORIGIN = "https://origin.invalid"
"""The placeholder origin under which a page asks for the citations its copy buttons copy, when the registry has
no base URL: the page script puts the browser's `location.origin` in its place (never the server's Host), so a
copied citation carries an absolute permalink. A reserved name (RFC 2606): it can never be a real host."""


@functools.cache
def templates() -> Jinja2Templates:
    """The pages' template environment, made on the first page drawn: a server that only answers GraphQL
    never imports jinja2 (its modules are resident for the process's life: ~2 MB)."""
    from jinja2 import FileSystemLoader
    from starlette.templating import Jinja2Templates

    from kernelindex.web.environment import PageEnvironment

    # Templates are read once: they are part of the package, and looking at each file's time again for every
    # page (Jinja2's auto_reload) cost ~1% of a first-time run page.
    loader = FileSystemLoader(Path(__file__).resolve().parent / "templates")
    # Every {{ value }}: characters XML cannot carry made visible (`shown`), then escaped; every template
    # autoescapes, whatever its name ends with (.html, .svg).
    found = Jinja2Templates(env=PageEnvironment(loader=loader, auto_reload=False, shown=shown))
    env = found.env
    env.filters.update(FILTERS)
    env.filters["pretty"] = pretty_json
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.globals["copy_origin"] = ORIGIN
    return found


class PageError(Exception):
    """A page that cannot be shown: its HTTP status, the error code the API would give, and why."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Spec:
    """One page: its template, its document and variables, what must exist, and what to add for the template.

    `subject` is the field of `registry` the page is about (a null one is a 404 that says `missing`);
    `extra` computes what the template draws (charts, groupings) from the answer and the links.
    """

    template: str
    document: str
    variables: Mapping[str, Any]
    title: Callable[[dict[str, Any]], str]
    subject: str | None = None
    missing: str = ""
    extra: Callable[[dict[str, Any], Urls], dict[str, Any]] | None = None
    status: int = 200
    found: Callable[[dict[str, Any]], bool] | None = None  # for a page whose subject is a list: is it there?
    canonical: Callable[[str], str] | None = None  # the page's URL for a full commit id (default: /at/{commit}/...)
    query: Sequence[tuple[str, str]] = ()  # the query parameters the page read, as its own links repeat them
    # What search results and link previews say of the page (one sentence from its data); without one, the
    # registry's own line (`link_previews.DESCRIPTION`).
    description: Callable[[dict[str, Any]], str] | None = None
    feeds: Callable[[dict[str, Any], Urls], list[tuple[str, str]]] | None = None
    card: Callable[[dict[str, Any], Urls], str | None] | None = None

    cache: str | None = None  # Cache-Control of a page that follows main but must not be revalidated each time
    pinnable: bool = True  # False: the page answers for the head of main only (no `/at/{commit}` form)


def copy_citations(request: Request) -> dict[str, Any]:
    """The variables of a page document's citations to copy (`$copy`, `$copyBase`): asked for under `ORIGIN`
    when the registry has no base URL (the citations it displays then have no permalink), not asked for
    otherwise. The page's JSON twin answers the same variables: it is the API's answer to the page's document."""
    copy = not server_of(request).urls.absolute
    return {"copy": copy, "copyBase": ORIGIN if copy else None}


@dataclass(frozen=True, slots=True)
class Format:
    """A page's answer in another format than HTML or its JSON twin (compare as Markdown or CSV, a preview
    image): its name (part of the cache key), media type, extra headers, and the bytes made from the
    document's answer, the links and the page's facts (`meta`: commit, title...), in a worker thread under the
    query service's bound, like every page's HTML (a preview image is tens of ms of drawing)."""

    name: str
    media_type: str
    make: Callable[[dict[str, Any], Urls, dict[str, Any]], bytes]
    headers: Mapping[str, str] = field(default_factory=dict)


def strip_json(text: str) -> tuple[str, bool]:
    """A path parameter without its `.json` suffix, and whether it had one (the page's JSON twin)."""
    return (text[: -len(".json")], True) if text.endswith(".json") else (text, False)


def json_asked(request: Request) -> bool:
    """Whether this request is for a page's JSON: its `.json` twin, or JSON preferred by `Accept`."""
    return request.url.path.endswith(".json") or wants_json(request)


def _error_page(request: Request, error: PageError, as_json: bool, links: Urls) -> Response:
    if as_json:
        body, media = error_body(error.message, error.code), JSON
    else:
        body, media = templates().get_template("error.html").render(error=error, links=links, page=None).encode(), HTML
    headers = {"cache-control": "no-store", "vary": "accept"}
    return finish(request, body, status=error.status, media_type=media, headers=headers)


def error_page(request: Request, status: int, code: str, message: str) -> Response:
    """An error as a page for a browser and in the error shape for an API client (by `Accept`)."""
    return _error_page(request, PageError(status, code, message), wants_json(request), server_of(request).urls)


def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A page handler whose refusals (a `PageError` before its document runs) answer as pages do."""

    @functools.wraps(handler)
    async def page(request: Request) -> Response:
        try:
            return await handler(request)
        except PageError as error:
            return _error_page(request, error, json_asked(request), server_of(request).urls)

    return page


def _finished(request: Request, page: Representation, key: tuple[str, ...] | None = None) -> Response:
    """A page as it leaves, in the coding its client accepts, made once and kept with the page (the pages'
    cache, where it is kept under `key`, adds what a new coding holds)."""
    pages = server_of(request).pages
    return finish(
        request,
        page.body,
        status=page.status,
        media_type=page.media_type,
        headers=page.headers,
        kept=page,
        grown=None if key is None else lambda added: pages.grow(key, page, added),
    )


def _path(request: Request) -> str:
    """This request's path as a URL path again (its parameters arrive decoded)."""
    return quote(request.url.path, safe="/:@!$&'()*+,;=")


def _query(spec: Spec) -> str:
    """The page's query string, from the parameters it read (never the raw one: it may carry anything);
    `:` kept as itself, as digests and search facets are written."""
    return f"?{urlencode(list(spec.query), safe=':', quote_via=quote)}" if spec.query else ""


def _key(
    head: str,
    template: str,
    variables: Mapping[str, Any],
    as_json: bool | str,
    query: Sequence[tuple[str, str]] = (),
) -> tuple[str, ...]:
    """What a rendered page depends on, all of it: the commit, the page, its variables, its format (the JSON
    twin, HTML, or another format's name), the parameters its links repeat."""
    parts = orjson.dumps([dict(variables), list(query)], option=orjson.OPT_SORT_KEYS).decode()
    return (head, template, parts, str(as_json))


def cached(request: Request, template: str, variables: Mapping[str, Any]) -> Response | None:
    """The page already rendered for these variables at the served head, if any (HTML).

    A page is cached only once it was shown, so whatever its URL had to pass (a permalink's commit on
    main) it passed against this same head: a hit can skip those checks.
    """
    server = server_of(request)
    if not server.serving():
        return None
    key = _key(server.snapshots.head.commit, template, variables, False)
    found = server.pages.get(key)
    return None if found is None else _finished(request, found, key)


async def render(
    request: Request, spec: Spec, as_json: bool, at: str | None = None, other: Format | None = None
) -> Response:
    """Run the page's document and answer HTML or JSON (or `other`'s format), cached per (commit, page,
    format)."""
    server = server_of(request)
    links = server.urls.pinned(at) if at is not None else server.urls
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    head = server.snapshots.head
    variables = dict(spec.variables)
    key = _key(head.commit, spec.template, variables, other.name if other is not None else as_json, spec.query)
    shown = server.pages.get(key)
    if shown is not None:
        return _finished(request, shown, key)
    try:
        made = await _render(request, server, spec, variables, as_json, links, at, other)
    except PageError as error:
        return _error_page(request, error, as_json, links)
    if isinstance(made, Response):
        return made
    if made.status != 200:
        return _finished(request, made)
    server.pages.put(key, made)
    return _finished(request, made, key)


# A serving constraint the resolver cannot evaluate is the client's too (its codes are its error classes'), and
# so is a revision a head page's query names (the feed's `since`, a status page's `readAt`): pinned pages refuse
# theirs as 404 before this.
_CLIENT_CODES = frozenset(
    {
        BAD_USER_INPUT,
        PAGE_SIZE_ERROR,
        CURSOR_ERROR,
        AMBIGUOUS_NAME,
        SEARCH_TOO_LARGE,
        REVISION_NOT_FOUND,
        "QUERY_TOO_COMPLEX",
        "INVALID_CONSTRAINT",
        "UNKNOWN_METRIC",
        "WRONG_UNIT",
        "UNSUPPORTED_OPERATOR",
        "NOT_A_CITATION",
    }
)


def _refusal(answer: Answer) -> PageError:
    """The page's answer to GraphQL errors: the client's (a bad cursor, an ambiguous name, a search over its
    limits) are 400, a document the allow-list refuses 403, faults 500."""
    codes = answer.codes
    status = 400 if set(codes) <= _CLIENT_CODES else 403 if PERSISTED_QUERY_NOT_ALLOWED in codes else 500
    return PageError(status, codes[0], answer.messages)


async def _render(
    request: Request,
    server: Server,
    spec: Spec,
    variables: dict[str, Any],
    as_json: bool,
    links: Urls,
    at: str | None,
    other: Format | None = None,
) -> Representation | Response:
    made = functools.partial(_made, request, spec, variables, as_json, links, at, other)
    # What the page makes of its answer is made in the worker thread that executed the document, right after it.
    page: Representation | Response = await server.queries.answer_then(
        spec.document, variables, made, head=server.snapshots.head
    )
    return page


def _made(
    request: Request,
    spec: Spec,
    variables: dict[str, Any],
    as_json: bool,
    links: Urls,
    at: str | None,
    other: Format | None,
    answer: Answer,
) -> Representation | Response:
    """The page (or its JSON twin, or its other format) made of its document's `answer`, in a worker thread: a
    template over 100 rows of contributors' text, or a card's drawing, takes longer than the event loop may be
    kept from its sockets.

    Raises:
        PageError: the answer is a refusal, or names nothing.
    """
    if at is not None and (answer.unpublished or set(answer.codes) & {REVISION_NOT_FOUND, PREVIEW_REJECTED}):
        raise PageError(404, REVISION_NOT_FOUND, f"{at} is not a commit of main: pages pin commits of main only")
    if answer.data is None or answer.data.get("registry") is None:
        raise _refusal(answer) if answer.errors else PageError(500, INTERNAL, "the page's document answered nothing")
    data: dict[str, Any] = answer.data["registry"]
    commit: str = data["commit"]["id"]
    if at is not None and at != commit:
        here = unpinned(_path(request)) + _query(spec)
        target = spec.canonical(commit) if spec.canonical else links.pin(commit, here)
        return RedirectResponse(target, status_code=307)
    if answer.errors:
        raise _refusal(answer)
    if (spec.subject is not None and data.get(spec.subject) is None) or (
        spec.found is not None and not spec.found(data)
    ):
        raise PageError(404, NOT_FOUND, f"{spec.missing} at commit {commit}")
    headers = {
        "cache-control": spec.cache or (IMMUTABLE if answer.immutable else REVALIDATE),
        "x-kernelindex-commit": commit,
        "vary": "accept",
    }
    if as_json and other is None:  # the page's JSON twin is the API's answer to the page's document
        return Representation(answer.body, JSON, headers, status=spec.status)
    query = _query(spec)
    title = brief(spec.title(data), MAX_TITLE)
    description = brief(spec.description(data), MAX_DESCRIPTION) if spec.description is not None else DESCRIPTION
    meta = {
        "title": title,
        "description": description,
        "commit": commit,
        "committed_at": data["commit"]["committedAt"],
        "pinned": at is not None,
        "pin_url": links.pin(commit, unpinned(_path(request)) + query) if spec.pinnable else None,
        "json_url": links.base + twin(_path(request)) + query,
        "graphql_url": links.graphql(spec.document, variables),
        "document": spec.document.strip(),
        "variables": orjson.dumps(variables, option=orjson.OPT_INDENT_2).decode(),
        "feeds": spec.feeds(data, links) if spec.feeds is not None else [],
        "preview": preview(
            links,
            title=title,
            description=description,
            path=request.url.path + query,
            image=spec.card(data, links) if spec.card is not None else None,
        ),
    }
    if other is not None:
        headers = {**headers, **other.headers}
        return Representation(other.make(data, links, meta), other.media_type, headers, status=spec.status)
    return Representation(_html(spec, data, links, meta), HTML, headers, status=spec.status)


def _html(spec: Spec, data: dict[str, Any], links: Urls, meta: dict[str, Any]) -> bytes:
    """The page's HTML from its template."""
    extra = spec.extra(data, links) if spec.extra is not None else {}
    return templates().get_template(spec.template).render(data=data, page=meta, links=links, **extra).encode()

"""What every page shares: run its GraphQL document against the schema, then answer a browser with
HTML and an API client with the JSON the API gives for the same document (one URL, two audiences).

A page names one document and its variables; `$at` pins it. A pinned page (`/at/{commit}/...`) must
name a commit of main: a prefix redirects to the full id, anything else is 404. Pinned pages of
published commits never change (immutable caching); head pages revalidate and say which commit they
show. Links come from the configured base URL or are root-relative, never from the request's Host.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from api.cache import ByteLRU
from api.codes import (
    AMBIGUOUS_NAME,
    BAD_USER_INPUT,
    CURSOR_ERROR,
    INTERNAL,
    NOT_FOUND,
    PAGE_SIZE_ERROR,
    PREVIEW_REJECTED,
    REVISION_NOT_FOUND,
)
from api.http.responses import JSON, error_body
from api.service import Answer
from web.links import Links
from web.names import FILTERS

if TYPE_CHECKING:
    from api.app import Service

__all__ = ["TEMPLATES", "PageError", "Spec", "cached", "guarded", "render", "service_of", "strip_json", "wants_json"]

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=0, must-revalidate"
PAGE_CACHE_BYTES = 32 * 1024 * 1024

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")
TEMPLATES.env.filters.update(FILTERS)
TEMPLATES.env.filters["pretty"] = lambda value: json.dumps(value, indent=2, ensure_ascii=False)
TEMPLATES.env.trim_blocks = True
TEMPLATES.env.lstrip_blocks = True


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
    extra: Callable[[dict[str, Any], Links], dict[str, Any]] | None = None
    status: int = 200
    found: Callable[[dict[str, Any]], bool] | None = None  # for a page whose subject is a list: is it there?
    canonical: Callable[[str], str] | None = None  # the page's URL for a full commit id (default: /at/{commit}/...)


@dataclass(slots=True)
class _Rendered:
    body: bytes
    status: int
    media_type: str
    headers: dict[str, str] = field(default_factory=dict)

    def weight(self) -> int:
        return len(self.body) + 512


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def _cache(request: Request) -> ByteLRU[tuple[str, ...], _Rendered]:
    state = request.app.state
    cache: ByteLRU[tuple[str, ...], _Rendered] | None = getattr(state, "pages", None)
    if cache is None:
        cache = ByteLRU(PAGE_CACHE_BYTES, _Rendered.weight)
        state.pages = cache
    return cache


def strip_json(text: str) -> tuple[str, bool]:
    """A path parameter without its `.json` suffix, and whether it had one (the page's JSON twin)."""
    return (text[: -len(".json")], True) if text.endswith(".json") else (text, False)


def _quality(part: str) -> tuple[str, float]:
    media, *params = (p.strip() for p in part.split(";"))
    q = 1.0
    for param in params:
        name, _, value = param.partition("=")
        if name.strip() == "q":
            try:
                q = float(value)
            except ValueError:
                q = 0.0
    return media.lower(), q


def wants_json(request: Request) -> bool:
    """Whether the client prefers JSON to HTML (RFC 9110 section 12.5.1 quality values).

    A browser names text/html; an API client names application/json, or nothing, or `*/*` (curl,
    httpx): those get JSON, the answer they got before pages existed.
    """
    accept = request.headers.get("accept", "")
    qualities = dict(_quality(part) for part in accept.split(",") if part.strip())
    html = qualities.get("text/html", qualities.get("application/xhtml+xml", 0.0))
    json = qualities.get("application/json", 0.0)
    return not (html > 0 and html >= json)


def _error_body(error: PageError, as_json: bool, links: Links) -> _Rendered:
    if as_json:
        return _Rendered(error_body(error.message, error.code), error.status, JSON, {"cache-control": "no-store"})
    html = TEMPLATES.get_template("error.html").render(error=error, links=links, page=None)
    return _Rendered(html.encode(), error.status, "text/html; charset=utf-8", {"cache-control": "no-store"})


def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A page handler whose refusals (a `PageError` before its document runs) answer as pages do."""

    @functools.wraps(handler)
    async def page(request: Request) -> Response:
        try:
            return await handler(request)
        except PageError as error:
            service = service_of(request)
            links = Links((service.settings.base_url or "").rstrip("/"))
            as_json = request.url.path.endswith(".json") or wants_json(request)
            return _respond(request, _error_body(error, as_json, links))

    return page


def _respond(request: Request, rendered: _Rendered) -> Response:
    etag = rendered.headers.get("etag")
    if etag is not None and request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=rendered.headers)
    return Response(
        rendered.body, status_code=rendered.status, media_type=rendered.media_type, headers=rendered.headers
    )


def _pin_path(request: Request, commit: str) -> str:
    """This page's path pinned to `commit` (a head page's "pin this page" link)."""
    path = request.url.path
    if path.startswith("/at/"):
        parts = path.split("/", 3)  # "", "at", commit, the rest (none for a pinned home page)
        path = "/" + (parts[3] if len(parts) > 3 else "")
    query = f"?{request.url.query}" if request.url.query else ""
    return f"/at/{commit}{path}{query}"


def _json_path(request: Request) -> str:
    """This page's JSON twin: its path with `.json` (`/index.json` for a home page)."""
    path = request.url.path.rstrip("/")
    if not path or (path.startswith("/at/") and path.count("/") == 2):
        path += "/index"
    query = f"?{request.url.query}" if request.url.query else ""
    return f"{path}.json{query}"


def _key(head: str, template: str, variables: Mapping[str, Any], as_json: bool) -> tuple[str, ...]:
    return (head, template, orjson.dumps(dict(variables), option=orjson.OPT_SORT_KEYS).decode(), str(as_json))


def cached(request: Request, template: str, variables: Mapping[str, Any]) -> Response | None:
    """The page already rendered for these variables at the served head, if any (HTML).

    A page is cached only once it was shown, so whatever its URL had to pass (a permalink's commit on
    main) it passed against this same head: a hit can skip those checks.
    """
    service = service_of(request)
    if not service.ready or service.snapshots.status.serving is None:
        return None
    found = _cache(request).get(_key(service.snapshots.head.commit, template, variables, False))
    return None if found is None else _respond(request, found)


async def render(request: Request, spec: Spec, as_json: bool, at: str | None = None) -> Response:
    """Run the page's document and answer HTML or JSON, cached per (commit, page, format)."""
    service = service_of(request)
    base = (service.settings.base_url or "").rstrip("/")
    links = Links(base, at)
    refusal = service.unavailable()
    if refusal is not None:
        return refusal
    head = service.snapshots.head
    variables = dict(spec.variables)
    key = _key(head.commit, spec.template, variables, as_json)
    cache = _cache(request)
    cached = cache.get(key)
    if cached is not None:
        return _respond(request, cached)
    try:
        made = await _render(request, service, spec, variables, as_json, links, at)
    except PageError as error:
        return _respond(request, _error_body(error, as_json, links))
    if isinstance(made, Response):
        return made
    if made.status == 200:
        cache.put(key, made)
    return _respond(request, made)


_CLIENT_CODES = frozenset({BAD_USER_INPUT, PAGE_SIZE_ERROR, CURSOR_ERROR, AMBIGUOUS_NAME})


def _refusal(answer: Answer) -> PageError:
    """The page's answer to GraphQL errors: the client's (a bad cursor, an ambiguous name) are 400, faults 500."""
    codes = answer.codes
    status = 400 if set(codes) <= _CLIENT_CODES else 500
    return PageError(status, codes[0], answer.messages)


async def _render(
    request: Request,
    service: Service,
    spec: Spec,
    variables: dict[str, Any],
    as_json: bool,
    links: Links,
    at: str | None,
) -> _Rendered | Response:
    answer = await service.queries.answer(spec.document, variables, head=service.snapshots.head)
    if at is not None and (answer.unpublished or set(answer.codes) & {REVISION_NOT_FOUND, PREVIEW_REJECTED}):
        raise PageError(404, REVISION_NOT_FOUND, f"{at} is not a commit of main: pages pin commits of main only")
    if answer.data is None or answer.data.get("registry") is None:
        raise _refusal(answer) if answer.errors else PageError(500, INTERNAL, "the page's document answered nothing")
    data: dict[str, Any] = answer.data["registry"]
    commit: str = data["commit"]["id"]
    if at is not None and at != commit:
        target = spec.canonical(commit) if spec.canonical else links.base + _pin_path(request, commit)
        return RedirectResponse(target, status_code=307)
    if answer.errors:
        raise _refusal(answer)
    if (spec.subject is not None and data.get(spec.subject) is None) or (
        spec.found is not None and not spec.found(data)
    ):
        raise PageError(404, NOT_FOUND, f"{spec.missing} at commit {commit}")
    headers = {
        "cache-control": IMMUTABLE if answer.immutable else REVALIDATE,
        "x-kernelindex-commit": commit,
        "vary": "accept",
    }
    if as_json:
        body = answer.body  # the page's JSON twin is the API's answer to the page's document
        media = JSON
    else:
        meta = {
            "title": spec.title(data),
            "commit": commit,
            "committed_at": data["commit"]["committedAt"],
            "pinned": at is not None,
            "pin_url": links.base + _pin_path(request, commit),
            "json_url": links.base + _json_path(request),
            "graphql_url": links.graphql(spec.document, variables),
            "document": spec.document.strip(),
            "variables": orjson.dumps(variables, option=orjson.OPT_INDENT_2).decode(),
        }
        extra = spec.extra(data, links) if spec.extra is not None else {}
        html = TEMPLATES.get_template(spec.template).render(data=data, page=meta, links=links, **extra)
        body = html.encode()
        media = "text/html; charset=utf-8"
    headers["etag"] = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return _Rendered(body, spec.status, media, headers)

"""Every URL the registry answers, in the order they are matched: the one place routes are declared.

Paths come from `kernelindex.core.urls.PATHS` (the same table every link is built from); endpoints from the modules of
each concept: `kernelindex.http` (GraphQL over HTTP, permalinks, operations, publishing) and `web` (every HTML
page, with the negotiation of `/` and of a run's permalink). Most pages answer at the head of main and
pinned to a commit (`/at/{commit}/...`), and some at a `.json` twin of their path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

from kernelindex.core.urls import PATHS, PINNED, twin
from kernelindex.http import graphql, json_feed, metrics_route, operations, permalinks, publishing, schemas
from kernelindex.http.responses import Files
from kernelindex.web import (
    card_pages,
    catalog_pages,
    cohort_pages,
    exports_page,
    feed_page,
    icon,
    index_pages,
    run_pages,
    search_page,
    serving_pages,
    verify_page,
)
from kernelindex.web.render import STATIC

__all__ = ["routes"]

Endpoint = Callable[[Request], Awaitable[Response]]


def _format(twin: bool | str) -> str:
    """A twin's format: `True` is the page's JSON twin; a string names another (`md`, `csv`)."""
    return "json" if twin is True else twin or ""


def _head(name: str, endpoint: Endpoint, methods: Sequence[str] = ("GET",), twin: bool | str = False) -> Route:
    suffix = _format(twin)
    path = PATHS[name] + (f".{suffix}" if suffix else "")
    return Route(path, endpoint, methods=list(methods), name=name + (f"_{suffix}" if suffix else ""))


def _pinned(name: str, endpoint: Endpoint, methods: Sequence[str] = ("GET",), twin: bool | str = False) -> Route:
    suffix = _format(twin)
    path = PINNED + PATHS[name] + (f".{suffix}" if suffix else "")
    return Route(path, endpoint, methods=list(methods), name=f"pinned_{name}" + (f"_{suffix}" if suffix else ""))


def _both(name: str, endpoint: Endpoint, twin: bool | str = False) -> list[BaseRoute]:
    """A page at the head of main and pinned to a commit (`twin`: the path of its JSON twin, or of another
    format: `md`, `csv`)."""
    return [_head(name, endpoint, twin=twin), _pinned(name, endpoint, twin=twin)]


def routes(mcp: ASGIApp) -> list[BaseRoute]:
    """The routes of one application; `mcp` is its `/mcp` endpoint (made per application: it holds a session
    manager)."""
    return [
        _head("home", catalog_pages.home_or_index),
        _head("graphql", graphql.endpoint, ["GET", "POST"]),
        _head("schema_sdl", graphql.sdl),
        _head("graphiql_asset", graphql.asset),
        _head("healthz", operations.healthz),
        _head("metrics", metrics_route.endpoint),
        _head("refresh", operations.refresh, ["POST"]),
        # Pages: the home page's JSON twin and pinned forms (a pinned home page is `/at/{commit}`).
        Route(twin(PATHS["home"]), catalog_pages.home, methods=["GET"], name="home_json"),
        Route(PINNED, catalog_pages.home, methods=["GET"], name="pinned_home"),
        Route(twin(PINNED), catalog_pages.home, methods=["GET"], name="pinned_home_json"),
        _head("kernelindex_run", run_pages.kernelindex_run),  # before the head run redirect: a UUID is not a digest
        *_both("cohort", cohort_pages.leaderboard),
        # Permalinks: at the head they redirect to the commit served now; a run's is also its page. Early: they
        # are the most cited URLs, and routes are tried in turn (~60 us after 89 others, when they came last).
        _head("manifest", permalinks.head_manifest),
        _head("run", permalinks.head_run),
        _pinned("manifest", permalinks.manifest),
        _pinned("run", run_pages.run_permalink, twin=True),  # before the page: its digest would take `.json`
        _pinned("run", run_pages.run_permalink),
        *_both("records", cohort_pages.records),
        *_both("records", cohort_pages.records, twin=True),
        *_both("compare", cohort_pages.compare),
        *_both("compare", cohort_pages.compare, twin=True),
        *_both("compare", cohort_pages.compare, twin="md"),
        *_both("compare", cohort_pages.compare, twin="csv"),
        *_both("search", search_page.search),
        *_both("search", search_page.search, twin=True),
        *_both("operations", index_pages.operations),
        *_both("operations", index_pages.operations, twin=True),
        *_both("operation", catalog_pages.operation),
        *_both("implementation", catalog_pages.implementation),
        *_both("projects", index_pages.projects),
        *_both("projects", index_pages.projects, twin=True),
        *_both("project", catalog_pages.project),
        *_both("sources", index_pages.sources),
        *_both("sources", index_pages.sources, twin=True),
        *_both("source", catalog_pages.source),
        *_both("gpus", index_pages.gpus),
        *_both("gpus", index_pages.gpus, twin=True),
        *_both("gpu", index_pages.gpu),
        *_both("models", index_pages.models),
        *_both("models", index_pages.models, twin=True),
        *_both("model", index_pages.model),
        *_both("serving", serving_pages.serving),
        *_both("serving", serving_pages.serving, twin=True),
        *_both("serving_cohort", serving_pages.serving_cohort),
        # Preview images, pinned only: a page's preview is of the commit the page shows.
        _pinned("run_card", card_pages.run_card),
        _pinned("cohort_card", card_pages.cohort_card),
        _pinned("operation_card", card_pages.operation_card),
        _head("commit", catalog_pages.commit),
        *_both("feed", feed_page.feed),
        *_both("feed", feed_page.feed, twin=True),
        *_both("exports", exports_page.exports),
        *_both("exports", exports_page.exports, twin=True),
        _head("run_status", feed_page.run_status),
        _head("run_status", feed_page.run_status, twin=True),
        _head("verify", verify_page.verify),
        _head("verify", verify_page.verify, twin=True),
        *_both("run_badge", run_pages.run_badge),
        *_both("implementation_badge", run_pages.implementation_badge),
        Mount(PATHS["static"], Files(directory=STATIC), name="static"),
        # Publishing: feeds at the head and pinned, exports, the files crawlers and assistants look for.
        _head("records_feed", publishing.records),
        _head("publications_feed", publishing.publications),
        _head("operation_feed", publishing.operation_feed),
        _head("cohort_feed", publishing.cohort_feed),
        _head("changes_feed", json_feed.changes_feed),
        _pinned("records_feed", publishing.records),
        _pinned("publications_feed", publishing.publications),
        _pinned("operation_feed", publishing.operation_feed),
        _pinned("cohort_feed", publishing.cohort_feed),
        _pinned("changes_feed", json_feed.changes_feed),
        _pinned("export", publishing.export, ["GET", "HEAD"]),
        _head("latest_export", publishing.latest_export),
        _head("llms_txt", publishing.llms),
        _head("robots_txt", publishing.robots),
        _head("favicon", icon.favicon),
        _head("sitemap", publishing.sitemap),
        _head("sitemap_part", publishing.sitemap_part),
        _head("sitemap_part_moved", publishing.sitemap_part_moved),
        _head("schema", schemas.current),
        _head("schema_version", schemas.versioned),
        Route(PATHS["mcp"], mcp, methods=["GET", "POST", "DELETE"], name="mcp"),
    ]

"""Where things live: every URL the registry answers, by name, spelled once.

`PATHS` names each path; the routes are declared from it (`api/app/routes.py`) and every link is built from it
(`Urls.url_path_for(name, **params)`, with a page's `.json` twin as a format, in the manner of Datasette's
url_builder). A page's path pinned to a commit is the same path under `/at/{commit}`.

Absolute URLs come from the configured base URL (`KERNELINDEX_BASE_URL`), never from a request's Host: an
answer is cached, and would carry one client's Host to every later client. With no base URL configured
every URL here is relative to the server's root.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import orjson

__all__ = ["PATHS", "PINNED", "Urls", "twin", "unpinned"]

PINNED = "/at/{commit}"
"""The prefix of a path pinned to a commit of main."""

PATHS = {
    "home": "/",
    "graphql": "/graphql",
    "graphiql_asset": "/static/graphiql/{version}/{name}",
    "static": "/static",
    "healthz": "/healthz",
    "metrics": "/metrics",  # Prometheus's
    "refresh": "/hooks/refresh",
    "mcp": "/mcp",
    # Permalinks: a manifest and a run (its page for a browser, its dossier for a client), pinned.
    "manifest": "/manifests/{digest}",
    "run": "/runs/{digest}",
    "kernelindex_run": "/runs/{run_id:uuid}",
    # Pages (each also pinned, and as JSON).
    "cohort": "/cohorts/{key}",
    "records": "/records",
    "compare": "/compare",
    "search": "/search",
    "operations": "/operations",
    "operation": "/operations/{ident}",
    "implementation": "/implementations/{ident}",
    "projects": "/projects",
    "project": "/projects/{ident}",
    "sources": "/sources",
    "source": "/sources/{slug}",
    "gpus": "/gpus",
    "gpu": "/gpus/{slug}",
    "models": "/models",
    "model": "/models/{ident}",
    "serving": "/serving",
    "serving_cohort": "/serving/cohorts/{key}",
    # Preview images of pages, always pinned (a page's preview shows the commit the page showed).
    "run_card": "/runs/{digest}/card.png",
    "cohort_card": "/cohorts/{key}/card.png",
    "operation_card": "/operations/{ident}/card.png",
    "commit": "/commits/{commit_id}",
    "feed": "/feed",
    "exports": "/exports",
    # A run's standing at the head of main: never pinned, never immutable (what a pinned page links to).
    "run_status": "/runs/{digest}/status",
    # A citation checked against the served registry (`verifyCitation`): never pinned either.
    "verify": "/verify",
    "run_badge": "/badges/runs/{ident}.svg",
    "implementation_badge": "/badges/implementations/{ident}.svg",
    # Publishing: feeds, exports, and the files crawlers and assistants look for.
    "records_feed": "/feeds/records.atom",
    "publications_feed": "/feeds/publications.atom",
    "operation_feed": "/feeds/operations/{ident}.atom",
    "cohort_feed": "/feeds/cohorts/{key}.atom",
    "changes_feed": "/feeds/changes.json",
    "export": "/export.jsonl.zst",
    "latest_export": "/exports/latest.json",
    "llms_txt": "/llms.txt",
    "robots_txt": "/robots.txt",
    "favicon": "/favicon.ico",
    "sitemap": "/sitemap.xml",
    # At the root, beside the index: a sitemap may list only URLs under its own folder (sitemaps.org).
    "sitemap_part": "/sitemap-{name}.xml",
    "sitemap_part_moved": "/sitemaps/{name}.xml",  # where the parts were first: a permanent redirect
    "schema_sdl": "/schema.graphql",
    # The JSON Schemas of the manifest kinds (editors read them): the current one, and each version's, immutable.
    "schema": "/schemas/{name}",
    "schema_version": "/schemas/{version}/{name}",
}

_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
_FEEDS = {"records": "records_feed", "publications": "publications_feed", "changes": "changes_feed"}
_SCOPED_FEEDS = {"operations": ("operation_feed", "ident"), "cohorts": ("cohort_feed", "key")}
_PUBLISHED_PAGES = {
    "OperationSpec": "operation",
    "ImplementationRevision": "implementation",
    "SoftwareProject": "project",
}


_PLAIN = re.compile(r"[A-Za-z0-9_.~:@-]*")
"""What `quote(value, safe=":@")` leaves as it is: told by one match instead (a digest or a key, most parts)."""


def _part(value: str) -> str:
    return value if _PLAIN.fullmatch(value) else quote(value, safe=":@")


@functools.cache
def _template(route: str) -> tuple[str, tuple[str, ...]]:
    """A route's path as a format string and the names of its parameters, in order: `/cohorts/{key}` gives
    `("/cohorts/{}", ("key",))` (no path holds a brace but its parameters')."""
    names: list[str] = []

    def blank(match: re.Match[str]) -> str:
        names.append(match.group(1))
        return "{}"

    return _PARAM.sub(blank, PATHS[route]), tuple(names)


@functools.lru_cache(maxsize=256)
def _document_parameter(document: str) -> str:
    """`query=<document>`, form-encoded, made once per document: pages link to their own fixed documents, and
    urllib quotes byte by byte in Python (~100 µs for a run page's 2.3 KB document, 4% of a first-time page)."""
    return urlencode({"query": document.strip()})


def twin(path: str, format: str = "json") -> str:
    """A page's path in another format: `/records` -> `/records.json`, a home page -> `.../index.json`.

    >>> twin("/"), twin("/at/0123abcd"), twin("/cohorts/sha256:ab")
    ('/index.json', '/at/0123abcd/index.json', '/cohorts/sha256:ab.json')
    """
    path = path.rstrip("/")
    if not path or (path.startswith("/at/") and path.count("/") == 2):
        path += "/index"
    return f"{path}.{format}"


def unpinned(path: str) -> str:
    """A path without the `/at/{commit}` of a pinned one: what the same page is at the head of main.

    >>> unpinned("/at/0123abcd/records"), unpinned("/at/0123abcd"), unpinned("/records")
    ('/records', '/', '/records')
    """
    if not path.startswith("/at/"):
        return path
    parts = path.split("/", 3)  # "", "at", commit, the rest (none for a pinned home page)
    return "/" + (parts[3] if len(parts) > 3 else "")


@dataclass(frozen=True, slots=True)
class Urls:
    """URLs under `base` ("" for root-relative), a page's pinned to `at` when it is a commit id."""

    base: str = ""
    at: str | None = None

    @classmethod
    def of(cls, configured: str | None) -> Urls:
        """The URLs under a configured base URL (`https://registry.example`, a trailing slash dropped)."""
        return cls((configured or "").rstrip("/"))

    @property
    def absolute(self) -> bool:
        return bool(self.base)

    def pinned(self, commit: str) -> Urls:
        return Urls(self.base, commit)

    def url_path_for(self, route: str, /, *, at: str | None = None, format: str | None = None, **params: str) -> str:
        """The URL of `route` (a name of `PATHS`) with its path parameters, pinned to the commit `at` if given,
        in `format` (the page's `.json` twin) if given.

        >>> Urls("https://r.example").url_path_for("cohort", at="0123abcd", key="sha256:ab", format="json")
        'https://r.example/at/0123abcd/cohorts/sha256:ab.json'
        """
        return self._path(route, params, at, format)

    def _path(self, route: str, params: Mapping[str, str], at: str | None, format: str | None = None) -> str:
        template, names = _template(route)
        path = template.format(*[_part(params[name]) for name in names]) if names else template
        if at is not None:
            path = f"/at/{at}{path}"
        if format is not None:
            path = twin(path, format)
        return self.base + path

    def pin(self, commit: str, path: str) -> str:
        """A path of the server's (with its query) pinned to `commit`."""
        return f"{self.base}/at/{commit}{path}"

    def _page(self, route: str, query: Iterable[tuple[str, str]] = (), **params: str) -> str:
        """A page pinned to this builder's commit, if it has one."""
        found = list(query)
        return self._path(route, params, self.at) + (f"?{urlencode(found)}" if found else "")

    # Pages ----------------------------------------------------------------------------------------

    def home(self) -> str:
        return self.url_path_for("home", at=self.at)

    def cohort(self, key: str, after: str | None = None, min_trust: str | None = None) -> str:
        return self._page("cohort", [(k, v) for k, v in (("after", after), ("minTrust", min_trust)) if v], key=key)

    def serving_cohort(self, key: str) -> str:
        return self._page("serving_cohort", key=key)

    def search(self, query: str = "", after: str | None = None) -> str:
        params = [("q", query)] + ([("after", after)] if after else [])
        return self._page("search", params if query or after else [])

    def records(self, after: str | None = None) -> str:
        return self._page("records", [("after", after)] if after else [])

    def compare(self, runs: Iterable[str], format: str | None = None) -> str:
        """Compare these runs: the page, or in `format` (`json`, `md`, `csv`)."""
        return self.url_path_for("compare", at=self.at, format=format) + "?" + urlencode([("run", r) for r in runs])

    def operations(self, family: str | None = None, search: str | None = None, after: str | None = None) -> str:
        found = [(k, v) for k, v in (("family", family), ("q", search), ("after", after)) if v]
        return self._page("operations", found)

    def operation(self, ident: str) -> str:
        return self._page("operation", ident=ident)

    def implementation(self, ident: str) -> str:
        return self._page("implementation", ident=ident)

    def projects(self, after: str | None = None) -> str:
        return self._page("projects", [("after", after)] if after else [])

    def project(self, ident: str) -> str:
        return self._page("project", ident=ident)

    def sources(self) -> str:
        return self._page("sources")

    def source(self, slug: str) -> str:
        return self._page("source", slug=slug)

    def gpus(self) -> str:
        return self._page("gpus")

    def gpu(self, slug: str, after: str | None = None) -> str:
        return self._page("gpu", [("after", after)] if after else [], slug=slug)

    def models(self) -> str:
        return self._page("models")

    def model(self, ident: str, after: str | None = None) -> str:
        return self._page("model", [("after", after)] if after else [], ident=ident)

    def serving(self, query: Iterable[tuple[str, str]] = ()) -> str:
        """The serving resolver's form, with its fields as given (`model`, `workload`, constraints...)."""
        return self._page("serving", query)

    def run_card(self, commit: str, digest: str) -> str:
        return self.url_path_for("run_card", at=commit, digest=digest)

    def cohort_card(self, commit: str, key: str) -> str:
        return self.url_path_for("cohort_card", at=commit, key=key)

    def operation_card(self, commit: str, ident: str) -> str:
        return self.url_path_for("operation_card", at=commit, ident=ident)

    def commit(self, commit: str, after: str | None = None) -> str:
        """A commit's page: it names its commit itself, so it is never under `/at/`."""
        return self.url_path_for("commit", commit_id=commit) + (f"?{urlencode({'after': after})}" if after else "")

    def changes(self, since: str | None = None, after: str | None = None) -> str:
        """The `/feed` page: what each commit of main changed, newest first (`since` a commit, `after` a cursor)."""
        return self._page("feed", [(k, v) for k, v in (("since", since), ("after", after)) if v])

    def exports(self) -> str:
        return self._page("exports")

    def run_status(self, digest: str, read_at: str | None = None) -> str:
        """Whether a run's result still stands, at the head of main (never pinned): `read_at` is the commit the
        reader saw it at."""
        path = self.url_path_for("run_status", digest=digest)
        return path + (f"?{urlencode({'readAt': read_at})}" if read_at else "")

    def verify(self, citation: str = "") -> str:
        """The page that checks a citation against the head of main (never pinned)."""
        path = self.url_path_for("verify")
        return path + (f"?{urlencode({'citation': citation})}" if citation else "")

    def schema_sdl(self) -> str:
        return self.url_path_for("schema_sdl")

    def run_badge(self, ident: str) -> str:
        return self._page("run_badge", ident=ident)

    def implementation_badge(self, ident: str) -> str:
        return self._page("implementation_badge", ident=ident)

    def static(self, name: str) -> str:
        return f"{self.url_path_for('static')}/{name}"

    def graphiql_assets(self, version: str) -> str:
        """The folder of GraphiQL's vendored files of one version (its page names each file in it)."""
        return f"{self.url_path_for('static')}/graphiql/{version}"

    # Permalinks, always pinned ---------------------------------------------------------------------

    def run(self, commit: str, digest: str) -> str:
        """A run's permalink: its page for a browser, its dossier for an API client (a head URL redirects here)."""
        return self.url_path_for("run", at=commit, digest=digest)

    def manifest(self, commit: str, digest: str) -> str:
        return self.url_path_for("manifest", at=commit, digest=digest)

    def published(self, commit: str, kind: str, ident: str) -> str:
        """Where a manifest a commit published is shown: its own page where its kind has one."""
        if kind in ("BenchmarkRun", "ServingRun"):
            return self.run(commit, ident)
        if kind in _PUBLISHED_PAGES:
            return self.url_path_for(_PUBLISHED_PAGES[kind], at=commit, ident=ident)
        return self.manifest(commit, ident)

    # The API and publishing -------------------------------------------------------------------------

    def graphql(self, document: str | None = None, variables: dict[str, object] | None = None) -> str:
        """The GraphQL endpoint; with a document, that document opened there ("the query behind this page")."""
        if document is None:
            return self.url_path_for("graphql")
        query = _document_parameter(document)
        if variables:
            query += "&" + urlencode({"variables": orjson.dumps(variables).decode()})
        return f"{self.url_path_for('graphql')}?{query}"

    def mcp(self) -> str:
        return self.url_path_for("mcp")

    def export(self, commit: str) -> str:
        return self.url_path_for("export", at=commit)

    def latest_export(self) -> str:
        return self.url_path_for("latest_export")

    def feed(self, scope: str, commit: str | None = None) -> str:
        """`records`, `publications`, `changes`, `operations/<id>` or `cohorts/<key>`; pinned to `commit` if given."""
        if scope in _FEEDS:
            return self.url_path_for(_FEEDS[scope], at=commit)
        family, _, ident = scope.partition("/")
        route, param = _SCOPED_FEEDS[family]
        return self._path(route, {param: ident}, commit)

    def llms_txt(self) -> str:
        return self.url_path_for("llms_txt")

    def sitemap(self) -> str:
        return self.url_path_for("sitemap")

    def favicon(self) -> str:
        return self.url_path_for("favicon")

    def sitemap_part(self, name: str) -> str:
        return self.url_path_for("sitemap_part", name=name)

    def schema(self, name: str) -> str:
        """A kind's JSON Schema by its file name (`benchmark-run.v1alpha1.schema.json`), as served now."""
        return self.url_path_for("schema", name=name)

"""Where the pages live: every page URL, pinned to a commit (`/at/{commit}/...`) or at the head.

Like `api.urls`, links come from the configured base URL or are root-relative, never from the
request's Host (a cached page would carry it to every later reader).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import orjson

__all__ = ["Links"]


def _part(text: str) -> str:
    return quote(text, safe=":@")


@dataclass(frozen=True, slots=True)
class Links:
    """Page URLs under `base` ("" for root-relative), pinned to `at` when it is a commit id."""

    base: str
    at: str | None = None

    def _url(self, path: str, pinned: bool = True) -> str:
        prefix = f"/at/{self.at}" if pinned and self.at else ""
        return f"{self.base}{prefix}{path}"

    def pinned(self, commit: str) -> Links:
        return Links(self.base, commit)

    def home(self) -> str:
        return self._url("/") if self.at else f"{self.base}/"

    def run(self, commit: str, digest: str) -> str:
        """A run's page is its permalink, always pinned (a head run URL redirects to it)."""
        return f"{self.base}/at/{commit}/runs/{digest}"

    def cohort(self, key: str, after: str | None = None, min_trust: str | None = None) -> str:
        query = {k: v for k, v in (("after", after), ("minTrust", min_trust)) if v}
        return self._url(f"/cohorts/{_part(key)}") + (f"?{urlencode(query)}" if query else "")

    def serving_cohort(self, key: str) -> str:
        return self._url(f"/serving/cohorts/{_part(key)}")

    def search(self, query: str = "", after: str | None = None) -> str:
        params = [("q", query)] + ([("after", after)] if after else [])
        return self._url("/search") + ("?" + urlencode(params) if query or after else "")

    def records(self, after: str | None = None) -> str:
        return self._url("/records") + (f"?{urlencode({'after': after})}" if after else "")

    def compare(self, runs: Iterable[str]) -> str:
        return self._url("/compare") + "?" + urlencode([("run", run) for run in runs])

    def operation(self, ident: str) -> str:
        return self._url(f"/operations/{_part(ident)}")

    def implementation(self, ident: str) -> str:
        return self._url(f"/implementations/{_part(ident)}")

    def project(self, ident: str) -> str:
        return self._url(f"/projects/{_part(ident)}")

    def source(self, slug: str) -> str:
        return self._url(f"/sources/{_part(slug)}")

    def commit(self, commit: str, after: str | None = None) -> str:
        return f"{self.base}/commits/{commit}" + (f"?{urlencode({'after': after})}" if after else "")

    def published(self, commit: str, kind: str, ident: str) -> str:
        """Where a manifest a commit published is shown: its own page where its kind has one."""
        if kind in ("BenchmarkRun", "ServingRun"):
            return self.run(commit, ident)
        pages = {
            "OperationSpec": "operations",
            "ImplementationRevision": "implementations",
            "SoftwareProject": "projects",
        }
        if kind in pages:
            return f"{self.base}/at/{commit}/{pages[kind]}/{_part(ident)}"
        return self.manifest(commit, ident)

    def manifest(self, commit: str, digest: str) -> str:
        return f"{self.base}/at/{commit}/manifests/{digest}"

    def run_badge(self, ident: str) -> str:
        return self._url(f"/badges/runs/{_part(ident)}.svg")

    def implementation_badge(self, ident: str) -> str:
        return self._url(f"/badges/implementations/{_part(ident)}.svg")

    def static(self, name: str) -> str:
        return f"{self.base}/static/{name}"

    def graphql(self, document: str, variables: dict[str, object]) -> str:
        """The page's document opened at `/graphql`, with its variables: "the query behind this page"."""
        query = {"query": document.strip()}
        if variables:
            query["variables"] = orjson.dumps(variables).decode()
        return f"{self.base}/graphql?{urlencode(query)}"

"""Where things live: the one place that spells the registry's URLs.

Absolute URLs come from the configured base URL (`KERNELINDEX_BASE_URL`), never from a request's
`Host` header (DESIGN section 7): with no base URL configured every URL here is relative to the
server's root. Feeds, the sitemap, llms.txt and the MCP answers all build their links here, so the
HTML pages (when they land) change `run`/`cohort`/`operation` in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

__all__ = ["Urls"]


@dataclass(frozen=True, slots=True)
class Urls:
    """URL builders over an optional configured base (`https://registry.example`, no trailing slash)."""

    base: str | None = None

    @classmethod
    def of(cls, configured: str | None) -> Urls:
        return cls(configured.rstrip("/") if configured else None)

    @property
    def absolute(self) -> bool:
        return self.base is not None

    def _at(self, path: str) -> str:
        return f"{self.base}{path}" if self.base else path

    def root(self) -> str:
        return self._at("/")

    def graphql(self) -> str:
        return self._at("/graphql")

    def run(self, commit: str, digest: str) -> str:
        """A run's permalink (its dossier as JSON until the run page exists) pinned to `commit`."""
        return self._at(f"/at/{commit}/runs/{digest}")

    def manifest(self, commit: str, digest: str) -> str:
        return self._at(f"/at/{commit}/manifests/{digest}")

    def export(self, commit: str) -> str:
        return self._at(f"/at/{commit}/export.jsonl.zst")

    def latest_export(self) -> str:
        return self._at("/exports/latest.json")

    def feed(self, name: str, commit: str | None = None) -> str:
        """`records`, `publications`, `operations/<id>` or `cohorts/<key>`; pinned to `commit` if given."""
        pinned = f"/at/{commit}" if commit else ""
        return self._at(f"{pinned}/feeds/{quote(name, safe='/:')}.atom")

    def mcp(self) -> str:
        return self._at("/mcp")

    def well_known(self, name: str) -> str:
        return self._at(f"/{name}")

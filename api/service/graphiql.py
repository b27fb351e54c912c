"""GraphiQL, served whole by the registry: its page and its vendored assets.

Strawberry's page loads React, GraphiQL and the explorer plugin from a public CDN, so offline or in a
locked-down deployment it stays blank. The same builds are vendored in `api/service/static/graphiql/` (by
`scripts/vendor-graphiql`, checked against the integrity hashes the page pins) and served at
`/static/graphiql/{version}/{file}`, where the version is a digest of the files: a new build gets new
URLs, so the assets are cached as immutable. The page's own script and stylesheet
(`kernelindex-graphiql.js`/`.css`) are files beside them, pinned by the integrity computed here: the page
holds nothing inline, so its Content-Security-Policy allows no inline script (`kernelindex.http.headers`).
"""

from __future__ import annotations

import base64
import hashlib
import re
import threading
from pathlib import Path

from kernelindex.core.cache import IMMUTABLE, Representation

__all__ = ["ASSET_DIR", "GraphiQL"]

ASSET_DIR = Path(__file__).resolve().parent / "static" / "graphiql"

_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
_SRI = re.compile(r"\{\{sri:([\w.-]+)\}\}")


class GraphiQL:
    """The page and its assets, read from disk once."""

    def __init__(self, directory: Path = ASSET_DIR) -> None:
        self._directory = directory
        self._assets: dict[str, Representation] | None = None
        self._template: str | None = None
        self._version = ""
        self._lock = threading.Lock()

    def _load(self) -> dict[str, Representation]:
        with self._lock:
            if self._assets is None:
                files = sorted(p for p in self._directory.iterdir() if p.suffix in _TYPES)
                digest = hashlib.sha256()
                assets = {}
                for path in files:
                    body = path.read_bytes()
                    digest.update(path.name.encode() + b"\0" + body)
                    assets[path.name] = Representation(body, _TYPES[path.suffix], {"cache-control": IMMUTABLE})
                self._version = digest.hexdigest()[:16]
                template = (self._directory / "index.html").read_text(encoding="utf-8")
                self._template = _SRI.sub(lambda found: _integrity(assets[found.group(1)].body), template)
                self._assets = assets
            return self._assets

    @property
    def version(self) -> str:
        self._load()
        return self._version

    def page(self, assets: str) -> str:
        """The HTML page; its asset links are under `assets` (the URL of this version's folder)."""
        self._load()
        assert self._template is not None
        return self._template.replace("{{assets}}", assets)

    def asset(self, version: str, name: str) -> Representation | None:
        """A vendored file, or None when the name or the version is not ours."""
        assets = self._load()
        return assets.get(name) if version == self._version else None

    @property
    def size(self) -> int:
        """The bytes of the vendored assets (JavaScript and CSS)."""
        return sum(len(asset.body) for asset in self._load().values())


def _integrity(body: bytes) -> str:
    """Subresource integrity of a file (sha384), as a page pins it."""
    return "sha384-" + base64.b64encode(hashlib.sha384(body).digest()).decode()

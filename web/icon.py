"""The site's icon: `/favicon.ico`, where browsers and crawlers look first, and `static/icon.svg`, which every
page links. Both are the registry's own mark (three bars of a leaderboard), drawn for this project; the ICO
holds one 32x32 PNG of the same drawing."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.web.render import STATIC

__all__ = ["favicon"]

_ICON = (STATIC / "favicon.ico").read_bytes()


async def favicon(request: Request) -> Response:
    """`/favicon.ico`: the icon's bytes, cached for a day (it changes only with a release)."""
    return Response(_ICON, media_type="image/x-icon", headers={"cache-control": "public, max-age=86400"})

"""The verify page: a citation checked against the served registry (`verifyCitation`), for a reader without the
CLI (`kernelindex verify` answers the same offline)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.cache import FOLLOW
from kernelindex.web import documents
from kernelindex.web.render import Spec, guarded, json_asked, render

__all__ = ["verify"]

_MAX_CITATION = 8 * 1024
"""What the page reads of a citation: an entry or a permalink is far shorter (and a URL carries it)."""


@guarded
async def verify(request: Request) -> Response:
    """`/verify?citation=...`: the form, and the check of the citation given. Follows main: the same citation may
    stop holding when a retraction is published."""
    citation = request.query_params.get("citation", "").strip()[:_MAX_CITATION]
    spec = Spec(
        template="verify.html",
        document=documents.VERIFY,
        variables={"citation": citation, "given": bool(citation)},
        title=lambda d: "Verify a citation",
        extra=lambda data, links: {"citation": citation, "check": data.get("verifyCitation")},
        query=[("citation", citation)] if citation else [],
        cache=FOLLOW,
        pinnable=False,
    )
    return await render(request, spec, json_asked(request))

"""The `/feed` page: what each commit of main changed, newest first (the `changes` field), and the run's status
page, which says whether a result still stands (the `runStanding` field)."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.cache import FOLLOW
from kernelindex.core.codes import BAD_DIGEST, BAD_USER_INPUT
from kernelindex.core.urls import Urls
from kernelindex.web import documents
from kernelindex.web.names import humanize_operation
from kernelindex.web.render import PageError, Spec, guarded, json_asked, render

__all__ = ["CHANGES_PAGE", "MANIFESTS_SHOWN", "feed", "run_status"]

CHANGES_PAGE = 20
"""Commits a page lists."""
MANIFESTS_SHOWN = 10
"""Manifests and record events each commit's entry shows (its commit page lists every manifest)."""

_COMMIT = re.compile(r"[0-9a-f]{4,40}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _feed_extra(data: dict[str, Any], links: Urls, since: str | None, after: str | None) -> dict[str, Any]:
    found = data["changes"]
    page_info = found["pageInfo"]
    return {
        "entries": [edge["node"] for edge in found["edges"]],
        "total": found["totalCount"],
        "since": since,
        "humanize": humanize_operation,
        "next_url": links.changes(since, page_info["endCursor"]) if page_info["hasNextPage"] else None,
        "first_url": links.changes(since) if after else None,
        "json_feed": links.feed("changes"),
    }


@guarded
async def feed(request: Request) -> Response:
    """`/feed?since=<commit>`: each commit of main, newest first, with what it published, retracted,
    superseded and verified, and the records it moved; 20 a page (`?after=`)."""
    at = request.path_params.get("commit")
    since = request.query_params.get("since") or None
    after = request.query_params.get("after") or None
    if since is not None and not _COMMIT.fullmatch(since):
        raise PageError(
            400, BAD_USER_INPUT, f"since: expected a commit id (4 to 40 lowercase hex digits), not {since!r}"
        )
    spec = Spec(
        template="feed.html",
        document=documents.CHANGES,
        variables={
            "at": at,
            "since": since,
            "first": CHANGES_PAGE,
            "after": after,
            "published": MANIFESTS_SHOWN,
            "moved": MANIFESTS_SHOWN,
        },
        title=lambda d: "What changed" + (f" since {since[:12]}" if since else ""),
        extra=lambda data, links: _feed_extra(data, links, since, after),
    )
    return await render(request, spec, json_asked(request), at)


@guarded
async def run_status(request: Request) -> Response:
    """`/runs/{digest}/status?readAt=<commit>`: whether a run's result still stands at the head of main, for a
    reader of an older commit (what its pinned pages link to). Follows main: cached a minute, never immutable."""
    digest = request.path_params["digest"]
    if not _DIGEST.fullmatch(digest):
        raise PageError(400, BAD_DIGEST, "expected sha256:<64 lowercase hex digits>")
    read_at = request.query_params.get("readAt") or None
    if read_at is not None and not _COMMIT.fullmatch(read_at):
        raise PageError(
            400, BAD_USER_INPUT, f"readAt: expected a commit id (4 to 40 lowercase hex digits), not {read_at!r}"
        )
    spec = Spec(
        template="run_status.html",
        document=documents.RUN_STANDING,
        variables={"run": digest, "readAt": read_at},
        title=lambda d: f"Status of run {digest.removeprefix('sha256:')[:12]}",
        found=lambda d: d["runStanding"]["state"] != "MISSING",
        missing=f"run not found: {digest}",
        extra=lambda data, links: {"standing": data["runStanding"], "humanize": humanize_operation},
        cache=FOLLOW,
        pinnable=False,
    )
    return await render(request, spec, json_asked(request))

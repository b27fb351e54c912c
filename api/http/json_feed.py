"""`/feeds/changes.json`: what each commit of main changed, as a JSON Feed 1.1 (https://jsonfeed.org/version/1.1),
newest first, one item per commit; `?since=<commit>` lists only the commits after it, `next_url` pages on.

The feed is a frontend of the `changes` field (the document `kernelindex.service.read_documents.CHANGES`, run by the
query
service); what JSON Feed has no field for (counts by kind, the runs retracted, superseded and verified, the
records moved) is in each item's `_kernelindex` extension. An item's `id` is its commit id: it never changes.
Links are absolute under a configured base URL, else relative to the server's root, as in the Atom feeds.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kernelindex.core.cache import FOLLOW, IMMUTABLE, Representation
from kernelindex.core.codes import BAD_USER_INPUT, REVISION_NOT_FOUND
from kernelindex.core.urls import Urls, unpinned
from kernelindex.http.requests import not_ready, server_of
from kernelindex.http.responses import error, finish
from kernelindex.service.read_documents import CHANGES

__all__ = ["FEED_ITEMS", "FEED_MOVED", "JSON_FEED", "changes_feed"]

JSON_FEED = "application/feed+json"
FEED_ITEMS = 20
"""Commits a page of the feed holds (`next_url` pages on)."""
FEED_MOVED = 20
"""Record events an item lists (its `total` says how many it caused)."""

_COMMIT = re.compile(r"[0-9a-f]{4,40}")
_CURSOR = re.compile(r"[A-Za-z0-9_-]{1,200}")
_VERSION = "https://jsonfeed.org/version/1.1"


async def changes_feed(request: Request) -> Response:
    """`/feeds/changes.json` (and pinned, `/at/{commit}/feeds/changes.json`: immutable)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    at = request.path_params.get("commit")
    since = request.query_params.get("since") or None
    after = request.query_params.get("after") or None
    if since is not None and not _COMMIT.fullmatch(since):
        return error(
            400, f"since: expected a commit id (4 to 40 lowercase hex digits), not {since[:80]!r}", BAD_USER_INPUT
        )
    if after is not None and not _CURSOR.fullmatch(after):
        return error(400, "after: expected the cursor of a previous page (`next_url` gives it)", BAD_USER_INPUT)
    variables = {"at": at, "since": since, "first": FEED_ITEMS, "after": after, "published": 0, "moved": FEED_MOVED}
    # An answer depends on the served head and what was asked, nothing else: kept in the pages' cache like a
    # page's JSON twin (a head answer changes with the head; a pinned one never changes). It executed on every
    # request before (100-150 ms each).
    head = server.snapshots.head
    key = (head.commit, "feeds/changes.json", orjson.dumps([at, since, after]).decode(), "json")
    kept = server.pages.get(key)
    if kept is not None:
        return finish(request, kept.body, media_type=kept.media_type, headers=kept.headers)
    answer = await server.queries.answer(CHANGES, variables, head=head)
    found = (answer.data or {}).get("registry")
    if at is not None and (answer.unpublished or found is None):
        # Feeds pin commits of main only (a branch's preview is not the publication record).
        return error(404, f"{at} is not a commit of main: feeds pin commits of main only", REVISION_NOT_FOUND)
    if answer.errors or found is None:
        code = answer.codes[0] if answer.errors else REVISION_NOT_FOUND
        return error(400, answer.messages or "no answer", code)
    commit = found["commit"]["id"]
    if at is not None and at != commit:
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(server.urls.pin(commit, unpinned(request.url.path)) + query, status_code=307)
    body = orjson.dumps(_feed(found, server.urls, at, since), option=orjson.OPT_INDENT_2)
    headers = {"cache-control": IMMUTABLE if answer.immutable else FOLLOW, "x-kernelindex-commit": commit}
    made = Representation(body, JSON_FEED, headers)  # its entity tag among its headers
    server.pages.put(key, made)
    return finish(request, made.body, media_type=made.media_type, headers=made.headers)


def _feed(found: dict[str, Any], urls: Urls, at: str | None, since: str | None) -> dict[str, Any]:
    changes = found["changes"]
    here = urls.feed("changes", at)

    def page(after: str | None) -> str:
        query = [(k, v) for k, v in (("since", since), ("after", after)) if v]
        return here + (f"?{urlencode(query)}" if query else "")

    feed: dict[str, Any] = {
        "version": _VERSION,
        "title": "KernelIndex registry: what changed",
        "home_page_url": (urls.pinned(at) if at else urls).changes(since),
        "feed_url": page(None),
        "description": "Each commit of main, newest first: the manifests it published (by kind), the runs it "
        "retracted, superseded or verified (maintainer-signed facts only), and the records that moved.",
        "authors": [{"name": "KernelIndex registry"}],
        "items": [_item(edge["node"], urls) for edge in changes["edges"]],
        "_kernelindex": {
            "about": "https://github.com/SamMausberg/KernelIndex",
            "commit": found["commit"]["id"],
            "committedAt": found["commit"]["committedAt"],
            "since": since,
            "total": changes["totalCount"],
            "graphql": urls.graphql(),
        },
    }
    if changes["pageInfo"]["hasNextPage"]:
        feed["next_url"] = page(changes["pageInfo"]["endCursor"])
    return feed


def _item(node: dict[str, Any], urls: Urls) -> dict[str, Any]:
    commit = node["commit"]
    counts = {group["kind"]: group["count"] for group in node["publishedCounts"]}
    moved = node["moved"]
    lifecycle = ("retracted", "superseded", "verified")
    parts = [f"Published {node['publishedCount']:,} manifests"]
    if counts:
        parts[0] += " (" + ", ".join(f"{count:,} {kind}" for kind, count in counts.items()) + ")"
    parts.extend(
        f"{what} {len(node[what])} run{'s' if len(node[what]) != 1 else ''}" for what in lifecycle if node[what]
    )
    if moved["totalCount"]:
        parts.append(f"{moved['totalCount']:,} record event{'s' if moved['totalCount'] != 1 else ''}")
    return {
        "id": commit["id"],
        "url": urls.commit(commit["id"]),
        "title": commit["subject"],
        "content_text": "; ".join(parts) + ".",
        "date_published": node["committedAt"],
        "authors": [{"name": commit["author"]["name"]}],
        **({"tags": [node["source"]["slug"]]} if node["source"] else {}),
        "_kernelindex": {
            "commit": commit["id"],
            "position": node["position"],
            "source": node["source"]["slug"] if node["source"] else None,
            "signer": (commit["signature"] or {}).get("signer")
            if (commit["signature"] or {}).get("verified")
            else None,
            "published": {"total": node["publishedCount"], "byKind": counts},
            "retracted": [
                {"run": r["runDigest"], "reason": r["reason"], "retraction": r["retraction"]["digest"]}
                for r in node["retracted"]
            ],
            "superseded": [
                {
                    "run": s["runDigest"],
                    "by": s["byDigest"],
                    "reason": s["reason"],
                    "supersession": s["supersession"]["digest"],
                }
                for s in node["superseded"]
            ],
            "verified": [
                {
                    "run": v["runDigest"],
                    "rerun": (v["rerun"] or {}).get("digest"),
                    "runner": v["runner"],
                    "verification": v["verification"]["digest"],
                }
                for v in node["verified"]
            ],
            "ignored": [i["digest"] for i in node["ignored"]],
            "moved": {
                "total": moved["totalCount"],
                "events": [
                    {
                        "cause": e["node"]["cause"],
                        "at": e["node"]["at"],
                        "cohort": e["node"]["cohort"]["key"] if e["node"]["cohort"] else None,
                        "run": (e["node"]["run"] or {}).get("digest"),
                        "previousRun": (e["node"]["previousRun"] or {}).get("digest"),
                        "value": e["node"]["value"],
                        "previousValue": e["node"]["previousValue"],
                    }
                    for e in moved["edges"]
                ],
            },
        },
    }

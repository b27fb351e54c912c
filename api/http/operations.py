"""What operators and API clients ask of the server itself: `/healthz`, the refresh hook, and the index of
the API (`/` for an API client; a browser gets the home page, `kernelindex.web.catalog_pages.home_or_index`).

The refresh hook needs its secret (`KERNELINDEX_HOOK_SECRET`) unless the server listens on loopback only
and the call comes from loopback: a public hook would let anyone make the server work (and a replica
fetch) at will. Bursts are coalesced (`kernelindex.service.coalesce`): one refresh in flight, one queued, the rest join
it.
"""

from __future__ import annotations

import hmac
import os
import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kernelindex.core.cache import REVALIDATE
from kernelindex.core.codes import HOOK_DISABLED, NOT_READY, UNAUTHORIZED
from kernelindex.core.settings import is_loopback
from kernelindex.http.requests import server_of
from kernelindex.http.responses import error
from kernelindex.registry.provenance import utc_instant

__all__ = ["healthz", "index", "refresh"]


async def healthz(request: Request) -> JSONResponse:
    """Whether this process serves a valid head of main, which, since when, how its last checks went, and whether
    it still follows main (`following`; `degraded` when no check of main completed for two poll intervals and a
    second, or the follower stopped)."""
    server = server_of(request)
    status = server.snapshots.status
    # Serving a head nobody checks against main any more is not "ok": the follower failing or stopped.
    stale = server.following.stale() if server.ready else None
    body: dict[str, object] = {
        "status": "ok" if server.ready and status.serving and not status.reason and not stale else "degraded",
        "serving": status.serving,
        "main": status.main,
        "reason": server.load_error or status.reason or stale,
        "checkedAt": utc_instant(int(status.checked_at)) if status.checked_at else None,
        "buildSeconds": round(status.build_seconds, 3),
        "integrity": {"verified": status.verified, "checkSeconds": round(status.verify_seconds, 3)},
        "uptimeSeconds": round(time.time() - server.started, 1),
        "worker": os.getpid(),  # which process answered (each worker serves its own snapshots)
    }
    if server.mirror is not None:
        fetched = server.mirror.last
        body["mirror"] = {
            "url": server.mirror.url,
            "fetchedAt": utc_instant(int(fetched.at)) if fetched else None,
            "error": server.mirror.error,
        }
    body["refreshHook"] = {"runs": server.hook.runs, "joined": server.hook.joined}
    body["following"] = server.following.report()
    if not server.ready:
        body["status"] = "starting" if server.load_error is None else "failed"
    return JSONResponse(
        body, status_code=200 if server.ready and status.serving else 503, headers={"cache-control": "no-store"}
    )


async def refresh(request: Request) -> Response:
    """`POST /hooks/refresh`: look at main now (a replica fetches first), with the hook's secret (see the
    module's docstring). 200 (or 409, 502) with the outcome for the call that ran it; 202 for a call
    coalesced into a run queued behind the one in flight (`queued`, or `already pending`)."""
    server = server_of(request)
    secret = server.settings.hook_secret
    given = request.headers.get("authorization", "").encode()
    if secret is None and not (server.settings.loopback_only and is_loopback(_peer(request))):
        message = "the refresh hook is off: the server listens beyond loopback, so set KERNELINDEX_HOOK_SECRET"
        return error(403, message, HOOK_DISABLED)
    if secret and not hmac.compare_digest(given, f"Bearer {secret}".encode()):  # no timing oracle
        return error(401, "a valid 'Authorization: Bearer <secret>' is required", UNAUTHORIZED)
    if not server.ready:
        return error(503, "the registry is still loading", NOT_READY)
    outcome = await server.hook.submit()
    if outcome.result is None:
        status = "queued" if outcome.status == "queued" else "already pending"
        return JSONResponse({"status": status}, status_code=202, headers={"cache-control": "no-store"})
    failed, head = outcome.result
    body = {"serving": head.serving, "main": head.main, "reason": head.reason}
    headers = {"cache-control": "no-store"}
    if failed is not None:
        return JSONResponse({**body, "reason": failed}, status_code=502, headers=headers)
    return JSONResponse(body, status_code=200 if head.reason is None else 409, headers=headers)


def _peer(request: Request) -> str:
    """The address the call came from ("" when the server cannot tell)."""
    return request.client.host if request.client is not None else ""


async def index(request: Request) -> JSONResponse:
    """What an API client finds at `/`: where the API and the health check are, and the commit served."""
    server = server_of(request)
    # One URL, two answers (this, or the home page), chosen by Accept; it names the commit served now.
    return JSONResponse(
        {
            "name": "KernelIndex registry",
            "graphql": server.urls.graphql(),
            "health": server.urls.url_path_for("healthz"),
            "serving": server.snapshots.status.serving,
        },
        headers={"cache-control": REVALIDATE, "vary": "accept"},
    )

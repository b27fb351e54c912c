"""Every request counted, timed and (when asked for) logged as one JSON line.

`Observing` is the outermost middleware but the error handler: it sees each request's route family
(`kernelindex.http.metering.route_family`), its status and its duration, and what the layers under it learned
(`kernelindex.core.metrics.Trace`: a GraphQL answer cached or not, its cost; the client's key and what it was
charged, from its account). It counts them (`kernelindex_http_requests_total`, the latency histogram, throttled
requests) and, with `kernelindex serve --access-log`, writes one line a request to the `kernelindex.access` logger:

    {"time":"2026-12-06T04:52:23.104Z","client":"ip:203.0.113.7","family":"graphql","method":"POST","status":200,
     "cost":303,"cache":"miss","duration":0.0042,"commit":"667fb1b3…"}

No path, query, header or body is logged: a token (`Authorization`) never is, nor anything a client wrote.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable

import orjson
from prometheus_client import Counter, Histogram

from kernelindex.core.clients import TrustedProxies
from kernelindex.core.metrics import REQUEST_SECONDS, REQUESTS, THROTTLED, TRACE, Trace
from kernelindex.http.headers import ASGIApp, Message, Receive, Scope, Send
from kernelindex.http.metering import account_of, client_of, route_family

__all__ = ["ACCESS_LOG", "Observing"]

ACCESS_LOG = logging.getLogger("kernelindex.access")


class Observing:
    """ASGI middleware: each HTTP request counted and timed; logged when `access_log`."""

    def __init__(
        self, app: ASGIApp, *, commit: Callable[[], str | None], proxies: TrustedProxies, access_log: bool
    ) -> None:
        self.app = app
        self.commit = commit  # the served head's commit (None while loading)
        self.proxies = proxies
        self.access_log = access_log
        self._series: dict[tuple[str, int], tuple[Counter, Histogram]] = {}  # (family, status): fixed vocabularies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        trace = Trace(route_family(scope["path"]))
        token = TRACE.set(trace)
        status = 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            TRACE.reset(token)
            self._record(scope, trace, status, time.perf_counter() - started)

    def _record(self, scope: Scope, trace: Trace, status: int, seconds: float) -> None:
        counted = self._series.get((trace.family, status))
        if counted is None:  # prometheus_client's `labels` checks and looks up each time: kept per pair instead
            code = str(status)
            counted = self._series[(trace.family, status)] = (
                REQUESTS.labels(trace.family, code),
                REQUEST_SECONDS.labels(trace.family, code),
            )
        counted[0].inc()
        counted[1].observe(seconds)
        if status == 429:
            THROTTLED.labels(trace.family).inc()
        if not self.access_log:
            return
        account = account_of(scope)
        line = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "client": account.key if account is not None else client_of(scope, self.proxies),
            "family": trace.family,
            "method": scope["method"],
            "status": status,
            "cost": account.charged if account is not None else trace.cost,
            "cache": trace.cache,
            "duration": round(seconds, 6),
            "commit": self.commit(),
        }
        ACCESS_LOG.info(orjson.dumps(line).decode())

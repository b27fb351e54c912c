"""What an operator's Prometheus reads: every metric the server keeps, in one place, and their exposition.

The metrics live in prometheus_client's default registry, one set a process. With several workers (`kernelindex serve
--workers N`) the command gives them one folder (`PROMETHEUS_MULTIPROC_DIR`, set before they start: prometheus_client
reads it when it is imported) and each worker writes its values there; `/metrics`, whichever worker answers it,
reads them all (prometheus_client's multiprocess mode). Gauges say how they combine across workers.

A request's `Trace` is what the layers under the access log learn about it (whether its answer was cached, what it
cost): the middleware that logs and counts (`kernelindex.http.observing`) makes one for each request and reads it
when the answer has left.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

__all__ = [
    "CACHE",
    "COST",
    "EXECUTOR_QUEUE",
    "EXECUTOR_WAIT",
    "REFRESH_FAILURES",
    "REFRESH_SECONDS",
    "REQUESTS",
    "REQUEST_SECONDS",
    "SNAPSHOT_COMMIT",
    "SNAPSHOT_COMMITTED",
    "THROTTLED",
    "TRACE",
    "Trace",
    "exposition",
]

_LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "kernelindex_http_requests", "HTTP requests answered, by route family and status.", ["family", "status"]
)
REQUEST_SECONDS = Histogram(
    "kernelindex_http_request_duration_seconds",
    "Time from a request's arrival to its answer's last byte, by route family and status.",
    ["family", "status"],
    buckets=_LATENCY,
)
COST = Histogram(
    "kernelindex_query_cost_points",
    "Cost points of each GraphQL operation answered (its estimated cost when it ran, 1 when cached).",
    buckets=(1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000),
)
CACHE = Counter("kernelindex_response_cache", "GraphQL operations answered from the response cache or not.", ["result"])
THROTTLED = Counter("kernelindex_throttled", "Requests refused because the client's budget could not pay.", ["family"])
EXECUTOR_QUEUE = Gauge(
    "kernelindex_executor_queue_depth",
    "Work items running or waiting for the executor threads now.",
    multiprocess_mode="livesum",
)
EXECUTOR_WAIT = Histogram(
    "kernelindex_executor_wait_seconds", "Time a work item waited for an executor thread.", buckets=_LATENCY
)
SNAPSHOT_COMMIT = Gauge(
    "kernelindex_snapshot_commit_info",
    "1 for the commit of main each process serves (0 for one it served before).",
    ["commit"],
    multiprocess_mode="liveall",
)
SNAPSHOT_COMMITTED = Gauge(
    "kernelindex_snapshot_committed_timestamp_seconds",
    "The committer time of the served head (Unix seconds); its age is time() minus this.",
    multiprocess_mode="max",
)
REFRESH_SECONDS = Histogram(
    "kernelindex_refresh_duration_seconds", "Time a refresh from main took (read, check, build).", buckets=_LATENCY
)
REFRESH_FAILURES = Counter("kernelindex_refresh_failures", "Refreshes from main that raised.")


@dataclass(slots=True)
class Trace:
    """One request as the access log and the metrics see it."""

    family: str
    cache: str | None = None  # "hit" or "miss", for a GraphQL operation
    cost: int = 0  # points charged (or, without budgets, estimated) for its operations

    def answered(self, cached: bool, cost: int) -> None:
        """A GraphQL operation of this request was answered, from the cache or not, at `cost` points."""
        self.cache = "hit" if cached and self.cache in (None, "hit") else "miss"
        self.cost += cost
        CACHE.labels("hit" if cached else "miss").inc()
        COST.observe(cost)


TRACE: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("kernelindex_trace", default=None)
"""The trace of the request being answered (set by `kernelindex.http.observing`; None outside a request)."""


def exposition(multiprocess_dir: Path | None) -> bytes:
    """The metrics in the Prometheus text format: this process's, or every worker's in `multiprocess_dir`."""
    if multiprocess_dir is None:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(multiprocess_dir))  # type: ignore[no-untyped-call]
    return generate_latest(registry)

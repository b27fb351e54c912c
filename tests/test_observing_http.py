"""What an operator reads: `/metrics` parses as the Prometheus text format and its counters move with the
requests sent; the access log is one JSON object a request, and never carries a token."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator

import pytest
from helpers import EMBEDDED_REPO
from prometheus_client.parser import text_string_to_metric_families
from server import Running, serve

from kernelindex.http.observing import ACCESS_LOG

TOKEN = "kx-secret-token-0123456789"


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO, access_log=True) as running:
        yield running


@pytest.fixture
def log() -> Iterator[Lines]:
    lines = Lines()
    ACCESS_LOG.addHandler(lines)
    try:
        yield lines
    finally:
        ACCESS_LOG.removeHandler(lines)


def samples(api: Running) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of `/metrics`, by name and labels (parsed by prometheus_client's own parser)."""
    answer = api.client.get("/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    assert "ratelimit" not in answer.headers  # free of any budget
    found = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_the_counters_move_with_the_requests(api: Running) -> None:
    query = "{ metricsProbe: runs(first: 3) { totalCount } }"
    before = samples(api)
    assert api.graphql(query).status_code == 200  # executed
    assert api.graphql(query).status_code == 200  # cached
    assert api.client.get("/records", headers={"accept": "application/json"}).status_code == 200
    after = samples(api)

    def moved(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert moved("kernelindex_http_requests_total", family="graphql", status="200") == 2
    assert moved("kernelindex_http_requests_total", family="page", status="200") == 1
    assert moved("kernelindex_http_request_duration_seconds_count", family="graphql", status="200") == 2
    assert moved("kernelindex_response_cache_total", result="hit") >= 1
    assert moved("kernelindex_response_cache_total", result="miss") >= 1
    assert moved("kernelindex_query_cost_points_count") >= 2
    assert moved("kernelindex_executor_wait_seconds_count") >= 1
    head = api.service.snapshots.head
    assert after[("kernelindex_snapshot_commit_info", (("commit", head.commit),))] == 1
    assert after[("kernelindex_snapshot_committed_timestamp_seconds", ())] == head.committed_at
    assert ("kernelindex_executor_queue_depth", ()) in after
    assert ("kernelindex_refresh_failures_total", ()) in after


def test_a_throttled_request_is_counted(api: Running) -> None:
    budgets = api.service.budgets
    assert budgets is not None
    before = samples(api).get(("kernelindex_throttled_total", (("family", "graphql"),)), 0.0)
    clock, now = budgets.clock, budgets.clock()
    budgets.clock = lambda: now  # still, so that nothing refills
    budgets.charge("ip:127.0.0.1", int(budgets.peek("ip:127.0.0.1").available))
    try:
        assert api.graphql("{ __typename }").status_code == 429
    finally:
        budgets.clock = clock
        budgets.charge("ip:127.0.0.1", -budgets.policy.capacity)  # full again, for the next test
    assert samples(api)[("kernelindex_throttled_total", (("family", "graphql"),))] == before + 1


def test_the_access_log_is_one_json_line_a_request_without_a_token(api: Running, log: Lines) -> None:
    headers = {"authorization": f"Bearer {TOKEN}", "x-forwarded-for": "198.51.100.9"}
    api.client.post("/graphql", json={"query": f'{{ run(id: "{TOKEN}") {{ name }} }}'}, headers=headers)
    api.client.get(f"/search?q={TOKEN}", headers=headers)
    api.client.get("/healthz", headers=headers)
    # A line is written once the answer has gone out: the client may read it first.
    deadline = time.monotonic() + 10
    while len(log.lines) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(log.lines) == 3
    lines = [json.loads(line) for line in log.lines]
    assert [(line["family"], line["method"]) for line in lines] == [
        ("graphql", "POST"),
        ("page", "GET"),
        ("health", "GET"),
    ]
    for line in lines:
        assert set(line) == {"time", "client", "family", "method", "status", "cost", "cache", "duration", "commit"}
        assert line["client"] == "ip:127.0.0.1"  # no proxy is trusted here: the forwarded header is nobody's word
        assert line["commit"] == api.service.snapshots.head.commit
    assert lines[0]["cache"] == "miss" and lines[0]["cost"] >= 1 and lines[0]["status"] == 200
    assert lines[1]["cost"] == 5 and lines[2]["cost"] == 0
    assert all(TOKEN not in line for line in log.lines)

"""Bounded resources under hostile load, against `kernelindex serve` in its own process:
/healthz stays fast while six clients send heavy valid queries, and the server's memory stays
bounded after a thousand distinct large queries. The tests assert bounds that timing noise cannot
reach; the measured figures are printed."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from helpers import EMBEDDED_REPO
from load import flood_query, percentile, probe_healthz, server_process

pytestmark = pytest.mark.slow

LOAD = Path(__file__).with_name("load.py")
MB = 1024 * 1024


def _report(request: pytest.FixtureRequest, line: str) -> None:
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)


def test_healthz_stays_fast_while_six_clients_send_heavy_queries(request: pytest.FixtureRequest) -> None:
    # Budgets off: the six clients come from one address, so their budget would throttle them; what is tested here
    # is that the loop answers while heavy queries run (budgets have tests of their own).
    with server_process(EMBEDDED_REPO, environ={"KERNELINDEX_BUDGET": "0"}) as server:
        idle = probe_healthz(server.url, 2)
        clients = subprocess.Popen(
            [sys.executable, str(LOAD), "heavy", server.url, "6", "14"], stdout=subprocess.PIPE, text=True
        )
        time.sleep(2)  # six requests in flight, more queued
        loaded = probe_healthz(server.url, 10)
        output, _ = clients.communicate(timeout=300)
    heavy = json.loads(output)
    p50, p99 = percentile(loaded, 0.5), percentile(loaded, 0.99)
    _report(
        request,
        f"\n/healthz under 6 heavy clients: p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
        f"max {max(loaded) * 1e3:.1f} ms over {len(loaded)} probes (idle p99 {percentile(idle, 0.99) * 1e3:.1f} ms); "
        f"heavy queries answered: {heavy['ok']}, failed: {heavy['failed']}",
    )
    assert heavy["failed"] == 0 and heavy["ok"] >= 6  # the heavy queries ran (and were not refused)
    assert p99 < 1.0  # the target is 100 ms; this bound only catches execution back on the event loop


def test_memory_stays_bounded_after_a_thousand_distinct_large_queries(request: pytest.FixtureRequest) -> None:
    failures: list[str] = []

    def send(serials: range, url: str) -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            for serial in serials:
                response = client.post("/graphql", json={"query": flood_query(serial, tokens=200)})
                if response.status_code != 200 or b"PAGE_SIZE_ERROR" not in response.content:
                    failures.append(response.text[:300])

    with server_process(EMBEDDED_REPO) as server:
        send(range(1_000_000, 1_000_050), server.url)  # the same shape first: what any server allocates
        server.settle()  # and its background pass after a start: memory it takes whatever is asked
        before = server.rss_bytes()
        threads = [threading.Thread(target=send, args=(range(k, 1000, 2), server.url)) for k in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after = server.rss_bytes()
    _report(
        request,
        f"\nRSS after 1,000 distinct 60 KB queries (200 tokens each): {before / MB:.1f} MB before, "
        f"{after / MB:.1f} MB after (+{(after - before) / MB:.1f} MB)",
    )
    assert not failures, failures[:3]
    # The caches hold at most 32 MiB of documents and 64 MiB of responses (these answers are tiny);
    # unbounded by bytes, the parsed trees alone (~185 KB each) would add ~180 MB.
    assert after - before < 96 * MB

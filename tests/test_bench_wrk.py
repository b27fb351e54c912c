"""Load runs alternate ours and the floor in slices and take each one's p99 over all its slices together:
the histogram wrk writes, and the percentile taken from it, must agree with wrk's own report."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench.wrk import Histogram, percentile, read_histogram, run_wrk, wrk_script

# (histograms in microseconds, p, expected ms): wrk's rule, rank = round(p% of the count + 0.5), worked by hand.
PERCENTILES: list[tuple[list[Histogram], float, float]] = [
    ([{1000: 99, 2000: 1}], 99, 2.0),  # count 100: rank round(99.5) = 100, the last request
    ([{1000: 98, 2000: 1, 3000: 1}], 99, 3.0),  # rank 100 again
    ([{1000: 198, 2000: 1, 3000: 1}], 99, 2.0),  # count 200: rank round(198.5) = 199
    ([{1000: 198}, {2000: 1, 3000: 1}], 99, 2.0),  # the same requests in two slices: pooled, not averaged
    ([{1000: 99}, {5000: 1}], 99, 5.0),  # one slow request in a second slice of one counts
    ([{1000: 100}, {}], 50, 1.0),  # an empty slice adds nothing
    ([{1500: 3}], 50, 1.5),
]


@pytest.mark.parametrize(("histograms", "p", "expected"), PERCENTILES)
def test_percentile_pools_slices_by_wrks_rule(histograms: list[Histogram], p: float, expected: float) -> None:
    assert percentile(histograms, p) == expected


def test_no_requests_have_no_percentile() -> None:
    assert percentile([{}, {}], 99) != percentile([{}, {}], 99)  # NaN: nothing was measured


class _Answer(BaseHTTPRequestHandler):
    """Answers every POST with a small JSON body (a threaded server: latencies spread over many values)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"data":{}}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt install wrk)")
def test_the_histogram_wrk_writes_gives_wrks_own_p99(server: str, tmp_path: Path) -> None:
    histogram = tmp_path / "latencies.txt"
    script = wrk_script([("POST", "/graphql", '{"query": "{ __typename }"}')], tmp_path, histogram=histogram)
    measured = run_wrk(server, script, 1, connections=4)
    recorded = read_histogram(histogram)
    assert sum(recorded.values()) >= measured["requests"] > 0
    # wrk prints its p99 with two decimals in its own unit: ours from the histogram rounds to the same.
    assert percentile([recorded], 99) == pytest.approx(measured["p99"], abs=0.01, rel=0.005)

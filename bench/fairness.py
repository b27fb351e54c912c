"""The fairness row of one greedy client beside one polite client, on a real `kernelindex serve`.

`python -m bench.fairness [--workers 1] [--samples 20] [--greedy-connections 4]` serves the embedded registry in a
process of its own and measures, for each configuration:

- `alone`: the polite client alone, asking a first-time run dossier (a run nobody asked for yet) once a second;
- `greedy`: the same beside a greedy client sending different documents near the cost limit (25,000) as fast as its
  connections can, with budgets on (the defaults: 500,000 points, 10,000 a second);
- `greedy_unmetered`: the same with `--budget 0` (no budgets, no fair queuing by client: one queue), the before.

It prints one JSON object: the polite client's p50 and p99 (ms) in each, their ratio to `alone`, the greedy client's
answers and 429s, and the server's throughput (answers a second, all and 200s). The two clients have addresses of
their own (127.0.0.2 and 127.0.0.3), so they are two clients to the server. No timing assertion anywhere: a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from bench.__main__ import DOSSIER

__all__ = ["main"]

GREEDY_ALIASES = 9
"""Aliases of a filtered page of runs in one greedy document: each scans every run (~2,400 points), so nine are near
the cost limit of 25,000 and under it."""


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def _serving(workers: int, *extra: str) -> Iterator[str]:
    port = _port()
    command = [sys.executable, "-m", "kernelindex", "serve", "--port", str(port), "--workers", str(workers), *extra]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=5).json().get("status") == "ok":
                    break
            except (httpx.TransportError, ValueError):
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not become healthy")
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def _client(url: str, address: str) -> httpx.Client:
    return httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address=address), timeout=120)


def _greedy_document(rng: random.Random) -> str:
    fields = "edges { node { digest name trust rank } }"
    parts = [
        f"a{n}: runs(first: {rng.randint(40, 60)}, filter: {{minTrust: REPORTED}}) {{ totalCount {fields} }}"
        for n in range(GREEDY_ALIASES)
    ]
    return "{ " + " ".join(parts) + " }"


def _phase(url: str, runs: list[str], samples: int, interval: float, greedy: int) -> dict[str, Any]:
    """The polite client's latencies (ms), with `greedy` greedy connections running meanwhile."""
    stop = threading.Event()
    counts = {"answers": 0, "ok": 0, "throttled": 0, "refused_cost": 0}
    lock = threading.Lock()

    def hammer(seed: int) -> None:
        rng = random.Random(seed)
        with _client(url, "127.0.0.2") as client:
            while not stop.is_set():
                answer = client.post("/graphql", json={"query": _greedy_document(rng)})
                with lock:
                    counts["answers"] += 1
                    counts["ok"] += answer.status_code == 200 and "errors" not in answer.text[:20]
                    counts["throttled"] += answer.status_code == 429
                    counts["refused_cost"] += "QUERY_TOO_COMPLEX" in answer.text[:400]
                if answer.status_code == 429:
                    time.sleep(0.001)  # as fast as it can, but not a busy loop on one core

    threads = [threading.Thread(target=hammer, args=(n,), daemon=True) for n in range(greedy)]
    for thread in threads:
        thread.start()
    latencies = []
    started = time.perf_counter()
    try:
        with _client(url, "127.0.0.3") as polite:
            for n in range(samples):
                due = started + n * interval
                time.sleep(max(0.0, due - time.perf_counter()))
                sent = time.perf_counter()
                answer = polite.post("/graphql", json={"query": DOSSIER, "variables": {"id": runs.pop()}})
                latencies.append((time.perf_counter() - sent) * 1000)
                assert answer.status_code == 200, answer.text[:300]
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 2),
        "greedy": counts,
        "throughput_all_per_s": round((counts["answers"] + samples) / elapsed, 1),
        "throughput_200_per_s": round((counts["ok"] + samples) / elapsed, 1),
    }


def _runs(url: str, count: int) -> list[str]:
    found: list[str] = []
    after = None
    with httpx.Client(base_url=url, timeout=120) as client:
        while len(found) < count:
            query = "query($after: String) { runs(first: 100, after: $after) { edges { cursor node { digest } } } }"
            edges = client.post("/graphql", json={"query": query, "variables": {"after": after}}).json()["data"]
            edges = edges["runs"]["edges"]
            found += [edge["node"]["digest"] for edge in edges]
            after = edges[-1]["cursor"]
    random.Random(43).shuffle(found)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between the polite client's requests")
    parser.add_argument("--greedy-connections", type=int, default=4)
    args = parser.parse_args(argv)
    row: dict[str, Any] = {"workers": args.workers, "samples": args.samples}
    for name, extra, greedy in (("alone", (), 0), ("greedy", (), args.greedy_connections)):
        with _serving(args.workers, *extra) as url:
            row[name] = _phase(url, _runs(url, args.samples + 5), args.samples, args.interval, greedy)
    with _serving(args.workers, "--budget", "0") as url:
        row["greedy_unmetered"] = _phase(
            url, _runs(url, args.samples + 5), args.samples, args.interval, args.greedy_connections
        )
    alone = row["alone"]["p99_ms"]
    row["p99_ratio_greedy"] = round(row["greedy"]["p99_ms"] / alone, 2)
    row["p99_ratio_greedy_unmetered"] = round(row["greedy_unmetered"]["p99_ms"] / alone, 2)
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()

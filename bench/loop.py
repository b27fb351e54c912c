"""The event loop under the worst batch: the worst `/healthz` latency while clients send batches of
operations that each filter every run twice, in two orders, against the worst `/healthz` latency of the same
server idle.

Each batch asks a page size no batch asked before, so no cached answer shortens it. A server that executes on its
event loop answers /healthz only between batches (seconds); one that executes in its threads answers it between
two steps of an operation."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

__all__ = ["BATCH", "measure_healthz_beside_batches"]

_SORT = "runs(first: {first}, order: {order}, filter: {{minTrust: REPORTED}}) {{ edges {{ node {{ digest }} }} }}"
WORST = (
    "{{ a{i}: "
    + _SORT.replace("{order}", "LOWEST_VALUE")
    + " b{i}: "
    + _SORT.replace("{order}", "NEWEST_PUBLISHED")
    + " }}"
)
BATCH = 10
"""Operations in a batch, each filtering every run twice (the issue's batch: 10 such operations; what the batch's
cost limit leaves runs five of them, ~10 ms each, and refuses the rest)."""


def _batch(first: int) -> list[dict[str, Any]]:
    return [{"query": WORST.format(i=i, first=first)} for i in range(BATCH)]


def _healthz(client: httpx.Client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url + "/healthz")
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"/healthz answered {response.status_code}: {response.text[:200]}")
    return elapsed


def measure_healthz_beside_batches(url: str, clients: int, batches: int, samples: int) -> dict[str, float]:
    """`clients` threads each sending `batches` worst batches one after the other, while /healthz is asked without
    pause: the worst /healthz latency beside them and alone (`samples` asked idle first), in seconds, and the
    longest batch."""
    with httpx.Client(timeout=300) as client:
        alone = max(_healthz(client, url) for _ in range(samples))
        durations: list[float] = []
        failures: list[str] = []
        pages = iter(range(1, 10_000))
        lock = threading.Lock()

        def send() -> None:
            with httpx.Client(timeout=300) as own:
                for _ in range(batches):
                    with lock:
                        first = next(pages)
                    started = time.perf_counter()
                    response = own.post(url + "/graphql", json=_batch(first))
                    durations.append(time.perf_counter() - started)
                    if response.status_code != 200:
                        failures.append(f"{response.status_code}: {response.text[:200]}")

        senders = [threading.Thread(target=send) for _ in range(clients)]
        for sender in senders:
            sender.start()
        beside: list[float] = []
        time.sleep(0.05)  # the batches are executing
        while any(sender.is_alive() for sender in senders):
            beside.append(_healthz(client, url))
        for sender in senders:
            sender.join()
    if failures:
        raise RuntimeError(f"a batch failed: {failures[0]}")
    return {
        "alone": alone,
        "beside": max(beside, default=alone),
        "asked": float(len(beside)),
        "batch": max(durations),
    }

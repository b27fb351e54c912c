"""What a search costs at the edges, over HTTP against a real server: the worst query allowed (from
`bench.search`'s queries built to be expensive) through `/graphql` as the search page asks it, 255
one-letter words refused at `/search.json`, and a `run(id:)` query asked while two clients search with the
worst queries without pause (the executors are shared: a search must not hold them for long).

Every request differs (the page size cycles, the run asked changes), so no response cache answers one.

    python -m bench.search_http URL QUERIES-JSON REPEATS   # one JSON line of timings
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from typing import Any

import httpx

from kernelindex.web.documents import SEARCH
from kernelindex.web.search_page import RESOLVER_CASES

__all__ = ["RUN_TARGET_MS", "measure_edges"]

RUN_TARGET_MS = 100.0
"""A `run(id:)` query answers within 100 ms while two worst-case searches run."""
RUN = "query($id: String!) { run(id: $id) { digest name rank primary { display } cohort { key } } }"


def _post(client: httpx.Client, document: str, variables: dict[str, Any]) -> float:
    """The latency (ms) of one GraphQL request that must answer 200."""
    started = time.perf_counter()
    response = client.post("/graphql", json={"query": document, "variables": variables})
    elapsed = (time.perf_counter() - started) * 1e3
    if response.status_code != 200 or "errors" in response.json():
        # An error answers fast: timing it would flatter the search.
        raise RuntimeError(f"answered {response.status_code}: {response.text[:200]}")
    return elapsed


def _search(client: httpx.Client, query: str, first: int) -> float:
    variables = {"at": None, "q": query, "first": first, "after": None, "cases": RESOLVER_CASES}
    return _post(client, SEARCH, variables)


def _refused(client: httpx.Client, query: str) -> float:
    started = time.perf_counter()
    response = client.get("/search.json", params={"q": query})
    elapsed = (time.perf_counter() - started) * 1e3
    if response.status_code != 400:
        raise RuntimeError(f"/search.json answered {response.status_code}, not 400")
    return elapsed


def measure_edges(url: str, queries: dict[str, str], repeats: int) -> dict[str, Any]:
    """Median and worst timings in ms: each query at the edge, the refusal, `run(id:)` alone and beside two
    searching clients."""
    with httpx.Client(base_url=url, timeout=120) as client:
        listed = client.post("/graphql", json={"query": "{ runs(first: 100) { edges { node { digest } } } }"})
        runs = [edge["node"]["digest"] for edge in listed.json()["data"]["runs"]["edges"]]
        timings = {
            name: statistics.median(_search(client, query, first) for first in range(1, repeats + 1))
            for name, query in queries.items()
        }
        letters = " ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(255))
        refused = [_refused(client, letters) for _ in range(repeats)]
        alone = [_post(client, RUN, {"id": digest}) for digest in runs[:repeats]]
    worst = sorted(timings, key=lambda name: -timings[name])[:2]
    beside = _beside_searches(url, [queries[name] for name in worst], runs[repeats : repeats * 3])
    return {
        "timings": timings,
        "worst": worst[0],
        "worst_ms": timings[worst[0]],
        "refused_ms": statistics.median(refused),
        "run_alone_ms": statistics.median(alone),
        "run_beside_p50_ms": statistics.median(beside),
        "run_beside_max_ms": max(beside),
        "run_beside_samples": len(beside),
    }


def _beside_searches(url: str, worst: list[str], runs: list[str]) -> list[float]:
    """`run(id:)` latencies (ms) while one client per query searches with it without pause."""
    stop = threading.Event()

    def keep_searching(query: str) -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            first = 0
            while not stop.is_set():
                first = first % 100 + 1
                _search(client, query, first)

    threads = [threading.Thread(target=keep_searching, args=(query,), daemon=True) for query in worst]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)  # both searching
        with httpx.Client(base_url=url, timeout=120) as client:
            return [_post(client, RUN, {"id": digest}) for digest in runs]
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)


def main() -> None:
    url, queries, repeats = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(measure_edges(url, queries, repeats)))


if __name__ == "__main__":
    main()

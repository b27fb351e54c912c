"""`python -m bench`: the registry's costs against floors and a peer measured in the same run.

    python -m bench                 # 1x, 10x, 50x (generates and caches synthetic registries)
    python -m bench --quick         # the real corpus only, short loads: under 3 minutes on 2 cores
    python -m bench --smoke         # the harness itself, seconds per measurement (CI)
    python -m bench --json FILE     # also write [{"name", "value", "unit", "floor", "ratio", "note"}]

Every ratio is value / floor, the floor measured in the same run on the same machine.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from bench import peers
from bench.synth import CACHE, EMBEDDED, STATE, stored_bytes_at_head, synthetic_registry
from bench.wrk import VARY, Histogram, Request, percentile, read_histogram, run_wrk, wrk_script

__all__ = ["Result", "main"]

ROOT = Path(__file__).resolve().parent.parent

DOSSIER = """query($id: String!) { run(id: $id) { digest name rank primary { display statistic }
  cohort { key profile } leader { name primary { display } } sourceNative { summary }
  implementation { displayName revision project { displayName } } workload { label } protocol { harness timer }
  environment { gpu } trust eligible ineligibilityReasons warnings publishedAt
  provenance { commit { id committedAt } license } permalink citation } }"""
DOSSIER_ACCESSED = DOSSIER.replace("query($id: String!)", "query($id: String!, $accessed: String)").replace(
    "permalink citation }", "permalink citation(accessed: $accessed) }"
)
"""The dossier with a reader's access date: a different date makes a different answer (no cache helps)."""
LEADERBOARD = """query($key: String!) { cohort(key: $key) { key size entries(first: 20) { edges { node {
  rank tiedWithPrevious run { digest name primary { value display } trust implementation { displayName } } } } } } }"""
LEADERBOARD_ROWS = """query($key: String!) { cohort(key: $key) { key size leaderboard(first: 20) {
  rank tiedWithPrevious digest name value display trust implementation } } }"""
"""The same 20 rows as LEADERBOARD through the fused field (api/schema/leaderboard.py)."""
RECORDS = "{ records(first: 20) { totalCount edges { node { since holder { name } cohort { key } } } } }"
TARGETS = {
    "cold_build": ("<=", 1.6),
    "integrity_check": ("<=", 1.0),
    "integrity_remembered": ("<=", 0.2),
    "warm_start": ("<=", 0.2),
    "records_first": ("<=", 0.2),  # seconds (floor 1 s)
    "incremental_100": ("<=", 0.005),
    "rss": ("<=", 3.0),
    "dossier_p50": ("<=", 1.5),
    "leaderboard_p50": ("<=", 1.5),
    "dossier_first_p50": ("<=", 3.0),
    "leaderboard_first_p50": ("<=", 3.0),
    "leaderboard_rows_first_p50": ("<=", 3.0),
    "leaderboard_vs_datasette": ("<=", 1.0),
    "leaderboard_first_vs_postgraphile": ("<=", 1.0),
    "dossier_first_vs_postgraphile": ("<=", 1.0),
    "load_rps": (">=", 0.5),
    "run_page_p50": ("<=", 1.5),
    "leaderboard_page_p50": ("<=", 1.5),
    "run_page_first_p50": ("<=", 1.5),
    "leaderboard_page_first_p50": ("<=", 1.5),
    "load_p99": ("<=", 3.0),
    "scale_lag": ("<=", 2.0),  # seconds (floor 1 s)
    "scale_failover_errors": ("<=", 0.0),
    "scale_restart_dropped": ("<=", 0.0),
    "scale_pinned_rps": (">=", 1.0),
    "search_worst": ("<=", 1.0),  # any query up to the limits under 50 ms (floor: the 50 ms)
    "search_refusal": ("<=", 1.0),
    "search_edge": ("<=", 1.0),  # the same at the edge (HTTP, GraphQL, the page's document)
    "search_concurrent": ("<=", 1.0),  # run(id:) beside two worst-case searches under 100 ms (floor: the 100 ms)
}
# No target for `loop_healthz_worst`: /healthz beside the worst batches, as a ratio to itself idle.


@dataclass
class Result:
    name: str
    value: float
    unit: str
    floor: float
    ratio: float
    note: str = ""

    @property
    def target(self) -> tuple[str, float] | None:
        for prefix, target in TARGETS.items():
            if self.name == prefix or self.name.startswith(prefix + "_"):
                return target
        return None

    @property
    def met(self) -> bool | None:
        target = self.target
        if target is None:
            return None
        operator, bound = target
        return self.ratio <= bound if operator == "<=" else self.ratio >= bound


def result(name: str, value: float, unit: str, floor: float, note: str = "") -> Result:
    return Result(name, value, unit, floor, value / floor if floor else float("inf"), note)


@dataclass(frozen=True)
class Plan:
    scales: tuple[int, ...]
    warm_scales: tuple[int, ...]
    incremental_scales: tuple[int, ...]
    datasette_scales: tuple[int, ...]
    repeats: int
    samples: int
    load_seconds: int
    workers: tuple[int, ...]
    load_runs: int = 1  # p99 is reported per run, each against the floor measured in turns with it


PLANS = {
    "full": Plan((1, 10, 50), (1, 10), (10, 50), (1, 10), 3, 400, 20, (1, 2), 3),
    "quick": Plan((1,), (1,), (), (1,), 2, 200, 5, (1, 2)),
    "smoke": Plan((1,), (1,), (1,), (1,), 1, 20, 1, (1,)),
}


# Processes -------------------------------------------------------------------------------------


def _python(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    output = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, check=True, cwd=ROOT, env={**os.environ, **(env or {})}
    ).stdout
    return json.loads(output.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 600) -> float:
    started = time.perf_counter()
    deadline = started + timeout
    with httpx.Client(timeout=5) as client:
        while time.perf_counter() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}")
            try:
                if client.get(url + "/healthz").status_code == 200:
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            time.sleep(0.005)
    raise RuntimeError("the server never became healthy")


@contextmanager
def _server(command: list[str], env: dict[str, str], port: int) -> Iterator[tuple[str, subprocess.Popen[bytes], float]]:
    """Start a server; yield (url, process, seconds to healthy); stop it."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            try:
                seconds = _wait_healthy(url, process)
            except RuntimeError as exc:
                errors.seek(0)
                raise RuntimeError(f"{exc}: {errors.read().decode(errors='replace')[-2000:]}") from None
            yield url, process, seconds
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _ours(repo: Path, *, workers: int = 1, cache: bool = True) -> Any:
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "kernelindex.cli",
        "serve",
        "--repo",
        str(repo),
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--cache-dir",
        str(STATE),
    ]
    # Budgets off: the rows measure what the server can do for one load generator (one address, one budget);
    # bench/fairness.py measures the budgets themselves.
    environ = {
        "KERNELINDEX_GRAPH_CACHE": "1" if cache else "0",
        "KERNELINDEX_POLL_SECONDS": "3600",
        "KERNELINDEX_BUDGET": "0",
    }
    return _server(command, environ, port)


@contextmanager
def _floor_server(body: bytes, workers: int = 1) -> Iterator[str]:
    port = _free_port()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        handle.write(body)
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "bench.floor_app:app",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        "--no-access-log",
        # The same HTTP protocol as `kernelindex serve` (kernelindex.serving.process.options): the floor is the stack
        # itself.
        "--http",
        "kernelindex.serving.wire:HttpProtocol",
    ]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "BENCH_FLOOR_BODY": handle.name},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        with httpx.Client() as client:
            while True:
                try:
                    client.get(url + "/ready")
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
        yield url
    finally:
        _stop(process)
        os.unlink(handle.name)


def _family(pid: int) -> list[int]:
    """A process and every process it started, and they started (uvicorn's workers, the `git` a server keeps),
    whichever of its threads started them: a thread's children are listed under that thread's task only."""
    found = [pid]
    for one in found:  # grows as children are found
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a process that just exited
            for task in Path(f"/proc/{one}/task").iterdir():
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                    found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def _rss(pid: int) -> int:
    """Resident memory of a process and of the processes it started (`_family`), in bytes."""
    total = 0
    for one in _family(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            for line in Path(f"/proc/{one}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


def _settle(pid: int, quiet: float = 0.5, timeout: float = 900) -> None:
    """Wait until a server has done what it does after a start (ranking every cohort, writing its
    warm cache): its CPU time stops growing for `quiet` seconds. First-time answers are then
    measured as a user meets them once a server runs, not against its start-up work."""

    def cpu() -> float:
        """CPU seconds of the server and of the processes it started (`_family`)."""
        total = 0
        for one in _family(pid):
            try:
                fields = Path(f"/proc/{one}/stat").read_text().rpartition(")")[2].split()
            except FileNotFoundError:  # a worker that just exited
                continue
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    deadline = time.monotonic() + timeout
    before = cpu()
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = cpu()
        if now - before < quiet * 0.05:
            return
        before = now


def _p50(client: httpx.Client, requests: list[tuple[str, dict[str, Any]]], url: str) -> float:
    """Median latency in seconds of `requests` sent one after the other over one connection."""
    times = []
    for path, body in requests:
        started = time.perf_counter()
        response = client.post(url + path, json=body)
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:200]}")
        times.append(elapsed)
    return statistics.median(times)


def _alternating_p50(
    client: httpx.Client, url: str, paths: list[str], bodies: list[dict[str, Any]]
) -> tuple[float, float]:
    """Median latencies (pages, documents) of GETs of `paths` and POSTs of `bodies`, one of each in turn, so
    that the machine's load (shared, noisy) weighs on both alike."""
    pages: list[float] = []
    documents: list[float] = []
    for path, body in zip(paths, bodies, strict=False):
        pages.append(_get_p50(client, [path], url))
        documents.append(_p50(client, [("/graphql", body)], url))
    return statistics.median(pages), statistics.median(documents)


def _get_p50(client: httpx.Client, paths: list[str], url: str) -> float:
    """Median latency in seconds of GETs of `paths` as a browser asks (HTML), one after the other."""
    times = []
    for path in paths:
        started = time.perf_counter()
        response = client.get(url + path, headers={"accept": "text/html"})
        elapsed = time.perf_counter() - started
        if response.status_code != 200 or not response.headers["content-type"].startswith("text/html"):
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:200]}")
        times.append(elapsed)
    return statistics.median(times)


# Measurements ----------------------------------------------------------------------------------------


def measure_build(scale: int, repo: Path, plan: Plan) -> tuple[list[Result], float]:
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(plan.repeats):  # by turns: a machine that slows down midway slows both alike
        ours.append(_python("-m", "bench.probe", "cold", str(repo))["seconds"])
        floor.append(_python("-m", "bench.probe", "floor", str(repo))["seconds"])
    cold = statistics.median(ours)
    note = f"floor: cat-file --batch + orjson.loads of {stored_bytes_at_head(repo) / 1e6:.0f} MB"
    return [result(f"cold_build_{scale}x", cold, "s", statistics.median(floor), note)], cold


def measure_integrity(scale: int, repo: Path, cold: float, plan: Plan) -> list[Result]:
    """A registry's first start checks its head in full and its whole history; then only what changed."""
    rows = [
        ("integrity", "integrity_check", "full head check at a registry's first start, nothing remembered"),
        ("integrity_remembered", "integrity_remembered", "the same check with the verified fan-out trees remembered"),
        ("history", "history_check", "append-only check of main's whole first-parent history (first start)"),
    ]
    results = []
    for probe, name, note in rows:
        times = [_python("-m", "bench.probe", probe, str(repo))["seconds"] for _ in range(plan.repeats)]
        note += "; floor: the cold build"
        results.append(result(f"{name}_{scale}x", statistics.median(times), "s", cold, note))
    return results


def measure_warm_start(scale: int, repo: Path, cold: float, plan: Plan) -> list[Result]:
    with _ours(repo, cache=True):  # writes the cache beside the repository
        pass
    times = []
    for _ in range(plan.repeats):
        with _ours(repo, cache=True) as (_, _, seconds):
            times.append(seconds)
    return [result(f"warm_start_{scale}x", statistics.median(times), "s", cold, "kernelindex serve to /healthz 200")]


def measure_incremental(scale: int, repo: Path, cold: float, plan: Plan) -> list[Result]:
    times = [_python("-m", "bench.probe", "incremental", str(repo))["seconds"] for _ in range(plan.repeats)]
    return [result(f"incremental_100_{scale}x", statistics.median(times), "s", cold, "refresh: validate + apply")]


def measure_rss(scale: int, repo: Path) -> list[Result]:
    """Memory after a cold start, and the first `records` query's latency right after it (a first
    query must not wait for derived data that could be ready: floor 1 s, target 0.2 s)."""
    with _ours(repo, cache=False) as (url, process, _):
        with httpx.Client(timeout=600) as client:
            started = time.perf_counter()
            answer = client.post(url + "/graphql", json={"query": RECORDS})
            first = time.perf_counter() - started
            if answer.status_code != 200 or "errors" in answer.json():
                raise RuntimeError(f"records answered {answer.status_code}: {answer.text[:200]}")
        rss = _rss(process.pid)
        _settle(process.pid)  # the rankings, indexes and search facets a server builds after its start
        settled = _rss(process.pid)
    stored = stored_bytes_at_head(repo)
    return [
        result(f"rss_{scale}x", rss, "bytes", stored, "server after a cold load; floor: bytes of the manifests"),
        result(
            f"rss_settled_{scale}x",
            settled,
            "bytes",
            stored,
            "the same server once its background work is done (search index and facets included)",
        ),
        result(f"records_first_{scale}x", first, "s", 1.0, "first `records(first: 20)` right after a cold start"),
    ]


def _queries(url: str) -> dict[str, Any]:
    """Real ids to query: runs for dossiers, the largest cohorts for leaderboards."""
    probe = """{ cohorts(first: 100) { edges { node { key size
      entries(first: 1) { edges { node { run { digest } } } } } } } runs(first: 100) { edges { node { digest } } } }"""
    with httpx.Client(timeout=60) as client:
        data = client.post(url + "/graphql", json={"query": probe}).json()["data"]
    cohorts = [e["node"]["key"] for e in data["cohorts"]["edges"] if e["node"]["size"] >= 20]
    runs = [e["node"]["digest"] for e in data["runs"]["edges"]]
    runs += [
        e["node"]["entries"]["edges"][0]["node"]["run"]["digest"]
        for e in data["cohorts"]["edges"]
        if e["node"]["entries"]["edges"]
    ]
    return {"runs": runs, "cohorts": cohorts}


_WARM_UP = 20
SEED_RUN = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"


def measure_latency(repo: Path, plan: Plan) -> tuple[list[Result], dict[str, Any]]:
    results = []
    with _ours(repo) as (url, process, _), httpx.Client(timeout=60) as client:
        ids = _queries(url)
        _settle(process.pid)
        largest = ids["cohorts"][0]
        dossier = {"query": DOSSIER, "variables": {"id": SEED_RUN}}
        board = {"query": LEADERBOARD, "variables": {"key": largest}}
        rows = {"query": LEADERBOARD_ROWS, "variables": {"key": largest}}
        bodies = {"dossier": dossier, "leaderboard": board, "leaderboard_rows": rows}
        floors = {}
        for name, body in bodies.items():
            answer = client.post(url + "/graphql", json=body).content
            with _floor_server(answer) as floor_url, httpx.Client() as floor_client:
                floors[name] = _p50(floor_client, [("/graphql", body)] * plan.samples, floor_url)
            repeat = _p50(client, [("/graphql", body)] * plan.samples, url)
            results.append(result(f"{name}_p50", repeat * 1e3, "ms", floors[name] * 1e3, "repeat query, 1 client"))
        fresh_runs = [{"query": DOSSIER, "variables": {"id": run}} for run in ids["runs"][: plan.samples]]
        # Cohorts asked for the first time, alternately through `entries` and through the fused field.
        unseen = ids["cohorts"][1 : 2 * plan.samples + 1]
        fresh_boards = [{"query": LEADERBOARD, "variables": {"key": key}} for key in unseen[0::2]]
        first = _p50(client, [("/graphql", b) for b in fresh_runs], url)
        results.append(
            result(
                "dossier_first_p50",
                first * 1e3,
                "ms",
                floors["dossier"] * 1e3,
                f"{len(fresh_runs)} different runs, each asked once",
            )
        )
        first = _p50(client, [("/graphql", b) for b in fresh_boards], url)
        results.append(
            result(
                "leaderboard_first_p50",
                first * 1e3,
                "ms",
                floors["leaderboard"] * 1e3,
                f"{len(fresh_boards)} different cohorts, each asked once",
            )
        )
        fresh_rows = [{"query": LEADERBOARD_ROWS, "variables": {"key": key}} for key in unseen[1::2]]
        first = _p50(client, [("/graphql", b) for b in fresh_rows], url)
        results.append(
            result(
                "leaderboard_rows_first_p50",
                first * 1e3,
                "ms",
                floors["leaderboard_rows"] * 1e3,
                f"{len(fresh_rows)} different cohorts, each asked once: Cohort.leaderboard, the same 20 rows",
            )
        )
        results.extend(_measure_pages(client, url, ids, plan))
    return results, ids


def _measure_pages(client: httpx.Client, url: str, ids: dict[str, Any], plan: Plan) -> list[Result]:
    """The run page and a leaderboard page against the GraphQL answer to the page's own document:
    repeated (both served from their caches), and first asked (different runs and cohorts each time)."""
    from kernelindex.web import documents
    from kernelindex.web.cohort_pages import LEADERBOARD_PAGE
    from kernelindex.web.render import ORIGIN

    head = client.get(url + "/healthz").json()["serving"]
    # The page's own variables: a server without a base URL (as this one) has its pages ask for the
    # citations to copy too (`kernelindex.web.render.copy_citations`), three more citations a run.
    copy = {"copy": True, "copyBase": ORIGIN}

    def run_doc(run: str) -> dict[str, Any]:
        return {"query": documents.RUN, "variables": {"at": head, "id": run, **copy}}

    def board_doc(key: str) -> dict[str, Any]:
        variables = {"at": None, "key": key, "first": LEADERBOARD_PAGE, "after": None, "minTrust": None, **copy}
        return {"query": documents.LEADERBOARD, "variables": variables}

    results = []
    largest = ids["cohorts"][0]
    pairs = {
        "run_page": (f"/at/{head}/runs/{SEED_RUN}", run_doc(SEED_RUN)),
        "leaderboard_page": (f"/cohorts/{largest}", board_doc(largest)),
    }
    for name, (path, body) in pairs.items():
        graphql = _p50(client, [("/graphql", body)] * plan.samples, url)
        page = _get_p50(client, [path] * plan.samples, url)
        results.append(result(f"{name}_p50", page * 1e3, "ms", graphql * 1e3, "repeat; floor: /graphql, same document"))
    # First asked: half the ids for the pages, the other half for GraphQL, so neither finds the other's cache.
    runs, cohorts = ids["runs"][: 2 * plan.samples], ids["cohorts"][1 : 2 * plan.samples + 1]
    firsts = {
        "run_page_first": ([f"/at/{head}/runs/{r}" for r in runs[0::2]], [run_doc(r) for r in runs[1::2]]),
        "leaderboard_page_first": ([f"/cohorts/{k}" for k in cohorts[0::2]], [board_doc(k) for k in cohorts[1::2]]),
    }
    for name, (paths, bodies) in firsts.items():
        page, graphql = _alternating_p50(client, url, paths, bodies)
        note = f"{len(paths)} pages and {len(bodies)} other documents, each asked once, alternating; floor: /graphql"
        results.append(result(f"{name}_p50", page * 1e3, "ms", graphql * 1e3, note))
    return results


def measure_peers(scale: int, repo: Path, plan: Plan) -> list[Result]:
    """Our first-time and repeat answers against Datasette (SQLite) and PostGraphile (PostgreSQL)
    holding the same rows, all measured in this run: the same 20-row leaderboard slices (the
    largest cohort repeated; other cohorts each asked once) and the same dossiers (one run
    repeated; other runs each asked once). Ours first, on a fresh server, before anything warmed."""
    with _ours(repo) as (url, process, _), httpx.Client(timeout=120) as client:
        ids = _queries(url)
        _settle(process.pid)
        largest, unseen = ids["cohorts"][0], ids["cohorts"][1 : plan.samples + 1]
        runs = [run for run in dict.fromkeys(ids["runs"]) if run != SEED_RUN][: plan.samples]

        def board(key: str) -> tuple[str, dict[str, Any]]:
            return "/graphql", {"query": LEADERBOARD, "variables": {"key": key}}

        def dossier(run: str) -> tuple[str, dict[str, Any]]:
            return "/graphql", {"query": DOSSIER, "variables": {"id": run}}

        # Every server, ours and each peer, first answers the repeated requests a few times, so that
        # first-time answers measure data met for the first time, not code run for the first time
        # (V8's JIT for PostGraphile; document parsing and validation for us).
        _p50(client, [board(largest), dossier(SEED_RUN)] * _WARM_UP, url)
        ours = {
            "leaderboard_first": _p50(client, [board(k) for k in unseen], url),
            "dossier_first": _p50(client, [dossier(r) for r in runs], url),
            "leaderboard": _p50(client, [board(largest)] * plan.samples, url),
            "dossier": _p50(client, [dossier(SEED_RUN)] * plan.samples, url),
        }
        answers = [client.post(url + "/graphql", json=dossier(r)[1]).json()["data"]["run"] for r in [SEED_RUN, *runs]]
        tables = peers.Tables(_entries_rows(url, client), [peers.dossier_row(a) for a in answers])
    shape = f"{len(unseen)} cohorts and {len(runs)} runs each asked once; repeats: the largest cohort, one run"

    def rows(peer: str, times: dict[str, float] | None, why: str = "") -> list[Result]:
        found = []
        for what in ("leaderboard", "leaderboard_first", "dossier", "dossier_first"):
            name = f"{what}_vs_{peer}_{scale}x"
            if times is None:
                note = f"skipped: {why} (ours: {ours[what] * 1e3:.3f} ms)"
                found.append(Result(name, float("nan"), "ms", float("nan"), float("nan"), note))
            else:
                found.append(result(name, ours[what] * 1e3, "ms", times[what] * 1e3, f"floor: {peer}; {shape}"))
        return found

    results: list[Result] = []
    database = peers.sqlite_database(CACHE / f"peers-x{scale}.db", tables)
    try:
        with peers.datasette(database) as peer, httpx.Client(timeout=60) as client:
            path = f"/{database.stem}"

            def get(what: str, items: list[str]) -> float:
                if what == "leaderboard":
                    paths = [f"{path}/entries.json?cohort={k}&_sort=rank&_size=20&_shape=array" for k in items]
                else:
                    paths = [f"{path}/dossiers.json?digest={r}&_shape=array" for r in items]
                return _peer_p50(client, peer, [("GET", p, None) for p in paths])

            get("leaderboard", [largest] * _WARM_UP)
            get("dossier", [SEED_RUN] * _WARM_UP)
            times = {
                "leaderboard_first": get("leaderboard", unseen),
                "dossier_first": get("dossier", runs),
                "leaderboard": get("leaderboard", [largest] * plan.samples),
                "dossier": get("dossier", [SEED_RUN] * plan.samples),
            }
        results += rows("datasette", times)
    except peers.Unavailable as exc:
        results += rows("datasette", None, str(exc))
    try:
        with peers.postgres(tables) as dsn, peers.postgraphile(dsn) as peer, httpx.Client(timeout=60) as client:

            def post(query: str, key: str, items: list[str]) -> float:
                bodies = [{"query": query, "variables": {key: item}} for item in items]
                return _peer_p50(client, peer, [("POST", "/graphql", body) for body in bodies])

            post(peers.POSTGRAPHILE_LEADERBOARD, "key", [largest] * _WARM_UP)
            post(peers.POSTGRAPHILE_DOSSIER, "id", [SEED_RUN] * _WARM_UP)
            times = {
                "leaderboard_first": post(peers.POSTGRAPHILE_LEADERBOARD, "key", unseen),
                "dossier_first": post(peers.POSTGRAPHILE_DOSSIER, "id", runs),
                "leaderboard": post(peers.POSTGRAPHILE_LEADERBOARD, "key", [largest] * plan.samples),
                "dossier": post(peers.POSTGRAPHILE_DOSSIER, "id", [SEED_RUN] * plan.samples),
            }
        results += rows("postgraphile", times)
    except peers.Unavailable as exc:
        results += rows("postgraphile", None, str(exc))
    return results


def _peer_p50(client: httpx.Client, url: str, requests: list[tuple[str, str, dict[str, Any] | None]]) -> float:
    """Median latency in seconds of a peer's answers, one request after the other over one connection;
    every answer must hold data (a peer answering errors fast would flatter itself)."""
    times = []
    for method, path, body in requests:
        started = time.perf_counter()
        response = client.request(method, url + path, json=body)
        elapsed = time.perf_counter() - started
        answer = response.json() if response.status_code == 200 else None
        if isinstance(answer, dict):
            data = answer.get("data") or {}
            answer = None if answer.get("errors") else next(iter(data.values()), None)
            answer = answer.get("nodes", answer) if isinstance(answer, dict) else answer
        if not answer:
            raise RuntimeError(f"the peer answered {response.status_code} without data: {response.text[:300]}")
        times.append(elapsed)
    return statistics.median(times)


def _entries_rows(url: str, client: httpx.Client) -> list[tuple[Any, ...]]:
    """Every ranked run of every cohort, as a leaderboard shows it: the peers' `entries` table."""
    rows = []
    after = None
    # 10 cohorts a page: 10 x 100 entries x 12 fields keeps under the API's cost limit (25,000).
    query = """query($after: String) { cohorts(first: 10, after: $after) { pageInfo { hasNextPage endCursor }
      edges { node { key entries(first: 100) { edges { node { rank tiedWithPrevious
      run { digest name primary { value display } trust implementation { displayName } } } } } } } } }"""
    while True:
        data = client.post(url + "/graphql", json={"query": query, "variables": {"after": after}}).json()["data"]
        for edge in data["cohorts"]["edges"]:
            for entry in edge["node"]["entries"]["edges"]:
                node, run = entry["node"], entry["node"]["run"]
                rows.append(
                    (
                        edge["node"]["key"],
                        node["rank"],
                        int(node["tiedWithPrevious"]),
                        run["digest"],
                        run["name"],
                        run["primary"]["value"],
                        run["primary"]["display"],
                        run["trust"],
                        run["implementation"]["displayName"] if run["implementation"] else None,
                    )
                )
        if not data["cohorts"]["pageInfo"]["hasNextPage"]:
            break
        after = data["cohorts"]["pageInfo"]["endCursor"]
    return rows


def measure_search_edges(repo: Path, queries: dict[str, str], plan: Plan) -> list[Result]:
    """Searches at the edge: the worst query allowed as the search page asks it, 255 words refused at
    `/search.json` (both against the 50 ms target), and `run(id:)` beside two clients searching with the two
    worst queries without pause (against the 100 ms target)."""
    from bench.search import TARGET_MS
    from bench.search_http import RUN_TARGET_MS, measure_edges

    with _ours(repo) as (url, _, _):
        found = measure_edges(url, queries, 5 * plan.repeats)
    alone = f"run(id:) alone: {found['run_alone_ms']:.1f} ms p50"
    return [
        result(
            "search_edge_worst_p50",
            found["worst_ms"],
            "ms",
            TARGET_MS,
            f"POST /graphql with the search page's document, {found['worst']}, every request a new page size; "
            "floor: the 50 ms target",
        ),
        result("search_edge_refusal_255_words", found["refused_ms"], "ms", TARGET_MS, "GET /search.json: 400"),
        result(
            "search_concurrent_run_p50",
            found["run_beside_p50_ms"],
            "ms",
            RUN_TARGET_MS,
            f"{found['run_beside_samples']} different runs asked beside two searching clients; {alone}",
        ),
        result("search_concurrent_run_max", found["run_beside_max_ms"], "ms", RUN_TARGET_MS, alone),
    ]


def measure_load(repo: Path, ids: dict[str, Any], plan: Plan) -> list[Result]:
    if shutil.which("wrk") is None:
        return [
            Result(
                "load_rps_1w",
                float("nan"),
                "req/s",
                float("nan"),
                float("nan"),
                "skipped: wrk is not installed (apt install wrk)",
            )
        ]
    bodies = [json.dumps({"query": DOSSIER, "variables": {"id": run}}) for run in ids["runs"][:20]]
    bodies += [json.dumps({"query": LEADERBOARD, "variables": {"key": key}}) for key in ids["cohorts"][:20]]
    bodies += [json.dumps({"query": RECORDS})] * 5
    distinct = [
        json.dumps({"query": DOSSIER_ACCESSED, "variables": {"id": run, "accessed": VARY}}) for run in ids["runs"][:20]
    ]
    uncached = wrk_script([("POST", "/graphql", body) for body in distinct], vary=True)
    results = []
    for workers in plan.workers:
        for run in range(1, plan.load_runs + 1):
            with (
                _ours(repo, workers=workers) as (url, process, _),
                _floor_server(b'{"data":{}}', workers=workers) as floor_url,
                tempfile.TemporaryDirectory() as folder,
            ):
                _settle(process.pid)  # the server's start-up work (search index, warm cache) is not the load's
                # The cached mix measures answers given before (each of the 45 asked once first); answers
                # met for the first time are the uncached mix's, every request of which is new.
                with httpx.Client(timeout=60) as client:
                    for body in bodies:
                        client.post(url + "/graphql", content=body, headers={"content-type": "application/json"})
                requests: list[Request] = [("POST", "/graphql", body) for body in bodies]
                ours, floor = _interleaved(url, floor_url, requests, Path(folder), plan.load_seconds)
                fresh = run_wrk(url, uncached, plan.load_seconds)
            suffix = f"_{workers}w" if plan.load_runs == 1 else f"_{workers}w_run{run}"
            note = f"32 connections, {plan.load_seconds} s, {len(bodies)} queries round-robin; errors: {ours['errors']}"
            results.append(result(f"load_rps{suffix}", ours["rps"], "req/s", floor["rps"], note))
            note = f"errors: {ours['errors']}; p99 of {ours['requests']:.0f} requests in {ours['slices']:.0f} slices"
            results.append(result(f"load_p99{suffix}", ours["p99"], "ms", floor["p99"], note))
            note = f"every request different (20 dossiers x an access date each time); errors: {fresh['errors']}"
            results.append(result(f"load_uncached_rps{suffix}", fresh["rps"], "req/s", floor["rps"], note))
            results.append(result(f"load_uncached_p99{suffix}", fresh["p99"], "ms", floor["p99"], note))
    return results


def measure_loop(repo: Path, plan: Plan) -> list[Result]:
    """The worst /healthz latency while clients (one per worker) send the worst batches (bench/loop.py), against
    the worst /healthz latency of the same server idle, measured just before."""
    from bench.loop import BATCH, measure_healthz_beside_batches

    results = []
    for workers in plan.workers:
        with _ours(repo, workers=workers) as (url, process, _):
            _settle(process.pid)
            found = measure_healthz_beside_batches(url, workers, plan.repeats, plan.samples)
        note = (
            f"{workers} client(s) x {plan.repeats} batches of {BATCH} operations sorting and filtering every run; "
            f"longest batch {found['batch']:.3f} s; {found['asked']:.0f} /healthz asked beside; "
            f"floor: the worst of {plan.samples} /healthz idle"
        )
        results.append(
            result(f"loop_healthz_worst_{workers}w", found["beside"] * 1e3, "ms", found["alone"] * 1e3, note)
        )
    return results


LOAD_SLICE_SECONDS = 5
"""A load run alternates ours and the floor in slices this long, so that both meet the same neighbours on a
shared machine: measured one after the other, a floor 20 s later saw a machine up to 4x busier or quieter."""


def _interleaved(
    url: str, floor_url: str, requests: list[Request], folder: Path, seconds: int
) -> tuple[dict[str, float], dict[str, float]]:
    """The same load against ours and the floor, in turns of `LOAD_SLICE_SECONDS` adding up to `seconds`
    each: requests/s, errors and requests summed over the slices, p99 of all the slices' latencies together."""
    slices = max(1, round(seconds / LOAD_SLICE_SECONDS))
    each = max(1, round(seconds / slices))
    found: dict[str, dict[str, float]] = {}
    histograms: dict[str, list[Histogram]] = {"ours": [], "floor": []}
    for index in range(slices):
        for who, target in (("ours", url), ("floor", floor_url)):
            histogram = folder / f"{who}-{index}.txt"
            measured = run_wrk(target, wrk_script(requests, folder, histogram=histogram), each)
            histograms[who].append(read_histogram(histogram))
            total = found.setdefault(who, {"rps": 0.0, "errors": 0, "requests": 0, "slices": slices})
            total["rps"] += measured["rps"] / slices
            total["errors"] += measured["errors"]
            total["requests"] += measured["requests"]
    for who, total in found.items():
        total["p99"] = percentile(histograms[who], 99)
    return found["ours"], found["floor"]


# The run ---------------------------------------------------------------------------------------------


ROW_FAMILIES = (
    "cold_build",
    "integrity",
    "rss",
    "warm_start",
    "incremental",
    "peers",
    "search",
    "latency",
    "load",
    "loop",
)
"""What `--rows` selects: rows are measured in families (`rss` includes the first `records` query)."""


def run(plan: Plan, report: Callable[[Result], None], rows: frozenset[str] = frozenset(ROW_FAMILIES)) -> list[Result]:
    results: list[Result] = []

    def add(found: list[Result]) -> None:
        for item in found:
            results.append(item)
            report(item)

    colds: dict[int, float] = {}
    repos = {}
    needs_cold = rows & {"cold_build", "integrity", "warm_start", "incremental"}
    for scale in plan.scales:
        repos[scale] = synthetic_registry(scale)
        if needs_cold:
            found, colds[scale] = measure_build(scale, repos[scale], plan)
            add(found)
        if scale in plan.warm_scales and "integrity" in rows:
            add(measure_integrity(scale, repos[scale], colds[scale], plan))
        if "rss" in rows:
            add(measure_rss(scale, repos[scale]))
        if scale in plan.warm_scales and "warm_start" in rows:
            add(measure_warm_start(scale, repos[scale], colds[scale], plan))
        if scale in plan.incremental_scales and "incremental" in rows:
            add(measure_incremental(scale, repos[scale], colds[scale], plan))
        if scale in plan.datasette_scales and "peers" in rows:
            add(measure_peers(scale, repos[scale], plan))
    if not rows & {"search", "latency", "load", "loop"}:
        return results
    one = repos[1] if 1 in repos else synthetic_registry(1)
    if "search" in rows:
        from bench.search import measure_search

        searched, queries = measure_search(one, 10 * plan.repeats)
        add([result(*row) for row in searched])
        add(measure_search_edges(one, queries, plan))
    if rows & {"latency", "load"}:
        latency, ids = measure_latency(one, plan)
        if "latency" in rows:
            add(latency)
        if "load" in rows:
            add(measure_load(one, ids, plan))
    if "loop" in rows:
        add(measure_loop(one, plan))
    return results


def _row(item: Result) -> str:
    target = item.target
    met = {None: "", True: "met", False: "NOT MET"}[item.met]
    goal = f"{target[0]} {target[1]}" if target else ""
    if item.unit == "bytes":
        value, floor = f"{item.value / 1e6:,.1f} MB", f"{item.floor / 1e6:,.1f} MB"
    else:
        value, floor = f"{item.value:,.3f} {item.unit}", f"{item.floor:,.3f} {item.unit}"
    return f"| `{item.name}` | {value} | {floor} | {item.ratio:.3f} | {goal} | {met} | {item.note} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the real corpus only, short loads (< 3 min)")
    mode.add_argument("--smoke", action="store_true", help="check the harness: minimal repeats (CI)")
    parser.add_argument("--json", type=Path, help="write the results as JSON to this file")
    parser.add_argument("--workers", help="load: comma-separated worker counts instead of the plan's (e.g. 1)")
    parser.add_argument("--load-runs", type=int, help="load: runs per worker count instead of the plan's")
    parser.add_argument("--load-seconds", type=int, help="load: seconds per run instead of the plan's")
    parser.add_argument("--scale", action="store_true", help="replicas behind nginx instead (bench/scale.py)")
    parser.add_argument("--canonical", type=Path, default=EMBEDDED, help="--scale: the registry to replicate")
    parser.add_argument(
        "--rows", help=f"only these row families, comma-separated (of {', '.join(ROW_FAMILIES)}); default all"
    )
    parser.add_argument("--scales", help="only these of the plan's scales, comma-separated (e.g. 1,10)")
    args = parser.parse_args(argv)
    plan = PLANS["smoke" if args.smoke else "quick" if args.quick else "full"]
    rows = frozenset(args.rows.split(",")) if args.rows else frozenset(ROW_FAMILIES)
    if unknown := rows - set(ROW_FAMILIES):
        parser.error(f"--rows: unknown {', '.join(sorted(unknown))} (known: {', '.join(ROW_FAMILIES)})")
    if args.scales:
        chosen = {int(scale) for scale in args.scales.split(",")}
        plan = replace(
            plan,
            scales=tuple(s for s in plan.scales if s in chosen),
            warm_scales=tuple(s for s in plan.warm_scales if s in chosen),
            incremental_scales=tuple(s for s in plan.incremental_scales if s in chosen),
            datasette_scales=tuple(s for s in plan.datasette_scales if s in chosen),
        )
    if args.workers:
        plan = replace(plan, workers=tuple(int(w) for w in args.workers.split(",")))
    if args.load_runs:
        plan = replace(plan, load_runs=args.load_runs)
    if args.load_seconds:
        plan = replace(plan, load_seconds=args.load_seconds)
    cpus = os.cpu_count()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    _compile_bytecode()
    print(
        f"# kernelindex bench, {time.strftime('%Y-%m-%d')}, {platform.machine()}, {cpus} cores, {memory:.0f} GiB, "
        f"Python {platform.python_version()}, registry {EMBEDDED.name}, our modules' bytecode compiled first"
    )
    print("| name | value | floor | ratio | target | | note |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    started = time.monotonic()
    if args.scale:
        from bench.scale import SCALE_PLANS, run_scale

        scale_plan = SCALE_PLANS["smoke" if args.smoke else "full"]
        measured = run_scale(args.canonical, scale_plan, lambda row: print(_row(result(*row)), flush=True))
        results = [result(*row) for row in measured]
    else:
        results = run(plan, lambda item: print(_row(item), flush=True), rows)
    print(f"\n{len(results)} measurements in {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps([_jsonable(item) for item in results], indent=2) + "\n")
    return 0


def _compile_bytecode() -> None:
    """Write our packages' bytecode before any server starts, as installing a wheel does and as any server's
    first start does unless `PYTHONDONTWRITEBYTECODE` is set (as it is on the machines we measure on): else
    every server and probe compiles ~300 modules from source at each start, which is not what a deployed server
    pays (0.3-0.6 s more to import `kernelindex.app` and ~0.7 MB more resident, measured 2026-12-01)."""
    for package in ("api", "registry", "web", "bench"):
        compileall.compile_dir(ROOT / package, quiet=1)


def _jsonable(item: Result) -> dict[str, Any]:
    found = asdict(item)
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in found.items()}


if __name__ == "__main__":
    raise SystemExit(main())

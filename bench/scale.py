"""`python -m bench --scale`: three replicas behind nginx with the canonical repository behind `git daemon`
(bench/fleet.py, all on loopback, all started and stopped here), measured four ways:

- `scale_lag_p50`, `scale_lag_max`: from the start of a `git push` to the canonical repository until every
  replica's `/healthz` serves the pushed commit (the post-receive hook tells the replicas to fetch).
- `scale_failover_errors`: errors seen by 32 connections through nginx while one replica is killed
  (SIGKILL) and started again.
- `scale_pinned_rps`: requests/s of one commit-pinned query (GET, immutable) through nginx's cache, as a
  ratio to one replica's; the note gives the cache hit ratio.
- `scale_restart_dropped`: requests lost by 32 connections to one replica while it restarts (SIGHUP: the
  socket is handed to a successor, api/serving/handover.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx

from bench.fleet import Fleet, fleet
from bench.wrk import Request, run_wrk, wrk_script
from kernelindex import registry

__all__ = ["SCALE_PLANS", "Row", "ScalePlan", "run_scale"]

Row = tuple[str, float, str, float, str]
"""(name, value, unit, floor, note): the shape of every benchmark row."""

MIX: list[Request] = [
    ("POST", "/graphql", '{"query": "{ records(first: 20) { totalCount edges { node { since holder { name } } } } }"}'),
    ("POST", "/graphql", '{"query": "{ cohorts(first: 10) { edges { node { key size leader { name } } } } }"}'),
    ("POST", "/graphql", '{"query": "{ runs(first: 20) { edges { node { name rank trust } } } }"}'),
    ("POST", "/graphql", '{"query": "{ commit { id committedAt } }"}'),
]
PINNED = (
    "{ registry(at: %s) { commit { id } records(first: 20) { totalCount edges { node { since holder { name } } } } } }"
)


@dataclass(frozen=True)
class ScalePlan:
    pushes: int
    load_seconds: float


SCALE_PLANS = {"full": ScalePlan(10, 12), "smoke": ScalePlan(2, 3)}


def run_scale(source: Path, plan: ScalePlan, report: Callable[[Row], None]) -> list[Row]:
    """Start the fleet on a copy of `source`, measure, stop everything."""
    rows: list[Row] = []

    def add(found: list[Row]) -> None:
        for row in found:
            rows.append(row)
            report(row)

    with tempfile.TemporaryDirectory(prefix="kernelindex-scale-") as folder, fleet(source, Path(folder)) as started:
        add(measure_lag(started, plan, Path(folder)))
        if shutil.which("wrk") is None:
            skipped = "skipped: wrk is not installed (apt install wrk)"
            for name in ("scale_pinned_rps", "scale_failover_errors", "scale_restart_dropped"):
                add([(name, float("nan"), "", float("nan"), skipped)])
            return rows
        add(measure_pinned(started, plan))
        add(measure_failover(started, plan))
        add(measure_restart(started, plan))
    return rows


def _probe_operation(name: str) -> registry.Manifest:
    """A new, valid manifest to publish: an operation no registry has (its spec names `name`)."""
    tensor = {"shape": ["tokens", "hidden"], "dtype": "bf16", "layout": "row_major"}
    spec = {
        "family": "rmsnorm",
        "axes": {
            "tokens": {"role": "variable", "type": "integer", "minimum": 1},
            "hidden": {"role": "constant", "type": "integer", "value": 4096},
        },
        "inputs": [{"name": "input", "tensor": tensor}, {"name": "epsilon", "scalar": {"dtype": "fp32"}}],
        "outputs": [{"name": "output", "tensor": tensor}],
        "semantics": {"expression": f"output = {name}(input, epsilon)", "mutation": "none",
                      "determinism": "deterministic"},
    }  # fmt: skip
    document = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "OperationSpec",
                "metadata": {"name": name.replace("_", "-")}, "spec": spec}  # fmt: skip
    return registry.manifest_from_document(document, f"<{name}>")


def measure_lag(started: Fleet, plan: ScalePlan, folder: Path) -> list[Row]:
    staging = folder / "staging.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(started.canonical), str(staging)], check=True)
    store = registry.GitStore(staging)
    lags = []
    with httpx.Client(timeout=30) as client:
        for push in range(plan.pushes):
            now = int(time.time())
            person = registry.Person("Scale Bench", "bench@example.com", now)
            meta = registry.CommitMeta(person, person, f"scale probe {push}", trailers=(("Source", "bench"),))
            commit = store.add([_probe_operation(f"scale_probe_{now}_{push}")], meta).commit
            assert commit is not None
            begun = time.perf_counter()
            subprocess.run(["git", "push", "--quiet", "origin", "main"], cwd=staging, check=True)
            waiting = set(started.replicas)
            deadline = begun + 120
            while waiting:
                waiting = {r for r in waiting if r.serving(client) != commit}
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"replicas {[r.index for r in waiting]} never served {commit}")
                time.sleep(0.01)
            lags.append(time.perf_counter() - begun)
    note = f"{plan.pushes} pushes, {len(started.replicas)} replicas, post-receive hook; floor: 1 s (ratio = seconds)"
    return [
        ("scale_lag_p50", statistics.median(lags), "s", 1.0, note),
        ("scale_lag_max", max(lags), "s", 1.0, note),
    ]


def measure_pinned(started: Fleet, plan: ScalePlan) -> list[Row]:
    commit = started.replicas[0].serving(httpx.Client(timeout=30))
    path = "/graphql?query=" + quote(PINNED % f'"{commit}"')
    with httpx.Client(timeout=30) as client:
        answer = client.get(started.replicas[0].url + path)
    if answer.status_code != 200 or "immutable" not in answer.headers.get("cache-control", ""):
        raise RuntimeError(f"the pinned query is not immutable: {answer.status_code} {answer.headers}")
    script = wrk_script([("GET", path, None)], started.root)
    single = run_wrk(started.replicas[0].url, script, plan.load_seconds)
    logged = len(started.cache_statuses())
    cached = run_wrk(started.url, script, plan.load_seconds)
    statuses = started.cache_statuses()[logged:]
    hits = sum(status == "HIT" for status in statuses) / max(1, len(statuses))
    note = (f"GET of one pinned query, 32 connections, {plan.load_seconds:g} s; nginx cache hit ratio {hits:.4f} "
            f"({len(statuses):,} requests); errors: {cached['errors'] + single['errors']:g}")  # fmt: skip
    return [("scale_pinned_rps", cached["rps"], "req/s", single["rps"], note)]


def _under_load(url: str, during: Callable[[], None], folder: Path) -> dict[str, float]:
    """wrk with the repeat-heavy mix while `during` runs (plus a second of load after it), at most 5 minutes."""

    def then_a_second() -> None:
        during()
        time.sleep(1.0)

    return run_wrk(url, wrk_script(MIX, folder), 300, meanwhile=then_a_second)


def measure_failover(started: Fleet, plan: ScalePlan) -> list[Row]:
    victim = started.replicas[-1]
    began = time.monotonic()

    def kill_and_restart() -> None:
        time.sleep(plan.load_seconds / 3)
        victim.kill()
        time.sleep(plan.load_seconds / 3)
        victim.start()
        victim.wait_ready()

    logged = len(started.proxy_errors())
    load = _under_load(started.url, kill_and_restart, started.root)
    seconds = time.monotonic() - began
    retried = len(started.proxy_errors()) - logged
    note = (f"32 connections through nginx, {seconds:.0f} s; replica {victim.index} SIGKILLed at "
            f"{plan.load_seconds / 3:g} s, restarted at {2 * plan.load_seconds / 3:g} s and serving again before "
            f"the end; floor: requests sent ({load['requests']:,.0f}, {load['rps']:,.0f} req/s); "
            f"{_kinds(load)}nginx logged {retried} upstream failures")  # fmt: skip
    return [("scale_failover_errors", load["errors"], "errors", max(1.0, load["requests"]), note)]


def measure_restart(started: Fleet, plan: ScalePlan) -> list[Row]:
    target = started.replicas[0]
    before = target.pid()
    began = time.monotonic()

    def hand_over() -> None:
        time.sleep(plan.load_seconds / 3)
        os.kill(before, signal.SIGHUP)
        deadline = time.monotonic() + 240
        while target.pid() == before or _alive(before):  # the successor serves and the old process is gone
            if time.monotonic() > deadline:
                raise RuntimeError("the restarted replica never handed over to a successor")
            time.sleep(0.05)

    load = _under_load(target.url, hand_over, started.root)
    seconds = time.monotonic() - began
    note = (f"32 connections straight to replica {target.index}, {seconds:.0f} s, SIGHUP at "
            f"{plan.load_seconds / 3:g} s, until the old process exited (pid {before} -> {target.pid()}); "
            f"floor: requests sent ({load['requests']:,.0f}, {load['rps']:,.0f} req/s)")  # fmt: skip
    return [("scale_restart_dropped", load["errors"], "errors", max(1.0, load["requests"]), note)]


def _kinds(load: dict[str, float]) -> str:
    """The errors wrk saw by kind ("read 1, non2xx 2; "), or "" when none."""
    found = [f"{kind} {load[kind]:g}" for kind in ("non2xx", "connect", "read", "write", "timeout") if load.get(kind)]
    return ", ".join(found) + "; " if found else ""


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(") ", 1)[1][:1] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False

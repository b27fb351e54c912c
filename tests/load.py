"""Load for the resource tests: a server in its own process (so its RSS is its own), heavy clients
in another process (so they do not share the prober's GIL), a /healthz prober, a query flood.

    python tests/load.py heavy URL CLIENTS SECONDS   # prints {"ok": n, "failed": m} as JSON
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["HEAVY_FIELDS", "Server", "flood_query", "heavy_query", "percentile", "probe_healthz", "server_process"]

PROJECT = Path(__file__).resolve().parent.parent

HEAVY_FIELDS = "name rank trust eligible primary { display value } cohort { key size } implementation { displayName }"


def heavy_query(serial: int) -> str:
    """Ten aliases of runs(first: 100) with nested fields (what once jammed a server), distinct per `serial`
    so that no response cache can answer it."""
    body = f"edges {{ node {{ {HEAVY_FIELDS} }} }}"
    return "{ " + " ".join(f"q{serial}_{k}: runs(first: 100) {{ {body} }}" for k in range(10)) + " }"


def flood_query(serial: int, size: int = 60_000, tokens: int = 3_900) -> str:
    """A distinct query of `size` bytes: `tokens` tokens (3,900 is near the 4,000-token limit:
    the most tree one document can hold) after a comment that pads it. It validates, and its
    field refuses it at once (PAGE_SIZE_ERROR: compare takes 20 runs), so what it costs the server
    is the document, not the answer."""
    body = "{ compare(runs: [" + ' "x"' * (tokens - 12) + "]) { sameCohort } }"
    head = f"# flood {serial} "
    return head + "x" * (size - len(head) - len(body) - 1) + "\n" + body


@dataclass
class Server:
    url: str
    pid: int

    def rss_bytes(self) -> int:
        """The resident set size of the server process, from /proc."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"no VmRSS for process {self.pid}")

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server process so far, from /proc."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def settle(self, quiet: float = 0.5, timeout: float = 120.0) -> None:
        """Wait until the server has done what it does in the background after a start (ranking every cohort,
        building the indexes it builds on first read, preparing search): its CPU time stops growing for `quiet`
        seconds. What a test measures after this is what its own requests cost."""
        deadline = time.monotonic() + timeout
        last = self.cpu_seconds()
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.cpu_seconds()
            if now == last:
                return
            last = now
        raise RuntimeError(f"the server kept busy for {timeout:.0f} s after its start")


@contextmanager
def server_process(
    repo: Path,
    *,
    timeout: float = 120.0,
    args: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    interpreter: Sequence[str] = (),
    log: Path | None = None,
) -> Iterator[Server]:
    """`kernelindex serve` for `repo` on a free loopback port, in its own process; stopped afterwards.
    `args` go to the command (`--workers 2`), `environ` over the test's environment, `interpreter` to Python
    before `-m` (`-X importtime`); with `log`, the server's standard error is written there."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "KERNELINDEX_GRAPH_CACHE": "0", "KERNELINDEX_POLL_SECONDS": "3600", **(environ or {})}
    command = [
        sys.executable,
        *interpreter,
        "-m",
        "kernelindex.cli",
        "serve",
        "--repo",
        str(repo),
        "--port",
        str(port),
        *args,
    ]
    with log.open("wb") if log is not None else contextlib.nullcontext(subprocess.PIPE) as stderr:
        process = subprocess.Popen(command, env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=stderr)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                said = log.read_text(errors="replace") if log is not None else ""
                said = process.stderr.read().decode() if process.stderr else said
                raise RuntimeError(f"the server exited: {said}")
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not become healthy")
            time.sleep(0.1)
        yield Server(url, process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def probe_healthz(url: str, seconds: float, interval: float = 0.01) -> list[float]:
    """Latencies (seconds) of GET /healthz, one after the other, for `seconds`."""
    latencies = []
    with httpx.Client(base_url=url, timeout=30) as client:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.perf_counter()
            response = client.get("/healthz")
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"/healthz answered {response.status_code}")
            time.sleep(interval)
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


def _heavy(url: str, clients: int, seconds: float) -> dict[str, int]:
    counts = {"ok": 0, "failed": 0}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(number: int) -> None:
        serial = number * 1_000_000
        with httpx.Client(base_url=url, timeout=120) as http:
            while time.monotonic() < deadline:
                serial += 1
                response = http.post("/graphql", json={"query": heavy_query(serial)})
                ok = response.status_code == 200 and b'"errors"' not in response.content[:20]
                with lock:
                    counts["ok" if ok else "failed"] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "heavy":
        sys.exit(__doc__)
    print(json.dumps(_heavy(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))))

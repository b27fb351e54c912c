"""Zero-downtime restarts: `kernelindex serve` hands its listening socket to a successor on SIGHUP,
and a client loop on loopback sees every request answered while it happens."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from helpers import PROJECT_ROOT

from kernelindex import registry

pytestmark = pytest.mark.slow

QUERY = {"query": "{ commit { id } }"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is gone for our purpose
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split(") ")[-1][:1] != "Z"


def _group(pgid: int) -> list[int]:
    """The live processes of a process group (ours: the server and any successor)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@dataclass
class Server:
    url: str
    pid_file: Path
    process: subprocess.Popen[bytes]

    def pid(self) -> int:
        return int(self.pid_file.read_text())


@contextmanager
def _serving(repo: Path, tmp_path: Path) -> Iterator[Server]:
    port = _free_port()
    pid_file = tmp_path / "serve.pid"
    env = {**os.environ, "KERNELINDEX_GRAPH_CACHE": "1", "KERNELINDEX_POLL_SECONDS": "3600"}
    command = [sys.executable, "-m", "kernelindex.cli", "serve", "--repo", str(repo), "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--pid-file", str(pid_file)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the successor joins it, one kill stops both
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists():
            assert process.poll() is None, f"serve exited with {process.returncode}"
            assert time.monotonic() < deadline, "serve never became ready"
            time.sleep(0.05)
        yield Server(url, pid_file, process)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 10
        while _group(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _group(process.pid), "a server process was left behind"


@dataclass
class Loop:
    """Clients asking one query again and again until stopped, counting every outcome."""

    url: str
    fresh_connections: bool
    answered: int = 0
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        limits = httpx.Limits(max_keepalive_connections=0 if self.fresh_connections else 1)
        with httpx.Client(base_url=self.url, timeout=30, limits=limits) as client:
            while not self.stop.is_set():
                try:
                    response = client.post("/graphql", json=QUERY)
                except httpx.HTTPError as exc:
                    self.failures.append(repr(exc))
                    continue
                if response.status_code == 200 and "commit" in response.json()["data"]:
                    self.answered += 1
                else:
                    self.failures.append(f"{response.status_code}: {response.text[:200]}")


def test_a_restart_hands_the_socket_over_without_dropping_a_request(
    basic_store: registry.GitStore, tmp_path: Path
) -> None:
    with _serving(basic_store.path, tmp_path) as server:
        first = server.pid()
        loops = [Loop(server.url, fresh_connections=True), Loop(server.url, fresh_connections=False)]
        threads = [threading.Thread(target=loop.run) for loop in loops]
        for thread in threads:
            thread.start()
        try:
            time.sleep(0.5)
            before = [loop.answered for loop in loops]
            os.kill(first, signal.SIGHUP)
            deadline = time.monotonic() + 120
            while server.pid() == first or _alive(first):
                assert time.monotonic() < deadline, "the successor never took over"
                time.sleep(0.05)
            during = [loop.answered for loop in loops]
            time.sleep(0.5)
        finally:
            for loop in loops:
                loop.stop.set()
            for thread in threads:
                thread.join()
        successor = server.pid()
        assert successor != first and _alive(successor) and not _alive(first)
        assert [loop.failures for loop in loops] == [[], []]
        # both clients were answered before the restart, during it, and by the successor alone afterwards
        assert all(b > 0 for b in before) and all(d > b for d, b in zip(during, before, strict=True))
        assert all(loop.answered > d for loop, d in zip(loops, during, strict=True))


def test_a_successor_that_cannot_start_leaves_the_server_serving(
    basic_store: registry.GitStore, tmp_path: Path
) -> None:
    with _serving(basic_store.path, tmp_path) as server:
        first = server.pid()
        moved = basic_store.path.rename(tmp_path / "elsewhere.git")  # the successor finds no registry
        os.kill(first, signal.SIGHUP)
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=server.url, timeout=30) as client:
            while len(_group(server.process.pid)) > 1 or time.monotonic() < deadline - 55:
                assert time.monotonic() < deadline, "the successor neither failed nor took over"
                assert client.post("/graphql", json=QUERY).status_code == 200
                time.sleep(0.05)
            moved.rename(basic_store.path)
            assert client.post("/graphql", json=QUERY).status_code == 200
        assert server.pid() == first and _alive(first)

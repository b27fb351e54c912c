"""A fleet on loopback, as docs/deploy.md deploys it: a canonical repository served by `git daemon`, N
replicas (`kernelindex serve --mirror`), nginx in front as load balancer and cache of pinned answers.

Every process is started in its own session and stopped (SIGTERM, then SIGKILL) with its whole process
group when the fleet closes: a replica's successor (a zero-downtime restart) is in its group, and so
are `git daemon`'s per-connection children.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

__all__ = ["Fleet", "Replica", "fleet", "nginx_binary", "nginx_config"]

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = "manifests.git"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def nginx_binary() -> str | None:
    """nginx on the PATH, or where Debian's package puts it (/usr/sbin is not on every PATH)."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def nginx_config(prefix: Path, port: int, upstreams: list[int]) -> str:
    """nginx as docs/deploy.md configures it, on loopback, with every path under `prefix`."""
    user = "user root root;\n" if os.geteuid() == 0 else ""  # workers must write the prefix the harness made
    servers = "".join(f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n" for p in upstreams)
    temp = "".join(f"  {kind}_temp_path {prefix}/tmp/{kind};\n" for kind in ("client_body", "proxy", "fastcgi",
                                                                              "uwsgi", "scgi"))  # fmt: skip
    return f"""{user}worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  log_format cache '$upstream_cache_status $status $request_method';
  access_log {prefix}/access.log cache;
{temp}  proxy_cache_path {prefix}/cache levels=1:2 keys_zone=pinned:16m max_size=1g inactive=7d use_temp_path=off;
  upstream kernelindex {{
{servers}    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://kernelindex;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # Every route is read-only (queries only), so a request a replica dropped is safe to send again.
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 3;
      # Cached only what the replicas mark immutable (pinned to a full commit id): max-age=0 answers are not.
      proxy_cache pinned;
      proxy_cache_lock on;
      add_header X-Cache-Status $upstream_cache_status always;
    }}
    location /hooks/ {{ return 404; }}
  }}
}}
"""


def _start(command: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out, stderr=out, start_new_session=True
        )


def _stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    deadline = time.monotonic() + 10  # a successor in the group outlives its parent: wait for the group
    while _group_alive(process.pid) and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL if time.monotonic() > deadline - 5 else sig)
        time.sleep(0.05)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return any(_in_group(entry, pgid) for entry in Path("/proc").iterdir() if entry.name.isdigit())


def _in_group(entry: Path, pgid: int) -> bool:
    try:
        fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return int(fields[2]) == pgid and fields[0] != "Z"


def _wait_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{log.name}: exited with {process.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{log.name}: nothing listens on {port} after {timeout:g} s")
        time.sleep(0.02)


@dataclass(eq=False)  # hashable by identity: one object per replica
class Replica:
    """One `kernelindex serve --mirror` on loopback."""

    index: int
    port: int
    repo: Path
    pid_file: Path
    log: Path
    mirror_url: str
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "kernelindex.cli", "serve", "--repo", str(self.repo), "--port", str(self.port),
                   "--mirror", self.mirror_url, "--pid-file", str(self.pid_file), "--poll", "1",
                   "--cache-dir", str(self.repo.parent / "cache")]  # fmt: skip
        self.pid_file.unlink(missing_ok=True)
        # Budgets off: every request comes from nginx's one address; the harness measures the replicas' capacity.
        self.process = _start(command, self.log, {"KERNELINDEX_GRAPH_CACHE": "1", "KERNELINDEX_BUDGET": "0"})

    def wait_ready(self, timeout: float = 300) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while not self.pid_file.exists():  # written once it serves a head
            if self.process.poll() is not None:
                raise RuntimeError(f"replica {self.index} exited: {self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {self.index} never became ready")
            time.sleep(0.05)

    def pid(self) -> int:
        return int(self.pid_file.read_text())

    def kill(self) -> None:
        """SIGKILL, as a crash: no drain, no cache written."""
        if self.process is not None:
            _stop(self.process, signal.SIGKILL)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)
            self.process = None

    def serving(self, client: httpx.Client) -> str | None:
        try:
            return client.get(self.url + "/healthz").json().get("serving")  # type: ignore[no-any-return]
        except (httpx.HTTPError, ValueError):
            return None


@dataclass
class Fleet:
    root: Path
    canonical: Path
    git_url: str
    replicas: list[Replica]
    nginx_port: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}"

    def proxy_errors(self) -> list[str]:
        """What nginx logged at warn and above (upstreams it gave up on, retries)."""
        log = self.root / "nginx" / "error.log"
        return [line for line in log.read_text().splitlines() if line] if log.exists() else []

    def cache_statuses(self) -> list[str]:
        """The cache status of every request nginx logged so far (HIT, MISS, -, ...)."""
        log = self.root / "nginx" / "access.log"
        return [line.split()[0] for line in log.read_text().splitlines() if line] if log.exists() else []


def _hook(replicas: list[Replica]) -> str:
    """The canonical repository's post-receive hook: tell every replica to fetch now, without making
    the push wait for them (the replicas' poll is the fallback if one misses it)."""
    urls = [r.url + "/hooks/refresh" for r in replicas]
    return f"""#!{sys.executable}
# post-receive: every replica fetches and validates the new head now (docs/deploy.md).
import os, urllib.request
if os.fork() == 0:
    os.setsid()
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # git waits for the hook's output to close: give it none
        os.dup2(quiet, fd)
    for url in {urls!r}:
        if os.fork() == 0:
            try:
                urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=30).read()
            except OSError:
                pass
            os._exit(0)
    os._exit(0)
"""


@contextlib.contextmanager
def fleet(source: Path, root: Path, replicas: int = 3) -> Iterator[Fleet]:
    """Start the canonical repository (a bare copy of `source`) behind `git daemon`, `replicas` mirrors
    of it, and nginx in front of them; stop them all afterwards, whatever happens."""
    nginx = nginx_binary()
    if nginx is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
    served = root / "git"
    canonical = served / CANONICAL
    subprocess.run(["git", "clone", "--quiet", "--bare", "--no-local", str(source), str(canonical)], check=True)
    git_port, nginx_port = _free_port(), _free_port()
    git_url = f"git://127.0.0.1:{git_port}/{CANONICAL}"
    members = [
        Replica(i, _free_port(), root / f"replica-{i}" / "manifests.git", root / f"replica-{i}.pid",
                root / f"replica-{i}.log", git_url)
        for i in range(replicas)
    ]  # fmt: skip
    hook = canonical / "hooks" / "post-receive"
    hook.write_text(_hook(members))
    hook.chmod(0o755)
    prefix = root / "nginx"
    for folder in ("tmp", "cache"):
        (prefix / folder).mkdir(parents=True, exist_ok=True)
    (prefix / "nginx.conf").write_text(nginx_config(prefix, nginx_port, [r.port for r in members]))
    started = Fleet(root, canonical, git_url, members, nginx_port)
    try:
        daemon_log = root / "git-daemon.log"
        daemon = _start(["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={git_port}",
                         f"--base-path={served}", "--export-all", "--informative-errors", str(served)],
                        daemon_log)  # fmt: skip
        started.processes.append(daemon)
        _wait_port(git_port, daemon, daemon_log)
        for replica in members:
            replica.repo.parent.mkdir(parents=True)
            replica.start()
        for replica in members:
            replica.wait_ready()
        nginx_log = root / "nginx.log"
        server = _start([nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", str(prefix / "error.log")],
                        nginx_log)  # fmt: skip
        started.processes.append(server)
        _wait_port(nginx_port, server, nginx_log)
        yield started
    finally:
        for replica in members:
            replica.stop()
        for process in reversed(started.processes):
            _stop(process)  # nginx: SIGTERM is its fast shutdown

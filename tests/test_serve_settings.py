"""`kernelindex serve`'s settings, each observed taking effect on a real server process: the interface
(`KERNELINDEX_HOST`), the port, the worker processes, the base URL of permalinks, the poll of main and the cache
folder; the command-line options beat the environment; a malformed value is refused, naming the variable."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from helpers import basic_scenario, commit_manifests, digest_of, make_run
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app as cli
from kernelindex.cli.serving import CACHE_WARNING
from kernelindex.core.settings import Settings
from kernelindex.registry.cache_dir import cache_dir

BASE = "https://registry.example.org"


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _children(pid: int) -> list[str]:
    """The command lines of the processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(cmdline)
    return found


@contextmanager
def _serving(args: list[str], env: dict[str, str], url: str) -> Iterator[subprocess.Popen[bytes]]:
    """`kernelindex serve ARGS` in its own process group, until /healthz answers 200 at `url`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelindex.cli", "serve", *args],
        env={**os.environ, "KERNELINDEX_GRAPH_CACHE": "0", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise AssertionError(f"serve exited {process.returncode}: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not become healthy"
            time.sleep(0.1)
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


def _refs() -> tuple[dict[str, object], dict[str, object], dict[str, object], dict[str, object]]:
    scenario = basic_scenario()
    return (scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment)


def _refused(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.slow  # a real server process with two workers, followed through its poll
def test_the_environment_configures_the_server(store: registry.GitStore) -> None:
    head = commit_manifests(store, basic_scenario().docs)
    port = _free_port("127.0.0.2")
    url = f"http://127.0.0.2:{port}"
    env = {
        "KERNELINDEX_REPO": str(store.path),
        "KERNELINDEX_HOST": "127.0.0.2",
        "KERNELINDEX_PORT": str(port),
        "KERNELINDEX_WORKERS": "2",
        "KERNELINDEX_BASE_URL": BASE + "/",
        "KERNELINDEX_POLL_SECONDS": "0.2",
        "KERNELINDEX_WATCH": "0",  # no inotify: only the poll can find the new head
    }
    run = digest_of(basic_scenario().runs[0])
    with _serving([], env, url) as server, httpx.Client(base_url=url, timeout=30) as client:
        assert _refused("127.0.0.1", port)  # listening on 127.0.0.2 only
        workers = [line for line in _children(server.pid) if "multiprocessing" in line and "spawn_main" in line]
        assert len(workers) == 2, _children(server.pid)
        redirect = client.get(f"/runs/{run}")
        assert redirect.status_code == 302 and redirect.headers["location"] == f"{BASE}/at/{head}/runs/{run}"
        permalink = client.post("/graphql", json={"query": f'{{ run(id: "{run}") {{ permalink }} }}'}).json()
        assert permalink["data"]["run"]["permalink"] == f"{BASE}/at/{head}/runs/{run}"
        # A new head of main, and no call to the refresh hook: both workers must find it by polling.
        newer = commit_manifests(store, [make_run(*_refs(), 5000, name="later")], when=1_700_003_600)
        deadline = time.monotonic() + 60
        seen = 0
        while seen < 20:  # 20 answers in a row, whichever worker gives them
            assert time.monotonic() < deadline, "main was not picked up by polling"
            seen = seen + 1 if client.get("/healthz").json()["serving"] == newer else 0
            time.sleep(0.05)


def test_the_options_beat_the_environment(store: registry.GitStore) -> None:
    head = commit_manifests(store, basic_scenario().docs)
    port = _free_port("127.0.0.2")
    env_port = _free_port("127.0.0.3")
    url = f"http://127.0.0.2:{port}"
    env = {
        "KERNELINDEX_HOST": "127.0.0.3",
        "KERNELINDEX_PORT": str(env_port),
        "KERNELINDEX_WORKERS": "2",
        "KERNELINDEX_BASE_URL": "https://not-this.example.org",
        "KERNELINDEX_POLL_SECONDS": "3600",
        "KERNELINDEX_WATCH": "0",  # no inotify: only the poll can find the new head
        "KERNELINDEX_BUDGET": "999",
    }
    args = ["--repo", str(store.path), "--host", "127.0.0.2", "--port", str(port), "--workers", "1"]
    args += ["--base-url", BASE, "--poll", "0.2", "--budget", "1234", "--budget-rate", "7"]
    args += ["--trusted-proxy", "127.0.0.0/8", "--proxy-header", "forwarded"]
    run = digest_of(basic_scenario().runs[0])
    with _serving(args, env, url) as server, httpx.Client(base_url=url, timeout=30) as client:
        assert _refused("127.0.0.3", env_port)
        assert [line for line in _children(server.pid) if "spawn_main" in line] == []  # one worker: in-process
        assert client.get(f"/runs/{run}").headers["location"] == f"{BASE}/at/{head}/runs/{run}"
        # The budget of the options, kept for the client a trusted proxy names in `Forwarded`.
        answer = client.post("/graphql", json={"query": "{ __typename }"}, headers={"forwarded": "for=192.0.2.1"})
        assert answer.headers["ratelimit-policy"] == '"cost";q=1234;w=177;qu="cost-points"'
        assert answer.headers["ratelimit"] == '"cost";r=1233;t=1'
        newer = commit_manifests(store, [make_run(*_refs(), 5000, name="later")], when=1_700_003_600)
        deadline = time.monotonic() + 60
        while client.get("/healthz").json()["serving"] != newer:  # --poll 0.2, not the hour of the environment
            assert time.monotonic() < deadline, "main was not picked up by polling"
            time.sleep(0.05)


def test_settings_are_read_from_the_environment(tmp_path: Path) -> None:
    """Each variable, and the defaults the docs state (127.0.0.1, 8000, 1 worker, main polled every 2 s)."""
    given = {
        "KERNELINDEX_HOST": "0.0.0.0",
        "KERNELINDEX_PORT": "9123",
        "KERNELINDEX_WORKERS": "3",
        "KERNELINDEX_BASE_URL": "https://r.example.org",
        "KERNELINDEX_POLL_SECONDS": "0.5",
    }
    read = Settings.from_env(given, cwd=tmp_path)
    assert (read.host, read.port, read.workers, read.base_url, read.poll_seconds) == (
        "0.0.0.0",
        9123,
        3,
        "https://r.example.org",
        0.5,
    )
    default = Settings.from_env({}, cwd=tmp_path)
    assert (default.host, default.port, default.workers, default.base_url, default.poll_seconds) == (
        "127.0.0.1",
        8000,
        1,
        None,
        2.0,
    )
    blank = Settings.from_env(dict.fromkeys(given, ""), cwd=tmp_path)  # set but empty: the defaults
    assert (blank.host, blank.port, blank.workers, blank.base_url, blank.poll_seconds) == (
        "127.0.0.1",
        8000,
        1,
        None,
        2.0,
    )


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("KERNELINDEX_PORT", "0", 0),
        ("KERNELINDEX_PORT", "65535", 65535),
        ("KERNELINDEX_PORT", "65536", None),
        ("KERNELINDEX_PORT", "-1", None),
        ("KERNELINDEX_PORT", "http", None),
        ("KERNELINDEX_PORT", "80.5", None),
        ("KERNELINDEX_WORKERS", "1", 1),
        ("KERNELINDEX_WORKERS", "0", None),
        ("KERNELINDEX_WORKERS", "1024", 1024),
        ("KERNELINDEX_WORKERS", "1025", None),
        ("KERNELINDEX_POLL_SECONDS", "0.001", 0.001),
        ("KERNELINDEX_POLL_SECONDS", "0", None),
        ("KERNELINDEX_POLL_SECONDS", "-2", None),
        ("KERNELINDEX_POLL_SECONDS", "nan", None),
        ("KERNELINDEX_POLL_SECONDS", "inf", None),
        ("KERNELINDEX_POLL_SECONDS", "2s", None),
    ],
)
def test_numbers_at_their_bounds(tmp_path: Path, name: str, value: str, accepted: float | None) -> None:
    field = {"KERNELINDEX_PORT": "port", "KERNELINDEX_WORKERS": "workers", "KERNELINDEX_POLL_SECONDS": "poll_seconds"}
    if accepted is not None:
        assert getattr(Settings.from_env({name: value}, cwd=tmp_path), field[name]) == accepted
        return
    with pytest.raises(ValueError, match=f"^{name}='{value}': expected a") as caught:
        Settings.from_env({name: value}, cwd=tmp_path)
    assert "seconds" in str(caught.value) if "POLL" in name else "whole number" in str(caught.value)


@pytest.mark.parametrize("command", [["serve"], ["cite", "run-a1"], ["add", "nothing.json"]])
def test_a_malformed_setting_is_a_usage_error(
    basic_store: registry.GitStore, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("KERNELINDEX_PORT", "80000")
    result = CliRunner().invoke(cli, [*command, "--repo", str(basic_store.path)])
    assert result.exit_code == 2, result.output
    assert "kernelindex: KERNELINDEX_PORT='80000': expected a whole number from 0 to 65,535" in result.output


def _cached(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.mark.slow  # two real server processes, each stopped to write its warm-start cache
def test_the_cache_folder_is_the_options_else_the_environments(
    basic_store: registry.GitStore, tmp_path_factory: pytest.TempPathFactory
) -> None:
    caches = tmp_path_factory.mktemp("caches")  # away from the repository, whose folder must stay as it is
    option, environment = caches / "option", caches / "environment"
    beside = _cached(basic_store.path.parent)
    for args, expected in (([str(option)], option), ([], environment)):
        port = _free_port("127.0.0.1")
        env = {"KERNELINDEX_CACHE_DIR": str(environment), "KERNELINDEX_GRAPH_CACHE": "1", "KERNELINDEX_WATCH": "0"}
        serve = ["--repo", str(basic_store.path), "--port", str(port), *(["--cache-dir", *args] if args else [])]
        with _serving(serve, env, f"http://127.0.0.1:{port}"):
            pass
        assert _cached(cache_dir(basic_store.path, expected)) == ["graphcache", "integrity"]
        assert _cached(expected) == [cache_dir(basic_store.path, expected).name]  # the registry's folder, and no other
        if expected == option:
            assert not environment.exists()
    assert _cached(basic_store.path.parent) == beside  # nothing beside the repository


def test_a_cache_folder_that_cannot_be_made_is_warned_about_and_served_without(
    basic_store: registry.GitStore, tmp_path: Path
) -> None:
    """A file where the registry's folder would be (root ignores file permissions, and CI runs as root)."""
    root = tmp_path / "root"
    root.mkdir()
    folder = cache_dir(basic_store.path, root)
    folder.write_text("in the way\n")
    port = _free_port("127.0.0.1")
    url = f"http://127.0.0.1:{port}"
    with _serving(["--repo", str(basic_store.path), "--port", str(port), "--cache-dir", str(root)], {}, url) as server:
        assert server.stderr is not None
        os.set_blocking(server.stderr.fileno(), False)
        printed = server.stderr.read().decode()
        assert httpx.get(f"{url}/healthz", timeout=30).json()["serving"] == basic_store.head()
    assert CACHE_WARNING.format(folder=folder, reason="File exists") in printed.splitlines()
    assert folder.read_text() == "in the way\n"


def test_a_cache_folder_that_is_a_file_is_a_usage_error(
    basic_store: registry.GitStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "a-file"
    file.write_text("")
    option = CliRunner().invoke(cli, ["serve", "--repo", str(basic_store.path), "--cache-dir", str(file)])
    assert option.exit_code == 2 and "--cache-dir" in option.output and "is a file" in option.output
    monkeypatch.setenv("KERNELINDEX_CACHE_DIR", str(file))
    environment = CliRunner().invoke(cli, ["serve", "--repo", str(basic_store.path)])
    assert environment.exit_code == 2
    assert f"kernelindex: KERNELINDEX_CACHE_DIR='{file}': expected a folder, and this path is something else" in (
        environment.output
    )

"""Which registry a command uses when none is named: `--repo`, then `$KERNELINDEX_REPO`, then `./manifests.git`, then
the working directory when it is a clone of a manifests repository, then the embedded registry; never written to
unless named. And a replica's first clone, made by `serve --mirror`, takes pull requests' heads when configured."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import EMBEDDED_REPO, basic_scenario, make_operation, make_run
from signing import commit_raw, stored
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.core.settings import EMBEDDED_REPO as SETTINGS_EMBEDDED
from kernelindex.core.settings import PACKAGED_REPO, Settings


def test_in_a_clone_the_embedded_registry_is_the_clones_own() -> None:
    assert SETTINGS_EMBEDDED == EMBEDDED_REPO
    assert PACKAGED_REPO.parts[-3:] == (
        "kernelindex",
        "embedded",
        "manifests.git",
    )  # where setup.py puts a wheel's copy
    assert not PACKAGED_REPO.exists()  # a clone never carries one: the build writes it into the wheel only


def test_the_order_in_which_a_registry_is_found(tmp_path: Path) -> None:
    named = tmp_path / "named.git"
    local = tmp_path / "here" / "manifests.git"
    local.mkdir(parents=True)
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    bare = tmp_path / "bare.git"
    bare.mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    cases = [
        ({"KERNELINDEX_REPO": str(named)}, local.parent, named, "KERNELINDEX_REPO"),
        ({}, local.parent, local, "./manifests.git"),
        ({}, clone, clone, "the working directory"),
        ({}, bare, bare, "the working directory"),
        ({}, tmp_path, EMBEDDED_REPO, "embedded"),
        ({"KERNELINDEX_REPO": ""}, tmp_path, EMBEDDED_REPO, "embedded"),  # set but empty: unset
    ]
    for env, cwd, path, origin in cases:
        found = Settings.from_env(env, cwd=cwd)
        assert (found.repo_path, found.repo_origin) == (path, origin), (env, cwd)


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory that names no registry, with no $KERNELINDEX_REPO: the default is the embedded one."""
    monkeypatch.delenv("KERNELINDEX_REPO", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def test_the_embedded_registry_is_read_by_default_and_never_written(nowhere: Path, runner: CliRunner) -> None:
    """The session's guard (conftest) fails the run if a byte of the embedded registry changes."""
    logged = runner.invoke(app, ["log", "-n", "1"])
    assert logged.exit_code == 0 and logged.stdout.startswith(registry.GitStore(EMBEDDED_REPO).head()[:12])  # type: ignore[index]
    manifest = nowhere / "op.json"
    manifest.write_text(__import__("json").dumps(make_operation("never-added")))
    for command in (["add", str(manifest), "--author", "A <a@example.com>"], ["import", "kernelindex-seeds", "x"]):
        refused = runner.invoke(app, command)
        assert refused.exit_code == 2, refused.output
        assert "no registry to write to" in refused.stderr and "the embedded registry is only read" in refused.stderr


def test_init_without_a_name_makes_manifests_git_here(nowhere: Path, runner: CliRunner) -> None:
    made = runner.invoke(app, ["init"])
    assert made.exit_code == 0, made.output
    assert made.stdout == "created registry manifests.git\n"
    assert (nowhere / "manifests.git" / "HEAD").is_file()
    assert Settings.from_env({}, cwd=nowhere).repo_origin == "./manifests.git"  # found there from now on


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow  # a server process
def test_a_replicas_first_clone_takes_pull_requests_when_configured(
    basic_store: registry.GitStore, tmp_path: Path
) -> None:
    """With an hour between fetches, only the first clone (before the server starts) can bring the fork's head."""
    s = basic_scenario()
    fork_run = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 6000, name="fork-run")
    fork = commit_raw(basic_store, basic_store.head() or "", dict([stored(fork_run)]))
    subprocess.run(["git", "update-ref", "refs/pull/7/head", fork], cwd=basic_store.path, check=True)
    replica, port = tmp_path / "replica.git", _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELINDEX_")}
    env |= {"KERNELINDEX_MIRROR_PULL_REQUESTS": "1", "KERNELINDEX_WATCH": "0", "KERNELINDEX_GRAPH_CACHE": "0"}
    args = ["serve", "--mirror", str(basic_store.path), "--repo", str(replica), "--port", str(port), "--poll", "3600"]
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelindex.cli", *args], env=env, stderr=subprocess.PIPE, start_new_session=True
    )
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stderr.read().decode()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the replica did not become healthy"
            time.sleep(0.1)
        assert registry.GitStore(replica).branches().get("refs/pull/7/head") == fork
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        banner = process.stderr.read().decode()
        process.stderr.close()
    assert f"kernelindex: cloned {basic_store.path} into {replica}" in banner
    assert (
        f"kernelindex: serving {basic_store.path} (a replica, in {replica}) on http://127.0.0.1:{port}/graphql"
        in banner
    )

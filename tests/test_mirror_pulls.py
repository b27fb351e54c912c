"""Previews of pull requests from forks: a mirror configured to fetch `refs/pull/*/head` (where a forge keeps a
pull request's head; a fork's has no branch in the canonical repository) can serve them as previews."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import basic_scenario, make_run
from server import serve
from signing import T0, commit_raw, stored

from kernelindex import registry
from kernelindex.registry.mirror import Mirror


def _fork_pull_request(store: registry.GitStore, name: str, latency: int, *, when: int = T0 + 3600) -> str:
    """A commit that only `refs/pull/1/head` reaches, as GitHub holds a fork's pull request."""
    s = basic_scenario()
    run = make_run(s.implementations[1], s.workload, s.protocol, s.environment, latency, name=name)
    main = store.head()
    assert main is not None
    head = commit_raw(store, main, dict([stored(run)]), when=when)
    _git(store.path, "update-ref", "refs/pull/1/head", head)
    return head


def _git(repository: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repository, capture_output=True, text=True, check=True).stdout


def _refs(repository: Path) -> dict[str, str]:
    listed = _git(repository, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split() for line in listed.splitlines())


def test_pull_request_heads_are_fetched_only_when_configured(basic_store: registry.GitStore, tmp_path: Path) -> None:
    head = _fork_pull_request(basic_store, "fork-run", 7000)
    plain, with_pulls = tmp_path / "plain.git", tmp_path / "pulls.git"
    Mirror(str(basic_store.path), plain).ensure()
    Mirror(str(basic_store.path), with_pulls, pull_requests=True).ensure()
    assert "refs/pull/1/head" not in _refs(plain)
    assert _refs(with_pulls)["refs/pull/1/head"] == head
    assert registry.GitStore(with_pulls).branches()["refs/pull/1/head"] == head
    assert "refs/pull/1/head" not in registry.GitStore(plain).branches()


def test_a_pushed_or_deleted_pull_request_is_followed(basic_store: registry.GitStore, tmp_path: Path) -> None:
    _fork_pull_request(basic_store, "fork-run", 7000)
    mirror = Mirror(str(basic_store.path), tmp_path / "pulls.git", pull_requests=True)
    mirror.ensure()
    pushed = _fork_pull_request(basic_store, "fork-run-2", 6900, when=T0 + 3700)
    mirror.fetch()
    assert _refs(mirror.path)["refs/pull/1/head"] == pushed
    _git(basic_store.path, "update-ref", "-d", "refs/pull/1/head")
    mirror.fetch()
    assert "refs/pull/1/head" not in _refs(mirror.path)


def test_a_replica_previews_a_forks_pull_request(basic_store: registry.GitStore, tmp_path: Path) -> None:
    head = _fork_pull_request(basic_store, "fork-run", 7000)
    query = 'query($at: String) { registry(at: $at) { commit { id } run(id: "fork-run") { name } } }'
    with serve(tmp_path / "pulls.git", mirror_url=str(basic_store.path), mirror_pull_requests=True) as api:
        previewed = api.graphql(query, {"at": head}).json()
    assert previewed["data"]["registry"] == {"commit": {"id": head}, "run": {"name": "fork-run"}}
    with serve(tmp_path / "plain.git", mirror_url=str(basic_store.path)) as api:
        unknown = api.graphql(query, {"at": head}).json()
    assert unknown["data"] is None or unknown["data"]["registry"] is None
    assert "errors" in unknown

"""Replicas (`serve --mirror URL`): a clone of a canonical repository kept fresh by `git fetch`, serving
exactly the canonical head after a push, and never a head that fails validation."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pygit2
import pytest
from helpers import basic_scenario, commit_manifests, make_run
from server import serve

from kernelindex import registry
from kernelindex.registry.mirror import Mirror

HEAD_QUERY = '{ commit { id } run(id: "run-pushed") { rank } }'


def _pushed_run(name: str, value: int) -> dict[str, object]:
    s = basic_scenario()
    return make_run(
        s.implementations[1], s.workload, s.protocol, s.environment, value, "2026-09-01T00:00:00Z", name=name
    )


def _refs(path: Path) -> dict[str, str]:
    listed = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)"], cwd=path, text=True,
                            capture_output=True, check=True).stdout  # fmt: skip
    return dict(line.split() for line in listed.splitlines())


def _tampered_head(store: registry.GitStore, good: str) -> str:
    """A commit on the canonical main that edits a stored run in place: its bytes no longer hash to
    the digest its path names (the pull-request check refuses it)."""
    repo = pygit2.Repository(str(store.git_dir))
    target = registry.load_manifest(json.dumps(basic_scenario().runs[0]).encode(), "run.json")
    tampered = target.stored_bytes().replace(b'"passed"', b'"timeout"')
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(good).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(target.path, repo.create_blob(tampered), pygit2.enums.FileMode.BLOB))
    signature = pygit2.Signature("Mallory", "m@example.com", 1_700_009_000, 0)
    parents = [pygit2.Oid(hex=good)]
    return str(repo.create_commit("refs/heads/main", signature, signature, "edit\n", index.write_tree(repo), parents))


def test_a_mirror_clones_every_branch_and_tag_once(basic_store: registry.GitStore, tmp_path: Path) -> None:
    basic_store.create_branch("refs/heads/pr-1", basic_store.head() or "")
    replica = tmp_path / "replica.git"
    mirror = Mirror(str(basic_store.path), replica)
    assert mirror.ensure() is True
    assert _refs(replica) == _refs(basic_store.path) and "refs/heads/pr-1" in _refs(replica)
    assert mirror.ensure() is False  # an existing clone is fetched, never cloned again
    assert not list(tmp_path.glob("replica.git.cloning-*"))


def test_a_replica_serves_the_canonical_head_after_a_push(basic_store: registry.GitStore, tmp_path: Path) -> None:
    first = basic_store.head()
    replica = tmp_path / "replica.git"
    with serve(replica, mirror_url=str(basic_store.path)) as api:
        assert api.client.get("/healthz").json()["serving"] == first
        pushed = commit_manifests(basic_store, [_pushed_run("run-pushed", 5000)], when=1_700_003_600)
        hook = api.client.post("/hooks/refresh")
        answer = api.graphql(HEAD_QUERY).json()
        health = api.client.get("/healthz").json()
    assert hook.status_code == 200 and hook.json()["serving"] == pushed
    assert answer["data"] == {"commit": {"id": pushed}, "run": {"rank": 1}}
    assert health["serving"] == health["main"] == pushed
    assert health["mirror"]["url"] == str(basic_store.path) and health["mirror"]["error"] is None
    assert health["mirror"]["fetchedAt"] is not None


def test_a_replica_follows_by_polling_without_the_hook(basic_store: registry.GitStore, tmp_path: Path) -> None:
    with serve(tmp_path / "replica.git", mirror_url=str(basic_store.path), poll_seconds=0.2) as api:
        pushed = commit_manifests(basic_store, [_pushed_run("run-pushed", 5000)], when=1_700_003_600)
        deadline = time.monotonic() + 60
        while api.client.get("/healthz").json()["serving"] != pushed:
            assert time.monotonic() < deadline, "the replica never fetched the pushed commit"
            time.sleep(0.05)
        assert api.graphql(HEAD_QUERY).json()["data"]["commit"]["id"] == pushed


def test_a_replica_never_serves_a_head_that_fails_validation(basic_store: registry.GitStore, tmp_path: Path) -> None:
    good = basic_store.head()
    assert good is not None
    with serve(tmp_path / "replica.git", mirror_url=str(basic_store.path)) as api:
        bad = _tampered_head(basic_store, good)
        hook = api.client.post("/hooks/refresh")
        health = api.client.get("/healthz").json()
        answer = api.graphql('{ commit { id } run(id: "run-a1") { status } }').json()
    assert hook.status_code == 409 and hook.json()["serving"] == good
    assert health["serving"] == good and health["main"] == bad and "fails validation" in health["reason"]
    assert answer["data"] == {"commit": {"id": good}, "run": {"status": "PASSED"}}


def test_a_replica_that_cannot_fetch_keeps_serving_and_says_why(basic_store: registry.GitStore, tmp_path: Path) -> None:
    good = basic_store.head()
    canonical = basic_store.path
    with serve(tmp_path / "replica.git", mirror_url=str(canonical)) as api:
        moved = canonical.rename(tmp_path / "gone.git")  # the canonical server is unreachable
        hook = api.client.post("/hooks/refresh")
        health = api.client.get("/healthz").json()
        moved.rename(canonical)
    assert hook.status_code == 502 and hook.json()["serving"] == good
    assert hook.json()["reason"].startswith(f"mirror of {canonical} failed: git fetch:")
    assert health["serving"] == good and health["mirror"]["error"].startswith("git fetch:")


@pytest.mark.parametrize("url", ["", "--upload-pack=touch /tmp/pwned", "-x"])
def test_a_mirror_url_that_git_would_read_as_an_option_is_refused(url: str, tmp_path: Path) -> None:
    with pytest.raises(registry.RegistryError, match="not a repository URL"):
        Mirror(url, tmp_path / "replica.git")


def test_a_replica_whose_first_clone_fails_is_not_ready(tmp_path: Path) -> None:
    with serve(tmp_path / "replica.git", mirror_url=str(tmp_path / "no-such.git")) as api:
        health = api.client.get("/healthz")
    assert health.status_code == 503 and health.json()["status"] == "failed"
    assert "git fetch" in health.json()["reason"] and not (tmp_path / "replica.git").exists()

"""The store's write path at its edges: a signed commit is exactly the commit that was signed, bulk
packs hold whole objects and leave no private ref behind (nor one a dead writer left), branches are
created once, and git locks are cleared only when they are provably stale."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pygit2
import pytest
from helpers import basic_scenario, commit_manifests, commit_meta, make_run, to_manifest
from signing import Key

import registry
from registry.signatures import check_signature, ssh_signer


def _runs(count: int) -> list[registry.Manifest]:
    scenario = basic_scenario()
    refs = (scenario.implementations[0], scenario.workload, scenario.protocol, scenario.environment)
    return [to_manifest(make_run(*refs, 10_000 + number, name=f"bulk-{number}")) for number in range(count)]


def _refs(store: registry.GitStore, prefix: str) -> list[str]:
    return sorted(name for name in pygit2.Repository(str(store.git_dir)).references if name.startswith(prefix))


def test_a_signed_commit_is_the_commit_that_was_signed(basic_store: registry.GitStore, keys: dict[str, Key]) -> None:
    parent = basic_store.head()
    assert parent is not None
    manifests = _runs(2)
    meta = commit_meta(1_700_000_100, subject="Signed batch")
    result = basic_store.add(manifests, meta, sign=ssh_signer(keys["alice"].private))
    assert result.commit is not None and basic_store.head() == result.commit
    info = basic_store.commit_info(result.commit)
    assert info.parents == (parent,)
    assert (info.author, info.committer, info.message) == (meta.author, meta.committer, meta.message)
    assert info.signature is not None and info.signed_payload is not None
    verdict = check_signature(info.signed_payload, info.signature, keys["alice"].allowed_signer)
    assert verdict.verified and verdict.signer == "alice@example.com"
    for manifest in manifests:
        found = basic_store.find_path(result.commit, manifest.path)
        assert found is not None and basic_store.read_blob(found[0]) == manifest.stored_bytes()
    # git itself agrees the commit is whole: its tree, parent and message are what was signed.
    shown = subprocess.run(
        ["git", "--git-dir", str(basic_store.git_dir), "cat-file", "commit", result.commit],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    assert shown.replace(b"\n ", b"\n").count(b"-----BEGIN SSH SIGNATURE-----") == 1
    assert shown.startswith(b"tree " + basic_store.tree_id(result.commit).encode() + b"\nparent " + parent.encode())


def test_a_bulk_pack_holds_whole_objects_and_no_private_ref(store: registry.GitStore) -> None:
    """64 files or more go through `git fast-import --depth=0`: near-identical manifests are stored
    whole (reading deltas back is ~12x slower, DESIGN section 10), and the writer's private ref is gone."""
    commit_manifests(store, basic_scenario().docs)
    dead = "refs/kernelindex/incoming/host-1-deadbeef0000"  # a writer killed between fast-import and cleanup
    head = store.head()
    assert head is not None
    pygit2.Repository(str(store.git_dir)).references.create(dead, head)
    result = store.add(_runs(80), commit_meta(1_700_000_200, subject="Bulk"))
    assert result.commit is not None and len(result.added) == 80
    assert _refs(store, "refs/kernelindex/") == []
    packs = list((store.git_dir / "objects" / "pack").glob("*.idx"))
    assert packs
    for index in packs:
        listing = subprocess.run(["git", "verify-pack", "-v", str(index)], capture_output=True, check=True).stdout
        deltas = [line for line in listing.decode().splitlines() if line.startswith("chain length")]
        assert deltas == [], deltas


def test_a_branch_is_created_once(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    basic_store.create_branch("refs/heads/pr", head)
    assert basic_store.branches()["refs/heads/pr"] == head
    with pytest.raises(registry.RegistryError, match="git update-ref failed"):
        basic_store.create_branch("refs/heads/pr", head)
    with pytest.raises(registry.RegistryError, match="git update-ref failed"):
        basic_store.create_branch("refs/heads/bad..name", head)
    assert basic_store.branches() == {"refs/heads/main": head, "refs/heads/pr": head}


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def test_only_stale_git_locks_are_cleared(basic_store: registry.GitStore) -> None:
    """A lock older than git ever holds one is a dead writer's; a fresh one may be a live `git push`."""
    git_dir = basic_store.git_dir
    (git_dir / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    stale = [
        git_dir / "packed-refs.lock",
        git_dir / "refs" / "heads" / "main.lock",
        git_dir / "objects" / "pack" / "tmp_pack_x",
    ]
    fresh = [git_dir / "HEAD.lock", git_dir / "refs" / "heads" / "other.lock"]
    for path in stale + fresh:
        path.write_bytes(b"")
    for path in stale:
        _age(path, 60)
    removed = basic_store._clear_stale_locks()
    assert sorted(removed) == sorted(stale)
    assert all(not p.exists() for p in stale) and all(p.exists() for p in fresh)
    assert basic_store._clear_stale_locks(older_than=0.0) != []  # at 0 s, every lock is cleared
    assert all(not p.exists() for p in fresh)


def test_a_writer_that_died_holding_the_lock_leaves_nothing_in_the_way(basic_store: registry.GitStore) -> None:
    """The lock file still names a holder that is gone: every git lock it left is cleared at once, however
    fresh, and the next write lands."""
    git_dir = basic_store.git_dir
    (git_dir / "kernelindex-writer.lock").write_text("pid 999999 on elsewhere\n")
    (git_dir / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    left = git_dir / "refs" / "heads" / "main.lock"
    left.write_bytes(b"")
    result = basic_store.add(_runs(1), commit_meta(1_700_000_300, subject="After a crash"))
    assert result.commit is not None and basic_store.head() == result.commit
    assert not left.exists()
    assert (git_dir / "kernelindex-writer.lock").read_text() == ""  # released cleanly: empty again

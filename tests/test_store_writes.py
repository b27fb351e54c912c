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
from helpers import (
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    commit_meta,
    digest_of,
    make_implementation,
    make_operation,
    make_run,
    to_manifest,
)
from signing import Key

from kernelindex import registry
from kernelindex.registry.signatures import check_signature, ssh_signer


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
    whole (reading deltas back is ~12x slower), and the writer's private ref is gone."""
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


def test_a_manifest_repeated_in_a_batch_does_not_end_the_batch(store: registry.GitStore) -> None:
    """[a, a, b]: the second `a` is the same file, skipped, and `b` after it is still written."""
    a, b = to_manifest(make_operation("a")), to_manifest(make_operation("b"))
    result = store.add([a, a, b], commit_meta())
    assert [m.digest for m in result.added] == [a.digest, b.digest]
    listed = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "ls-tree", "-r", "--name-only", result.commit or ""],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert sorted(listed) == sorted([a.path, b.path])


def test_a_name_taken_in_the_registry_is_refused_unless_a_bulk_import_keeps_upstreams_names(
    store: registry.GitStore,
) -> None:
    """Names are first come, first served within a kind, against what main already holds; only
    `unique_names=False` (an upstream import that repeats names as published) lets a second one in."""
    first = make_operation("first")
    commit_manifests(store, [first])
    head = store.head()
    second = make_operation("second")
    second["metadata"]["name"] = "first"
    manifest = to_manifest(second)
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("second.json", manifest)], commit_meta(TEST_TIME + 1))
    (problem,) = caught.value.problems
    assert (problem.source, problem.path) == ("second.json", "$.metadata.name")
    assert (
        problem.reason == f"'first' already names the OperationSpec {digest_of(first)}; names are unique within a kind"
    )
    assert store.head() == head
    result = store.add([("second.json", manifest)], commit_meta(TEST_TIME + 1), unique_names=False)
    assert [m.digest for m in result.added] == [manifest.digest] and store.head() == result.commit


def test_only_the_runs_listed_may_compare_two_operations(store: registry.GitStore) -> None:
    """A run whose implementation and workload name different operations is refused, unless its digest
    is among `allowed_mismatches` (upstream's known data errors, imported as published)."""
    scenario = basic_scenario()
    other = make_operation("other-op")
    foreign = make_implementation(other, "foreign-kernel")
    commit_manifests(store, [*scenario.docs, other, foreign])
    head = store.head()
    run = to_manifest(
        make_run(foreign, scenario.workload, scenario.protocol, scenario.environment, 5000, name="mismatched")
    )
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("run.json", run)], commit_meta(TEST_TIME + 1))
    (problem,) = caught.value.problems
    assert (problem.source, problem.path) == ("run.json", "$.spec.workloadDigest")
    assert problem.reason == (
        f"implementation is for operation {digest_of(other)} but workload is for operation "
        f"{digest_of(scenario.operation)}; a run measures one operation"
    )
    assert store.head() == head
    result = store.add([run], commit_meta(TEST_TIME + 1), allowed_mismatches=[run.digest])
    assert [m.digest for m in result.added] == [run.digest]


def test_a_git_lock_exactly_as_old_as_the_limit_is_stale(
    basic_store: registry.GitStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boundary, on a fixed clock: a lock 2.0 s old (the limit) is cleared, one 1.999999 s old is
    kept (a live git command may still hold it)."""
    now = 1_700_000_000.0
    monkeypatch.setattr(time, "time", lambda: now)
    git_dir = basic_store.git_dir
    at_limit, younger = git_dir / "packed-refs.lock", git_dir / "HEAD.lock"
    for path, age_ns in ((at_limit, 2_000_000_000), (younger, 1_999_999_000)):
        path.write_bytes(b"")
        then = 1_700_000_000_000_000_000 - age_ns
        os.utime(path, ns=(then, then))
    assert now - at_limit.lstat().st_mtime == 2.0  # exactly the limit, in floating point too
    assert basic_store._clear_stale_locks(older_than=2.0) == [at_limit]
    assert not at_limit.exists() and younger.exists()


def test_forgetting_private_refs_is_refused_outside_the_writer_lock(basic_store: registry.GitStore) -> None:
    """Outside the lock another writer may be mid-write: its private ref must not be deleted."""
    head = basic_store.head()
    assert head is not None
    live = "refs/kernelindex/incoming/host-2-0123456789ab"
    pygit2.Repository(str(basic_store.git_dir)).references.create(live, head)
    with pytest.raises(AssertionError, match=r"^only under the writer lock$"):
        basic_store._forget_abandoned_writes()
    assert _refs(basic_store, "refs/kernelindex/") == [live]


def test_the_reflog_says_kernelindex_moved_the_ref(store: registry.GitStore) -> None:
    """With reflogs on (`core.logAllRefUpdates`), git's reflog tells kernelindex's moves from others'."""
    subprocess.run(["git", "--git-dir", str(store.git_dir), "config", "core.logAllRefUpdates", "always"], check=True)
    head = commit_manifests(store, [make_operation("logged")])
    store.create_branch("refs/heads/pr", head)

    def reflog(ref: str) -> list[str]:
        shown = subprocess.run(
            ["git", "--git-dir", str(store.git_dir), "reflog", "show", "--format=%H %gs", ref],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return shown.stdout.splitlines()

    assert reflog("refs/heads/main") == [f"{head} kernelindex add"]
    assert reflog("refs/heads/pr") == [f"{head} kernelindex branch"]

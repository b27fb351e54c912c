"""GitStore: one checked commit per write, trailers, no-op re-adds, conflicts,
the pack path, revisions and diffs. Real repositories in tmp_path; nothing mocked."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from helpers import (
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
    object_ids,
    person,
    to_manifest,
)

from kernelindex import registry
from kernelindex.registry.store import MAIN


def _operations(count: int, prefix: str = "op") -> list[dict[str, object]]:
    return [make_operation(f"{prefix}-{i}") for i in range(count)]


# Commits and trailers ----------------------------------------------------------------------------------


def test_a_commit_carries_its_people_message_and_trailers(store: registry.GitStore) -> None:
    trailers = (("License", "Apache-2.0"), ("Signed-off-by", "Test <test@example.com>"))
    commit = commit_manifests(store, basic_scenario().docs, subject="Add the basic scenario", trailers=trailers)
    info = store.commit_info(commit)
    assert info.parents == ()
    assert info.author == person() == info.committer
    assert info.subject == "Add the basic scenario"
    assert info.trailers == (("Source", "test"), *trailers)
    assert info.trailer("source") == "test"  # keys compare as git compares them
    assert info.message == (
        "Add the basic scenario\n\nSource: test\nLicense: Apache-2.0\nSigned-off-by: Test <test@example.com>\n"
    )
    assert store.head() == commit
    assert store.resolve("main") == commit


def test_git_itself_reads_the_trailers(store: registry.GitStore) -> None:
    import subprocess

    commit = commit_manifests(store, [make_operation("a")], trailers=[("Source-URL", "https://example.invalid")])
    out = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "log", "-1", "--format=%(trailers:only,unfold)", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip().splitlines() == ["Source: test", "Source-URL: https://example.invalid"]


def test_files_sit_at_their_digest_path_as_stored_json(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    commit = commit_manifests(store, scenario.docs)
    entries = {e.digest: e for e in store.entries(commit)}
    assert len(entries) == len(scenario.docs)
    for document in scenario.docs:
        manifest = to_manifest(document)
        entry = entries[manifest.digest]
        assert entry.kind == manifest.kind
        assert entry.path == manifest.path == registry.manifest_path(manifest.kind, manifest.digest)
        hexdigest = manifest.digest.removeprefix("sha256:")
        assert entry.path == f"{manifest.info.folder}/{hexdigest[:2]}/{hexdigest}.json"
        assert store.read_blob(entry.oid) == manifest.stored_bytes() == registry.stored_json(manifest.document)
        assert store.find_entry(commit, manifest.digest) == entry
        assert store.find_entry(commit, manifest.digest, (manifest.kind,)) == entry
        assert store.read_document(commit, manifest.digest) == manifest.document
    run = to_manifest(scenario.runs[0])
    assert store.find_entry(commit, run.digest, ("OperationSpec",)) is None
    assert store.find_entry(commit, "sha256:" + "0" * 64) is None
    assert store.find_entry(commit, "sha256:abc") is None
    assert list(store.read_blobs([entries[run.digest].oid])) == [run.stored_bytes()]


def test_commit_ids_are_reproducible(tmp_path: Path) -> None:
    """Fixed signature + deterministic files = the same commit id in any repository."""
    ids = []
    for name in ("one.git", "two.git"):
        store = registry.GitStore.init(tmp_path / name)
        first = commit_manifests(store, basic_scenario().docs[:4])
        second = commit_manifests(store, basic_scenario().docs[4:], when=TEST_TIME + 60)
        ids.append((first, second))
    assert ids[0] == ids[1]


def test_the_registry_is_a_bare_repository_on_main(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "r.git")
    repo = pygit2.Repository(str(tmp_path / "r.git"))
    assert repo.is_bare
    assert repo.head_is_unborn
    assert repo.references["HEAD"].target == MAIN
    assert store.head() is None
    assert registry.GitStore.init(tmp_path / "r.git").path == store.path  # opening again is fine


def test_opening_a_missing_repository_fails_cleanly(tmp_path: Path) -> None:
    with pytest.raises(registry.StoreNotFound, match="registry not found"):
        registry.GitStore(tmp_path / "nothing.git")
    (tmp_path / "plain").mkdir()
    with pytest.raises(registry.StoreNotFound) as caught:
        registry.GitStore(tmp_path / "plain")
    assert isinstance(caught.value, FileNotFoundError)


# Re-adding and conflicts -------------------------------------------------------------------------------


def test_re_adding_makes_no_commit(store: registry.GitStore) -> None:
    docs = basic_scenario().docs
    commit = commit_manifests(store, docs)
    objects = object_ids(store)
    result = store.add([to_manifest(d) for d in docs], commit_meta(TEST_TIME + 1))
    assert result.commit is None
    assert result.added == ()
    assert {m.digest for m in result.unchanged} == {digest_of(d) for d in docs}
    assert store.head() == commit
    assert object_ids(store) == objects


def test_a_partly_new_batch_commits_only_what_is_new(store: registry.GitStore) -> None:
    first = commit_manifests(store, _operations(3))
    result = store.add([to_manifest(d) for d in _operations(5)], commit_meta(TEST_TIME + 1))
    assert result.commit is not None
    assert [m.name for m in result.added] == ["op-3", "op-4"]
    assert [m.name for m in result.unchanged] == ["op-0", "op-1", "op-2"]
    assert store.diff(first, result.commit) == [
        registry.store.TreeChange(m.path, None, str(pygit2.hash(m.stored_bytes())), 0o100644)
        for m in sorted(result.added, key=lambda m: m.path)
    ]


def test_the_same_manifest_twice_in_a_batch_is_one_file(store: registry.GitStore) -> None:
    operation = make_operation("twice")
    result = store.add([to_manifest(operation), to_manifest(operation)], commit_meta())
    assert len(result.added) == 1
    assert len(list(store.entries(result.commit or ""))) == 1


def test_same_digest_other_metadata_is_a_conflict(store: registry.GitStore) -> None:
    operation = make_operation("conflicted")
    commit_manifests(store, [operation])
    head, objects = store.head(), object_ids(store)
    retitled = json.loads(json.dumps(operation))
    retitled["metadata"]["title"] = "A different title"
    manifest = to_manifest(retitled)
    assert manifest.digest == digest_of(operation)
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("retitled.json", manifest), ("new.json", to_manifest(make_operation("new")))], commit_meta())
    (problem,) = caught.value.problems
    assert problem.source == "retitled.json"
    assert problem.path == "$.metadata"
    assert problem.reason == (
        f"{manifest.digest} is already published with different metadata "
        "(published files never change; a correction is a new manifest)"
    )
    assert (store.head(), object_ids(store)) == (head, objects)  # the good file was not written either


def test_same_digest_other_metadata_within_one_batch(store: registry.GitStore) -> None:
    operation = make_operation("conflicted")
    renamed = json.loads(json.dumps(operation))
    renamed["metadata"]["name"] = "renamed"
    with pytest.raises(registry.RejectedChange, match=r"same digest as a\.json") as caught:
        store.add([("a.json", to_manifest(operation)), ("b.json", to_manifest(renamed))], commit_meta())
    assert caught.value.problems[0].source == "b.json"
    assert store.head() is None


def test_the_same_value_spelled_otherwise_is_not_a_conflict(store: registry.GitStore) -> None:
    """`1.0` (YAML, or any writer that keeps floats) and `1` are one JSON number and one digest:
    re-adding the manifest in the other spelling is a no-op, not a reported conflict."""
    operation = make_operation("op")
    as_float = make_workload(operation, max_absolute_error=1.0)
    as_int = json.loads(json.dumps(as_float).replace('"maxAbsoluteError": 1.0', '"maxAbsoluteError": 1'))
    assert to_manifest(as_float).stored_bytes() != to_manifest(as_int).stored_bytes()
    commit = commit_manifests(store, [operation, as_float])
    result = store.add([to_manifest(as_int)], commit_meta(TEST_TIME + 1))
    assert result.commit is None
    assert len(result.unchanged) == 1
    assert store.head() == commit


# References --------------------------------------------------------------------------------------------


def test_a_dangling_reference_is_refused(store: registry.GitStore) -> None:
    operation = make_operation("op")
    workload = make_workload(operation)
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("workload.json", to_manifest(workload))], commit_meta())
    (problem,) = caught.value.problems
    assert (problem.source, problem.path) == ("workload.json", "$.spec.operationSpecDigest")
    assert problem.reason == f"{digest_of(operation)} does not resolve to an OperationSpec"
    assert store.head() is None


def test_a_reference_to_the_wrong_kind_is_refused(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    commit_manifests(store, scenario.docs)
    wrong = make_run(scenario.implementations[0], scenario.workload, scenario.environment, scenario.environment, 100)
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("wrong.json", to_manifest(wrong))], commit_meta())
    (problem,) = caught.value.problems
    assert problem.path == "$.spec.protocolDigest"
    assert "does not resolve to a BenchmarkProtocol" in problem.reason


def test_every_problem_of_a_batch_is_reported_at_once(store: registry.GitStore) -> None:
    run = make_run(
        make_implementation(make_operation("a")),
        make_workload(make_operation("a")),
        make_protocol(),
        make_environment(),
        100,
    )
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("run.json", to_manifest(run))], commit_meta())
    assert [p.path for p in caught.value.problems] == [
        "$.spec.implementationDigest",
        "$.spec.workloadDigest",
        "$.spec.protocolDigest",
        "$.spec.environmentDigest",
    ]


def test_references_resolve_within_the_batch_in_any_order(store: registry.GitStore) -> None:
    docs = basic_scenario().docs
    commit = commit_manifests(store, list(reversed(docs)))
    assert len(list(store.entries(commit))) == len(docs)


# Bulk writes: the fast-import pack and loose objects make the same commit ---------------------------------


@pytest.mark.parametrize("count", [64, 200])
def test_pack_and_loose_paths_make_the_same_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    assert count >= registry.store._PACK_THRESHOLD
    base, batch = _operations(5, "base"), _operations(count)
    packed = registry.GitStore.init(tmp_path / "packed.git")
    packed_ids = (commit_manifests(packed, base), commit_manifests(packed, batch, TEST_TIME + 1))
    monkeypatch.setattr(registry.store, "_PACK_THRESHOLD", 10**9)
    loose = registry.GitStore.init(tmp_path / "loose.git")
    loose_ids = (commit_manifests(loose, base), commit_manifests(loose, batch, TEST_TIME + 1))
    assert packed_ids == loose_ids
    # fast-import left one pack, no private ref, and every blob is readable
    assert list((tmp_path / "packed.git" / "objects" / "pack").glob("*.pack"))
    assert [r for r in pygit2.Repository(str(packed.git_dir)).references if not r.startswith("refs/heads/")] == []
    for entry in packed.entries(packed_ids[1]):
        assert to_manifest(json.loads(packed.read_blob(entry.oid))).digest == entry.digest


def test_a_big_first_commit_goes_through_the_pack_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batch = _operations(70)
    packed = registry.GitStore.init(tmp_path / "packed.git")
    commit = commit_manifests(packed, batch)
    assert packed.commit_info(commit).parents == ()
    monkeypatch.setattr(registry.store, "_PACK_THRESHOLD", 10**9)
    loose = registry.GitStore.init(tmp_path / "loose.git")
    assert commit_manifests(loose, batch) == commit


def test_extra_files_ride_in_the_same_commit(store: registry.GitStore) -> None:
    policy = b"maintainer@example.com ssh-ed25519 AAAA\n"
    result = store.add([to_manifest(make_operation("a"))], commit_meta(), extra_files={"policy/maintainers": policy})
    assert result.commit is not None
    found = store.find_path(result.commit, "policy/maintainers")
    assert found is not None
    assert store.read_blob(found[0]) == policy
    assert [e.kind for e in store.entries(result.commit)] == ["OperationSpec"]  # not a manifest
    again = store.add([], commit_meta(), extra_files={"policy/maintainers": policy})
    assert again.commit is None


# Revisions -------------------------------------------------------------------------------------------


@pytest.fixture
def history(store: registry.GitStore) -> tuple[registry.GitStore, list[str]]:
    """Three commits on main, a lightweight and an annotated tag, a side branch."""
    commits = [commit_manifests(store, [make_operation(f"op-{i}")], TEST_TIME + i) for i in range(3)]
    repo = pygit2.Repository(str(store.git_dir))
    repo.references.create("refs/tags/v1", pygit2.Oid(hex=commits[0]))
    repo.create_tag("v2", pygit2.Oid(hex=commits[1]), pygit2.enums.ObjectType.COMMIT, _signature(), "release 2")
    repo.references.create("refs/heads/side", pygit2.Oid(hex=commits[1]))
    blob = repo.create_blob(b"not a commit")
    repo.references.create("refs/tags/blob", blob)
    return store, commits


def _signature() -> pygit2.Signature:
    return pygit2.Signature("Test", "test@example.com", TEST_TIME, 0)


def test_resolve_names_of_commits(history: tuple[registry.GitStore, list[str]]) -> None:
    store, commits = history
    assert store.resolve(commits[2]) == commits[2]  # full id
    assert store.resolve(commits[0][:12]) == commits[0]  # unique prefix
    assert store.resolve(commits[0][:7]) == commits[0]
    assert store.resolve("main") == commits[2]
    assert store.resolve("HEAD") == commits[2]
    assert store.resolve("refs/heads/main") == commits[2]
    assert store.resolve("side") == commits[1]
    assert store.resolve("v1") == commits[0]  # lightweight tag
    assert store.resolve("v2") == commits[1]  # annotated tag, peeled
    assert store.resolve("refs/tags/v2") == commits[1]
    assert store.branches() == {
        "refs/heads/main": commits[2],
        "refs/heads/side": commits[1],
        "refs/tags/v1": commits[0],
        "refs/tags/v2": commits[1],
    }


@pytest.mark.parametrize(
    ("rev", "reason"),
    [
        ("0" * 40, "no such commit, branch or tag"),
        ("deadbeefdeadbeef", "no such commit"),
        ("nosuchbranch", "no such commit, branch or tag"),
        ("blob", "names something that is not a commit"),
        ("", "not a commit id, branch or tag name"),
        ("HEAD~1", "not a commit id, branch or tag name"),
        ("main^", "not a commit id, branch or tag name"),
        ("a b", "not a commit id, branch or tag name"),
        ("-main", "not a commit id, branch or tag name"),
        ("main:path", "not a commit id, branch or tag name"),
        ("x" * 300, "not a commit id, branch or tag name"),
        ("main@{0}", "no such commit, branch or tag"),
        ("ABCDEF12", "no such commit, branch or tag"),
        ("abc", "no such commit, branch or tag"),  # too short for a prefix
    ],
    ids=repr,
)
def test_resolve_refuses(history: tuple[registry.GitStore, list[str]], rev: str, reason: str) -> None:
    store, _ = history
    with pytest.raises(registry.RevisionNotFound) as caught:
        store.resolve(rev)
    assert caught.value.reason == reason
    assert isinstance(caught.value, LookupError)


def test_resolve_refuses_an_ambiguous_prefix(store: registry.GitStore) -> None:
    repo = pygit2.Repository(str(store.git_dir))
    seen: dict[str, str] = {}
    for i in range(5000):  # ~7 pairs of 4-hex prefixes expected by 1,000 objects
        oid = str(repo.create_blob(f"blob {i}".encode()))
        if oid[:4] in seen:
            break
        seen[oid[:4]] = oid
    else:  # pragma: no cover - would need 5,000 blobs without a shared 4-digit prefix
        pytest.fail("no shared prefix")
    with pytest.raises(registry.RevisionNotFound) as caught:
        store.resolve(oid[:4])
    assert caught.value.reason == "ambiguous abbreviated commit id"


@pytest.mark.parametrize("rev", ["HEAD", "main", "refs/heads/main"])
def test_resolve_in_an_empty_registry(store: registry.GitStore, rev: str) -> None:
    with pytest.raises(registry.RevisionNotFound):
        store.resolve(rev)


def test_first_parents_and_ancestry(history: tuple[registry.GitStore, list[str]]) -> None:
    store, commits = history
    assert store.first_parents(commits[2]) == commits[::-1]
    assert store.first_parents(commits[2], stop=commits[1]) == [commits[2], commits[1]]
    assert store.is_ancestor(commits[0], commits[2])
    assert store.is_ancestor(commits[2], commits[2])
    assert not store.is_ancestor(commits[2], commits[0])


def test_commit_info_of_a_missing_commit(store: registry.GitStore) -> None:
    with pytest.raises(registry.RevisionNotFound):
        store.commit_info("0" * 40)


def test_reading_a_missing_blob_is_corruption(basic_store: registry.GitStore) -> None:
    with pytest.raises(registry.StoreCorrupt, match="missing blob"):
        basic_store.read_blob("0" * 40)
    with pytest.raises(registry.StoreCorrupt, match="missing blob"):
        basic_store.read_blob(basic_store.tree_id(basic_store.head() or ""))  # a tree is not a blob


def _main_with_entries(store: registry.GitStore, entries: list[tuple[str, str, str]]) -> str:
    """Move main to a commit whose tree is main's plus `entries` (mode, object id, path), objects
    that need not exist: what a broken or hand-made repository can hold."""
    head = store.head()
    assert head is not None
    env = {**os.environ, "GIT_DIR": str(store.git_dir), "GIT_INDEX_FILE": str(store.git_dir / "test-index")}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], env=env, check=True, capture_output=True, text=True).stdout.strip()

    git("read-tree", head)
    for mode, oid, path in entries:
        git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}")
    tree = git("write-tree", "--missing-ok")
    commit = git("commit-tree", tree, "-p", head, "-m", "hand-made")
    git("update-ref", MAIN, commit)
    (store.git_dir / "test-index").unlink()
    return commit


def test_a_cold_load_skips_a_submodule_entry(basic_store: registry.GitStore) -> None:
    before = {digest for _, digest, _, _ in basic_store.manifests_with_bytes(basic_store.head() or "")}
    commit = _main_with_entries(basic_store, [("160000", "2" * 40, "benchmark-runs/cd/sub")])
    after = {digest for _, digest, _, _ in basic_store.manifests_with_bytes(commit)}
    assert after == before and len(after) == len(basic_scenario().docs)


def test_a_cold_load_yields_only_manifest_paths(basic_store: registry.GitStore) -> None:
    before = sorted((kind, digest) for kind, digest, _, _ in basic_store.manifests_with_bytes(basic_store.head() or ""))
    oid = next(oid for _, _, oid, _ in basic_store.manifests_with_bytes(basic_store.head() or ""))
    name = "ab" + "0" * 62
    near_misses = [
        f"benchmark-runs/ac/{name}.json",  # the fan is not the name's first two characters
        f"benchmark-runs/abc/{name}.json",
        f"benchmark-runs/ab/{name}0.json",
        f"benchmark-runs/ab/{name[:-1]}.json",
        f"benchmark-runs/ab/{name}.jsonl",
        f"benchmark-runs/ab/{name}.yaml",
        f"benchmark-runs/ab/cd/{name}.json",
        f"benchmark-run/ab/{name}.json",
        f"benchmark-runsx/ab/{name}.json",
        f"benchmark-runs_ab/{name}.json",
        f"x/benchmark-runs/ab/{name}.json",
        f"{name}.json",
    ]
    commit = _main_with_entries(basic_store, [("100644", oid, path) for path in near_misses])
    after = sorted((kind, digest) for kind, digest, _, _ in basic_store.manifests_with_bytes(commit))
    assert after == before
    found = _main_with_entries(basic_store, [("100644", oid, f"benchmark-runs/ab/{name}.json")])
    assert ("BenchmarkRun", "sha256:" + name) in {(k, d) for k, d, _, _ in basic_store.manifests_with_bytes(found)}


def test_a_cold_load_of_a_tree_missing_a_blob_is_corruption(basic_store: registry.GitStore) -> None:
    path = f"benchmark-runs/11/{'1' * 64}.json"
    commit = _main_with_entries(basic_store, [("100644", "1" * 40, path)])
    with pytest.raises(registry.StoreCorrupt, match=r"1 listed blob\(s\) are missing, e\.g\. " + path):
        list(basic_store.manifests_with_bytes(commit))


# Diffs -------------------------------------------------------------------------------------------------


def _commit_tree(store: registry.GitStore, parent: str, files: dict[str, bytes | None], branch: str) -> str:
    """A commit on `branch` that sets (bytes) or deletes (None) paths of `parent`'s tree: what a pull
    request can do, and GitStore.add never does."""
    repo = pygit2.Repository(str(store.git_dir))
    index = pygit2.Index()
    index.read_tree(repo[pygit2.Oid(hex=parent)].peel(pygit2.Tree))
    for path, data in files.items():
        if data is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    oid = repo.create_commit(
        f"refs/heads/{branch}", _signature(), _signature(), "edit\n", tree, [pygit2.Oid(hex=parent)]
    )
    return str(oid)


def test_diff_reports_added_deleted_and_modified_paths(basic_store: registry.GitStore) -> None:
    store = basic_store
    base = store.head() or ""
    entries = sorted(store.entries(base), key=lambda e: e.path)
    victim, edited = entries[0], entries[1]
    new_operation = to_manifest(make_operation("brand-new"))
    head = _commit_tree(
        store,
        base,
        {
            victim.path: None,
            edited.path: b"{}\n",
            new_operation.path: new_operation.stored_bytes(),
            "README.md": b"hello\n",
            "policy/maintainers": b"a@b ssh-ed25519 AAAA\n",
        },
        "pull",
    )
    changes = {c.path: c for c in store.diff(base, head)}
    assert set(changes) == {victim.path, edited.path, new_operation.path, "README.md", "policy/maintainers"}
    assert changes[victim.path].status == "deleted"
    assert (changes[victim.path].old, changes[victim.path].new) == (victim.oid, None)
    assert changes[edited.path].status == "modified"
    assert changes[edited.path].old == edited.oid
    assert changes[new_operation.path].status == "added"
    assert changes["README.md"].status == "added"
    assert changes["policy/maintainers"].status == "added"
    assert all(c.mode == 0o100644 for c in changes.values())
    assert store.diff(base, base) == []
    assert {c.path for c in store.diff(None, base)} == {e.path for e in entries}


def test_diff_sees_a_file_turned_into_a_folder_and_modes(basic_store: registry.GitStore) -> None:
    store = basic_store
    base = store.head() or ""
    first = _commit_tree(store, base, {"notes": b"a file\n"}, "one")
    second = _commit_tree(store, first, {"notes": None, "notes/inside.txt": b"now a folder\n"}, "two")
    changes = sorted((c.path, c.status) for c in store.diff(first, second))
    assert changes == [("notes", "deleted"), ("notes/inside.txt", "added")]
    repo = pygit2.Repository(str(store.git_dir))
    index = pygit2.Index()
    index.read_tree(repo[pygit2.Oid(hex=second)].peel(pygit2.Tree))
    index.add(pygit2.IndexEntry("run.sh", repo.create_blob(b"#!/bin/sh\n"), pygit2.enums.FileMode.BLOB_EXECUTABLE))
    index.add(pygit2.IndexEntry("link", repo.create_blob(b"target"), pygit2.enums.FileMode.LINK))
    third = str(
        repo.create_commit(
            None, _signature(), _signature(), "modes\n", index.write_tree(repo), [pygit2.Oid(hex=second)]
        )
    )
    modes = {c.path: c.mode for c in store.diff(second, third)}
    assert modes == {"link": 0o120000, "run.sh": 0o100755}


def test_publication_is_the_first_commit_on_main_holding_the_file(store: registry.GitStore) -> None:
    from kernelindex.registry import lookup

    first = commit_manifests(store, [make_operation("a")])
    second = commit_manifests(store, [make_operation("b")], TEST_TIME + 10)
    commit_manifests(store, [make_operation("c")], TEST_TIME + 20)
    published = lookup.publication(store, to_manifest(make_operation("b")).path)
    assert published is not None
    assert published.id == second
    assert published.committer.time == TEST_TIME + 10
    first_published = lookup.publication(store, to_manifest(make_operation("a")).path)
    assert first_published is not None
    assert first_published.id == first
    assert lookup.publication(store, "operation-specs/00/none.json") is None


def test_pack_and_loose_agree_on_unicode_identities_and_offsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fast-import's `data <bytes>` and ident lines against libgit2's commit writer: same object."""
    meta = registry.CommitMeta(
        author=registry.Person("Zoë Ünïcode", "z@example.com", TEST_TIME, 90),
        committer=registry.Person("Jürgen", "j@example.com", TEST_TIME + 1, -300),
        subject="Add µ-kernels — fast",
        body="Body with ü.",
        trailers=(("Source", "münchen"),),
    )
    batch = [to_manifest(d) for d in _operations(70)]
    packed = registry.GitStore.init(tmp_path / "packed.git").add(batch, meta).commit
    monkeypatch.setattr(registry.store, "_PACK_THRESHOLD", 10**9)
    loose_store = registry.GitStore.init(tmp_path / "loose.git")
    assert loose_store.add(batch, meta).commit == packed
    info = loose_store.commit_info(packed or "")
    assert (info.author, info.committer) == (meta.author, meta.committer)
    assert info.trailers == (("Source", "münchen"),)


def test_a_stale_ref_lock_is_reported_not_called_a_lost_race(
    store: registry.GitStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer killed inside `git update-ref` leaves refs/heads/main.lock; main itself is intact.
    The next write must say so, not "main moved 20 times", and must not write its pack 20 times."""
    head = commit_manifests(store, [make_operation("base")])
    lock = store.git_dir / "refs" / "heads" / "main.lock"
    lock.write_text(head + "\n")
    monkeypatch.setattr(registry.store, "_LOCK_TRIES", 2)
    packs = store.git_dir / "objects" / "pack"
    before = set(packs.glob("*.pack"))
    batch = [to_manifest(d) for d in _operations(70, "next")]  # the fast-import path: one pack per write
    with pytest.raises(registry.RegistryError, match=r"cannot move refs/heads/main: .*main\.lock") as caught:
        store.add(batch, commit_meta(TEST_TIME + 1))
    assert not isinstance(caught.value, registry.StoreBusy)
    assert len(set(packs.glob("*.pack")) - before) == 1
    assert store.head() == head
    lock.unlink()
    assert commit_manifests(store, batch, TEST_TIME + 1) != head


def test_added_manifest_names_are_each_commits_new_manifest_files(basic_store: registry.GitStore) -> None:
    store = basic_store
    root = store.head() or ""
    name, other = "ab" + "1" * 62, "cd" + "2" * 62
    second = _commit_tree(
        store,
        root,
        {
            f"benchmark-runs/ab/{name}.json": b"{}",
            f"workload-cases/cd/{other}.json": b"{}",
            "README.md": b"hello\n",  # not a manifest
            f"benchmark-runs/ab/{name[:-1]}.json": b"{}",  # a name of 63 characters
            f"not-a-kind/ab/{name}.json": b"{}",
        },
        "main",
    )
    third = _commit_tree(store, second, {f"benchmark-runs/ab/{name}.json": None}, "main")
    found = store.added_manifest_names(third)
    assert sorted(found[second]) == [name, other]
    assert not found.get(third)  # it only removed one
    assert sorted(found[root]) == sorted(e.digest.removeprefix("sha256:") for e in store.entries(root))
    assert store.added_manifest_names(third, stop=second) in ({}, {third: []})


def test_added_manifest_names_where_64_characters_would_span_two_paths(basic_store: registry.GitStore) -> None:
    """The replay's quick scan takes any 64 characters for a name: here the 64 after the first path's
    fan are "q.txt", git's NUL and the next path up to its ".json", which is no manifest's name. The
    exact scan reads this commit: the one manifest it added, as the file layout defines one."""
    store = basic_store
    root = store.head() or ""
    spanned = "benchmark-runs/cd/" + "e" * 40 + ".json"  # 18 + 40 characters, then ".json"
    assert len("q.txt" + "\0" + spanned.removesuffix(".json")) == 64
    name = "ef" + "3" * 62
    added = _commit_tree(
        store,
        root,
        {"benchmark-runs/ab/q.txt": b"{}", spanned: b"{}", f"benchmark-runs/ef/{name}.json": b"{}"},
        "main",
    )
    assert store.added_manifest_names(added, stop=root)[added] == [name]

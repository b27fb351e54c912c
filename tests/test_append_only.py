"""Append-only from the first start: main's first-parent history never modified or deleted a published
file, checked over the whole history at a registry's first start, then only over new commits.

Every history is a real repository built by hand (an edit in place, a deletion, a move, an edit
buried three commits back, a merge whose second parent edited a file, a clean one), and the server
cases start a real server on loopback with no integrity record, as a first start does."""

from __future__ import annotations

import json

import pytest
from helpers import basic_scenario, commit_manifests, make_operation, to_manifest
from server import serve
from signing import T0, commit_raw

from kernelindex import registry
from kernelindex.registry.append_only import first_violation
from kernelindex.registry.integrity import IntegrityRecord, record_path
from kernelindex.registry.signatures import POLICY_PATH
from kernelindex.registry.snapshots import Snapshots
from kernelindex.registry.store import MAIN


def _edited(document: dict[str, object]) -> tuple[str, bytes]:
    """The path of a published manifest and other bytes for it (its content changed, not only metadata)."""
    manifest = to_manifest(document)
    edited = json.loads(manifest.stored_bytes())
    edited["spec"]["status"] = "timeout"
    return manifest.path, (json.dumps(edited, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def _push(store: registry.GitStore, files: dict[str, bytes | None], *, when: int = T0 + 3600) -> str:
    """A direct push to main of a commit changing `files` (None deletes): no PR check ran."""
    head = store.head()
    assert head is not None
    commit = commit_raw(store, head, files, when=when)
    assert store._compare_and_swap(MAIN, head, commit)
    return commit


def _add(store: registry.GitStore, name: str, when: int) -> str:
    return commit_manifests(store, [make_operation(name)], when)


def test_a_clean_history_has_no_violation_and_its_head_is_served(basic_store: registry.GitStore) -> None:
    _add(basic_store, "second", T0 + 10)
    head = _add(basic_store, "third", T0 + 20)
    assert first_violation(basic_store, None, head) is None
    with serve(basic_store.path) as api:
        health = api.client.get("/healthz").json()
    assert health["serving"] == head and health["status"] == "ok", health
    assert IntegrityRecord(record_path(basic_store.path)).read() == head


def test_an_edit_in_place_at_the_head(basic_store: registry.GitStore) -> None:
    good = basic_store.head()
    assert good is not None
    path, data = _edited(basic_scenario().runs[0])
    bad = _push(basic_store, {path: data})
    violation = first_violation(basic_store, None, bad)
    assert violation is not None
    assert (violation.commit, violation.parent, violation.behind) == (bad, good, 0)
    assert violation.changes == (f"edited {path} in place",)


def test_a_deletion(basic_store: registry.GitStore) -> None:
    good = basic_store.head()
    path = to_manifest(basic_scenario().runs[2]).path
    bad = _push(basic_store, {path: None})
    violation = first_violation(basic_store, None, bad)
    assert violation is not None and violation.parent == good
    assert violation.changes == (f"deleted {path}",)


def test_a_move_is_a_deletion(basic_store: registry.GitStore) -> None:
    """The same bytes at another path: the published path is gone."""
    good = basic_store.head()
    run = to_manifest(basic_scenario().runs[1])
    moved = run.path.replace("/", "/moved-", 1)
    bad = _push(basic_store, {run.path: None, moved: run.stored_bytes()})
    violation = first_violation(basic_store, None, bad)
    assert violation is not None and violation.parent == good
    assert violation.changes == (f"deleted {run.path}",)


def test_deleting_a_whole_kind_folder(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    run = to_manifest(basic_scenario().runs[0])
    folder = run.path.split("/", 1)[0] + "/"
    files = sorted(e.path for e in basic_store.entries(head) if e.path.startswith(folder))
    assert len(files) == 3
    bad = _push(basic_store, dict.fromkeys(files))
    violation = first_violation(basic_store, None, bad)
    assert violation is not None
    assert violation.changes == tuple(f"deleted {path}" for path in files)


def test_an_edit_buried_three_commits_back_is_found_and_its_parent_served(basic_store: registry.GitStore) -> None:
    _add(basic_store, "second", T0 + 10)
    last_good = _add(basic_store, "third", T0 + 20)
    path, data = _edited(basic_scenario().runs[0])
    bad = _push(basic_store, {path: data}, when=T0 + 30)
    _add(basic_store, "fourth", T0 + 40)
    _add(basic_store, "fifth", T0 + 50)
    head = _add(basic_store, "sixth", T0 + 60)
    violation = first_violation(basic_store, None, head)
    assert violation is not None
    assert (violation.commit, violation.parent, violation.behind) == (bad, last_good, 3)
    with serve(basic_store.path) as api:  # a first start: no record
        health = api.client.get("/healthz").json()
        served = api.graphql("{ commit { id } }").json()["data"]["commit"]["id"]
    assert health["serving"] == served == last_good and health["main"] == head and health["status"] == "degraded"
    assert (
        f"main {head[:12]} is not served: commit {bad[:12]} (3 commit(s) before the head of main)" in (health["reason"])
    )
    assert f"edited {path} in place" in health["reason"]
    assert IntegrityRecord(record_path(basic_store.path)).read() == last_good


def test_a_merge_whose_second_parent_edited_a_file(basic_store: registry.GitStore) -> None:
    """A branch edits a published manifest and main merges it: the merge's tree differs from its
    first parent's where the branch edited, whatever the branch's own history looks like."""
    good = _add(basic_store, "second", T0 + 10)
    path, data = _edited(basic_scenario().runs[1])
    side = commit_raw(basic_store, good, {path: data}, ref="refs/heads/side", when=T0 + 20)
    ahead = _add(basic_store, "third", T0 + 30)
    merge = commit_raw(
        basic_store,
        [ahead, side],
        {to_manifest(make_operation("third")).path: to_manifest(make_operation("third")).stored_bytes()},
        base_tree=side,
        when=T0 + 40,
        message="Merge side\n",
    )
    assert basic_store._compare_and_swap(MAIN, ahead, merge)
    violation = first_violation(basic_store, None, merge)
    assert violation is not None
    assert (violation.commit, violation.parent, violation.behind) == (merge, ahead, 0)
    assert violation.changes == (f"edited {path} in place",)
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    assert snapshots.status.serving == ahead and "edited" in (snapshots.status.reason or "")


def test_a_clean_merge_is_no_violation(basic_store: registry.GitStore) -> None:
    good = basic_store.head()
    assert good is not None
    side_op = to_manifest(make_operation("from-side"))
    side = commit_raw(basic_store, good, {side_op.path: side_op.stored_bytes()}, when=T0 + 20)
    ahead = _add(basic_store, "on-main", T0 + 30)
    merge = commit_raw(
        basic_store, [ahead, side], {side_op.path: side_op.stored_bytes()}, when=T0 + 40, message="Merge\n"
    )
    assert basic_store._compare_and_swap(MAIN, ahead, merge)
    assert first_violation(basic_store, None, merge) is None


def test_the_maintainers_policy_may_change(basic_store: registry.GitStore) -> None:
    _push(basic_store, {POLICY_PATH: b"a@example.com ssh-ed25519 AAAA\n"}, when=T0 + 10)
    second = _push(basic_store, {POLICY_PATH: b"b@example.com ssh-ed25519 BBBB\n"}, when=T0 + 20)
    assert first_violation(basic_store, None, second) is None
    third = _push(basic_store, {POLICY_PATH: None}, when=T0 + 30)
    assert first_violation(basic_store, None, third) is None


def test_only_commits_after_the_base_are_checked(basic_store: registry.GitStore) -> None:
    """Once a history is recorded append-only, later heads cost their new commits only: a
    violation before the base is not looked at again (nor could it be new)."""
    path, data = _edited(basic_scenario().runs[0])
    bad = _push(basic_store, {path: data})
    later = _add(basic_store, "later", T0 + 7200)
    assert first_violation(basic_store, None, later) is not None
    assert first_violation(basic_store, bad, later) is None
    assert first_violation(basic_store, later, later) is None


def test_a_refresh_refuses_an_edit_that_a_later_commit_restored(basic_store: registry.GitStore) -> None:
    """Between the served commit and a new head, one commit edits a published file and the next
    puts it back: the range's diff shows nothing, the history shows the edit."""
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    served = snapshots.status.serving
    run = to_manifest(basic_scenario().runs[0])
    path, data = _edited(basic_scenario().runs[0])
    edit = _push(basic_store, {path: data}, when=T0 + 10)
    restored = _push(basic_store, {path: run.stored_bytes()}, when=T0 + 20)
    assert basic_store.diff(served, restored) == []
    status = snapshots.refresh()
    assert status.serving == served and status.main == restored
    assert status.reason is not None and f"commit {edit[:12]} (1 commit(s) before the head of main)" in status.reason


@pytest.mark.parametrize("behind", [0, 1])
def test_a_first_start_records_the_last_good_commit_and_keeps_serving_it(
    basic_store: registry.GitStore, behind: int
) -> None:
    """The next start finds the same violation from the recorded commit on, and serves the same commit."""
    good = basic_store.head()
    path = to_manifest(basic_scenario().runs[2]).path
    _push(basic_store, {path: None})
    for index in range(behind):
        _add(basic_store, f"after-{index}", T0 + 7200 + index)
    for _ in range(2):
        snapshots = Snapshots(basic_store.path)
        snapshots.load()
        assert snapshots.status.serving == good
        assert f"deleted {path}" in (snapshots.status.reason or "")
        assert IntegrityRecord(record_path(basic_store.path)).read() == good

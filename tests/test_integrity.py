"""Integrity before serving: a head edited in place, a tampered object, a corrupt pack. None is
served; /healthz and every route say why in the documented error shape; the last good commit is
served when there is one. Real repositories, real servers on loopback."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from helpers import basic_scenario, commit_manifests, digest_of, make_operation, to_manifest
from probes import TALLY
from server import serve
from signing import commit_raw

from kernelindex import registry
from kernelindex.registry.integrity import IntegrityRecord, check_commit, record_path, verify_commit
from kernelindex.registry.snapshots import Snapshots

T1 = 1_700_000_000


def _edit_in_place(store: registry.GitStore, document: dict[str, object], title: str) -> str:
    """A direct push that rewrites a published manifest's title where it lies (no PR check ran)."""
    manifest = to_manifest(document)
    edited = json.loads(manifest.stored_bytes())
    edited["metadata"]["title"] = title
    edited["spec"]["status"] = "timeout"  # the content (and so its digest) changes
    data = (json.dumps(edited, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
    head = store.head()
    assert head is not None
    commit = commit_raw(store, head, {manifest.path: data}, message="Fix\n\nSource: community\n")
    assert store._compare_and_swap(registry.store.MAIN, head, commit)
    return commit


def _record(path: Path) -> str | None:
    return IntegrityRecord(record_path(path)).read()


def test_a_head_edited_in_place_is_never_served(basic_store: registry.GitStore) -> None:
    good = basic_store.head()
    assert good is not None
    run = basic_scenario().runs[0]
    tampered = _edit_in_place(basic_store, run, "EDITED")
    problems = check_commit(basic_store, tampered)
    assert [p.source for p in problems] == [to_manifest(run).path]
    assert "edited in place" in problems[0].reason
    with serve(basic_store.path) as api:  # a first start: nothing was ever recorded good
        health = api.client.get("/healthz").json()
        answer = api.graphql('{ run(id: "run-a1") { title } commit { id } }').json()["data"]
    # The history check finds the edit before the integrity check would: the last good commit is served.
    assert health["serving"] == good and health["main"] == tampered and health["status"] == "degraded"
    assert f"commit {tampered[:12]} (the head of main) edited {to_manifest(run).path} in place" in health["reason"]
    assert answer["commit"]["id"] == good and answer["run"]["title"] != "EDITED"
    assert _record(basic_store.path) == good
    TALLY["tampered head: not served"][0] += 1
    TALLY["tampered head: not served"][1] += 1


def test_the_last_good_commit_is_served_when_main_goes_bad(basic_store: registry.GitStore) -> None:
    good = basic_store.head()
    assert good is not None
    with serve(basic_store.path) as api:
        assert api.client.get("/healthz").json()["integrity"]["verified"] == good
    assert _record(basic_store.path) == good
    more = commit_manifests(basic_store, [make_operation("later")], T1 + 10)
    tampered = _edit_in_place(basic_store, basic_scenario().runs[0], "EDITED")
    with serve(basic_store.path) as api:  # restart: checks only what changed since the record
        health = api.client.get("/healthz").json()
        title = api.graphql('{ run(id: "run-a1") { title } commit { id } }').json()["data"]
    # The newest commit before the edit is served: it adds a manifest, and its history is append-only.
    assert health["serving"] == more and health["main"] == tampered and health["status"] == "degraded"
    assert "is not served" in health["reason"] and "in place" in health["reason"]
    assert title["commit"]["id"] == more and title["run"]["title"] != "EDITED"
    assert more != good


def _loose_object(store: registry.GitStore, oid: str) -> Path:
    return store.git_dir / "objects" / oid[:2] / oid[2:]


def test_a_blob_whose_bytes_do_not_match_its_id_is_caught(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    run = basic_scenario().runs[0]
    entry = basic_store.find_entry(head, digest_of(run))
    assert entry is not None
    path = _loose_object(basic_store, entry.oid)
    assert path.exists(), "the basic scenario is written as loose objects"
    forged = basic_store.read_blob(entry.oid).replace(b'"run-a1"', b'"run-XX"')
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(forged) + forged))
    problems = check_commit(basic_store, head)
    assert len(problems) == 1 and "do not hash to its id" in problems[0].reason
    with serve(basic_store.path) as api:
        health = api.client.get("/healthz")
        permalink = api.client.get(f"/at/{head}/manifests/{digest_of(run)}")
    assert health.status_code == 503 and "do not hash to its id" in health.json()["reason"]
    assert permalink.status_code == 503 and permalink.json()["errors"][0]["extensions"]["code"] == "NOT_READY"


def test_a_corrupt_pack_without_a_warm_cache_is_a_clear_503_not_a_crash(store: registry.GitStore) -> None:
    commit_manifests(store, [make_operation(f"op-{i}") for i in range(200)], T1)  # one pack (fast-import)
    packs = list((store.git_dir / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    data = bytearray(packs[0].read_bytes())
    for offset in range(len(data) // 3, len(data) // 3 + 64):
        data[offset] ^= 0xFF
    packs[0].chmod(0o644)
    packs[0].write_bytes(bytes(data))
    with serve(store.path) as api:
        health = api.client.get("/healthz")
        answer = api.graphql("{ commit { id } }")
    assert health.status_code == 503 and health.json()["reason"]
    assert answer.status_code == 503 and set(answer.json()["errors"][0]) == {"message", "extensions"}
    TALLY["corrupt pack: clear 503, no crash"][0] += 1
    TALLY["corrupt pack: clear 503, no crash"][1] += 1


def test_a_recorded_commit_is_not_checked_again_and_a_rewritten_main_is(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    with serve(basic_store.path) as api:
        first = api.client.get("/healthz").json()["integrity"]
    with serve(basic_store.path) as api:
        second = api.client.get("/healthz").json()["integrity"]
    assert first["verified"] == second["verified"] == head
    # A record naming a commit main does not descend from is ignored: the full check runs.
    IntegrityRecord(record_path(basic_store.path)).write("0" * 40)
    with serve(basic_store.path) as api:
        assert api.client.get("/healthz").json()["integrity"]["verified"] == head
    assert _record(basic_store.path) == head


def test_an_object_tampered_while_served_answers_the_error_shape(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    run = basic_scenario().runs[2]
    entry = basic_store.find_entry(head, digest_of(run))
    assert entry is not None
    with serve(basic_store.path) as api:
        path = _loose_object(basic_store, entry.oid)
        forged = basic_store.read_blob(entry.oid).replace(b'"run-b1"', b'"run-ZZ"')
        path.chmod(0o644)
        path.write_bytes(zlib.compress(b"blob %d\0" % len(forged) + forged))
        answer = api.client.get(f"/at/{head}/manifests/{digest_of(run)}")
    assert answer.status_code == 503, answer.text
    assert answer.json()["errors"][0]["extensions"]["code"] == "STORE_CORRUPT"
    assert b"run-ZZ" not in answer.content


# Remembered fan-out trees: each manifest canonicalized once per registry ---------------------------------


def test_a_second_check_reads_nothing_and_a_change_reads_what_it_added(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    first = verify_commit(basic_store, head)
    assert first.problems == [] and first.read == len(list(basic_store.entries(head))) == 9
    assert verify_commit(basic_store, head, first.trees).read == 0
    later = commit_manifests(basic_store, [make_operation("one"), make_operation("two")], T1 + 10)
    again = verify_commit(basic_store, later, first.trees)
    assert again.problems == [] and again.read == 2
    assert again.trees == basic_store.fan_out_trees(later)


def test_a_remembered_tree_vouches_for_its_own_entries_only(basic_store: registry.GitStore) -> None:
    """An edit in place makes a new fan-out tree: the remembered one says nothing about the new blob."""
    head = basic_store.head()
    assert head is not None
    known = verify_commit(basic_store, head).trees
    run = basic_scenario().runs[0]
    tampered = _edit_in_place(basic_store, run, "EDITED")
    check = verify_commit(basic_store, tampered, known)
    assert check.read == 1
    assert [p.source for p in check.problems] == [to_manifest(run).path]
    assert to_manifest(run).path.rpartition("/")[0] not in check.trees  # never remembered as sound


def test_remembered_trees_survive_a_restart_and_a_rewritten_main(basic_store: registry.GitStore) -> None:
    base = basic_store.head()
    assert base is not None
    head = commit_manifests(basic_store, [make_operation("later")], T1 + 10)
    Snapshots(basic_store.path).load()
    commit, trees = IntegrityRecord(record_path(basic_store.path)).load()
    assert commit == head and trees == basic_store.fan_out_trees(head)
    # main rewritten: head's content plus one manifest, on head's parent (the record's commit is gone from main)
    operation = to_manifest(make_operation("rewritten"))
    rewritten = commit_raw(basic_store, base, {operation.path: operation.stored_bytes()}, base_tree=head, when=T1 + 30)
    assert basic_store._compare_and_swap(registry.store.MAIN, head, rewritten)
    assert not basic_store.is_ancestor(head, rewritten)
    assert verify_commit(basic_store, rewritten, trees).read == 1
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    assert snapshots.status.serving == rewritten and snapshots.status.verified == rewritten
    assert IntegrityRecord(record_path(basic_store.path)).load() == (rewritten, basic_store.fan_out_trees(rewritten))


def test_a_refresh_records_the_fan_out_trees_of_what_it_serves(
    basic_store: registry.GitStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record a refresh writes names the new head's fan-out trees, as listed afresh: from the diff
    when the change stayed inside fan-out trees main held (nothing listed again), else listed."""
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    head = basic_store.head()
    assert head is not None
    held = set(basic_store.fan_out_trees(head))
    candidates = (to_manifest(make_operation(f"refreshed-{i}")) for i in range(5000))
    inside = next(m for m in candidates if m.path.rpartition("/")[0] in held)
    outside = next(m for m in candidates if m.path.rpartition("/")[0] not in held)
    listed: list[str] = []
    original = registry.GitStore.fan_out_trees

    def listing(self: registry.GitStore, commit: str, since: object = None) -> dict[str, str]:
        listed.append(commit)
        return original(self, commit, since)  # type: ignore[arg-type]

    monkeypatch.setattr(registry.GitStore, "fan_out_trees", listing)
    for when, (manifest, lists) in enumerate(((inside, False), (outside, True)), start=T1 + 10):
        listed.clear()
        later = commit_manifests(basic_store, [json.loads(manifest.stored_bytes())], when)
        assert snapshots.refresh().serving == later
        commit, trees = IntegrityRecord(record_path(basic_store.path)).load()
        assert (commit, trees) == (later, original(basic_store, later))
        assert bool(listed) == lists


def test_a_damaged_record_counts_as_absent(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    record = IntegrityRecord(record_path(basic_store.path))
    trees = basic_store.fan_out_trees(head)
    assert record.write(head, trees) and record.load() == (head, trees)
    data = record.path.read_bytes()
    record.path.write_bytes(data[:-10])  # truncated
    assert record.load() == (None, {})
    record.path.write_bytes(data.replace(b"tree ", b"tree x", 1))  # edited without its checksum
    assert record.load() == (None, {})
    record.path.write_bytes(b"kernelindex-integrity-1 " + head.encode() + b"\n")  # an older format
    assert record.load() == (None, {})
    record.path.write_bytes(data)
    assert record.load() == (head, trees)


def test_a_forged_record_can_only_skip_work_never_fail_sound_manifests(basic_store: registry.GitStore) -> None:
    """Whoever writes the record can name trees as sound (as naming a verified commit always
    allowed); naming a wrong tree for a folder only makes the check read that folder's manifests."""
    head = basic_store.head()
    assert head is not None
    trees = basic_store.fan_out_trees(head)
    forged = dict.fromkeys(trees, "0" * 40)  # trees git does not have
    check = verify_commit(basic_store, head, forged)
    assert check.problems == [] and check.read == 9 and check.trees == trees

"""The publication record (`snapshots.publication_of`) against its definition, computed the slow way:
a manifest's position is the first commit of main's first-parent history whose tree holds its file.

Histories: the embedded registry, a governed registry with every lifecycle kind, and hand-built
ones with a merge, a file deleted and added again, a file that is not a manifest, a commit that
adds nothing; each replayed from scratch and extended from an earlier record."""

from __future__ import annotations

import pytest
from governed import build_governed
from helpers import basic_scenario, commit_manifests, make_operation, to_manifest
from signing import T0, Key, commit_raw

from kernelindex import registry
from kernelindex.registry.snapshots import Publication, publication_of
from kernelindex.registry.store import MAIN


def _by_definition(store: registry.GitStore, head: str) -> dict[str, int]:
    """digest -> position of the first first-parent commit (oldest first) listing its file."""
    chain = store.first_parents(head)[::-1]
    first: dict[str, int] = {}
    for position, commit in enumerate(chain):
        for entry in store.entries(commit):
            first.setdefault(entry.digest, position)
    return first


def _check(store: registry.GitStore, head: str, previous: Publication | None = None) -> Publication:
    publication = publication_of(store, head, previous)
    chain = store.first_parents(head)[::-1]
    assert publication.mainline.commits == tuple(chain)
    assert publication.mainline.times == tuple(store.commit_info(c).committer.time for c in chain)
    assert publication.mainline.sources == tuple(store.commit_info(c).trailer("Source") for c in chain)
    assert dict(publication.first) == _by_definition(store, head)
    return publication


@pytest.mark.slow  # 6 commits x 21,763 files listed the slow way
def test_the_embedded_registry(embedded: registry.GitStore) -> None:
    head = embedded.head()
    assert head is not None
    publication = _check(embedded, head)
    assert len(set(publication.first.values())) == len(publication.mainline.commits)  # every commit published some
    # Extended from the record of every earlier commit, as a server following main does.
    for earlier in embedded.first_parents(head)[1:]:
        assert dict(publication_of(embedded, head, publication_of(embedded, earlier)).first) == dict(publication.first)


def test_a_governed_registry(store: registry.GitStore, keys: dict[str, Key]) -> None:
    governed = build_governed(store, keys["alice"])
    publication = _check(store, governed.commits[-1])
    assert publication.first[governed.overlays["verification"]] == 3
    assert publication.first[governed.runs["a1"]] == 0
    for earlier in governed.commits[:-1]:
        _check(store, governed.commits[-1], publication_of(store, earlier))


def test_merges_re_additions_and_files_that_are_not_manifests(basic_store: registry.GitStore) -> None:
    """Only first parents count (a side branch's commits never publish; the merge that brings them
    does); a manifest deleted and added again keeps its first commit; other files publish nothing."""
    base = basic_store.head()
    assert base is not None
    side_op = to_manifest(make_operation("from-side"))
    side = commit_raw(basic_store, base, {side_op.path: side_op.stored_bytes()}, when=T0 + 20)
    ahead = commit_manifests(basic_store, [make_operation("on-main")], T0 + 30)
    merge = commit_raw(basic_store, [ahead, side], {side_op.path: side_op.stored_bytes()}, when=T0 + 40)
    assert basic_store._compare_and_swap(MAIN, ahead, merge)
    run = to_manifest(basic_scenario().runs[0])
    gone = commit_raw(basic_store, merge, {run.path: None, "notes/readme.md": b"hello\n"}, when=T0 + 50)
    back = commit_raw(basic_store, gone, {run.path: run.stored_bytes()}, when=T0 + 60)
    empty = commit_raw(basic_store, back, {}, when=T0 + 70)
    assert basic_store._compare_and_swap(MAIN, merge, empty)
    publication = _check(basic_store, empty)
    positions = publication.mainline.positions
    assert publication.first[side_op.digest] == positions[merge]
    assert side not in positions
    assert publication.first[run.digest] == 0
    for earlier in (base, ahead, merge, gone, back):
        _check(basic_store, empty, publication_of(basic_store, earlier))


def test_a_rewritten_main_is_replayed_from_scratch(basic_store: registry.GitStore) -> None:
    base = basic_store.head()
    assert base is not None
    old = commit_manifests(basic_store, [make_operation("old")], T0 + 10)
    other = commit_raw(basic_store, base, {to_manifest(make_operation("new")).path: b"{}\n"}, when=T0 + 20)
    assert basic_store._compare_and_swap(MAIN, old, other)
    _check(basic_store, other, publication_of(basic_store, old))

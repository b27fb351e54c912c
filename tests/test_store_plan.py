"""`plan_batch` alone: a batch against the tree of the commit it will be added to. Published files never change."""

from __future__ import annotations

import json

from helpers import commit_manifests, make_operation, to_manifest

from kernelindex import registry
from kernelindex.registry.git_binding import open_repository
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_objects import ObjectReader
from kernelindex.registry.store_plan import plan_batch


def test_a_batch_is_split_into_new_already_there_and_refused(store: registry.GitStore) -> None:
    published = make_operation("published")
    head = commit_manifests(store, [published])
    reader = ObjectReader(open_repository(str(store.git_dir)), GitCommand(store.git_dir))
    same = to_manifest(published)
    # The same manifest read from an indented file: stored in the same bytes, so already there.
    respelled = registry.load_manifest(json.dumps(json.loads(same.stored_bytes()), indent=2).encode(), "respelled.json")
    fresh = to_manifest(make_operation("fresh"))
    new, unchanged, problems = plan_batch(
        reader, [("a.json", same), ("b.json", respelled), ("c.json", fresh)], head, (), True
    )
    assert (new, unchanged, problems) == ([fresh], [same, respelled], [])
    assert plan_batch(reader, [("c.json", fresh)], None, (), True) == ([fresh], [], [])  # an empty registry


def test_a_published_digest_with_other_metadata_is_refused(store: registry.GitStore) -> None:
    document = make_operation("published")
    head = commit_manifests(store, [document])
    other = json.loads(to_manifest(document).stored_bytes())
    other["metadata"]["title"] = "another title"  # metadata is outside the digest: same digest, other file
    changed = registry.load_manifest(json.dumps(other).encode(), "changed.json")
    assert changed.digest == to_manifest(document).digest
    reader = ObjectReader(open_repository(str(store.git_dir)), GitCommand(store.git_dir))
    new, unchanged, problems = plan_batch(reader, [("changed.json", changed)], head, (), True)
    assert (new, unchanged) == ([], [])
    assert [(p.source, p.path) for p in problems] == [("changed.json", "$.metadata")]
    assert "already published with different metadata" in problems[0].reason

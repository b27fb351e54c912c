"""A server's refresh on the real corpus serves the graph a cold build of the same commit makes.

The refresh diffs trees in process, guessing from the served graph which entries are new and
proving the guess by hashing (`GitStore.diff`); it edits the records ledger's order in place.
Here both run on the embedded registry: one commit of main's history (the seed records), then a
contributor's commit of new runs in existing cohorts with new implementations, through
`GitStore.add` (validated as any write is)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson
import pytest
from graph_equality import assert_same_graph
from helpers import EMBEDDED_REPO, commit_meta

from kernelindex import registry
from kernelindex.registry.nodes import Run
from kernelindex.registry.snapshots import Snapshots, build_graph
from kernelindex.registry.store import MAIN


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A copy of the embedded registry whose main is one first-parent commit behind its head."""
    repo = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, repo)
    return repo


def _set_main(repo: Path, commit: str) -> None:
    subprocess.run(["git", "--git-dir", str(repo), "update-ref", MAIN, commit], check=True)


@pytest.mark.slow  # three cold builds of the embedded registry
def test_a_refresh_serves_what_a_cold_build_of_the_same_commit_makes(corpus: Path) -> None:
    store = registry.GitStore(corpus)
    head = store.head()
    assert head is not None
    parent = store.commit_info(head).parents[0]
    _set_main(corpus, parent)
    snapshots = Snapshots(corpus)
    snapshots.load()
    assert snapshots.status.serving == parent

    # One commit of the corpus's own history.
    _set_main(corpus, head)
    status = snapshots.refresh()
    assert status.serving == head and status.reason is None, status
    assert snapshots.head.commit == head
    assert_same_graph(build_graph(store, head, None, snapshots.honour)[0], snapshots.head)

    # A contributor's commit: new runs in existing cohorts, each with a new implementation, served
    # from a prepared graph (its fan-out folders indexed: the diff finds the additions by bisection).
    graph = snapshots.head
    graph.index_fan_out()
    runs = sorted(d for d, node in graph.nodes.items() if isinstance(node, Run) and node.primary is not None)
    manifests = []
    for index, digest in enumerate(runs[:: len(runs) // 30][:30]):
        run = graph.nodes[digest]
        assert isinstance(run, Run)
        run_doc = orjson.loads(store.read_blob(run.oid))
        impl_doc = orjson.loads(store.read_blob(graph.nodes[run.implementation].oid))
        impl_doc["metadata"]["name"] = f"refresh-corpus-impl-{index}"
        impl_doc["spec"]["projectRevision"]["version"] = f"refresh-{index}"
        implementation = registry.manifest_from_document(impl_doc, "test")
        run_doc["metadata"]["name"] = f"refresh-corpus-run-{index}"
        run_doc["spec"]["implementationDigest"] = implementation.digest
        run_doc["spec"]["observedAt"] = "2026-11-01T00:00:00Z"
        manifests += [implementation, registry.manifest_from_document(run_doc, "test")]
    added = store.add(manifests, commit_meta(1_800_000_000, subject="Sixty manifests")).commit
    assert added is not None and store.head() == added
    read: list[str] = []  # each new file is read once: validated, then loaded from the same bytes
    reader = snapshots.store()
    original_blob, original_blobs = reader.read_blob, reader.read_blobs

    def read_blob(oid: str) -> bytes:
        read.append(oid)
        return original_blob(oid)

    def read_blobs(oids: Sequence[str]) -> Iterator[bytes]:
        read.extend(oids)
        return original_blobs(oids)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "read_blob", read_blob)
        patch.setattr(reader, "read_blobs", read_blobs)
        status = snapshots.refresh()
    assert status.serving == added and status.reason is None, status
    new_files = {entry.oid for entry in store.entries(added)} - {entry.oid for entry in store.entries(head)}
    assert len(new_files) == 60
    assert sorted(oid for oid in read if oid in new_files) == sorted(new_files)
    cold = build_graph(store, added, None, snapshots.honour)[0]
    assert_same_graph(cold, snapshots.head)
    assert len(snapshots.head.nodes) == len(graph.nodes) + 60
    cold.index_fan_out()
    for entry in store.entries(added):
        folder = entry.path.rpartition("/")[0]
        assert snapshots.head.fan_out(folder) == cold.fan_out(folder), folder

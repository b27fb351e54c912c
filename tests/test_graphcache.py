"""The warm-start cache: what it saves reads back as the same graph, and anything doubtful is ignored."""

from __future__ import annotations

import gc
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from graph_equality import assert_same_graph
from helpers import basic_scenario, commit_manifests, make_attestation, make_retraction, make_run, make_supersession

from kernelindex import registry
from kernelindex.registry import graphcache
from kernelindex.registry.cache_dir import cache_dir
from kernelindex.registry.cohorts import Primary
from kernelindex.registry.graph import Graph
from kernelindex.registry.lazymap import LazyMap
from kernelindex.registry.nodes import Run
from kernelindex.registry.snapshots import Publication, build_graph, move_graph, publication_of


def _built(store: registry.GitStore) -> tuple[Graph, Publication]:
    head = store.head()
    assert head is not None
    graph, publication = build_graph(store, head)
    graph.prepare()
    return graph, publication


def _later_run() -> dict[str, Any]:
    s = basic_scenario()
    return make_run(
        s.implementations[1], s.workload, s.protocol, s.environment, 7000, "2026-08-04T12:00:00Z", name="run-b2"
    )


@pytest.mark.slow  # the whole embedded registry, built then read back
def test_the_embedded_registry_reads_back_as_the_same_graph(embedded: registry.GitStore) -> None:
    graph, publication = _built(embedded)
    again, republished = graphcache.decode(graphcache.encode(graph, publication))
    assert_same_graph(graph, again)
    assert republished.first == publication.first
    assert republished.mainline.commits == publication.mainline.commits
    assert republished.mainline.times == publication.mainline.times
    # Restored node types keep their behaviour: a run's primary statistic is a named tuple again.
    run = next(node for node in again.nodes.values() if isinstance(node, Run) and node.primary is not None)
    assert isinstance(run.primary, Primary) and run.primary.metric == run.primary[0]


def test_a_graph_with_lifecycle_overlays_reads_back_the_same(basic_store: registry.GitStore) -> None:
    runs = basic_scenario().runs
    overlays = [make_attestation(runs[0]), make_retraction(runs[2]), make_supersession(runs[1], runs[0])]
    commit_manifests(basic_store, overlays, when=1_700_003_600)
    graph, publication = _built(basic_store)
    assert all(graph.overlays[name] for name in ("attestations", "retractions", "supersessions"))
    again, _ = graphcache.decode(graphcache.encode(graph, publication))
    assert_same_graph(graph, again)


def test_a_saved_cache_loads_while_main_contains_it(basic_store: registry.GitStore) -> None:
    graph, publication = _built(basic_store)
    path = graphcache.cache_path(basic_store.path)
    # In the registry's folder of the user's cache folder (the session's, tests/conftest.py), nothing beside the registry.
    assert path == cache_dir(basic_store.path) / "graphcache"
    assert path.parent.parent == Path(os.environ["XDG_CACHE_HOME"]) / "kernelindex"
    assert graphcache.save_cache(path, graph, publication)
    assert sorted(p.name for p in basic_store.path.parent.iterdir()) == ["manifests.git"]
    loaded = graphcache.load_cache(path, basic_store)
    assert loaded is not None and loaded[0].commit == graph.commit
    # main moves forward: the cache is still a good start (the server moves it to main's head).
    commit_manifests(basic_store, [_later_run()], when=1_700_003_600)
    assert graphcache.load_cache(path, basic_store) is not None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: b"not a cache at all", id="garbage"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:-7] + b"\x00" * 7, id="tail-zeroed"),
    ],
)
def test_a_damaged_cache_is_ignored(basic_store: registry.GitStore, damage: Any) -> None:
    graph, publication = _built(basic_store)
    path = graphcache.cache_path(basic_store.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage(graphcache.encode(graph, publication)))
    assert graphcache.load_cache(path, basic_store) is None


def test_a_cache_from_other_code_is_ignored(basic_store: registry.GitStore, monkeypatch: pytest.MonkeyPatch) -> None:
    graph, publication = _built(basic_store)
    path = graphcache.cache_path(basic_store.path)
    assert graphcache.save_cache(path, graph, publication)
    monkeypatch.setattr(graphcache, "code_fingerprint", lambda: "0123456789abcdef")
    assert graphcache.load_cache(path, basic_store) is None


def test_a_cache_of_a_rewritten_main_is_ignored(basic_store: registry.GitStore) -> None:
    first = basic_store.head()
    assert first is not None
    commit_manifests(basic_store, [_later_run()], when=1_700_003_600)
    graph, publication = _built(basic_store)
    path = graphcache.cache_path(basic_store.path)
    assert graphcache.save_cache(path, graph, publication)
    subprocess.run(["git", "--git-dir", str(basic_store.path), "update-ref", "refs/heads/main", first], check=True)
    assert graphcache.load_cache(path, basic_store) is None


def test_a_cache_of_another_repository_is_ignored(basic_store: registry.GitStore, tmp_path: Path) -> None:
    graph, publication = _built(basic_store)
    other = registry.GitStore.init(tmp_path / "other" / "manifests.git")
    commit_manifests(other, basic_scenario().docs[:2])
    path = graphcache.cache_path(other.path)
    assert graphcache.save_cache(path, graph, publication)
    assert graphcache.load_cache(path, other) is None


def test_an_unwritable_directory_writes_nothing(basic_store: registry.GitStore, tmp_path: Path) -> None:
    """Places no one can write a cache to, root included (file permissions would not stop root, who
    is how CI runs): a "directory" that is a regular file, and a cache path taken by a directory (the
    temporary file is written, then cannot replace it, and must not be left behind)."""
    graph, publication = _built(basic_store)
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"a regular file\n")
    assert not graphcache.save_cache(blocker / "manifests.git.graphcache", graph, publication)
    assert blocker.read_bytes() == b"a regular file\n"
    taken = tmp_path / "taken"
    (taken / "manifests.git.graphcache").mkdir(parents=True)
    assert not graphcache.save_cache(taken / "manifests.git.graphcache", graph, publication)
    assert [p.name for p in taken.iterdir()] == ["manifests.git.graphcache"]  # no temporary file left
    assert list((taken / "manifests.git.graphcache").iterdir()) == []


def test_a_missing_folder_is_made_for_this_user_only(basic_store: registry.GitStore, tmp_path: Path) -> None:
    """A registry's first cache makes its folder (and the cache root above it), readable by its user alone."""
    graph, publication = _built(basic_store)
    path = tmp_path / "root" / "registry" / "graphcache"
    assert graphcache.save_cache(path, graph, publication)
    assert graphcache.load_cache(path, basic_store) is not None
    assert [stat.S_IMODE(p.stat().st_mode) for p in (path.parent.parent, path.parent)] == [0o700, 0o700]


def test_a_cached_graph_decodes_only_the_buckets_it_is_asked_for(embedded: registry.GitStore, tmp_path: Path) -> None:
    graph, publication = _built(embedded)
    path = tmp_path / "manifests.git.graphcache"
    assert graphcache.save_cache(path, graph, publication)
    loaded = graphcache.load_cache(path, embedded)
    assert loaded is not None
    again = loaded[0]
    nodes = again.nodes
    assert isinstance(nodes, LazyMap) and len(nodes) == len(graph.nodes)
    digest = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"  # seed 000's run
    assert nodes[digest] == graph.nodes[digest] and nodes.get("sha256:" + "0" * 64) is None
    loaded_buckets = sum(nodes._loaded)
    assert 1 <= loaded_buckets <= 2 < len(nodes._loaded)  # the key's bucket (and the absent key's)
    assert dict(nodes.items()) == dict(graph.nodes.items()) and sum(nodes._loaded) == len(nodes._loaded)


def test_a_graph_moved_from_a_cached_one_is_the_graph_built_from_scratch(
    basic_store: registry.GitStore, tmp_path: Path
) -> None:
    graph, publication = _built(basic_store)
    path = tmp_path / "manifests.git.graphcache"
    assert graphcache.save_cache(path, graph, publication)
    loaded = graphcache.load_cache(path, basic_store)
    assert loaded is not None
    head = commit_manifests(basic_store, [_later_run()], when=1_700_003_600)
    moved_publication = publication_of(basic_store, head, loaded[1])
    moved = move_graph(basic_store, loaded[0], head, moved_publication)
    moved.prepare()
    built, _ = build_graph(basic_store, head)
    built.prepare()
    assert_same_graph(built, moved)


@pytest.mark.parametrize("where", [0.3, 0.6, 0.95])
def test_damage_anywhere_in_the_buckets_is_found_before_serving(basic_store: registry.GitStore, where: float) -> None:
    graph, publication = _built(basic_store)
    path = graphcache.cache_path(basic_store.path)
    data = bytearray(graphcache.encode(graph, publication))
    data[int(len(data) * where)] ^= 0x01
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))
    assert graphcache.load_cache(path, basic_store) is None


def _saved_and_loaded(store: registry.GitStore, path: Path) -> tuple[Graph, Graph, Publication]:
    """A graph built from `store`, and the same graph saved to `path` and loaded back (still undecoded)."""
    graph, publication = _built(store)
    assert graphcache.save_cache(path, graph, publication)
    loaded = graphcache.load_cache(path, store)
    assert loaded is not None
    return graph, *loaded


def test_materialize_decodes_every_bucket(basic_store: registry.GitStore, tmp_path: Path) -> None:
    graph, again, republished = _saved_and_loaded(basic_store, tmp_path / "manifests.git.graphcache")
    lazy = [again.nodes, again.facts, again.cohorts, again.names, republished.first]
    assert all(isinstance(m, LazyMap) and not any(m._loaded) for m in lazy)
    graphcache.materialize(again, republished)
    assert all(isinstance(m, LazyMap) and all(m._loaded) and m.complete for m in lazy)
    assert_same_graph(graph, again)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the process's mappings (Linux)")
def test_a_materialized_graph_lets_go_of_its_cache_file(basic_store: registry.GitStore, tmp_path: Path) -> None:
    """A server decodes a warm-started graph in the background; once every map is decoded, the cache file is
    no longer mapped (its pages no longer resident)."""
    path = tmp_path / "manifests.git.graphcache"
    graph, again, republished = _saved_and_loaded(basic_store, path)
    assert str(path) in Path("/proc/self/maps").read_text()
    maps = [again.nodes, again.facts, again.cohorts, again.names, republished.first]
    maps += [m for group in (again.runs_by, again.cohorts_by, again.children) for m in group.values()]
    lazy = [m for m in maps if isinstance(m, LazyMap)]
    assert lazy and not any(m.complete for m in lazy)
    graphcache.materialize(again, republished, lambda: None)
    assert all(m.complete for m in lazy)
    gc.collect()
    assert str(path) not in Path("/proc/self/maps").read_text()
    assert_same_graph(graph, again)

"""The delta applier alone (`kernelindex.registry.graph_apply`): a small registry's commits applied one by one, each
as a delta over the graph before it, give at every commit the graph a cold build makes of that commit; backwards too
(an old commit from the last); a change leaves its parent's graph as it was; a newer publication record or a new set
of honoured commits revisits exactly what they decide. Without git: the nodes are made from documents
(`graph_history`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from graph_equality import assert_same_graph
from graph_history import History, history

from kernelindex.registry import graph_apply, members
from kernelindex.registry.graph import Graph
from kernelindex.registry.graph_apply import apply


def _frozen(graph: Graph) -> dict[str, Any]:
    """What a graph holds and derives, copied out (to see that deriving another from it changed nothing)."""
    return {
        "nodes": dict(graph.nodes),
        "facts": dict(graph.facts),
        "names": {name: graph.named(name) for name in graph.names},
        "cohorts": {k: (c.members, c.ranked(graph), c.events(graph)) for k, c in graph.cohorts.items()},
        "indexes": [
            {name: {key: set(found) for key, found in index.items()} for name, index in group.items()}
            for group in (graph.runs_by, graph.cohorts_by, graph.children, graph.overlays)
        ],
        "records": graph.records,
        "unpublished": set(graph.unpublished),
        "folders": None if graph.by_folder is None else {k: list(v) for k, v in graph.by_folder.items()},
    }


@pytest.fixture(params=["copied", "layered"])
def layering(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A derived graph copies small index sets and layers big ones over its parent's: "layered" counts every set
    as big, so that a small registry takes the big registry's path."""
    if request.param == "layered":
        monkeypatch.setattr(members, "LAYER_FROM", 1)
        monkeypatch.setattr(graph_apply, "LAYER_FROM", 1)
    return str(request.param)


def _step(past: History, graph: Graph, position: int) -> Graph:
    commit = past.commits[position]
    return apply(graph, commit.commit, commit.time, past.mainline, position, commit.added, commit.removed)


def test_each_commit_applied_as_a_delta_is_its_cold_build(layering: str) -> None:
    past = history()
    graph = past.built(0)
    graph.index_fan_out()
    for position in range(1, len(past.commits)):
        parent, before = graph, _frozen(graph)
        graph = _step(past, graph, position)
        assert_same_graph(past.built(position), graph)
        assert _frozen(parent) == before, position  # the parent is untouched
        cold = past.built(position)
        cold.index_fan_out()
        assert graph.by_folder is not None and cold.by_folder is not None
        assert {k: v for k, v in graph.by_folder.items() if v} == cold.by_folder  # a folder emptied stays, empty
    assert graph.records and any(facts.reasons for facts in graph.facts.values())


def test_an_old_commit_from_the_last(layering: str) -> None:
    past = history()
    last = len(past.commits) - 1
    head = past.built(last)
    head.prepare()  # rankings, ledgers and every index made first, as a serving graph's are
    for position in range(last):
        nodes = {node.digest: node for node in past.nodes_at(position)}
        removed = [digest for digest in head.nodes if digest not in nodes]
        added = [node for digest, node in nodes.items() if head.nodes.get(digest) is not node]
        commit = past.commits[position]
        old = apply(head, commit.commit, commit.time, past.mainline, position, added, removed)
        assert_same_graph(past.built(position), old)


def test_honouring_a_commit_revisits_the_runs_its_overlays_act_on() -> None:
    past = history()
    last = len(past.commits) - 1
    graph = past.built(last)
    honoured = past.honoured | {past.commits[5].commit}  # its retraction counts once its commit does
    again = apply(graph, graph.commit, graph.committed_at, past.mainline, last, [], [], honoured)
    assert_same_graph(replace(past, honoured=honoured).built(last), again)
    assert again.facts != graph.facts


def test_a_newer_publication_record_publishes_what_it_names() -> None:
    """A graph of a commit not yet on main holds unpublished manifests; applied with a record that publishes them
    (the commit merged), its facts are those of the cold build with that record."""
    past = history()
    last = len(past.commits) - 1
    before = replace(past, published_in={d: p for d, p in past.published_in.items() if p != last})
    graph = before.built(last)
    pending = {digest for digest, position in past.published_in.items() if position == last}
    assert graph.unpublished == pending
    assert any(graph.facts[d].reasons == ("UNPUBLISHED",) for d in pending if d in graph.facts)
    merged = apply(graph, graph.commit, graph.committed_at, past.mainline, last, [], [], None, past.published_in)
    assert_same_graph(past.built(last), merged)
    assert not merged.unpublished

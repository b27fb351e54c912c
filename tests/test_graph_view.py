"""The graph as it is read (`kernelindex.registry.graph`), alone: its lookups over a small registry's graph (names,
ids and prefixes, ranks, the publication record, cohort and record orders, fan-out folders), each against what the
graph holds."""

from __future__ import annotations

import pytest
from graph_history import history

from kernelindex.registry.errors import AmbiguousName
from kernelindex.registry.graph import MIN_PREFIX, find_keyed
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.nodes import Run

PAST = history()
LAST = len(PAST.commits) - 1
GRAPH = PAST.built(LAST)


def test_named_and_find() -> None:
    for digest, node in GRAPH.nodes.items():
        assert digest in GRAPH.named(node.name)
        assert GRAPH.find({node.kind}, digest) is node
        assert GRAPH.find({node.kind}, digest.removeprefix("sha256:")[:40]) is node
        assert GRAPH.find({k for k in KINDS if k != node.kind}, digest) is None
    assert GRAPH.named("no such name") == () and GRAPH.find(set(KINDS), "no such name") is None
    assert GRAPH.find(set(KINDS), "abc") is None  # a prefix shorter than MIN_PREFIX names nothing
    run = next(node for node in GRAPH.nodes.values() if isinstance(node, Run))
    assert GRAPH.find({"BenchmarkRun"}, run.name) is run


def test_an_ambiguous_prefix_or_name() -> None:
    table = {"sha256:" + "ab" * 32: 1, "sha256:" + "ab" * 6 + "cd" * 26: 2}
    with pytest.raises(AmbiguousName):
        find_keyed(table, "ab" * 6)
    assert find_keyed(table, "ab" * 7) == 1 and find_keyed(table, "ab" * (MIN_PREFIX // 2 - 1)) is None
    shared = [name for name in GRAPH.names if len(GRAPH.named(name)) > 1]
    for name in shared:
        kinds = {GRAPH.nodes[d].kind for d in GRAPH.named(name)}
        with pytest.raises(AmbiguousName):
            GRAPH.find(kinds, name)


def test_ranks_and_cohorts() -> None:
    for key, cohort in GRAPH.cohorts.items():
        assert GRAPH.find_cohort(key) is cohort and GRAPH.find_cohort(key[:20]) is cohort
        ranked = cohort.ranked(GRAPH)
        assert [GRAPH.rank(entry.id) for entry in ranked] == [entry.rank for entry in ranked]
        assert [GRAPH.tied(entry.id) for entry in ranked] == [entry.tied_with_previous for entry in ranked]
    unranked = [d for d, facts in GRAPH.facts.items() if not facts.eligible]
    assert unranked and all(GRAPH.rank(d) is None and not GRAPH.tied(d) for d in unranked)
    largest = GRAPH.cohorts_largest_first
    assert [len(GRAPH.cohorts[k].members) for k in largest] == sorted(
        (len(c.members) for c in GRAPH.cohorts.values()), reverse=True
    )
    assert GRAPH.ordered_cohorts(reversed(largest)) == list(largest)
    holders = {k: c.holder(GRAPH) for k, c in GRAPH.cohorts.items()}
    expected = sorted((-event.at_ns, key) for key, event in holders.items() if event is not None)
    assert GRAPH.records == tuple(key for _, key in expected)


def test_the_publication_record() -> None:
    for digest in GRAPH.nodes:
        position = PAST.published_in[digest]
        assert GRAPH.publication(digest) == position
        assert GRAPH.published_at(GRAPH.nodes[digest]) == PAST.commits[position].time
    here = {d for d, p in PAST.published_in.items() if p == LAST and d in GRAPH.nodes}
    assert set(GRAPH.first_published_here) == here
    overlays = [d for index in GRAPH.overlays.values() for found in index.values() for d in found]
    assert {GRAPH.honoured(GRAPH.nodes[d]) for d in overlays} == {True, False}


def test_fan_out_folders() -> None:
    graph = PAST.built(LAST)
    folder = "benchmark-runs/" + next(d for d, n in graph.nodes.items() if isinstance(n, Run))[7:9]
    assert graph.fan_out(folder) is None  # not indexed until asked
    graph.index_fan_out()
    listed = graph.fan_out(folder)
    assert listed and list(listed) == sorted(listed)
    assert all(graph.nodes[d].kind == "BenchmarkRun" for d in listed)
    assert sum(len(graph.fan_out(f) or ()) for f in (graph.by_folder or {})) == len(graph.nodes)

"""The cold builder alone (`kernelindex.registry.graph_build`): at each commit of a small registry, the graph made
from its nodes in one go, streamed in two parts as a store streams them (every other kind, then the runs, each run
derived as it arrives), or with a run arriving before the nodes it references (then derived at the end), is one
graph. Without git: the nodes are made from documents (`graph_history`)."""

from __future__ import annotations

import pytest
from graph_equality import assert_same_graph
from graph_history import History, history

from kernelindex.registry.graph import Graph
from kernelindex.registry.graph_build import ColdBuild
from kernelindex.registry.nodes import Node, Run

PAST = history()


def _streamed(past: History, position: int, parts: list[list[Node]]) -> Graph:
    commit = past.commits[position]
    builder = ColdBuild(commit.commit, commit.time)
    for part in parts:
        builder.take(part, derive_runs=True)
    return builder.derive(past.mainline, position, past.published_in, past.honoured)


@pytest.mark.parametrize("position", range(len(PAST.commits)))
def test_runs_streamed_last_make_the_graph_of_one_take(position: int) -> None:
    nodes = PAST.nodes_at(position)
    others: list[Node] = [n for n in nodes if type(n) is not Run]
    runs: list[Node] = [n for n in nodes if type(n) is Run]
    whole = PAST.built(position, others + runs)
    assert_same_graph(whole, _streamed(PAST, position, [others, runs]))
    # Within each kind the nodes keep the order they came in, and cohorts the order of their first run.
    assert list(_streamed(PAST, position, [others, runs]).cohorts) == list(whole.cohorts)


@pytest.mark.parametrize("position", range(len(PAST.commits)))
def test_a_run_before_what_it_references_is_derived_at_the_end(position: int) -> None:
    nodes = PAST.nodes_at(position)
    runs_first: list[Node] = [n for n in nodes if type(n) is Run]
    runs_first += [n for n in nodes if type(n) is not Run]
    assert_same_graph(PAST.built(position), _streamed(PAST, position, [runs_first]))


def test_what_a_graph_holds_before_its_publication_record_is_known() -> None:
    """`take` indexes what needs no other node and no publication record; the runs streamed after every other kind
    already have their facts (as if published by their own source), and `derive` completes the same graph."""
    last = len(PAST.commits) - 1
    nodes = PAST.nodes_at(last)
    commit = PAST.commits[last]
    builder = ColdBuild(commit.commit, commit.time)
    builder.take([n for n in nodes if type(n) is not Run], derive_runs=True)
    builder.take([n for n in nodes if type(n) is Run], derive_runs=True)
    taking = builder.graph
    assert taking.nodes.keys() == {n.digest for n in nodes} and not taking.cohorts and taking.records == ()
    assert taking.children["workloads"] and taking.overlays["retractions"]
    assert taking.facts.keys() == {n.digest for n in nodes if type(n) is Run}
    assert builder.derive(PAST.mainline, last, PAST.published_in, PAST.honoured) is taking
    assert_same_graph(PAST.built(last), taking)

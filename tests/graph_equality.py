"""Two graphs of one commit are the same graph: nodes (and their types), facts, names, every index,
cohorts with their rankings and ledgers, the records order, the publication record."""

from __future__ import annotations

from typing import Any

from kernelindex.registry.graph import Graph

__all__ = ["assert_same_graph"]


def _sets(indexes: dict[str, Any]) -> dict[str, dict[str, set[str]]]:
    return {name: {key: set(members) for key, members in index.items()} for name, index in indexes.items()}


def _named(graph: Graph) -> dict[str, dict[str, tuple[str, ...]]]:
    """The name index as readers use it: by kind, in order (across kinds, readers never use the order)."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for name in graph.names:
        by_kind = found.setdefault(name, {})
        for digest in graph.named(name):
            kind = graph.nodes[digest].kind
            by_kind[kind] = (*by_kind.get(kind, ()), digest)
    return found


def assert_same_graph(graph: Graph, again: Graph) -> None:
    assert again.commit == graph.commit and again.committed_at == graph.committed_at
    assert again.position == graph.position and again.honoured_commits == graph.honoured_commits
    assert dict(again.published_in) == dict(graph.published_in)
    assert again.nodes == graph.nodes
    assert {d: type(node) for d, node in again.nodes.items()} == {d: type(node) for d, node in graph.nodes.items()}
    assert again.facts == graph.facts
    assert _named(again) == _named(graph) and again.unpublished == graph.unpublished
    for name in ("runs_by", "cohorts_by", "children", "overlays"):
        assert _sets(getattr(again, name)) == _sets(getattr(graph, name)), name
    assert again.cohorts.keys() == graph.cohorts.keys()
    for key, cohort in graph.cohorts.items():
        restored = again.cohorts[key]
        assert restored.members == cohort.members and restored.gpu == cohort.gpu
        assert (restored.profile, restored.operation, restored.workload) == (
            cohort.profile,
            cohort.operation,
            cohort.workload,
        )
        # Before the ledgers: what each knows of its record holder without replaying one.
        assert restored.holder_ns(again) == cohort.holder_ns(graph), key
        assert restored.ranked(again) == cohort.ranked(graph), key
        assert restored.events(again) == cohort.events(graph), key
    assert again.records == graph.records

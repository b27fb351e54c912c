"""What a commit can change about each kind of object: the state a head id's fingerprint covers
(`kernelindex.schema.types.identity`).

A state holds everything an object answers that is not fixed by its manifest (a digest names fixed bytes):
derived values (rank, trust, eligibility, leader), what its lists hold and in which order, and when it was
published. Objects it refers to count by their keys, not by their states: each has its own id. Every
state is a tuple of plain values in a fixed order (never a set, whose order varies between processes),
so every replica computes the same id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kernelindex.registry import nodes as n
from kernelindex.registry import read
from kernelindex.registry.graph import Cohort, Graph

__all__ = [
    "cohort_state",
    "implementation_state",
    "manifest_state",
    "operation_state",
    "project_state",
    "run_state",
    "workload_state",
]


def manifest_state(graph: Graph, node: n.Node) -> tuple[Any, ...]:
    """What every manifest-backed object answers beyond its manifest: when and where main published it
    (`publishedAt`, `provenance`)."""
    position = graph.publication(node.digest)
    return (None if position is None else graph.mainline.commits[position],)


def _keys(found: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(found))


def _cohort_order(graph: Graph, keys: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """Cohorts as lists order them (largest first): their keys and sizes."""
    cohorts = graph.cohorts
    return tuple(sorted(((k, len(cohorts[k].members)) for k in keys), key=lambda p: (-p[1], p[0])))


def run_state(graph: Graph, run: n.Run, terms: Iterable[tuple[str, str]]) -> tuple[Any, ...]:
    """A kernel run: its standing in its cohort, trust, eligibility, overlays, source and publication."""
    facts = graph.facts[run.digest]
    place = graph.place(run.digest)
    cohort = graph.cohorts.get(facts.cohort) if facts.cohort else None
    on_run = sorted(read.overlays_on(graph, read.OverlayList.ATTESTATIONS, run.digest))
    attestations = tuple((d, graph.publication(d)) for d in on_run)
    checked = sorted(read.overlays_on(graph, read.OverlayList.VERIFICATIONS, run.digest))
    verifications = tuple((d, graph.honoured(graph.nodes[d])) for d in checked)
    return (
        *manifest_state(graph, run),
        (place.rank, place.tied_with_previous) if place else None,
        facts.cohort,
        cohort.leader(graph) if cohort else None,
        facts.reasons,
        facts.trust.name,
        facts.warnings,
        facts.operation,
        facts.retraction,
        facts.superseded_by,
        attestations,
        verifications,
        facts.source,
        tuple(terms),
    )


def cohort_state(graph: Graph, cohort: Cohort) -> tuple[Any, ...]:
    """A cohort (and its records-ledger entry): its members with everything ranking-v1, the trust filter and
    the record events read of them, and the implementation names its leaderboard rows show."""
    facts, nodes = graph.facts, graph.nodes
    members = []
    for digest in sorted(cohort.members):
        fact = facts[digest]
        run = nodes[digest]
        implementation = nodes.get(run.implementation) if isinstance(run, n.Run) else None
        project = (
            implementation.author or graph.named(implementation.project or "")
            if isinstance(implementation, n.Implementation)
            else None
        )
        members.append((digest, fact.reasons, fact.trust.name, fact.retraction, graph.publication(digest), project))
    return (cohort.key, tuple(members))


def operation_state(graph: Graph, operation: n.Operation) -> tuple[Any, ...]:
    """An operation: its runs (`runCount`, `runs`), workloads, implementations and cohorts (largest first)."""
    digest = operation.digest
    return (
        *manifest_state(graph, operation),
        _keys(read.runs_with(graph, read.RunIndex.OPERATION, digest)),
        _keys(read.children_of(graph, read.ChildList.WORKLOADS, digest)),
        _keys(read.children_of(graph, read.ChildList.IMPLEMENTATIONS, digest)),
        _cohort_order(graph, read.cohorts_with(graph, read.CohortIndex.OPERATION, digest)),
    )


def workload_state(graph: Graph, workload: n.Workload) -> tuple[Any, ...]:
    """A workload: its cohorts, largest first."""
    return (
        *manifest_state(graph, workload),
        _cohort_order(graph, read.cohorts_with(graph, read.CohortIndex.WORKLOAD, workload.digest)),
    )


def implementation_state(graph: Graph, implementation: n.Implementation, project: str | None) -> tuple[Any, ...]:
    """An implementation: its runs and the project its label names (`project`, `displayName`)."""
    runs = _keys(read.runs_with(graph, read.RunIndex.IMPLEMENTATION, implementation.digest))
    return (*manifest_state(graph, implementation), runs, project)


def project_state(graph: Graph, project: n.Project) -> tuple[Any, ...]:
    """A project: its implementations."""
    return (
        *manifest_state(graph, project),
        _keys(read.children_of(graph, read.ChildList.PROJECT_IMPLEMENTATIONS, project.name)),
    )

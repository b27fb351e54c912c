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
    overlays = graph.overlays
    attestations = tuple((d, graph.publication(d)) for d in sorted(overlays["attestations"].get(run.digest, ())))
    verifications = tuple(
        (d, graph.honoured(graph.nodes[d])) for d in sorted(overlays["verifications"].get(run.digest, ()))
    )
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
        _keys(graph.runs_by["operation"].get(digest, ())),
        _keys(graph.children["workloads"].get(digest, ())),
        _keys(graph.children["implementations"].get(digest, ())),
        _cohort_order(graph, graph.cohorts_by["operation"].get(digest, ())),
    )


def workload_state(graph: Graph, workload: n.Workload) -> tuple[Any, ...]:
    """A workload: its cohorts, largest first."""
    return (
        *manifest_state(graph, workload),
        _cohort_order(graph, graph.cohorts_by["workload"].get(workload.digest, ())),
    )


def implementation_state(graph: Graph, implementation: n.Implementation, project: str | None) -> tuple[Any, ...]:
    """An implementation: its runs and the project its label names (`project`, `displayName`)."""
    runs = _keys(graph.runs_by["implementation"].get(implementation.digest, ()))
    return (*manifest_state(graph, implementation), runs, project)


def project_state(graph: Graph, project: n.Project) -> tuple[Any, ...]:
    """A project: its implementations."""
    return (*manifest_state(graph, project), _keys(graph.children["project_implementations"].get(project.name, ())))

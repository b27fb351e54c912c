"""A cohort alone (`kernelindex.registry.graph_cohort`): it ranks its runs and replays its ledger from any source of
nodes, facts and a publication record (`Derived`), not only a graph; what it computes it keeps, and a warm cache's
saved ranking and ledger restore it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graph_history import history

from kernelindex.registry.graph_cohort import SOURCE_NATIVE, STRICT_EXACT, Cohort, Derived, gpu_keys
from kernelindex.registry.mainline import Mainline
from kernelindex.registry.nodes import Environment, Node
from kernelindex.registry.run_facts import RunFacts

PAST = history()
LAST = len(PAST.commits) - 1


@dataclass(frozen=True)
class _Plain:
    """Nodes, facts and a publication record as plain dicts: what a cohort reads, and nothing of a graph."""

    nodes: Mapping[str, Node]
    facts: Mapping[str, RunFacts]
    mainline: Mainline
    published_in: Mapping[str, int]


def _copy(cohort: Cohort) -> Cohort:
    return Cohort(
        cohort.key,
        cohort.profile,
        cohort.operation,
        cohort.workload,
        cohort.protocol,
        cohort.environment,
        cohort.correctness_key,
        cohort.metric_key,
        cohort.gpu,
        cohort.members,
    )


def test_a_cohort_ranks_and_replays_from_what_it_is_given() -> None:
    graph = PAST.built(LAST)
    plain: Derived = _Plain(dict(graph.nodes), dict(graph.facts), graph.mainline, dict(graph.published_in))
    assert {c.profile for c in graph.cohorts.values()} == {SOURCE_NATIVE, STRICT_EXACT}
    for cohort in graph.cohorts.values():
        alone = _copy(cohort)
        assert not alone.summarized and alone.best is None  # made without a summary: only the ledger knows
        assert alone.ranked(plain) == cohort.ranked(graph)
        assert alone.events(plain) == cohort.events(graph)
        assert alone.holder_ns(plain) == cohort.holder_ns(graph)
        assert alone.leader(plain) == cohort.leader(graph)
        for run in cohort.members:
            assert alone.place(plain, run) == graph.place(run)
    retracted = [c for c in graph.cohorts.values() if any(graph.facts[d].retraction for d in c.members)]
    assert retracted and all(c.events(graph) for c in retracted)  # the retracted run held its place until then


def test_what_a_cohort_computed_it_keeps_and_a_cache_restores() -> None:
    graph = PAST.built(LAST)
    cohort = next(iter(graph.cohorts.values()))
    ranked, events = cohort.ranked(graph), cohort.events(graph)
    assert cohort.ranked(graph) is ranked and cohort.events(graph) is events
    restored = _copy(cohort)
    restored.restore(list(ranked), list(events))
    empty = _Plain({}, {}, Mainline.of((), (), ()), {})  # nothing to compute from: what it returns was restored
    assert restored.ranked(empty) == ranked and restored.events(empty) == events
    assert restored.holder(empty) == cohort.holder(graph)


def test_gpu_keys() -> None:
    environments = [n for n in PAST.nodes_at(LAST) if isinstance(n, Environment)]
    assert sorted(gpu_keys(e) for e in environments) == [("nvidia b200", "sm_100"), ("nvidia h100", "sm_90")]
    assert gpu_keys(None) == ()

"""What both builders derive (`kernelindex.registry.graph_derive`), alone: a run's facts from the nodes (the short way
a cohort's later runs take equals the long way), its standing under the overlays whose commits count, a run whose
references are missing, a cohort's identity and record holder, and the indexes a node belongs to."""

from __future__ import annotations

from graph_history import history, node_of
from helpers import basic_scenario, make_retraction, make_run

from kernelindex.registry.cohorts import Trust
from kernelindex.registry.graph_build import ColdBuild
from kernelindex.registry.graph_derive import Derivation, node_index_keys
from kernelindex.registry.nodes import Run, Workload

PAST = history()
LAST = len(PAST.commits) - 1


def test_the_short_way_equals_the_long_way_for_every_run() -> None:
    graph = PAST.built(LAST)
    runs = [node for node in graph.nodes.values() if isinstance(node, Run)]
    derivation = Derivation(graph)
    short = [derivation.static_facts(run) for run in runs]  # the first of each cohort remembers what others reuse
    assert any(key[0] == "static" for key in derivation.memo)
    assert short == [derivation.static_facts_in_full(run, True) for run in runs]


def test_a_runs_standing_follows_the_overlays_that_count() -> None:
    scenario = basic_scenario()
    graph = PAST.built(LAST)
    derivation = Derivation(graph)
    superseded, retracted, verified = (node_of(run) for run in scenario.runs)
    assert isinstance(retracted, Run) and isinstance(superseded, Run)
    facts = derivation.facts(retracted)
    assert facts.reasons == ("RETRACTED",) and facts.retraction in graph.overlays["retractions"][retracted.digest]
    assert graph.facts[retracted.digest] == facts
    assert derivation.facts(superseded).reasons == ("SUPERSEDED",)
    assert derivation.facts(superseded).superseded_by is not None
    # The registry runner's verification counts from its commit on, until the run verified is removed.
    assert PAST.built(3).facts[verified.digest].trust == Trust.REPORTED
    assert PAST.built(4).facts[verified.digest].trust == Trust.VERIFIED
    assert verified.digest not in graph.facts
    # A retraction in a commit no maintainer signed changes nothing.
    unhonoured = [d for d in graph.overlays["retractions"] if graph.facts[d].retraction is None]
    assert unhonoured and all(graph.facts[d].eligible for d in unhonoured)


def test_a_run_whose_references_are_missing() -> None:
    scenario = basic_scenario()
    run = node_of(make_run("sha256:" + "1" * 64, scenario.workload, "sha256:" + "2" * 64, scenario.environment, 5))
    assert isinstance(run, Run)
    builder = ColdBuild("c" * 40, 0)
    derivation = Derivation(builder.graph)
    assert derivation.static_facts(run, complete=False) is None  # the nodes may come later in a stream
    facts = derivation.facts(run)
    assert facts.cohort is None and facts.reasons == ("UNPUBLISHED", "MISSING_PRIMARY_METRIC")
    assert [warning.split(":")[0] for warning in facts.warnings] == ["dangling-reference"] * 4


def test_a_cohorts_record_holder_without_its_ledger() -> None:
    graph = PAST.built(LAST)
    derivation = Derivation(graph)
    for key, cohort in graph.cohorts.items():
        again = derivation.cohort(key, list(cohort.members))
        assert (again.profile, again.operation, again.gpu, again.members) == (
            cohort.profile,
            cohort.operation,
            cohort.gpu,
            cohort.members,
        )
        assert again.holder_ns(graph) == cohort.holder_ns(graph)
        holder = cohort.holder(graph)
        if again.summarized:  # known without the ledger: the least (value, observed, id) of the eligible
            assert (again.best is None) == (holder is None)
            assert holder is None or (again.best is not None and again.best[2] == holder.run)
    retracting = [c for c in graph.cohorts.values() if not derivation.cohort(c.key, list(c.members)).summarized]
    assert retracting  # a retracted member: only the ledger knows


def test_the_indexes_a_node_belongs_to() -> None:
    scenario = basic_scenario()
    graph = PAST.built(LAST)
    workload, retraction = node_of(scenario.workload), node_of(make_retraction(scenario.runs[1]))
    assert isinstance(workload, Workload)
    assert node_index_keys(graph, workload) == [(graph.children["workloads"], workload.operation)]
    assert node_index_keys(graph, retraction) == [(graph.overlays["retractions"], node_of(scenario.runs[1]).digest)]
    run = node_of(scenario.runs[0])
    assert isinstance(run, Run)
    assert node_index_keys(graph, run) == []  # no `runs_by` index built yet: each is built when first read
    built = graph.runs_by["workload"]
    assert node_index_keys(graph, run) == [(built, run.workload)]

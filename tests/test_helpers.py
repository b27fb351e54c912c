"""The manifest generator of tests/helpers.py makes valid, resolvable manifests of every kind."""

from __future__ import annotations

import pytest
from helpers import (
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    digest_of,
    load_scenario,
    make_attestation,
    make_environment,
    make_implementation,
    make_operation,
    make_project,
    make_protocol,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    make_workload,
    make_workload_suite,
    to_manifest,
)

from kernelindex import registry


def test_every_maker_makes_a_valid_manifest_of_its_kind(store: registry.GitStore) -> None:
    operation = make_operation("op")
    workload, suite = make_workload(operation), make_workload_suite(operation)
    implementation = make_implementation(operation, "kernel")
    protocol, environment = make_protocol(), make_environment()
    runs = [
        make_run(implementation, workload, protocol, environment, 8120),
        make_run(implementation, suite, protocol, environment, "9 us", source_native=True, statistic="mean"),
        make_run(implementation, workload, protocol, environment, 8000, confidence95=(7900, 8100), raw_samples=True),
        make_run(implementation, workload, protocol, environment, None, status="timeout"),
    ]
    overlays = [
        make_attestation(runs[0]),
        make_retraction(runs[1]),
        make_supersession(runs[2], runs[0]),
        make_verification(runs[0], runs[2]),
    ]
    docs = [operation, workload, suite, implementation, make_project("proj"), protocol, environment, *runs, *overlays]
    kinds = [to_manifest(d).kind for d in docs]
    assert sorted(set(kinds)) == sorted(
        registry.KINDS.keys() - {k for k in registry.KINDS if "Serving" in k or k == "ModelRevision"}
    )
    commit = commit_manifests(store, docs)
    assert len(list(store.entries(commit))) == len(docs)


def test_makers_take_digests_or_documents() -> None:
    operation = make_operation("op")
    by_document = make_workload(operation)
    by_digest = make_workload(digest_of(operation))
    assert by_document == by_digest


def test_default_names_follow_the_spec() -> None:
    operation = make_operation("op")
    implementation, protocol, environment = make_implementation(operation), make_protocol(), make_environment()
    workloads = [make_workload(operation, tokens=t) for t in (1, 2)]
    assert workloads[0]["metadata"]["name"] != workloads[1]["metadata"]["name"]
    runs = [make_run(implementation, w, protocol, environment, 100) for w in workloads]
    assert runs[0]["metadata"]["name"] != runs[1]["metadata"]["name"]
    assert make_run(implementation, workloads[0], protocol, environment, 100) == runs[0]  # deterministic


def test_distinct_names_make_distinct_digests() -> None:
    assert digest_of(make_operation("a")) != digest_of(make_operation("b"))
    operation = make_operation("a")
    assert digest_of(make_implementation(operation, "x")) != digest_of(make_implementation(operation, "y"))
    assert digest_of(make_protocol("p")) != digest_of(make_protocol("q"))
    assert digest_of(make_environment(product="NVIDIA H100")) != digest_of(make_environment())


def test_the_basic_scenario(basic_store: registry.GitStore) -> None:
    scenario = basic_scenario()
    head = basic_store.head()
    assert head is not None
    assert {e.digest for e in basic_store.entries(head)} == {digest_of(d) for d in scenario.docs}
    assert [to_manifest(r).document["spec"]["timing"]["latencyNs"]["median"] for r in scenario.runs] == [
        8120,
        7900,
        9000,
    ]
    assert basic_store.commit_info(head).committer.time == TEST_TIME


def test_commit_manifests_returns_the_head_when_nothing_is_new(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert commit_manifests(basic_store, basic_scenario().docs, TEST_TIME + 5) == head


def test_load_scenario_reads_a_data_folder() -> None:
    authored, canonical = load_scenario("authoring")
    assert to_manifest(authored).digest == to_manifest(canonical).digest


def test_commit_manifests_refuses_a_dangling_reference(store: registry.GitStore) -> None:
    with pytest.raises(registry.RejectedChange):
        commit_manifests(store, [make_workload(make_operation("absent"))])

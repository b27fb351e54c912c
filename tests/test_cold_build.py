"""The cold build (`snapshots.build_graph`: runs streamed last, each derived as it arrives, then
only the runs that are unpublished, sourceless or overlaid revisited) makes the graph the
reference path makes: every node parsed by orjson and extracted, taken in git's own order, then
every run derived at once (`graph_build.build`).

On the embedded registry, on a governed registry whose history holds every lifecycle fact
(signed and unsigned), at each of its commits and at a commit off main, and on registries whose
runs reference nodes that are not there."""

from __future__ import annotations

import orjson
import pytest
from governed import build_governed
from graph_equality import assert_same_graph
from helpers import (
    basic_scenario,
    commit_manifests,
    commit_meta,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    make_workload,
    to_manifest,
)
from signing import T0, Key, commit_raw

from kernelindex import registry
from kernelindex.registry.cohorts import Trust
from kernelindex.registry.graph import Graph
from kernelindex.registry.graph_build import build
from kernelindex.registry.graph_derive import Derivation
from kernelindex.registry.nodes import Run, extract
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer
from kernelindex.registry.snapshots import Honour, Publication, build_graph, publication_of
from kernelindex.registry.store import MAIN


def _reference(store: registry.GitStore, commit: str, publication: Publication, honour: Honour | None) -> Graph:
    """The graph of `commit` the plain way, from the same publication record and signatures."""
    nodes = [extract(k, d, o, orjson.loads(data)) for k, d, o, data in store.manifests_with_bytes(commit)]
    overlays = [node.digest for node in nodes if node.kind in ("Retraction", "Supersession", "Verification")]
    commits = {publication.mainline.commits[publication.first[d]] for d in overlays if d in publication.first}
    honoured = honour(commits) if honour is not None else frozenset()
    position = publication.mainline.positions.get(commit)
    time = store.commit_info(commit).committer.time
    return build(commit, time, publication.mainline, position, nodes, honoured, publication.first)


def _same_as_reference(store: registry.GitStore, commit: str, honour: Honour | None = None) -> Graph:
    built, publication = build_graph(store, commit, None, honour)
    head = store.head()
    assert head is not None
    assert dict(publication.first) == dict(publication_of(store, head).first)
    reference = _reference(store, commit, publication, honour)
    assert_same_graph(reference, built)
    # Within each kind, nodes and facts keep git's order, and cohorts the order of their first run
    # (readers that take the first of several, such as the resolver's benchmark names, see the same).
    for kind in {node.kind for node in reference.nodes.values()}:
        assert [d for d, n in built.nodes.items() if n.kind == kind] == [
            d for d, n in reference.nodes.items() if n.kind == kind
        ]
    assert list(built.facts) == list(reference.facts)
    assert list(built.cohorts) == list(reference.cohorts)
    return built


@pytest.mark.slow  # the whole embedded registry, twice
def test_the_embedded_registry(embedded: registry.GitStore) -> None:
    head = embedded.head()
    assert head is not None
    graph = _same_as_reference(embedded, head)
    assert len(graph.facts) == sum(1 for node in graph.nodes.values() if node.kind == "BenchmarkRun")


def test_a_governed_registry_at_each_commit(store: registry.GitStore, keys: dict[str, Key]) -> None:
    governed = build_governed(store, keys["alice"])
    chain = registry.TrustChain(store)
    for commit in governed.commits:
        graph = _same_as_reference(store, commit, chain.honour)
    # The last graph holds what the revisited runs owe to overlays and to their publishing commit.
    facts = graph.facts
    assert facts[governed.runs["c1"]].reasons == ("RETRACTED",)
    assert facts[governed.runs["a1"]].reasons == ()  # its retraction was not signed
    assert facts[governed.runs["b1"]].superseded_by == governed.runs["d1"]
    assert facts[governed.runs["a2"]].trust == Trust.VERIFIED
    assert {f.source for f in facts.values()} == {"governed"}  # no run has a source of its own


def test_unsigned_overlays_count_for_nothing_without_a_trust_chain(
    store: registry.GitStore, keys: dict[str, Key]
) -> None:
    governed = build_governed(store, keys["alice"])
    graph = _same_as_reference(store, governed.commits[-1])
    assert graph.facts[governed.runs["c1"]].reasons == ()


def test_a_commit_off_main_has_unpublished_runs(basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    s = basic_scenario()
    later = make_run(
        s.implementations[0], s.workload, s.protocol, s.environment, 6000, name="on-a-branch", source_native=True
    )
    branch = commit_raw(basic_store, head, {to_manifest(later).path: to_manifest(later).stored_bytes()})
    graph = _same_as_reference(basic_store, branch)
    assert graph.facts[to_manifest(later).digest].reasons == ("UNPUBLISHED",)


def test_runs_whose_references_are_missing(basic_store: registry.GitStore) -> None:
    """Pushed to main without the PR check: a run naming a workload that is not there, and one
    naming another run as its implementation. Their facts say so, and every other run's are the same."""
    s = basic_scenario()
    dangling = make_run(s.implementations[0], "sha256:" + "ab" * 32, s.protocol, s.environment, 5000, name="dangling")
    odd = make_run(s.runs[0], s.workload, s.protocol, s.environment, 5000, name="odd", source_native="elsewhere")
    head = basic_store.head()
    assert head is not None
    files = {to_manifest(d).path: to_manifest(d).stored_bytes() for d in (dangling, odd)}
    pushed = commit_raw(basic_store, head, files, when=T0 + 7200)
    assert basic_store._compare_and_swap(MAIN, head, pushed)
    graph = _same_as_reference(basic_store, pushed)
    warnings = graph.facts[to_manifest(dangling).digest].warnings
    assert any(w.startswith("dangling-reference: the workload") for w in warnings)
    assert graph.facts[to_manifest(odd).digest].source == "elsewhere"


def test_runs_with_their_own_source_and_without(basic_store: registry.GitStore) -> None:
    s = basic_scenario()
    native = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 6500, source_native="upstream")
    head = commit_manifests(basic_store, [native], T0 + 60, source="importer")
    graph = _same_as_reference(basic_store, head)
    assert graph.facts[to_manifest(native).digest].source == "upstream"
    assert graph.facts[to_manifest(s.runs[0]).digest].source == "test"


def test_overlays_of_runs_with_a_source_of_their_own(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """Signed overlays of source-native runs: derived while streaming as published and plain, they
    are revisited for their overlays alone (the sourceless runs of the governed registry are
    revisited anyway)."""
    s = basic_scenario()
    native = [
        make_run(s.implementations[0], s.workload, s.protocol, s.environment, 8000 + i, f"2026-08-0{i + 1}T12:00:00Z",
                 name=f"native-{i}", source_native="upstream")
        for i in range(4)
    ]  # fmt: skip
    sign = ssh_signer(keys["alice"].private)
    base = [d for d in s.docs if d["kind"] != "BenchmarkRun"]
    first = store.add(
        [to_manifest(d) for d in [*base, *native]],
        commit_meta(T0, source="native"),
        sign=sign,
        extra_files={POLICY_PATH: keys["alice"].allowed_signer},
    ).commit
    overlays = [
        make_retraction(native[0], "clock drift"),
        make_supersession(native[2], native[1], "wrong protocol"),
        make_verification(native[3], native[2], "registry-runner"),
    ]
    second = store.add([to_manifest(d) for d in overlays], commit_meta(T0 + 100, source="native"), sign=sign).commit
    assert first is not None and second is not None
    graph = _same_as_reference(store, second, registry.TrustChain(store).honour)
    facts = {i: graph.facts[to_manifest(run).digest] for i, run in enumerate(native)}
    assert facts[0].reasons == ("RETRACTED",)
    assert facts[1].superseded_by == to_manifest(native[2]).digest
    assert facts[3].trust == Trust.VERIFIED
    assert {f.source for f in facts.values()} == {"upstream"}


def test_cohorts_of_published_source_native_runs(store: registry.GitStore) -> None:
    """Runs derived while streaming and never revisited: their cohorts come from what the stream
    gathered (members, a source-native member, the record holder), in two cohorts and one with no
    eligible run."""
    s = basic_scenario()
    a, b = s.implementations
    other = make_workload(s.operation, tokens=512)
    runs = [
        make_run(a, s.workload, s.protocol, s.environment, 9000, "2026-08-01T12:00:00Z", source_native="up"),
        make_run(b, s.workload, s.protocol, s.environment, 8000, "2026-08-02T12:00:00Z", source_native="up"),
        make_run(a, s.workload, s.protocol, s.environment, 8000, "2026-08-03T12:00:00Z", source_native="up"),
        make_run(a, other, s.protocol, s.environment, 7000, "2026-08-04T12:00:00Z", status="timeout", source_native="up"),
    ]  # fmt: skip
    base = [d for d in s.docs if d["kind"] != "BenchmarkRun"]
    head = commit_manifests(store, [*base, other, *runs], T0, source="importer")
    graph = _same_as_reference(store, head)
    cohort = graph.cohorts[graph.facts[to_manifest(runs[0]).digest].cohort or ""]
    assert cohort.profile == "source_native" and len(cohort.members) == 3
    assert cohort.holder_ns(graph) == graph.nodes[to_manifest(runs[1]).digest].observed_ns  # type: ignore[union-attr]
    lone = graph.cohorts[graph.facts[to_manifest(runs[3]).digest].cohort or ""]
    assert lone.holder_ns(graph) is None


@pytest.mark.slow  # the whole embedded registry
def test_each_runs_static_facts_the_short_way_equal_the_long_way(embedded: registry.GitStore) -> None:
    """What a cohort's runs share (key, operation, GPU keys) and the (reasons, trust) of a standing
    are remembered from the first run that takes the long way; every later run's facts made from
    them equal the long way's for that run."""
    head = embedded.head()
    assert head is not None
    graph, _ = build_graph(embedded, head)
    runs = [node for node in graph.nodes.values() if isinstance(node, Run)]
    derivation = Derivation(graph)
    short = [derivation.static_facts(run) for run in runs]  # the first of each cohort fills what the rest reuse
    assert sum(1 for key in derivation.memo if key[0] == "static") < len(runs) / 2  # most runs took the short way
    long = [derivation.static_facts_in_full(run, True) for run in runs]
    assert short == long
    assert any(facts is not None and facts.warnings for facts in short)  # notes and mismatches compared too


def test_a_runs_note_is_kept_when_its_cohort_shares_the_rest(basic_store: registry.GitStore) -> None:
    """Runs declaring a statistic they do not report carry a note; the second of a cohort takes the
    short way, and its facts keep its own note."""
    s = basic_scenario()
    timing = {"timing": {"primaryStatistic": "p95", "latencyNs": {"median": 5000}}}
    noted = [
        make_run(s.implementations[i], s.workload, s.protocol, s.environment, 1, name=f"noted-{i}", extra_spec=timing)
        for i in (0, 1)
    ]
    head = commit_manifests(basic_store, noted, T0 + 60, source="importer")
    graph = _same_as_reference(basic_store, head)
    runs = [node for node in graph.nodes.values() if isinstance(node, Run)]
    derivation = Derivation(graph)
    short = [derivation.static_facts(run) for run in runs]
    assert short == [derivation.static_facts_in_full(run, True) for run in runs]
    note = "primary statistic 'p95' is not reported; its value is the median"
    assert all(graph.facts[to_manifest(run).digest].warnings == (note,) for run in noted)

"""Search that costs what it does (registry/search.py): the same runs, in the same order, with the same
scores as the search before its index (tests/search_reference.py), over upstream's grammar cases and
queries drawn from the embedded registry's own words and facets; the limits at their exact values; the
index built once per snapshot and dropped with it. Timings live in the benchmark (bench/search.py)."""

from __future__ import annotations

import gc
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import (
    EMBEDDED_REPO,
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
    to_manifest,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_reference import reference_search_runs
from server import Running, serve

from kernelindex import registry
from kernelindex.registry import search, search_facets
from kernelindex.registry.errors import SearchTooLarge
from kernelindex.registry.graph import Graph
from kernelindex.registry.graph_build import build
from kernelindex.registry.search import MAX_QUERY_CHARS, MAX_TERMS, parse_query, search_cost, search_scored
from kernelindex.registry.snapshots import Snapshots

UPSTREAM_CASES = [  # apps/web/src/lib/search-query.test.ts, and what tests/test_search.py asks
    "rmsnorm B200 bf16 [2048, 4096]",
    "gemm gpu:H100 dtype=bfloat16 framework:torch arch:sm100 trust:verified",
    "rmsnorm tokens=2048 hidden=4096",
    "rmsnorm gpuu:B200",
    "softmax dtype:xf16 trust:gold shape:[a,b]",
    "gemm cuda:>=13",
    '"fused add rmsnorm" residual',
    "gemm 4096x4096 triton",
    'gpu:"NVIDIA B200" tech:tma',
    "rmsnorm B200 bf16 tokens=2048 trust:verified",
    "gpu:b200",
    '"fused attention"',
    "rmsnorm b200 bf16 gpuu:x",
]
FACETS = [
    "dtype:bf16", "dtype:fp16", "fp8", "nvfp4", "dtype:fp32", "layout:row_major", "layout:col-major",
    "framework:torch", "framework:jax", "pytorch", "cuda:12", "cuda:13", "license:mit", "license:apache-2.0",
    "license:bsd-3-clause", "installable:true", "installable:false", "source:true", "trust:reported",
    "trust:reproducible", "trust:verified", "triton", "cuda", "cutlass", "b200", "h100", "mi300x", "a100",
    "arch:sm_90", "arch:sm100", "arch:gfx942", "family:rmsnorm", "family:gemm", "family:attention",
    "shape:[2048,4096]", "4096x4096", "tokens=2048", "hidden=4096", "m=1024", "gpu:nvidia",
]  # fmt: skip


Document = Callable[[str], Mapping[str, Any]]


def _compare(graph: Graph, document: Document, queries: list[str]) -> list[str]:
    """The queries whose answers differ (runs, order or scores) between the index and the reference."""
    differ = []
    for query in queries:
        intent = parse_query(query)
        if search_scored(graph, intent, document) != reference_search_runs(graph, intent, document):
            differ.append(query)
    return differ


# Against the embedded registry -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _words(graph: Graph) -> Counter[str]:
    """How many kernel runs' operation or implementation names and titles hold each word."""
    found: Counter[str] = Counter()
    for digest, facts in graph.facts.items():
        run = graph.nodes[digest]
        assert isinstance(run, registry.nodes.Run)
        words: set[str] = set()
        for node in (graph.nodes.get(facts.operation or ""), graph.nodes.get(run.implementation)):
            if node is not None:
                words.update(re.findall(r"[a-z0-9.]+", f"{node.name} {node.title or ''}".lower().replace("_", " ")))
        found.update(words)
    return found


def _queries(graph: Graph) -> list[str]:
    """Upstream's cases, facets, and words of the registry: the commonest, some rare ones, phrases from
    operation titles, `op:` terms, mixed case and punctuation, repeats, combinations, and nonsense."""
    common = [word for word, _ in _words(graph).most_common()]
    titles = sorted(
        {node.title for node in graph.nodes.values() if isinstance(node, registry.nodes.Operation) and node.title}
    )
    phrases = [f'"{" ".join(title.lower().replace("_", " ").split()[:3])}"' for title in titles[::40]]
    queries = UPSTREAM_CASES + FACETS + common[:30] + common[300::250] + phrases
    queries += [f"op:{word}" for word in common[:6]] + ["op:rmsnorm", 'op:"fused add rmsnorm"', "op:kernel"]
    queries += [
        "", "!!!", "a", "zzzz", "RMSNorm", "Fused-Attention", "fused_attention", "sol sol sol", "gemm gemm",
        "submission kernelbot gpumode", "gpumode kernelbot submission amd", '"gpumode kernelbot"',
        "rmsnorm b200 bf16", "gemm trust:reproducible fp8", "attention b200 bf16 layout:row_major",
        "liger triton h100 dtype:bf16 trust:reported", "rmsnorm dtype:bf16 shape:[2048,4096]",
        "moe fp8 b200 framework:torch cuda:12", "op:gemm fp8 b200 license:mit installable:true",
        " ".join(common[:MAX_TERMS]), " ".join(common[:3] * 10),
    ]  # fmt: skip
    return queries


@pytest.mark.slow
def test_every_answer_is_the_reference_answer_on_the_embedded_registry(api: Running) -> None:
    graph = api.service.snapshots.head
    documents = api.service.objects
    read: dict[str, Mapping[str, Any]] = {}

    def document(digest: str) -> Mapping[str, Any]:
        if digest not in read:
            read[digest] = documents.get(graph.nodes[digest].oid)
        return read[digest]

    queries = _queries(graph)
    assert len(queries) >= 120
    # A snapshot of its own, searched before and after it is prepared (every run's place known, every facet
    # built): the served one may be either by now.
    fresh = build(graph.commit, graph.committed_at, graph.mainline, graph.position, graph.nodes.values())
    # The reference reads the graph, never the index, so its answers are computed once, before the preparation,
    # and both states of the index must give them (the reference is nearly all of this test's time).
    expected = {q: reference_search_runs(fresh, parse_query(q), document) for q in queries}
    assert sum(1 for answer in expected.values() if answer) >= 80  # most queries find runs: not vacuous
    assert [q for q in queries if search_scored(fresh, parse_query(q), document) != expected[q]] == []
    search.prepare(fresh, document)
    assert [q for q in queries if search_scored(fresh, parse_query(q), document) != expected[q]] == []


# Against a small registry, with generated queries -----------------------------------------------------------


def _small_registry(path: Path) -> Snapshots:
    """Two operations (one titled), four implementations (titled, with and without source), two
    workloads, two GPUs, runs in and out of their cohorts' lead, one not eligible, one without a value."""
    store = registry.GitStore.init(path)
    scenario = basic_scenario()
    fused = make_operation("fused-add-rmsnorm", hidden=2048)
    fused["metadata"]["title"] = "Fused Add RMSNorm (residual)"
    wide = make_workload(fused, tokens=4096, hidden=2048, name="fused-t4096")
    kernels = [
        make_implementation(fused, "liger-fused-rmsnorm", dtypes=("bf16", "fp16")),
        make_implementation(fused, "triton-fused-add", architectures=("sm_90",), repository=None),
    ]
    kernels[0]["metadata"]["title"] = "Liger fused RMSNorm kernel"
    h100 = make_environment("test-h100", product="NVIDIA H100", architecture="sm_90")
    runs = [
        make_run(kernels[0], wide, scenario.protocol, scenario.environment, 5100, "2026-08-04T12:00:00Z"),
        make_run(kernels[1], wide, scenario.protocol, scenario.environment, 5000, "2026-08-05T12:00:00Z"),
        make_run(kernels[1], wide, scenario.protocol, h100, 7000, "2026-08-06T12:00:00Z"),
        make_run(kernels[0], wide, make_protocol("other"), h100, 6000, "2026-08-06T12:00:00Z", status="timeout"),
        make_run(kernels[0], scenario.workload, scenario.protocol, h100, None, "2026-08-07T12:00:00Z"),
    ]
    # The last run names an implementation of another operation than its workload's (as 43 of upstream's do).
    documents = [*scenario.docs, fused, wide, *kernels, h100, make_protocol("other"), *runs]
    commit_manifests(store, documents, allowed_mismatches=[digest_of(runs[-1])])
    snapshots = Snapshots(path)
    snapshots.load()
    return snapshots


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Graph, Document]:
    snapshots = _small_registry(tmp_path_factory.mktemp("search") / "manifests.git")
    store = snapshots.store()
    graph = snapshots.head
    return graph, lambda digest: orjson.loads(store.read_blob(graph.nodes[digest].oid))


VOCABULARY = [
    "rmsnorm", "fused", "add", "kernel", "a", "b", "liger", "triton", "h4096", "residual", "operation",
    "Fused-Add", "RMSNorm", "kernel_a", '"fused add"', '"add rmsnorm"', '"rmsnorm fused"', "op:fused", "op:kernel",
    "op:rmsnorm", "b200", "h100", "sm_90", "bf16", "fp16", "trust:reported", "trust:reproducible", "source:true",
    "language:triton", "family:rmsnorm", "dtype:fp16", "layout:row_major", "shape:[2048,4096]", "tokens=4096",
    "installable:true", "license:apache-2.0", "license:mit", "!!", "zz",
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(VOCABULARY), max_size=8))
def test_generated_queries_answer_as_the_reference(small: tuple[Graph, Document], words: list[str]) -> None:
    graph, document = small
    assert _compare(graph, document, [" ".join(words)]) == []


def test_large_answers_sort_as_small_ones(small: tuple[Graph, Document], monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer over `SMALL_ANSWER` runs sorts by every run's place, computed once: the same order."""
    graph, document = small
    queries = ["", *VOCABULARY, *(f"{a} {b}" for a in VOCABULARY[:12] for b in VOCABULARY[12:24])]
    monkeypatch.setattr(search, "SMALL_ANSWER", 0)
    assert search_scored(graph, parse_query(""), document)  # the large path answers
    assert _compare(graph, document, queries) == []


def test_small_answers_sort_as_before_once_every_place_is_known(small: tuple[Graph, Document]) -> None:
    """Once a snapshot knows every run's place (a large answer, or `prepare`), small answers sort by it: the
    same order as by each run's (rank, newest, digest)."""
    graph, document = small
    fresh = build(graph.commit, graph.committed_at, graph.mainline, graph.position, graph.nodes.values())
    queries = ["", *VOCABULARY, *(f"{a} {b}" for a in VOCABULARY[:12] for b in VOCABULARY[12:24])]
    before = [search_scored(fresh, parse_query(query), document) for query in queries]
    search.prepare(fresh, document)
    assert [search_scored(fresh, parse_query(query), document) for query in queries] == before
    assert _compare(fresh, document, queries) == []


def test_the_small_registry_exercises_every_score(small: tuple[Graph, Document]) -> None:
    """Operation name (3), title (2) and implementation (1) hits, summed over repeated terms."""
    graph, document = small
    scores = {score for _, score in search_scored(graph, parse_query("rmsnorm"), document)}
    assert scores == {3}
    assert {score for _, score in search_scored(graph, parse_query("residual liger"), document)} == {2 + 1}
    assert {score for _, score in search_scored(graph, parse_query("kernel kernel"), document)} == {1 + 1}
    assert search_scored(graph, parse_query("rmsnorm liger"), document) == reference_search_runs(
        graph, parse_query("rmsnorm liger"), document
    )


# Limits ------------------------------------------------------------------------------------------------


def test_the_term_limit_sits_at_its_exact_value() -> None:
    assert MAX_TERMS == 32
    at_limit = " ".join(f"w{i}" for i in range(MAX_TERMS))
    assert len(parse_query(at_limit).text) == MAX_TERMS
    assert search_cost(at_limit) == 1 + MAX_TERMS
    over = at_limit + " w32"
    for call in (parse_query, search_cost):
        with pytest.raises(SearchTooLarge) as refused:
            call(over)
        assert (refused.value.unit, refused.value.size, refused.value.limit) == ("terms", 33, 32)
        assert str(refused.value) == "a search query holds at most 32 terms (this one holds 33); shorten it"
    # Terms as the grammar reads them: a quoted phrase or a bracketed shape is one.
    assert search_cost('"a b c" [1, 2, 3] gpu:"NVIDIA B200"') == 4


def test_the_length_limit_sits_at_its_exact_value() -> None:
    assert MAX_QUERY_CHARS == 512
    assert search_cost("x" * MAX_QUERY_CHARS) == 2
    with pytest.raises(SearchTooLarge) as refused:
        parse_query("x" * (MAX_QUERY_CHARS + 1))
    assert (refused.value.unit, refused.value.size) == ("characters", 513)


def test_255_one_letter_words_are_refused_before_any_work() -> None:
    query = " ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(255))
    assert len(query) == 509
    with pytest.raises(SearchTooLarge):
        search_cost(query)
    with pytest.raises(SearchTooLarge):
        parse_query(query)


def test_the_api_answers_an_oversized_search_with_a_coded_error(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path) as running:
        words = " ".join(f"w{i}" for i in range(MAX_TERMS + 1))
        body = running.graphql("query($q: String!) { search(query: $q) { text } }", {"q": words}).json()
        assert "data" not in body  # refused before anything ran, as any limit is
        [error] = body["errors"]
        assert error["extensions"]["code"] == "SEARCH_TOO_LARGE"
        assert error["message"] == "a search query holds at most 32 terms (this one holds 33); shorten it"
        fine = running.graphql('{ search(query: "kernel") { runs { totalCount } } }').json()
        assert fine["data"]["search"]["runs"]["totalCount"] == 3


# One index per snapshot ------------------------------------------------------------------------------------


def test_the_index_is_built_once_per_snapshot_and_reads_each_manifest_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_facets, "_FACTS", {})  # what earlier tests read stays out of the count
    snapshots = _small_registry(tmp_path / "manifests.git")
    graph, store = snapshots.head, snapshots.store()
    reads: Counter[str] = Counter()

    def document(digest: str) -> Mapping[str, Any]:
        reads[digest] += 1
        loaded: Mapping[str, Any] = orjson.loads(store.read_blob(graph.nodes[digest].oid))
        return loaded

    first = search._index_of(graph)
    for query in ("dtype:bf16", "dtype:bf16 layout:row_major", "kernel license:mit", "framework:torch cuda:12"):
        search_scored(graph, parse_query(query), document)
    assert search._index_of(graph) is first
    assert reads and max(reads.values()) == 1
    # Another snapshot of the same registry reads nothing again: manifests are kept by blob id.
    fresh = build(graph.commit, graph.committed_at, graph.mainline, graph.position, graph.nodes.values())
    search_scored(fresh, parse_query("dtype:bf16"), document)
    assert search._index_of(fresh) is not first and max(reads.values()) == 1


def test_an_index_goes_with_its_snapshot(tmp_path: Path) -> None:
    snapshots = _small_registry(tmp_path / "manifests.git")
    graph = snapshots.head
    fresh = build(graph.commit, graph.committed_at, graph.mainline, graph.position, graph.nodes.values())
    search_scored(fresh, parse_query("kernel"), lambda digest: {})
    held = len(search._INDEXES)
    del fresh
    gc.collect()
    assert len(search._INDEXES) == held - 1


def test_a_prepared_snapshot_answers_every_facet_without_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_facets, "_FACTS", {})
    snapshots = _small_registry(tmp_path / "manifests.git")
    graph, store = snapshots.head, snapshots.store()
    reads: Counter[str] = Counter()

    def document(digest: str) -> Mapping[str, Any]:
        reads[digest] += 1
        loaded: Mapping[str, Any] = orjson.loads(store.read_blob(graph.nodes[digest].oid))
        return loaded

    search.prepare(graph, document)
    # Each workload, implementation and environment the runs name, once.
    runs = [run for run in graph.nodes.values() if isinstance(run, registry.nodes.Run)]
    named = {d for run in runs for d in (run.workload, run.implementation, run.environment)}
    assert set(reads) == named and set(reads.values()) == {1}

    def unread(digest: str) -> Mapping[str, Any]:
        raise AssertionError(f"read {digest} after prepare")

    every = "family:rmsnorm trust:reported language:triton source:true bf16 shape:[4096,2048] tokens=4096 "
    every += "layout:row_major framework:torch cuda:12 license:apache-2.0 installable:false kernel"
    assert search_scored(graph, parse_query(every), unread) == reference_search_runs(
        graph, parse_query(every), document
    )


def test_a_search_kept_for_its_snapshot_pages_as_one_and_a_new_commit_searches_again(tmp_path: Path) -> None:
    """Paging asks one search again with other arguments: the snapshot keeps its answer, and a new snapshot
    (a commit) searches afresh."""
    store = registry.GitStore.init(tmp_path / "manifests.git")
    s = basic_scenario()
    commit_manifests(store, s.docs)
    document = (
        'query($first: Int, $after: String) { search(query: "kernel") { '
        "runs(first: $first, after: $after) { totalCount pageInfo { endCursor } edges { node { digest } } } } }"
    )
    with serve(store.path, hook_secret="s3cret") as running:

        def page(first: int, after: str | None = None) -> dict[str, Any]:
            body = running.graphql(document, {"first": first, "after": after}).json()
            return body["data"]["search"]["runs"]  # type: ignore[no-any-return]

        whole = [edge["node"]["digest"] for edge in page(10)["edges"]]
        assert len(whole) == 3
        walked, after = [], None
        for _ in whole:
            one = page(1, after)
            walked += [edge["node"]["digest"] for edge in one["edges"]]
            after = one["pageInfo"]["endCursor"]
        assert walked == whole
        assert list(running.service.snapshots.head.__dict__["_searches"]) == ["kernel"]
        new = make_run(s.implementations[0], s.workload, s.protocol, s.environment, 100, name="run-kernel-new")
        store.add([to_manifest(new)], commit_meta(TEST_TIME + 60, subject="Add a run"))
        refreshed = running.client.post("/hooks/refresh", headers={"authorization": "Bearer s3cret"})
        assert refreshed.status_code == 200
        again = [edge["node"]["digest"] for edge in page(10)["edges"]]
        assert len(again) == 4 and set(whole) < set(again) and digest_of(new) in again

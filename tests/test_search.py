"""Search: KernelIndex's grammar, its own test cases (apps/web/src/lib/search-query.test.ts),
and what a user types finding what they mean, against the embedded registry; paging on its snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import basic_scenario, commit_manifests, make_run
from server import Running, serve

from kernelindex import registry
from kernelindex.core.settings import EMBEDDED_REPO
from kernelindex.registry.cohorts import Trust
from kernelindex.registry.search import parse_query

# Upstream's cases, as its tests state them -------------------------------------------------------------


def test_bare_hardware_dtype_and_shape_tokens() -> None:
    intent = parse_query("rmsnorm B200 bf16 [2048, 4096]")
    assert (intent.text, intent.gpu, intent.dtypes, intent.shape, intent.issues) == (
        ["rmsnorm"], "b200", ["bf16"], (2048, 4096), [],
    )  # fmt: skip


def test_keyed_facets_with_either_separator_and_aliases() -> None:
    intent = parse_query("gemm gpu:H100 dtype=bfloat16 framework:torch arch:sm100 trust:verified")
    assert (intent.gpu, intent.dtypes, intent.framework, intent.architecture, intent.minimum_trust, intent.text) == (
        "h100", ["bf16"], "pytorch", "sm_100", Trust.VERIFIED, ["gemm"],
    )  # fmt: skip


def test_name_equals_integer_is_an_axis_binding() -> None:
    intent = parse_query("rmsnorm tokens=2048 hidden=4096")
    assert intent.axes == {"tokens": 2048, "hidden": 4096}
    assert [f.field for f in intent.facets] == ["axis", "axis"]


def test_unknown_filters_get_a_hint_never_free_text() -> None:
    intent = parse_query("rmsnorm gpuu:B200")
    assert intent.text == ["rmsnorm"] and intent.gpu is None
    assert len(intent.issues) == 1 and "Did you mean 'gpu:'" in intent.issues[0].message


def test_invalid_values_are_field_level_issues() -> None:
    intent = parse_query("softmax dtype:xf16 trust:gold shape:[a,b]")
    messages = [i.message for i in intent.issues]
    assert ["unknown dtype" in messages[0], "unknown trust level" in messages[1], "unparseable shape" in messages[2]] == [
        True, True, True,
    ]  # fmt: skip
    assert intent.dtypes == [] and intent.minimum_trust is None


def test_range_operators_are_refused() -> None:
    intent = parse_query("gemm cuda:>=13")
    assert intent.cuda_major is None and "range filters" in intent.issues[0].message


def test_quoted_strings_and_other_words_are_text() -> None:
    intent = parse_query('"fused add rmsnorm" residual')
    assert intent.text == ["fused add rmsnorm", "residual"] and intent.facets == []


def test_nxm_shapes_and_language_words() -> None:
    intent = parse_query("gemm 4096x4096 triton")
    assert intent.shape == (4096, 4096) and intent.language == "triton"


def test_quoted_values_and_keys_this_registry_cannot_search() -> None:
    intent = parse_query('gpu:"NVIDIA B200" tech:tma')
    assert intent.gpu == "nvidia b200"
    assert intent.issues[0].token == "tech:tma" and "not searchable here" in intent.issues[0].message


# Against the embedded registry ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _search(api: Running, query: str, page: int = 100) -> tuple[int, list[str]]:
    document = (
        "query($q: String!, $n: Int) { search(query: $q, first: $n) { runs { totalCount edges { node { digest } } } } }"
    )
    runs = api.graphql(document, {"q": query, "n": page}).json()["data"]["search"]["runs"]
    return runs["totalCount"], [e["node"]["digest"] for e in runs["edges"]]


def _b200_runs(api: Running) -> int:
    """Kernel runs on an NVIDIA B200, counted from the graph's own nodes (not through any filter)."""
    graph = api.service.snapshots.head
    environments = {
        d
        for d, node in graph.nodes.items()
        if isinstance(node, registry.nodes.Environment) and node.product == "NVIDIA B200"
    }
    runs = (graph.nodes[d] for d in graph.facts)
    return sum(1 for run in runs if isinstance(run, registry.nodes.Run) and run.environment in environments)


@pytest.mark.slow
def test_a_gpu_word_in_any_case_is_the_product(api: Running) -> None:
    expected = _b200_runs(api)
    assert expected > 4000
    word, named = _search(api, "gpu:b200"), _search(api, 'gpu:"NVIDIA B200"')
    assert word == named and word[0] == expected
    for value in ("b200", "B200", "NVIDIA B200", "nvidia b200"):
        body = api.graphql("query($g: String) { runs(filter: {gpu: $g}) { totalCount } }", {"g": value}).json()
        assert body["data"]["runs"]["totalCount"] == expected, value


@pytest.mark.slow
def test_words_find_names_written_with_underscores(api: Running) -> None:
    body = api.graphql('{ operations(search: "fused attention", first: 100) { edges { node { name title } } } }').json()
    found = [f"{e['node']['name']} {e['node']['title']}" for e in body["data"]["operations"]["edges"]]
    # SOL-ExecBench's operations are named 060-fused-attention-... and titled 060_fused_attention_...
    assert found and all("fused attention" in text.lower().replace("_", " ").replace("-", " ") for text in found)
    total, digests = _search(api, '"fused attention"')
    assert total > 0
    graph = api.service.snapshots.head
    for digest in digests:
        operation = graph.nodes[graph.facts[digest].operation or ""]
        text = f"{operation.name} {operation.title}".lower().replace("_", " ").replace("-", " ")
        assert "fused attention" in text


@pytest.mark.slow
def test_search_reports_how_it_read_the_query(api: Running) -> None:
    body = api.graphql(
        '{ search(query: "rmsnorm b200 bf16 gpuu:x") { text facets { field display } issues { token } } }'
    )
    search = body.json()["data"]["search"]
    assert search["text"] == ["rmsnorm"]
    assert [(f["field"], f["display"]) for f in search["facets"]] == [("gpu", "gpu B200"), ("dtype", "dtype bf16")]
    assert search["issues"] == [{"token": "gpuu:x"}]


# Paging on its snapshot ------------------------------------------------------------------------------


def test_paging_continues_on_its_snapshot_after_a_new_commit(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    scenario = basic_scenario()
    commit_manifests(store, scenario.docs)
    implementation = scenario.implementations[1]
    with serve(store.path) as running:
        query = "query($after: String) { runs(first: 2, after: $after) { pageInfo { commit endCursor } edges { node { name } } } }"
        first = running.graphql(query).json()["data"]["runs"]
        started = first["pageInfo"]["commit"]
        newer = make_run(
            implementation, scenario.workload, scenario.protocol, scenario.environment, 7000,
            "2026-08-09T12:00:00Z", name="run-b2",
        )  # fmt: skip
        moved = commit_manifests(store, [newer], subject="Add a newer run")
        assert running.client.post("/hooks/refresh").json()["serving"] == moved
        second = running.graphql(query, {"after": first["pageInfo"]["endCursor"]}).json()["data"]["runs"]
        assert second["pageInfo"]["commit"] == started
        names = [e["node"]["name"] for e in first["edges"] + second["edges"]]
        assert names == ["run-b1", "run-a2", "run-a1"]  # newest first, as of the first page's commit
        fresh = running.graphql(query).json()["data"]["runs"]
        assert fresh["pageInfo"]["commit"] == moved and fresh["edges"][0]["node"]["name"] == "run-b2"

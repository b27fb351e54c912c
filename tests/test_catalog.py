"""The index pages' tallies (registry/catalog.py) and their GraphQL fields, on a registry built by hand
(tests/catalog_scenario.py, whose docstring writes out every expected count): GPUs grouped by product,
project standings (led, records held, entered), sources with their latest commit, workload axes,
related operations and operation families."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from catalog_scenario import Catalog, build_catalog
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.registry import catalog
from kernelindex.registry.snapshots import Snapshots


@pytest.fixture
def built(store: registry.GitStore) -> Catalog:
    return build_catalog(store)


@pytest.fixture
def client(store: registry.GitStore, built: Catalog) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(repo_path=store.path, graph_cache=False, poll_seconds=3600))) as c:
        yield c


def _data(client: TestClient, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    body = client.post("/graphql", json={"query": query, "variables": variables or {}}).json()
    assert "errors" not in body, body["errors"]
    return body["data"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("product", "slug"),
    [
        ("NVIDIA B200", "nvidia-b200"),
        ("nvidia  b200", "nvidia-b200"),
        ("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090"),
        ("AMD Instinct™ MI300X", "amd-instinct-mi300x"),
        ("-H100-", "h100"),
        ("···", ""),
    ],
)
def test_a_gpus_slug_is_its_product_in_words(product: str, slug: str) -> None:
    assert catalog.gpu_slug(product) == slug


def test_the_tallies_of_the_hand_built_registry(store: registry.GitStore, built: Catalog) -> None:
    snapshots = Snapshots(store.path, validate=False)
    snapshots.load()
    graph = snapshots.head
    gpus = {gpu.slug: gpu for gpu in catalog.gpus(graph)}
    assert list(gpus) == ["nvidia-b200", "nvidia-gb200", "nvidia-h100"]  # by vendor, then product
    b200, h100, gb200 = gpus["nvidia-b200"], gpus["nvidia-h100"], gpus["nvidia-gb200"]
    d = built.digests
    assert (b200.product, b200.vendor, b200.architectures) == ("NVIDIA B200", "nvidia", ("sm_100", "sm_100a"))
    assert set(b200.environments) == {d["env-b200-a"], d["env-b200-b"], d["env-b200-c"]}
    assert (b200.runs, len(b200.cohorts), b200.operations) == (5, 3, (d["op-a"],))
    assert (h100.runs, len(h100.cohorts)) == (6, 3)
    assert h100.operations == (d["op-a"], d["op-c"])  # op-a has two cohorts there, op-c one
    assert (gb200.runs, gb200.cohorts, gb200.architectures) == (0, (), ())
    assert catalog.find_gpu(graph, "Nvidia B200") == b200 and catalog.find_gpu(graph, "b200") is None

    standings = {graph.nodes[s.project].name: s for s in catalog.standings(graph).values()}
    assert {name: (s.led, s.records, s.entered, s.runs, s.implementations) for name, s in standings.items()} == {
        "proj-x": (3, 4, 5, 6, 2),
        "proj-y": (3, 2, 4, 4, 1),
        "proj-idle": (0, 0, 0, 0, 0),
    }

    assert catalog.sources(graph) == (
        catalog.SourceTally("second-source", 1, 1, 0, 1, built.second),
        catalog.SourceTally("test", 30, 10, 0, 1, built.first),
    )
    older = snapshots.at(built.first)
    assert catalog.sources(older) == (catalog.SourceTally("test", 30, 10, 0, 1, built.first),)


STANDINGS = """
{ projects(order: STANDING, first: 2) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { node { name standing { cohortsLed recordsHeld cohortsEntered runCount implementationCount } } }
} }
"""


def test_projects_by_standing_most_cohorts_led_first(client: TestClient) -> None:
    page = _data(client, STANDINGS)["projects"]
    assert page["totalCount"] == 3 and page["pageInfo"]["hasNextPage"]
    assert [(e["node"]["name"], e["node"]["standing"]) for e in page["edges"]] == [
        # both lead three cohorts: proj-x holds more records
        ("proj-x", {"cohortsLed": 3, "recordsHeld": 4, "cohortsEntered": 5, "runCount": 6, "implementationCount": 2}),
        ("proj-y", {"cohortsLed": 3, "recordsHeld": 2, "cohortsEntered": 4, "runCount": 4, "implementationCount": 1}),
    ]
    by_name = _data(client, "{ projects { edges { node { name } } } }")["projects"]["edges"]
    assert [e["node"]["name"] for e in by_name] == ["proj-idle", "proj-x", "proj-y"]  # the default order is kept


GPU = """
query($id: String!, $after: String) { gpu(id: $id) {
  slug product vendor architecture architectures runCount cohortCount operationCount
  environments { name }
  operations(first: 1, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { node { operation { name } cohortCount cohorts(first: 5) { edges { node { leader { name } } } } } }
  }
} }
"""


@pytest.mark.parametrize("ident", ["nvidia-b200", "NVIDIA B200", "nvidia b200", "Nvidia-B200"])
def test_a_gpu_is_found_by_its_slug_or_its_product(client: TestClient, ident: str) -> None:
    gpu = _data(client, GPU, {"id": ident})["gpu"]
    assert gpu["slug"] == "nvidia-b200" and gpu["product"] == "NVIDIA B200"
    assert (gpu["architecture"], gpu["architectures"]) == ("sm_100", ["sm_100", "sm_100a"])
    assert sorted(e["name"] for e in gpu["environments"]) == ["env-b200-a", "env-b200-b", "env-b200-c"]
    assert (gpu["runCount"], gpu["cohortCount"], gpu["operationCount"]) == (5, 3, 1)


@pytest.mark.parametrize("ident", ["b200", "sm_100", "nvidia-b20", ""])
def test_a_gpu_is_never_guessed(client: TestClient, ident: str) -> None:
    assert _data(client, GPU, {"id": ident})["gpu"] is None


def test_a_gpus_operations_page_with_their_leaders(client: TestClient) -> None:
    first = _data(client, GPU, {"id": "nvidia-h100"})["gpu"]["operations"]
    assert first["totalCount"] == 2 and first["pageInfo"]["hasNextPage"]
    (node,) = [e["node"] for e in first["edges"]]
    assert node["operation"]["name"] == "op-a" and node["cohortCount"] == 2
    assert sorted(e["node"]["leader"]["name"] for e in node["cohorts"]["edges"]) == ["c4-x1", "c5-y1"]
    second = _data(client, GPU, {"id": "nvidia-h100", "after": first["pageInfo"]["endCursor"]})["gpu"]["operations"]
    (node,) = [e["node"] for e in second["edges"]]
    assert node["operation"]["name"] == "op-c" and not second["pageInfo"]["hasNextPage"]
    assert [e["node"]["leader"]["name"] for e in node["cohorts"]["edges"]] == ["c6-x2-later"]


def test_the_gpu_list_most_runs_first(client: TestClient) -> None:
    gpus = _data(client, "{ gpus { slug product architecture runCount cohortCount } }")["gpus"]
    assert gpus == [
        {"slug": "nvidia-h100", "product": "NVIDIA H100", "architecture": "sm_90", "runCount": 6, "cohortCount": 3},
        {"slug": "nvidia-b200", "product": "NVIDIA B200", "architecture": "sm_100", "runCount": 5, "cohortCount": 3},
        {"slug": "nvidia-gb200", "product": "NVIDIA GB200", "architecture": "unknown", "runCount": 0, "cohortCount": 0},
    ]


SOURCES = """
query($at: String) { registry(at: $at) {
  sources { runCount source { slug manifestCount servingRunCount commitCount latestCommit { id } } }
  source(slug: "second-source") { slug runCount }
} }
"""


def test_sources_with_what_they_published_and_when_last(client: TestClient, built: Catalog) -> None:
    head = _data(client, SOURCES)["registry"]
    assert head["sources"] == [
        {"runCount": 10, "source": {"slug": "test", "manifestCount": 30, "servingRunCount": 0, "commitCount": 1,
                                    "latestCommit": {"id": built.first}}},
        {"runCount": 1, "source": {"slug": "second-source", "manifestCount": 1, "servingRunCount": 0,
                                   "commitCount": 1, "latestCommit": {"id": built.second}}},
    ]  # fmt: skip
    assert head["source"] == {"slug": "second-source", "runCount": 1}
    older = _data(client, SOURCES, {"at": built.first})["registry"]
    assert [s["source"]["slug"] for s in older["sources"]] == ["test"] and older["source"] is None


OPERATION = """
query($id: String!) { operation(id: $id) {
  related(first: 5) { totalCount edges { node { name } } }
  cohorts(first: 10) { edges { node { workload { name axes { name value number } } } } }
} }
"""


def test_workload_axes_related_operations_and_families(client: TestClient) -> None:
    found = _data(client, OPERATION, {"id": "op-a"})["operation"]
    assert [e["node"]["name"] for e in found["related"]["edges"]] == ["op-b"]  # the same family, not itself
    axes = {e["node"]["workload"]["name"]: e["node"]["workload"]["axes"] for e in found["cohorts"]["edges"]}
    assert axes["op-a-t2048"] == [
        {"name": "hidden", "value": "4096", "number": 4096.0},
        {"name": "tokens", "value": "2048", "number": 2048.0},
    ]
    assert _data(client, OPERATION, {"id": "op-c"})["operation"]["related"] == {"totalCount": 0, "edges": []}
    families = _data(client, "{ operationFamilies { name operationCount runCount } }")["operationFamilies"]
    assert families == [
        {"name": "gemm", "operationCount": 1, "runCount": 2},
        {"name": "rmsnorm", "operationCount": 2, "runCount": 9},
    ]

"""The index pages over HTTP on the hand-built registry (tests/catalog_scenario.py): each answers HTML for a
browser and, at its `.json` twin, exactly the API's answer to its document; filters, pages, refusals; the
operation page's sweep chart (with its table) and related operations; the serving resolver's form refusing
what it cannot ask."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from catalog_scenario import Catalog, build_catalog
from helpers import commit_manifests, make_operation
from pagetext import read_page
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.web import documents
from kernelindex.web.index_pages import GPU_PAGE, OPERATIONS_PAGE, PROJECTS_PAGE
from kernelindex.web.serving_pages import SERVING_PAGE

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # Chromium's


@pytest.fixture
def built(store: registry.GitStore) -> Catalog:
    return build_catalog(store)


@pytest.fixture
def client(store: registry.GitStore, built: Catalog) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(repo_path=store.path, graph_cache=False, poll_seconds=3600))) as c:
        yield c


PAGES: list[tuple[str, str, dict[str, Any]]] = [
    ("/operations", documents.OPERATIONS, {"family": None, "search": None, "first": OPERATIONS_PAGE, "after": None}),
    (
        "/operations?family=rmsnorm&q=op-a",
        documents.OPERATIONS,
        {"family": "rmsnorm", "search": "op-a", "first": OPERATIONS_PAGE, "after": None},
    ),
    ("/gpus", documents.GPUS, {}),
    ("/gpus/nvidia-b200", documents.GPU, {"id": "nvidia-b200", "first": GPU_PAGE, "after": None}),
    ("/models", documents.MODELS, {}),
    ("/projects", documents.PROJECTS, {"first": PROJECTS_PAGE, "after": None}),
    ("/sources", documents.SOURCES, {}),
    (
        "/serving",
        documents.SERVING,
        {"model": None, "workload": None, "constraints": None, "objective": None, "first": SERVING_PAGE, "after": None},
    ),
]


def _twin(path: str) -> str:
    return path.replace("?", ".json?") if "?" in path else path + ".json"


@pytest.mark.parametrize(("path", "document", "variables"), PAGES, ids=[p[0] for p in PAGES])
def test_each_index_page_is_html_and_its_twin_is_the_apis_answer(
    client: TestClient, built: Catalog, path: str, document: str, variables: dict[str, Any]
) -> None:
    page = client.get(path, headers=HTML)
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["x-kernelindex-commit"] == built.second
    api = client.post("/graphql", json={"query": document, "variables": {"at": None, **variables}}).json()
    assert "errors" not in api
    assert client.get(_twin(path), headers=HTML).json() == api
    assert client.get(path, headers={"accept": "application/json"}).json() == api
    pinned = client.get(f"/at/{built.first}{path}", headers=HTML)
    assert pinned.status_code == 200 and pinned.headers["cache-control"] == "public, max-age=31536000, immutable"


def _rows(html: str, table: int = 0) -> list[list[str]]:
    return read_page(html).tables[table][1:]  # without the header row


def test_operations_with_their_runs_and_cohorts_filtered_by_family_and_words(client: TestClient) -> None:
    assert _rows(client.get("/operations", headers=HTML).text) == [
        ["Operation op-a op-a", "rmsnorm", "9", "5"],
        ["Operation op-b op-b", "rmsnorm", "0", "0"],
        ["Operation op-c op-c", "gemm", "2", "1"],
    ]
    assert [r[0] for r in _rows(client.get("/operations?family=gemm", headers=HTML).text)] == ["Operation op-c op-c"]
    assert [r[0] for r in _rows(client.get("/operations?q=op-b", headers=HTML).text)] == ["Operation op-b op-b"]
    none = read_page(client.get("/operations?family=nope", headers=HTML).text)
    assert none.tables[0][1:] == [["No operation matches."]]
    too_long = client.get("/operations?q=" + "x" * 201, headers=HTML)
    assert too_long.status_code == 400 and "q: at most 200 characters (got 201)" in too_long.text
    assert client.get("/operations?q=" + "x" * 200, headers=HTML).status_code == 200


@pytest.mark.parametrize(("count", "pages"), [(OPERATIONS_PAGE, [OPERATIONS_PAGE]), (OPERATIONS_PAGE + 1, [100, 1])])
def test_operations_page_a_hundred_at_a_time(store: registry.GitStore, count: int, pages: list[int]) -> None:
    commit_manifests(store, [make_operation(f"op-{i:03d}") for i in range(count)])
    with TestClient(create_app(Settings(repo_path=store.path, graph_cache=False, poll_seconds=3600))) as client:
        path: str | None = "/operations"
        seen = []
        while path is not None:
            page = read_page(client.get(path, headers=HTML).text)
            seen.append(len(page.tables[0]) - 1)
            following = [a["href"] for t, a in page.elements if t == "a" and a.get("rel") == "next"]
            path = following[0] if following else None
    assert seen == pages


def test_the_gpu_page_lists_its_operations_with_their_leaders(client: TestClient, built: Catalog) -> None:
    page = read_page(client.get("/gpus/nvidia-h100", headers=HTML).text)
    assert "NVIDIA H100" in page.text and "6 runs · 3 comparison groups · 2 operations" in page.text
    leaders = [row[3] for table in page.tables for row in table[1:]]
    assert sorted(leaders) == ["proj-x", "proj-x", "proj-y"]  # C4, C6, C5: named after their projects
    assert f"/at/{built.second}/runs/{built.digests['c5-y1']}" in page.hrefs()  # the tie's #1, newest first
    missing = client.get("/gpus/b200", headers=HTML)
    assert missing.status_code == 404 and "no GPU b200 at commit" in read_page(missing.text).text
    listing = _rows(client.get("/gpus", headers=HTML).text)
    assert [row[0] for row in listing] == ["NVIDIA H100", "NVIDIA B200", "NVIDIA GB200"]
    assert listing[1] == ["NVIDIA B200", "nvidia", "sm_100, sm_100a", "5", "3", "1"]


def test_the_projects_page_says_what_it_counts(client: TestClient) -> None:
    html = client.get("/projects", headers=HTML).text
    page = read_page(html)
    assert "groups whose #1 under ranking-v1 at this commit is one of its runs" in page.text
    assert _rows(html, table=0) == [
        ["proj-x", "3", "4", "5", "6", "2"],
        ["proj-y", "3", "2", "4", "4", "1"],
        ["proj-idle", "0", "0", "0", "0", "0"],
    ]


def test_the_sources_page(client: TestClient, built: Catalog) -> None:
    rows = _rows(client.get("/sources", headers=HTML).text)
    assert [(r[0], r[3], r[4], r[5], r[6][:12]) for r in rows] == [
        ("test test", "10", "0", "30", built.first[:12]),
        ("second-source second-source", "1", "0", "1", built.second[:12]),
    ]


SWEEP_ROWS = [  # by hand, from the scenario: each GPU's best #1 at each token count of op-a (by project)
    ["NVIDIA B200", "1024", "90 ns", "proj-y", "best of 2"],  # C1's 100 and C3's 90
    ["NVIDIA B200", "2048", "180 ns", "proj-y", ""],
    ["NVIDIA H100", "1024", "300 ns", "proj-x", ""],
    ["NVIDIA H100", "4096", "500 ns", "proj-y", ""],  # the tie's #1
]


def test_the_operation_page_draws_its_sweep_with_a_table_and_links_related_operations(client: TestClient) -> None:
    html = client.get("/operations/op-a", headers=HTML).text
    page = read_page(html)
    svg = [a for t, a in page.elements if t == "svg" and a.get("aria-labelledby") == "sweep-title sweep-desc"]
    assert len(svg) == 1 and svg[0]["role"] == "img"
    assert '<title id="sweep-title">Operation op-a: tokens against the best value, one line per GPU</title>' in html
    series = [a["class"] for t, a in page.elements if t == "g" and a.get("class", "").startswith("series")]
    assert series == ["series s0", "series s1"]  # one per GPU
    assert sum(1 for t, a in page.elements if t == "circle" and "cx" in a and a.get("r") == "3.5") == 4 + 2  # + legend
    table = next(t for t in page.tables if t[0] == ["GPU", "tokens", "best #1", "run", "comparison group"])
    assert [[r[0], r[1], r[2], r[3], r[4].split("(")[-1].rstrip(")") if "(" in r[4] else ""] for r in table[1:]] == (
        SWEEP_ROWS
    )
    assert "/operations/op-b" in page.hrefs() and "Related operations (family rmsnorm: 1 more)" in page.text
    assert "No other operation of this family." in read_page(client.get("/operations/op-c", headers=HTML).text).text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("c1_metric=ttft_ms&c1_op=%3D%3D&c1_value=1", "c1_op: expected one of <=, <, >=, >, not '=='"),
        ("c2_metric=ttft_ms&c2_op=%3C%3D&c2_value=soon", "c2_value: expected a number, not 'soon'"),
        ("c1_metric=ttft_ms&c1_op=%3C%3D&c1_value=inf", "c1_value: expected a finite number, not 'inf'"),
        ("c3_metric=ttft_ms&c3_op=%3C%3D&c3_value=nan", "c3_value: expected a finite number, not 'nan'"),
        ("objective=ttft_ms&direction=sideways", "direction: expected minimize or maximize, not 'SIDEWAYS'"),
        ("model=" + "m" * 101, "model: at most 100 characters (got 101)"),
    ],
)
def test_the_serving_form_refuses_what_it_cannot_ask(client: TestClient, query: str, message: str) -> None:
    page = client.get(f"/serving?{query}", headers=HTML)
    assert page.status_code == 400 and message in read_page(page.text).text
    twin = client.get(f"/serving.json?{query}")
    assert twin.status_code == 400 and twin.json()["errors"][0] == {
        "message": message,
        "extensions": {"code": "BAD_USER_INPUT"},
    }


def test_the_serving_form_passes_what_it_asks_to_the_resolver(client: TestClient) -> None:
    """A constraint row without a metric is not asked; one with a metric is, its statistic only when given;
    an unknown metric is the resolver's refusal (a client's error, not a fault)."""
    query = (
        "model=&c1_metric=ttft_ms&c1_op=%3C%3D&c1_value=450&c2_metric=&c2_value=x&objective=output_token_throughput_tps"
    )
    answer = client.get(f"/serving.json?{query}")
    assert answer.status_code == 200 and answer.json()["data"]["registry"]["servingCohorts"]["totalCount"] == 0
    shown = read_page(client.get(f"/serving?{query}", headers=HTML).text)
    selected = [a.get("value") for t, a in shown.elements if t == "option" and "selected" in a]
    assert selected == ["ttft_ms", "<=", "output_token_throughput_tps"]  # the form shows what was asked
    assert json.loads(json.dumps(selected))  # plain strings, nothing else

"""The index pages on the embedded registry, against independent counts: the models and their serving
cohorts as upstream's serving tables group them (tests/data/upstream/serving.json.zst), the serving resolver's
form answering what the API answers for the same question, and the GPUs' runs as the API's GPU filter counts
them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import zstandard
from helpers import EMBEDDED_REPO, TEST_DATA
from pagetext import read_page
from server import Running, serve

from kernelindex.web import documents
from kernelindex.web.serving_pages import SERVING_PAGE

pytestmark = pytest.mark.slow

HTML = {"accept": "text/html"}


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


@pytest.fixture(scope="module")
def upstream() -> dict[str, dict[str, Any]]:
    raw = (TEST_DATA / "upstream" / "serving.json.zst").read_bytes()
    return json.loads(zstandard.ZstdDecompressor().stream_reader(raw).read())["servingRuns"]  # type: ignore[no-any-return]


def test_models_and_their_serving_cohorts_are_upstreams(api: Running, upstream: dict[str, dict[str, Any]]) -> None:
    runs = Counter(row["model"] for row in upstream.values())
    cohorts: dict[str, set[str]] = {}
    for row in upstream.values():
        cohorts.setdefault(row["model"], set()).add(row["cohortKey"])
    listing = read_page(api.client.get("/models", headers=HTML).text).tables[0][1:]
    assert {row[3] for row in listing} == {f"{n:,}" for n in runs.values()} and len(listing) == len(runs) == 6
    for model, count in runs.items():
        answer = api.client.get(f"/models/{model}.json").json()["data"]["registry"]["model"]
        assert answer["servingRuns"]["totalCount"] == count
        assert answer["servingCohorts"]["totalCount"] == len(cohorts[model])
        shown = {e["node"]["key"] for e in answer["servingCohorts"]["edges"]}
        assert shown <= cohorts[model] and len(shown) == min(50, len(cohorts[model]))
        page = read_page(api.client.get(f"/models/{model}", headers=HTML).text)
        assert len(page.tables[0]) - 1 == len(shown)


def test_the_serving_form_answers_what_the_resolver_answers(api: Running, upstream: dict[str, dict[str, Any]]) -> None:
    """llama2-70b with TTFT p99 <= 2000 ms, most throughput first: the form's page and JSON twin are the API's
    answer to the same question, and each cohort's ranks are upstream's throughputs in order."""
    query = (
        "model=mlperf-llama2-70b&c1_metric=ttft_ms&c1_op=%3C%3D&c1_value=2000"
        "&objective=output_token_throughput_tps&direction=maximize"
    )
    twin = api.client.get(f"/serving.json?{query}").json()
    variables: dict[str, object] = {
        "at": None,
        "model": "mlperf-llama2-70b",
        "workload": None,
        "constraints": [{"metric": "ttft_ms", "operator": "<=", "value": 2000.0}],
        "objective": {"metric": "output_token_throughput_tps", "direction": "MAXIMIZE"},
        "first": SERVING_PAGE,
        "after": None,
    }
    assert twin == api.graphql(documents.SERVING, variables).json()
    cohorts = [e["node"] for e in twin["data"]["registry"]["servingCohorts"]["edges"]]
    assert cohorts and all(c["model"]["name"] == "mlperf-llama2-70b" for c in cohorts)
    throughput = {d: r["measurements"][0][3] for d, r in upstream.items()}
    for cohort in cohorts:
        ranked = [c["run"]["digest"] for c in cohort["resolve"]["runs"]]
        assert [throughput[d] for d in ranked] == sorted((throughput[d] for d in ranked), reverse=True)
    page = read_page(api.client.get(f"/serving?{query}", headers=HTML).text)
    assert "ttft_ms p99 <= 2000" in page.text and "ranked by output_token_throughput_tps" in page.text


def test_each_gpus_runs_are_what_the_gpu_filter_finds(api: Running) -> None:
    gpus = api.client.get("/gpus.json").json()["data"]["registry"]["gpus"]
    assert sum(g["runCount"] for g in gpus) == 9_508  # every kernel run on exactly one GPU
    for gpu in gpus:
        found = api.graphql("query($g: String!) { runs(filter: {gpu: $g}) { totalCount } }", {"g": gpu["product"]})
        assert found.json()["data"]["runs"]["totalCount"] == gpu["runCount"], gpu["product"]

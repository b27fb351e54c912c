"""Serving results over real HTTP against the embedded registry: a cohort resolved with a TTFT bound
and a throughput objective, the frontier of the largest serving cohort, bad constraints refused
with a code, filters, pinning, permalinks, citations, and compare refusing to mix kinds. Expected
values come from the export's serving tables (tests/data/upstream/serving.json.zst)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import zstandard
from helpers import EMBEDDED_REPO, TEST_DATA
from server import Running, serve
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app

pytestmark = pytest.mark.slow

SEED_000 = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"
# The export's first MLPerf run (upstream id 01a00b49-0b2c-...): AMD, llama2-70b-99, Interactive, 8840.42 tokens/s.
AMD_INTERACTIVE = "sha256:cf776f5ecc9fb9ba277b1d29e9edc322fb8f87d6b5880b9c4cfcc8244cd8d206"

RESOLVE = """
query($key: String!, $constraints: [ServingConstraintInput!], $objective: ServingObjectiveInput) {
  servingCohort(key: $key) {
    key size workload { slo { metric statistic operator value unit } }
    resolve(constraints: $constraints, objective: $objective) {
      policyVersion mode axes constraints { text } objective { metric statistic direction }
      runs { rank value onFrontier run { digest } outcomes { constraint state satisfied observed bound } }
      frontier { run { digest } }
      excluded { run { digest } reasons }
    }
  }
}
"""


@pytest.fixture(scope="module")
def upstream() -> dict[str, Any]:
    raw = (TEST_DATA / "upstream" / "serving.json.zst").read_bytes()
    return json.loads(zstandard.ZstdDecompressor().stream_reader(raw).read())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def runs(upstream: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return upstream["servingRuns"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def data(response: Any) -> dict[str, Any]:
    body = response.json()
    assert "errors" not in body, body["errors"]
    assert response.status_code == 200
    return body["data"]  # type: ignore[no-any-return]


def value(row: dict[str, Any]) -> float:
    (measurement,) = row["measurements"]
    assert measurement[:3] == ["output_token_throughput_tps", "reported", "tokens_s"]
    return float(measurement[3])


def cohorts_of(runs: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for digest, row in runs.items():
        members.setdefault(row["cohortKey"], []).append(digest)
    return members


def test_the_serving_cohorts_are_upstreams(api: Running, runs: dict[str, dict[str, Any]]) -> None:
    members = cohorts_of(runs)
    largest = max(len(m) for m in members.values())
    got = data(api.graphql("{ servingCohorts(first: 3) { totalCount edges { node { key size } } } }"))
    listing = got["servingCohorts"]
    assert listing["totalCount"] == len(members) == 341
    sizes = [edge["node"]["size"] for edge in listing["edges"]]
    assert sizes[0] == largest == 13 and sizes == sorted(sizes, reverse=True)
    for edge in listing["edges"]:
        assert sorted(members[edge["node"]["key"]]) == sorted(
            e["node"]["digest"]
            for e in data(api.graphql('{ servingCohort(key: "' + edge["node"]["key"] + '") { runs(first: 100) { edges { node { digest } } } } }'))["servingCohort"]["runs"]["edges"]
        )  # fmt: skip


def test_a_cohort_resolved_with_a_ttft_bound_and_a_throughput_objective(
    api: Running, runs: dict[str, dict[str, Any]]
) -> None:
    members = cohorts_of(runs)
    streaming = [k for k, m in members.items() if "/streaming/" in runs[m[0]]["protocolKey"]]
    key = min(streaming, key=lambda k: (-len(members[k]), k))
    expected = sorted(members[key], key=lambda d: (-value(runs[d]), d))
    variables: dict[str, Any] = {
        "key": key[7:23],  # a 16-digit prefix is a key too
        "constraints": [{"metric": "ttft_ms", "operator": "<=", "value": 0, "unit": "ms"}],
        "objective": {"metric": "output_token_throughput_tps", "direction": "MAXIMIZE"},
    }
    slo = data(api.graphql(RESOLVE, variables))["servingCohort"]["workload"]["slo"]
    (declared,) = [b for b in slo if b["metric"] == "ttft_ms"]
    assert (declared["statistic"], declared["operator"], declared["unit"]) == ("p99", "<=", "ms")
    variables["constraints"][0]["value"] = declared["value"]
    cohort = data(api.graphql(RESOLVE, variables))["servingCohort"]
    resolved = cohort["resolve"]
    assert cohort["key"] == key and cohort["size"] == len(members[key])
    assert resolved["policyVersion"] == "serving-v1" and resolved["mode"] == "RANKED"
    assert resolved["constraints"] == [{"text": f"ttft_ms p99 <= {declared['value']:g}"}]
    assert resolved["objective"] == {
        "metric": "output_token_throughput_tps",
        "statistic": "reported",
        "direction": "MAXIMIZE",
    }
    assert [r["run"]["digest"] for r in resolved["runs"]] == expected
    assert [r["value"] for r in resolved["runs"]] == [value(runs[d]) for d in expected]
    assert resolved["runs"][0]["rank"] == 1 and resolved["frontier"] is None and resolved["excluded"] == []
    assert {json.dumps(o) for r in resolved["runs"] for o in r["outcomes"]} == {
        json.dumps({"constraint": f"ttft_ms p99 <= {declared['value']:g}", "state": "DECLARED", "satisfied": True,
                    "observed": None, "bound": declared["value"]})
    }  # fmt: skip
    # strictly under the declared bound: not what the harness enforced, so nothing is feasible
    variables["constraints"][0]["operator"] = "<"
    strict = data(api.graphql(RESOLVE, variables))["servingCohort"]["resolve"]
    assert strict["runs"] == []
    assert sorted(r["run"]["digest"] for r in strict["excluded"]) == sorted(members[key])
    assert {tuple(r["reasons"]) for r in strict["excluded"]} == {("CONSTRAINT_UNSATISFIED:ttft_ms",)}


def test_the_frontier_of_the_largest_serving_cohort(api: Running, runs: dict[str, dict[str, Any]]) -> None:
    members = cohorts_of(runs)
    key = min(members, key=lambda k: (-len(members[k]), k))
    best = max(value(runs[d]) for d in members[key])
    resolved = data(api.graphql(RESOLVE, {"key": key}))["servingCohort"]["resolve"]
    assert resolved["mode"] == "FRONTIER" and resolved["objective"] is None
    assert resolved["axes"] == ["output_token_throughput_tps·reported"]
    assert [r["run"]["digest"] for r in resolved["frontier"]] == sorted(
        d for d in members[key] if value(runs[d]) == best
    )
    order = [r["run"]["digest"] for r in resolved["runs"]]
    assert order == sorted(members[key], key=lambda d: (-value(runs[d]), d))
    assert [r["onFrontier"] for r in resolved["runs"]] == [value(runs[d]) == best for d in order]
    assert resolved["excluded"] == []


@pytest.mark.parametrize(
    ("constraint", "code", "where"),
    [
        ({"metric": "time_to_first_token", "operator": "<=", "value": 450}, "UNKNOWN_METRIC", "constraints[0].metric"),
        ({"metric": "ttft_ms", "operator": "<=", "value": 0.45, "unit": "s"}, "WRONG_UNIT", "constraints[0].unit"),
        ({"metric": "ttft_ms", "operator": ">=", "value": 450}, "UNSUPPORTED_OPERATOR", "constraints[0].operator"),
        (
            {"metric": "output_token_throughput_tps", "operator": "<=", "value": 5000},
            "UNSUPPORTED_OPERATOR",
            "constraints[0].operator",
        ),
    ],
)
def test_bad_constraints_are_refused_with_a_code(
    api: Running, runs: dict[str, dict[str, Any]], constraint: dict[str, Any], code: str, where: str
) -> None:
    key = next(iter(cohorts_of(runs)))
    body = api.graphql(RESOLVE, {"key": key, "constraints": [constraint]}).json()
    # `resolve` is nullable: the refusal nulls that field alone, the cohort stays.
    assert body["data"]["servingCohort"]["key"] == key and body["data"]["servingCohort"]["resolve"] is None
    (error,) = body["errors"]
    assert error["extensions"] == {"code": code}
    assert error["message"].startswith(f"invalid constraint: {where}: ")
    assert error["path"] == ["servingCohort", "resolve"]


def test_too_many_constraints_are_refused(api: Running, runs: dict[str, dict[str, Any]]) -> None:
    constraints = [{"metric": "ttft_ms", "operator": "<=", "value": 1}] * 17
    body = api.graphql(RESOLVE, {"key": next(iter(cohorts_of(runs))), "constraints": constraints}).json()
    assert body["errors"][0]["extensions"] == {"code": "INVALID_CONSTRAINT"}


def test_filters(api: Running, runs: dict[str, dict[str, Any]]) -> None:
    def count(filter_: str) -> int:
        return data(api.graphql("{ servingRuns(filter: " + filter_ + ") { totalCount } }"))["servingRuns"]["totalCount"]  # type: ignore[no-any-return]

    def expected(**conditions: Any) -> int:
        return sum(all(row[k] == v for k, v in conditions.items()) for row in runs.values())

    assert count("{}") == 722
    assert count('{model: "mlperf-llama2-70b", scenario: "Interactive"}') == expected(
        model="mlperf-llama2-70b", scenario="interactive"
    )
    assert count('{accelerator: "NVIDIA H200-SXM-141GB"}') == expected(acceleratorModel="NVIDIA H200-SXM-141GB")
    assert count('{accelerator: "amd", qualityPolicy: "mlperf_closed_99_9"}') == expected(
        acceleratorVendor="amd", qualityPolicy="mlperf_closed_99_9"
    )
    assert count('{model: "no-such-model"}') == 0
    assert count("{status: [INVALID]}") == 0
    amd = data(
        api.graphql(
            '{ servingRuns(filter: {submitter: "amd"}, first: 100) { totalCount edges { node { submitter } } } }'
        )
    )
    assert amd["servingRuns"]["totalCount"] > 0
    assert {e["node"]["submitter"] for e in amd["servingRuns"]["edges"]} == {"AMD (MLPerf submitter)"}
    key = next(iter(cohorts_of(runs)))
    assert count('{cohort: "' + key + '"}') == Counter(r["cohortKey"] for r in runs.values())[key]
    # serving runs are not kernel runs: the kernel list holds exactly the BenchmarkRun files at head
    store = registry.GitStore(EMBEDDED_REPO)
    head = data(api.graphql("{ commit { id } }"))["commit"]["id"]
    kernel_runs = sum(1 for entry in store.entries(head) if entry.kind == "BenchmarkRun")
    assert data(api.graphql("{ runs { totalCount } }"))["runs"]["totalCount"] == kernel_runs
    assert data(api.graphql('{ run(id: "' + AMD_INTERACTIVE + '") { digest } }'))["run"] is None  # fmt: skip


def test_every_run_shows_upstreams_keys_and_configuration_summary(api: Running, upstream: dict[str, Any]) -> None:
    query = """query($after: String) { servingRuns(first: 100, after: $after) { pageInfo { hasNextPage endCursor }
      edges { node { digest cohortKey protocolKey metricSetKey status trust eligible warnings
                     configuration { digest summary } topology { key } } } } }"""
    seen: dict[str, dict[str, Any]] = {}
    after = None
    while True:
        page = data(api.graphql(query, {"after": after}))["servingRuns"]
        seen.update({e["node"]["digest"]: e["node"] for e in page["edges"]})
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen.keys() == upstream["servingRuns"].keys()
    for digest, row in upstream["servingRuns"].items():
        node = seen[digest]
        assert (node["cohortKey"], node["protocolKey"], node["metricSetKey"]) == (
            row["cohortKey"],
            row["protocolKey"],
            row["metricSetKey"],
        )
        assert (node["status"], node["trust"], node["eligible"], node["warnings"]) == ("VALID", "REPORTED", True, [])
        assert node["configuration"]["summary"] == upstream["configurationSummaries"][node["configuration"]["digest"]]


def test_pinning_permalinks_and_citations(api: Running) -> None:
    mainline = api.service.snapshots.publication.mainline  # type: ignore[union-attr]
    imported = mainline.commits[mainline.sources.index("mlperf-inference")]
    before = mainline.commits[mainline.sources.index("mlperf-inference") - 1]
    pinned = data(api.graphql(
        'query($a: String, $b: String) { a: registry(at: $a) { servingRuns { totalCount } servingRun(id: "' + AMD_INTERACTIVE + '") { permalink } }'
        " b: registry(at: $b) { servingRuns { totalCount } servingCohorts { totalCount } } }",
        {"a": imported, "b": before},
    ))  # fmt: skip
    assert pinned["a"]["servingRuns"]["totalCount"] == 722
    assert pinned["b"] == {"servingRuns": {"totalCount": 0}, "servingCohorts": {"totalCount": 0}}
    permalink = pinned["a"]["servingRun"]["permalink"]
    assert permalink == f"/at/{imported}/runs/{AMD_INTERACTIVE}"  # root-relative: no base URL is configured
    response = api.client.get(permalink)
    assert response.status_code == 200 and response.headers["cache-control"].endswith("immutable")
    body = response.json()
    assert body["registry"]["commit"] == imported and "run" not in body
    dossier = body["servingRun"]
    assert dossier["digest"] == AMD_INTERACTIVE and dossier["submitter"] == "AMD (MLPerf submitter)"
    assert dossier["measurements"] == [
        {"metric": "output_token_throughput_tps", "statistic": "reported", "unit": "tokens_s", "value": 8840.42,
         "display": "8840.42 tokens/s", "direction": "MAXIMIZE", "comparable": True}
    ]  # fmt: skip
    assert dossier["cohort"]["key"] == dossier["cohortKey"] and dossier["provenance"]["license"].startswith(
        "Apache-2.0"
    )
    assert dossier["citation"] == (
        "AMD · Supermicro AS-8125GS-TNMR2, llama2-70b-99 · Interactive. 8840.42 tokens/s "
        f"(reported output_token_throughput_tps). Reported by MLPerf Inference. Run {AMD_INTERACTIVE}. "
        "No permalink: this registry has no public base URL configured."
    )  # a pinned answer never carries the server's date (Run.citation(accessed:) adds the reader's), and without
    # a base URL no root-relative link: a reader cannot follow one
    based = data(
        api.graphql(
            '{ servingRun(id: "' + AMD_INTERACTIVE + '") { permalink citation(baseUrl: "https://r.example") } }'
        )
    )["servingRun"]
    assert based["citation"].endswith(f"https://r.example{based['permalink']}.")
    assert api.client.get(f"/at/{before}/runs/{AMD_INTERACTIVE}").json()["errors"][0]["extensions"]["code"] == (
        "MANIFEST_NOT_FOUND"
    )
    bib = data(api.graphql('{ servingRun(id: "' + AMD_INTERACTIVE + '") { citation(format: BIBTEX) } }'))  # fmt: skip
    assert bib["servingRun"]["citation"].startswith("@misc{kernelindex-cf776f5ecc9f,")


def test_compare_refuses_to_mix_serving_and_kernel_runs(api: Running) -> None:
    for ids in ([SEED_000, AMD_INTERACTIVE], [AMD_INTERACTIVE]):
        body = api.graphql("query($ids: [String!]!) { compare(runs: $ids) { sameCohort } }", {"ids": ids}).json()
        (error,) = body["errors"]
        assert error["extensions"] == {"code": "INCOMPARABLE_KINDS"}
        assert AMD_INTERACTIVE in error["message"] and "servingCohort" in error["message"]


def test_the_cli_cites_a_serving_run(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["cite", AMD_INTERACTIVE[:19], "--repo", str(EMBEDDED_REPO), "--base-url", "https://example.org"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("AMD · Supermicro AS-8125GS-TNMR2, llama2-70b-99 · Interactive. 8840.42 tokens/s")
    assert "https://example.org/at/" in result.output and f"/runs/{AMD_INTERACTIVE}." in result.output

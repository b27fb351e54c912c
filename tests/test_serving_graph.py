"""Serving runs in the graph: upstream's cohort keys for all 722 MLPerf runs, serving cohorts apart
from kernel cohorts, eligibility, filters, resolution, and the same index after a refresh or a
warm start. Expected values come from the export's serving_runs table
(tests/data/upstream/serving.json.zst, written by scripts/extract-upstream-serving)."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from collections import Counter
from typing import Any

import pytest
import zstandard
from helpers import EMBEDDED_REPO, TEST_DATA, TEST_TIME

from kernelindex import registry
from kernelindex.registry import serving as policy
from kernelindex.registry.graph import Graph, Mainline
from kernelindex.registry.graph_build import build
from kernelindex.registry.graphcache import decode, encode
from kernelindex.registry.nodes import ServingConfiguration, ServingRun, extract
from kernelindex.registry.serving_graph import ConstraintRequest, ObjectiveRequest, ServingIndex, serving_index
from kernelindex.registry.snapshots import Publication, build_graph, move_graph, publication_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def upstream() -> dict[str, dict[str, Any]]:
    raw = (TEST_DATA / "upstream" / "serving.json.zst").read_bytes()
    runs: dict[str, dict[str, Any]] = json.loads(zstandard.ZstdDecompressor().stream_reader(raw).read())["servingRuns"]
    return runs


@pytest.fixture(scope="module")
def pinned() -> tuple[registry.GitStore, Publication, Graph, str]:
    """The graph of the commit that imported MLPerf (found by its Source: trailer, not by its id)."""
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    publication = publication_of(store, head)
    positions = [i for i, source in enumerate(publication.mainline.sources) if source == "mlperf-inference"]
    assert len(positions) == 1
    commit = publication.mainline.commits[positions[0]]
    return store, publication, build_graph(store, commit, publication)[0], commit


@pytest.fixture(scope="module")
def index(pinned: tuple[registry.GitStore, Publication, Graph, str]) -> ServingIndex:
    return serving_index(pinned[2])


def test_every_serving_run_has_upstreams_cohort_key(index: ServingIndex, upstream: dict[str, dict[str, Any]]) -> None:
    assert len(upstream) == 722
    assert set(index.facts) == set(upstream)
    wrong = {
        d: (index.facts[d].cohort, row["cohortKey"])
        for d, row in upstream.items()
        if index.facts[d].cohort != row["cohortKey"]
    }
    assert not wrong, f"{len(wrong)} of 722 differ, e.g. {list(wrong.items())[:3]}"


def test_protocol_topology_and_metric_set_keys_match_the_export(
    index: ServingIndex, upstream: dict[str, dict[str, Any]]
) -> None:
    for digest, row in upstream.items():
        parts = index.facts[digest].parts
        assert parts is not None
        assert parts.protocol_key == row["protocolKey"], digest
        assert parts.metric_set_key == row["metricSetKey"], digest
        assert parts.quality_policy == row["qualityPolicy"], digest
        # The export has no topology key column: its topology columns, joined by the rule, must give ours
        # (none of these runs names an interconnect).
        expected = policy.topology_key(
            row["acceleratorVendor"], row["acceleratorModel"], row["acceleratorCount"], row["nodeCount"], None
        )
        assert parts.topology_key == expected, digest
        run = index.nodes[digest]
        assert isinstance(run, ServingRun)
        assert (run.scenario, run.status) == (row["scenario"], row["status"])


def test_serving_cohorts_are_upstreams(index: ServingIndex, upstream: dict[str, dict[str, Any]]) -> None:
    sizes = Counter(row["cohortKey"] for row in upstream.values())
    assert {key: len(c.members) for key, c in index.cohorts.items()} == dict(sizes)
    assert len(index.cohorts) == len(sizes) == 341
    largest = max(sizes.values())
    assert largest == 13
    assert len(index.cohorts[index.ordered_cohorts()[0]].members) == largest


def test_serving_runs_never_enter_kernel_cohorts_or_the_ledger(
    pinned: tuple[registry.GitStore, Publication, Graph, str], index: ServingIndex
) -> None:
    graph = pinned[2]
    assert not set(index.facts) & set(graph.facts)
    assert not set(index.cohorts) & set(graph.cohorts)
    assert all(graph.nodes[d].kind == "BenchmarkRun" for d in graph.facts)


def test_every_imported_serving_run_is_eligible_and_reported(index: ServingIndex) -> None:
    assert {(f.eligible, f.trust.name, f.warnings) for f in index.facts.values()} == {(True, "REPORTED", ())}
    assert Counter(f.submitter for f in index.facts.values())["AMD (MLPerf submitter)"] > 0


def test_filters(index: ServingIndex, upstream: dict[str, dict[str, Any]]) -> None:
    def expected(**conditions: Any) -> set[str]:
        return {d for d, row in upstream.items() if all(row[k] == v for k, v in conditions.items())}

    assert set(index.filtered(scenario="Interactive")) == expected(scenario="interactive")
    assert len(index.filtered(scenario="interactive")) == 110
    assert set(index.filtered(accelerator="nvidia b200-sxm-180gb")) == expected(
        acceleratorModel="NVIDIA B200-SXM-180GB"
    )
    assert set(index.filtered(accelerator="AMD")) == expected(acceleratorVendor="amd")
    assert set(index.filtered(quality_policy="mlperf_closed_99_9", scenario="offline")) == expected(
        qualityPolicy="mlperf_closed_99_9", scenario="offline"
    )
    amd = index.filtered(submitter="AMD")
    assert amd and amd == index.filtered(submitter="amd (MLPerf submitter)")
    assert index.filtered(submitter="AM") == []
    assert index.filtered(scenario="single_stream") == []
    assert len(index.filtered()) == 722
    observed = [index.nodes[d].observed_ns for d in index.filtered()]  # type: ignore[union-attr]
    assert observed == sorted(observed, reverse=True)


def test_the_largest_cohorts_frontier_is_its_best_throughput(
    index: ServingIndex, upstream: dict[str, dict[str, Any]]
) -> None:
    cohort = index.cohorts[index.ordered_cohorts()[0]]
    values = {d: upstream[d]["measurements"][0][3] for d in cohort.members}
    best = max(values.values())
    resolution = index.resolve(cohort)
    assert resolution.axes == ("output_token_throughput_tps·reported",)
    assert resolution.frontier is not None
    assert {r.run for r in resolution.frontier} == {d for d, v in values.items() if v == best}
    assert len(resolution.runs) == 13 and not resolution.excluded
    assert [r.run for r in resolution.runs[: len(resolution.frontier)]] == [r.run for r in resolution.frontier]


def test_a_ttft_bound_and_a_throughput_objective(index: ServingIndex, upstream: dict[str, dict[str, Any]]) -> None:
    """MLPerf measures throughput only; TTFT is decided by the workload's declared p99 bound."""
    streaming = [k for k in index.ordered_cohorts() if "/streaming/" in index.cohorts[k].parts.protocol_key]
    cohort = index.cohorts[streaming[0]]
    workload = index.nodes[cohort.parts.workload_digest]
    declared = {(m, st): v for m, st, _, v, _ in workload.slo}  # type: ignore[union-attr]
    ttft_bound = declared[("ttft_ms", "p99")]
    objective = ObjectiveRequest("output_token_throughput_tps")
    met = index.resolve(cohort, [ConstraintRequest("ttft_ms", "<=", ttft_bound)], objective)
    values = {d: upstream[d]["measurements"][0][3] for d in cohort.members}
    assert [r.run for r in met.runs] == sorted(values, key=lambda d: (-values[d], d))
    assert met.runs[0].rank == 1
    assert {(o.state, o.satisfied, o.bound) for r in met.runs for o in r.outcomes} == {("declared", True, ttft_bound)}
    assert met.objective == policy.Objective("output_token_throughput_tps", "reported", "maximize")
    # just under the declared bound: the harness did not guarantee that, so nothing is feasible
    missed = index.resolve(cohort, [ConstraintRequest("ttft_ms", "<", ttft_bound)], objective)
    assert missed.runs == () and len(missed.excluded) == len(cohort.members)
    assert {r.reasons for r in missed.excluded} == {("CONSTRAINT_UNSATISFIED:ttft_ms",)}


def test_an_offline_cohort_declares_no_latency_bound(index: ServingIndex) -> None:
    offline = [k for k in index.ordered_cohorts() if index.cohorts[k].parts.protocol_key.endswith("/offline")]
    resolution = index.resolve(index.cohorts[offline[0]], [ConstraintRequest("ttft_ms", "<=", 10_000)])
    assert resolution.runs == ()
    assert {(r.reasons, r.outcomes) for r in resolution.excluded} == {
        (("METRIC_NOT_REPORTED:ttft_ms",), (policy.Outcome("unknown", None),))
    }


def test_bad_requests_are_refused_before_anything_is_computed(index: ServingIndex) -> None:
    cohort = index.cohorts[index.ordered_cohorts()[0]]
    with pytest.raises(registry.errors.UnsupportedOperator, match=r"constraints\[1\]\.operator"):
        index.resolve(cohort, [ConstraintRequest("ttft_ms", "<=", 1), ConstraintRequest("ttft_ms", ">=", 1)])
    with pytest.raises(registry.errors.UnknownMetric, match=r"objective\.metric"):
        index.resolve(cohort, [], ObjectiveRequest("latency"))


def test_a_refresh_and_a_warm_start_give_the_same_index(
    pinned: tuple[registry.GitStore, Publication, Graph, str], index: ServingIndex
) -> None:
    store, publication, graph, commit = pinned
    before = publication.mainline.commits[publication.mainline.positions[commit] - 1]
    earlier = build_graph(store, before, publication)[0]
    assert serving_index(earlier).facts == {}
    moved = move_graph(store, earlier, commit, publication)
    assert serving_index(moved).facts == index.facts
    assert serving_index(moved).cohorts == index.cohorts
    restored, _ = decode(encode(graph, publication))
    assert serving_index(restored).facts == index.facts


# Small registries ---------------------------------------------------------------------------------


def _graph(docs: list[dict[str, Any]], unpublished: frozenset[str] = frozenset()) -> Graph:
    nodes = [extract(d["kind"], registry.manifest_digest(d), f"oid-{i}", d) for i, d in enumerate(docs)]
    published = {n.digest: 0 for n in nodes if n.digest not in unpublished}
    return build("c" * 40, TEST_TIME, Mainline.of(["c" * 40], [TEST_TIME], ["test"]), 0, nodes, published_in=published)


@pytest.fixture(scope="module")
def family(index: ServingIndex) -> list[dict[str, Any]]:
    """A real interactive run with its model, configuration, stack and workload, as stored."""
    store = registry.GitStore(EMBEDDED_REPO)
    digest = index.filtered(scenario="interactive")[0]
    run = index.nodes[digest]
    assert isinstance(run, ServingRun)
    configuration = index.nodes[run.configuration]
    assert isinstance(configuration, ServingConfiguration)
    docs = [
        run,
        index.nodes[run.model],
        configuration,
        index.nodes[configuration.stack],
        index.nodes[run.workload],
    ]
    return [json.loads(store.read_blob(node.oid)) for node in docs]


def _variant(doc: dict[str, Any], **spec: Any) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    changed["spec"].update(spec)
    changed["metadata"]["name"] += "-" + "-".join(spec)
    return changed


def test_eligibility_reasons_and_warnings(family: list[dict[str, Any]]) -> None:
    run, *rest = family
    invalid = _variant(run, status="invalid")
    measured = _variant(
        run,
        measurements=[
            *run["spec"]["measurements"],
            {"metric": "ttft_ms", "statistic": "p99", "unit": "s", "value": 0.2},
        ],
    )
    unpublished = _variant(run, status="incomplete_evidence", observedAt="2026-01-01T00:00:00Z")
    graph = _graph(
        [run, invalid, measured, unpublished, *rest], unpublished=frozenset({registry.manifest_digest(unpublished)})
    )
    index = serving_index(graph)
    facts = {d: index.facts[d] for d in index.facts}
    by_name = {graph.nodes[d].name: f for d, f in facts.items()}
    assert by_name[run["metadata"]["name"]].reasons == ()
    assert by_name[invalid["metadata"]["name"]].reasons == ("STATUS_INVALID",)
    assert by_name[unpublished["metadata"]["name"]].reasons == ("UNPUBLISHED", "STATUS_INCOMPLETE_EVIDENCE")
    assert by_name[measured["metadata"]["name"]].warnings == (
        "unit-mismatch: ttft_ms p99 is in 's', serving-v1 compares it in 'ms' only; never compared",
    )
    # the status is no identity part: the invalid run shares the valid one's cohort, and is excluded there
    assert by_name[invalid["metadata"]["name"]].cohort == by_name[run["metadata"]["name"]].cohort
    # a second measured pair is another metric set: another cohort
    assert by_name[measured["metadata"]["name"]].cohort != by_name[run["metadata"]["name"]].cohort
    cohort = index.cohorts[by_name[run["metadata"]["name"]].cohort or ""]
    resolution = index.resolve(cohort)
    assert [graph.nodes[r.run].name for r in resolution.runs] == [run["metadata"]["name"]]
    assert {graph.nodes[r.run].name: r.reasons for r in resolution.excluded} == {
        invalid["metadata"]["name"]: ("STATUS_INVALID",),
        unpublished["metadata"]["name"]: ("UNPUBLISHED", "STATUS_INCOMPLETE_EVIDENCE"),
    }
    assert set(index.filtered(statuses=["valid"])) == {registry.manifest_digest(d) for d in (run, measured)}
    assert set(index.filtered(eligible_only=True)) == {registry.manifest_digest(d) for d in (run, measured)}
    assert index.filtered(statuses=["invalid"]) == [registry.manifest_digest(invalid)]


def test_a_run_whose_model_is_missing_has_no_cohort(family: list[dict[str, Any]]) -> None:
    run, _model, *rest = family
    index = serving_index(_graph([run, *rest]))
    (facts,) = index.facts.values()
    assert (facts.cohort, facts.reasons) == (None, ("MISSING_REFERENCE",))
    assert facts.warnings == (f"dangling-reference: the model {run['spec']['modelDigest']} is not in the registry",)
    assert index.cohorts == {}


def test_a_graph_is_not_kept_alive_by_its_serving_index(family: list[dict[str, Any]]) -> None:
    graph = _graph(family)
    assert len(serving_index(graph).facts) == 1
    alive = weakref.ref(graph)
    del graph
    gc.collect()
    assert alive() is None  # an evicted snapshot frees its serving index with it

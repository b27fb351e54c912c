"""`kernelindex.registry.resolve`: exact cohorts with their three picks, nearest cases with their differences, names
as people type them; on a hand-built registry (answers written out by hand) and on the embedded one
(answers read from the Liger CSV, the corpus export and the manifests)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
import zstandard
from helpers import (
    DATA,
    EMBEDDED_REPO,
    EXPORT,
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_verification,
    make_workload,
    make_workload_suite,
    to_manifest,
)
from signing import Key

from kernelindex import registry
from kernelindex.registry import names
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.resolve import EXACT, NEAREST, NONE, KernelRequest, Resolution, bracket, resolve_kernel
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer
from kernelindex.registry.snapshots import Snapshots

# A hand-built registry ---------------------------------------------------------------------------


def _titled(document: dict[str, Any], title: str) -> dict[str, Any]:
    document["metadata"]["title"] = title
    return document


RMS = _titled(make_operation("kernel-rms-norm", family="rmsnorm"), "RMSNorm")
FUSED = _titled(make_operation("fused-add-rmsnorm-h4096", family="rmsnorm"), "fused_add_rmsnorm_h4096")
SOFTMAX = make_operation("softmax-x", family="softmax")
W = {tokens: make_workload(RMS, tokens=tokens, name=f"rms-t{tokens}") for tokens in (1024, 2048, 4096)}
SUITE = make_workload_suite(RMS, (1024, 3000), name="rms-suite")
SOFTMAX_W = make_workload(SOFTMAX, tokens=512, name="softmax-t512")
A = make_implementation(RMS, "kernel-a")
B = make_implementation(RMS, "kernel-b")  # made installable below: the only deployable implementation
B["spec"]["buildVariants"] = [{"name": "pip", "install": {"kind": "pip", "package": "kernel-b", "version": "1.0"}}]
S = make_implementation(SOFTMAX, "softmax-k")
PROTOCOL = make_protocol()
B200 = make_environment("b200")
H100 = make_environment("h100", product="NVIDIA H100", architecture="sm_90")


def _run(
    impl: dict[str, Any], workload: dict[str, Any], env: dict[str, Any], ns: int, day: int, name: str
) -> dict[str, Any]:
    return make_run(impl, workload, PROTOCOL, env, ns, f"2026-08-{day:02d}T00:00:00Z", name=name)


RUNS = {
    # B200, tokens 2048: r1 leads; r2 is verified (rerun r3); r4 is the only deployable one.
    "r1": _run(A, W[2048], B200, 7000, 1, "r1"),
    "r2": _run(A, W[2048], B200, 7500, 2, "r2"),
    "r3": _run(A, W[2048], B200, 7600, 3, "r3"),
    "r4": _run(B, W[2048], B200, 9000, 4, "r4"),
    "t1024": _run(A, W[1024], B200, 4000, 5, "t1024"),
    "t4096": _run(A, W[4096], B200, 15000, 6, "t4096"),
    "t4096b": _run(B, W[4096], B200, 14000, 7, "t4096b"),
    "h100": _run(A, W[2048], H100, 9900, 8, "h100"),
    "suite": _run(A, SUITE, B200, 5000, 9, "suite"),
    # Reported by a source whose own name for the benchmark is "test-benchmark" (helpers.make_run).
    "softmax": make_run(S, SOFTMAX_W, PROTOCOL, B200, 300, "2026-08-10T00:00:00Z", source_native=True, name="softmax"),
}
DOCS = [RMS, FUSED, SOFTMAX, *W.values(), SUITE, SOFTMAX_W, A, B, S, PROTOCOL, B200, H100, *RUNS.values()]


@dataclass(frozen=True)
class Hand:
    graph: Graph
    document: Callable[[str], Mapping[str, Any]]

    def resolve(self, operation: str, **kwargs: Any) -> Resolution:
        return resolve_kernel(self.graph, KernelRequest(operation, **kwargs), self.document)

    def cohort(self, run: str) -> str:
        key = self.graph.facts[digest_of(RUNS[run])].cohort
        assert key is not None
        return key


@pytest.fixture
def hand(store: registry.GitStore, keys: dict[str, Key]) -> Hand:
    sign = ssh_signer(keys["alice"].private)
    store.add(
        [to_manifest(d) for d in DOCS],
        commit_meta(1_790_000_000),
        extra_files={POLICY_PATH: keys["alice"].allowed_signer},
        sign=sign,
    )
    store.add([to_manifest(make_verification(RUNS["r2"], RUNS["r3"]))], commit_meta(1_790_000_100), sign=sign)
    snapshots = Snapshots(store.path)
    snapshots.load()
    return Hand(snapshots.head, lambda oid: orjson.loads(store.read_blob(oid)))


def _d(name: str) -> str:
    return digest_of(RUNS[name])


def test_an_exact_cohort_with_its_leader_best_verified_and_best_deployable(hand: Hand) -> None:
    found = hand.resolve("RMSNorm", gpu="B200", dtype="bf16", axes=(("tokens", 2048),))
    assert found.mode == EXACT and found.problems == () and found.nearest == ()
    assert [(m.digest, m.how) for m in found.operations] == [(digest_of(RMS), "alias")]
    (answer,) = found.exact
    assert answer.cohort == hand.cohort("r1") and answer.ranked == 4
    assert (answer.leader.run, answer.leader.rank) == (_d("r1"), 1)
    assert (answer.best_verified.run, answer.best_verified.rank) == (_d("r2"), 2)
    assert (answer.best_deployable.run, answer.best_deployable.rank) == (_d("r4"), 4)
    assert answer.leader.why == "rank 1 of 4 ranked runs by latency under ranking-v1"
    assert "registry rerun" in answer.best_verified.why and "rank 2" in answer.best_verified.why
    assert "deployable" in answer.best_deployable.why and "rank 4" in answer.best_deployable.why
    assert answer.environment == "NVIDIA B200" and answer.protocol == "test-protocol"
    assert found.open_facets == ()


def test_picks_say_why_there_is_none(hand: Hand) -> None:
    (answer,) = hand.resolve("rmsnorm", gpu="B200", axes=(("tokens", 1024),)).exact
    assert answer.leader.run == _d("t1024")
    assert answer.best_verified.run is None and answer.best_verified.why == (
        "no ranked run is verified by a registry rerun (1 reported)"
    )
    assert answer.best_deployable.run is None
    assert answer.best_deployable.why == "no ranked run's implementation is deployable (of 1: NO_INSTALL_RECIPE 1)"


def test_open_facets_list_every_cohort_that_fits_largest_first(hand: Hand) -> None:
    found = hand.resolve("rmsnorm", gpu="b200")
    assert found.mode == EXACT and found.open_facets == ("dtype", "case")
    # tokens 2048 (4 runs), tokens 4096 (2), then tokens 1024 and the suite (1 each) by key.
    sizes = [(a.cohort, a.ranked) for a in found.exact]
    assert sizes[0] == (hand.cohort("r1"), 4) and sizes[1] == (hand.cohort("t4096"), 2)
    assert sorted(sizes[2:]) == sorted([(hand.cohort("t1024"), 1), (hand.cohort("suite"), 1)])


def test_a_near_miss_on_an_axis_names_the_difference_and_brackets_it(hand: Hand) -> None:
    found = hand.resolve("rmsnorm", gpu="B200", dtype="bf16", axes=(("tokens", 3000),))
    assert found.mode == NEAREST and found.exact == ()
    nearest = [
        (c.answer.cohort, [(d.facet, d.requested, d.measured, d.delta) for d in c.differences]) for c in found.nearest
    ]
    # |log2(4096/3000)| = 0.45 < |log2(2048/3000)| = 0.55 < |log2(1024/3000)| = 1.55; the suite's scope
    # and the H100 case's two differences come last.
    assert nearest[:3] == [
        (hand.cohort("t4096"), [("axis:tokens", "3000", "4096", 1096)]),
        (hand.cohort("r1"), [("axis:tokens", "3000", "2048", -952)]),
        (hand.cohort("t1024"), [("axis:tokens", "3000", "1024", -1976)]),
    ]
    assert nearest[3] == (
        hand.cohort("suite"),
        [("scope", "the case tokens=3000", "a suite of 2 cases (covered inside it)", None)],
    )
    assert nearest[4][0] == hand.cohort("h100") and [d[0] for d in nearest[4][1]] == ["gpu", "axis:tokens"]
    assert found.nearest[0].same == (
        ("operation", "kernel-rms-norm"),
        ("gpu", "NVIDIA B200"),
        ("dtype", "bf16"),
    )
    assert found.nearest[0].differences[0].ratio == pytest.approx(4096 / 3000)
    brackets = bracket(found)
    assert brackets is not None
    assert (brackets.facet, brackets.requested, brackets.below, brackets.above) == ("axis:tokens", 3000, 2048, 4096)
    assert [c.answer.cohort for c in brackets.below_cases] == [hand.cohort("r1")]
    assert [c.answer.cohort for c in brackets.above_cases] == [hand.cohort("t4096")]


def test_a_near_miss_on_a_shape_names_the_dimension_by_the_operations_axis(hand: Hand) -> None:
    # The operation declares input as [tokens, hidden]; hidden = 4096 everywhere, so [3000, 4096]
    # differs from [4096, 4096] in dimension 0, which is tokens (not hidden, although both are 4096).
    found = hand.resolve("rmsnorm", gpu="B200", shape=(3000, 4096))
    assert found.mode == NEAREST
    first = found.nearest[0]
    assert first.answer.cohort == hand.cohort("t4096")
    assert [(d.facet, d.requested, d.measured) for d in first.differences] == [("axis:tokens", "3000", "4096")]
    exact = hand.resolve("rmsnorm", gpu="B200", shape=(2048, 4096))
    assert [a.cohort for a in exact.exact] == [hand.cohort("r1")]
    assert ("shape", "[2048, 4096]") in exact.nearest[0].same if exact.nearest else True
    odd = hand.resolve("rmsnorm", gpu="B200", shape=(1, 2, 3))
    assert odd.nearest[0].differences[0].facet in ("shape", "scope")


def test_an_unknown_gpu_is_explained_with_the_gpus_there_are(hand: Hand) -> None:
    found = hand.resolve("rmsnorm", gpu="TPU v5", axes=(("tokens", 2048),))
    assert found.mode == NEAREST
    (problem,) = found.problems
    assert problem.field == "gpu" and problem.message == "no run in the registry was measured on a GPU named 'TPU v5'"
    assert problem.suggestions == ("NVIDIA B200", "NVIDIA H100", "sm_100", "sm_90")  # nothing is close: all of them
    assert all(c.differences[0].facet == "gpu" for c in found.nearest)
    close = hand.resolve("rmsnorm", gpu="NVIDIA H200")
    assert close.problems[0].suggestions[:2] == ("NVIDIA H100", "NVIDIA B200")


@pytest.mark.parametrize(
    ("text", "expected", "how"),
    [
        ("RMSNorm", ["kernel-rms-norm"], "alias"),  # its title
        ("rmsnorm", ["kernel-rms-norm"], "alias"),  # the alias tier answers before the family tier
        ("rms norm", ["kernel-rms-norm"], "alias"),
        ("kernel-rms-norm", ["kernel-rms-norm"], "name"),
        ("KERNEL_RMS_NORM", ["kernel-rms-norm"], "name"),
        ("fused-add-rmsnorm-h4096", ["fused-add-rmsnorm-h4096"], "name"),
        ("softmax", ["softmax-x"], "family"),
        ("SoftMax", ["softmax-x"], "family"),
        ("test_benchmark", ["softmax-x"], "benchmark"),  # the source's name, tried last
    ],
)
def test_operations_by_name_alias_or_family(hand: Hand, text: str, expected: list[str], how: str) -> None:
    found = hand.resolve(text)
    assert [hand.graph.nodes[m.digest].name for m in found.operations] == expected
    assert {m.how for m in found.operations} == {how}


def test_operations_by_digest_and_prefix(hand: Hand) -> None:
    digest = digest_of(SOFTMAX)
    for text in (digest, digest.removeprefix("sha256:")[:12]):
        assert [(m.digest, m.how) for m in hand.resolve(text).operations] == [(digest, "digest")]


def test_an_unknown_operation_is_explained_with_the_nearest_names(hand: Hand) -> None:
    found = hand.resolve("rmsnrom", gpu="B200")
    assert found.mode == NONE and found.operations == () and not (found.exact or found.nearest)
    (problem,) = found.problems
    assert problem.field == "operation"
    assert problem.message == "no operation is named, titled or of the family 'rmsnrom'"
    assert problem.suggestions[0] == "RMSNorm"  # its title and its family, one spelling (the title's)
    assert hand.resolve("   ").mode == NONE


def test_an_operation_nothing_measured(hand: Hand) -> None:
    found = hand.resolve("fused_add_rmsnorm_h4096")
    assert found.mode == NONE and [m.how for m in found.operations] == ["name"]
    assert found.problems[-1].message == "no run of fused-add-rmsnorm-h4096 is ranked: nothing measured to offer"


def test_a_dtype_nobody_measured_is_a_difference_and_a_problem(hand: Hand) -> None:
    found = hand.resolve("rmsnorm", gpu="B200", dtype="float8", axes=(("tokens", 2048),))
    assert found.mode == NEAREST
    assert [(d.facet, d.requested, d.measured) for d in found.nearest[0].differences] == [("dtype", "float8", "bf16")]
    assert found.problems == (registry.resolve.Problem("dtype", "no measured case of kernel-rms-norm is in float8"),)
    aliased = hand.resolve("rmsnorm", gpu="B200", dtype="bfloat16", axes=(("tokens", 2048),))
    assert aliased.mode == EXACT  # bfloat16 is bf16


def test_an_axis_the_case_does_not_have(hand: Hand) -> None:
    found = hand.resolve("rmsnorm", gpu="B200", axes=(("experts", 8),))
    assert found.mode == NEAREST
    assert found.nearest[0].differences[0].measured == "not an axis of this case"


# The embedded registry ----------------------------------------------------------------------------

LIGER_CSV = DATA / "sources" / "liger" / "all_benchmark_data.csv"


def _liger_rms_norm() -> list[dict[str, str]]:
    """Liger's RMSNorm speed rows (kernel rms_norm; x is H, the hidden size; M = 2048 rows; bf16)."""
    with LIGER_CSV.open() as handle:
        return [r for r in csv.DictReader(handle) if r["kernel_name"] == "rms_norm" and r["metric_name"] == "speed"]


@pytest.fixture(scope="module")
def embedded() -> Hand:
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    store = snapshots.store()
    return Hand(snapshots.head, lambda oid: orjson.loads(store.read_blob(oid)))


@pytest.mark.slow
def test_embedded_exact_rmsnorm_on_an_a100(embedded: Hand) -> None:
    rows = [r for r in _liger_rms_norm() if r["x_value"] == "4096"]
    assert {r["extra_benchmark_config_str"] for r in rows} == {'{"M": 2048, "dtype": "torch.bfloat16", "eps": 1e-06}'}
    found = embedded.resolve("rmsnorm", gpu="A100", dtype="bf16", axes=(("hidden", 4096), ("rows", 2048)))
    assert found.mode == EXACT and [embedded.graph.nodes[m.digest].title for m in found.operations] == ["RMSNorm"]
    modes = {r["kernel_operation_mode"] for r in rows}
    assert len(found.exact) == len(modes) == 3  # forward, backward, full: one cohort each
    for answer in found.exact:
        assert answer.ranked == 2 and answer.environment == "NVIDIA A100"
        mode = answer.protocol.rsplit("-", 1)[1]
        fastest = min((r for r in rows if r["kernel_operation_mode"] == mode), key=lambda r: float(r["y_value_50"]))
        assert fastest["kernel_provider"] == "liger"
        leader = embedded.graph.nodes[answer.leader.run or ""]
        assert isinstance(leader, n.Run) and leader.primary is not None
        assert leader.primary.value == pytest.approx(float(fastest["y_value_50"]) * 1e6, abs=1)
        implementation = embedded.graph.nodes[leader.implementation]
        assert isinstance(implementation, n.Implementation) and implementation.project == "liger-kernel"
        # Nothing in the embedded registry is verified or deployable (tests/test_deployability.py).
        assert answer.best_verified.run is None and answer.best_deployable.run is None


@pytest.mark.slow
def test_embedded_near_miss_on_the_hidden_size(embedded: Hand) -> None:
    found = embedded.resolve("rmsnorm", gpu="A100", dtype="bf16", axes=(("hidden", 3000), ("rows", 2048)))
    assert found.mode == NEAREST
    measured = sorted({int(r["x_value"]) for r in _liger_rms_norm()})
    below = max(h for h in measured if h < 3000)
    above = min(h for h in measured if h > 3000)
    assert (below, above) == (2048, 4096)
    brackets = bracket(found)
    assert brackets is not None and (brackets.facet, brackets.below, brackets.above) == ("axis:hidden", below, above)
    assert len(brackets.below_cases) == len(brackets.above_cases) == 3  # one cohort per pass
    assert all(
        c.same[1:] == (("gpu", "NVIDIA A100"), ("dtype", "bf16"), ("axis:rows", "2048")) for c in brackets.above_cases
    )


@pytest.mark.slow
def test_embedded_unknown_gpu(embedded: Hand) -> None:
    found = embedded.resolve("rmsnorm", gpu="TPU v5")
    assert found.mode == NEAREST and found.problems[0].field == "gpu"
    assert {"NVIDIA B200", "NVIDIA A100", "NVIDIA H100"} <= set(found.problems[0].suggestions)
    assert all([d.facet for d in c.differences] == ["gpu"] for c in found.nearest)


def _export_rows() -> Iterator[tuple[str, dict[str, Any]]]:
    with EXPORT.open("rb") as raw:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw)):
            record = orjson.loads(line)
            yield record["table"], record["row"]


def _export_operations() -> list[dict[str, Any]]:
    return [row for table, row in _export_rows() if table == "operations"]


@pytest.mark.slow
def test_embedded_alias_and_family(embedded: Hand) -> None:
    operations = _export_operations()
    # Upstream's name of gpumode-nvfp4-dual-gemm (its title here) finds it by alias.
    (dual,) = [o for o in operations if o["slug"] == "gpumode-nvfp4-dual-gemm"]
    found = embedded.resolve(dual["name"].upper())
    assert [(embedded.graph.nodes[m.digest].name, m.how) for m in found.operations] == [(dual["slug"], "alias")]
    # A family: every operation upstream files under it.
    family = sorted(o["slug"] for o in operations if o["family"] == "gated-deltanet")
    found = embedded.resolve("gated-deltanet")
    assert sorted(embedded.graph.nodes[m.digest].name for m in found.operations) == family and len(family) == 3
    assert {m.how for m in found.operations} == {"family"} and found.mode == EXACT
    # "trimul" is an alias upstream keeps and a manifest does not; it is also the family, which answers.
    found = embedded.resolve("trimul")
    assert [(embedded.graph.nodes[m.digest].name, m.how) for m in found.operations] == [("gpumode-trimul", "family")]


@pytest.mark.slow
def test_embedded_every_upstream_alias_finds_upstreams_operation(embedded: Hand) -> None:
    operations = {o["id"]: o for o in _export_operations()}
    missed = []
    for table, row in _export_rows():
        if table != "operation_aliases":
            continue
        slug = operations[row["operationId"]]["slug"]
        found = names.match_operations(embedded.graph, row["alias"], embedded.document)
        if [embedded.graph.nodes[m.digest].name for m in found] != [slug]:
            missed.append(slug)
    # 434 are titles; the other 16 are GPU MODE leaderboards, named by their runs (`amd-fp8-mm/13`).
    assert missed == []


@pytest.mark.slow
def test_embedded_unknown_operation(embedded: Hand) -> None:
    found = embedded.resolve("rmsnrom")
    assert found.mode == NONE and "RMSNorm" in found.problems[0].suggestions

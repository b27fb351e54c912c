"""The FlashInfer-Bench importer against upstream's fixtures (data/kernelindex/fixtures/flashinfer, whose
README says where each file comes from: the dataset at da915083, a definition, a baseline solution and its first
3 traces, a model's solution and 2 of its traces; the facts are those KernelIndex's flashinfer.test.ts asserts),
the corpus export's digests for the same rows, malformed variants, and the command's outputs."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from importing import FIXTURES, assert_refused, copy_registry, invoke, position_of, validate_out
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.registry.canonical import manifest_digest
from kernelindex.registry.importers.flashinfer import plan_flashinfer
from kernelindex.registry.importers.plan import ImportPlan, reconcile

DATASET = FIXTURES / "flashinfer" / "dataset"
REVISION = "da915083d4c7c5e61aa3005e3d17ae488e0fc71c"  # info.json's sha; upstream's test pins it too
SOLUTION_PATH = "solutions/baseline/rmsnorm/fused_add_rmsnorm_h2048/flashinfer_wrapper_74a870.json"
MODEL = "claude-opus-4-1-20250805"
LLM_SOLUTION_PATH = f"solutions/{MODEL}/rmsnorm/fused_add_rmsnorm_h2048/claude-opus-4-1_triton_c9eea2.json"
BEFORE_FLASHINFER = "e221f83b8f40a1d7da19952d1903c2f867d8508a"  # main with SOL-ExecBench only
# The corpus export (in manifests.git since 934bd73) publishes the definition, the solution and the fixture's
# three traces, each with its case, under one protocol and one environment:
OPERATION = "sha256:b28db409e15dc71e859a5c34624d6914398788b9ba4a89f2b79a826b3ab1da7e"
IMPLEMENTATION = "sha256:79278567a15eac7d7c781ebcfa7d8e307243a6e86e9efe02f3bf209e944419b2"
PROTOCOL = "sha256:7d44d206ad086b4bece35ce31f6531ebb11f07e0d9dcfb74c75be86d3ec02095"  # upstream's drift alarm
ENVIRONMENT = "sha256:f4292a8be127b7230cd3995c1d605fb6c644e2c2f94566e1d28cc1be766ca5d5"
RUNS = {  # trace line -> (run, case) in the corpus
    1: (
        "sha256:3415d6d944b99ec302fdeff8e83a3cdaa5ab1bdf56f3cba6d0da2514fe348ea9",
        "sha256:da6158f061b76f71c74e65da2aef0c8d5581fbd74b5dc3bb87721cff79c091e8",
    ),
    2: (
        "sha256:d859f42cde5ef44a439a67f775a18b462e744b0bd22dff7fe7117dc6c89192fe",
        "sha256:e0ada6b8ffef65f081f33d57fe87836e1fbbb8cadfba6dd8ca4af0c219ab76f1",
    ),
    3: (
        "sha256:966c4508d27cd7c4e7e1f4911780f3067f8e978fffee5907269b0d9373b1e35c",
        "sha256:0742fd3bcb491a15872537268ab1bfdaa4ef3963313dba3837da68e311b17dd6",
    ),
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_registry(tmp_path)


def _of_kind(plan: ImportPlan, kind: str) -> list[dict[str, Any]]:
    return [m.document for _, m in plan.manifests.values() if m.kind == kind]


def _run_at(plan: ImportPlan, where: str) -> dict[str, Any]:
    row = next(r for r in plan.rows if r.where == where)
    assert row.run is not None
    return plan.manifests[row.run][1].document


def _dataset_tree(tmp_path: Path) -> Path:
    """The fixtures where the README says they come from in the dataset (a clone's layout)."""
    root = tmp_path / "flashinfer-trace"
    places = {
        "definition.json": "definitions/rmsnorm/fused_add_rmsnorm_h2048.json",
        "solution.json": SOLUTION_PATH,
        "trace.jsonl": "traces/baseline/rmsnorm/fused_add_rmsnorm_h2048.jsonl",
        "llm-solution.json": LLM_SOLUTION_PATH,
        "llm-trace.jsonl": f"traces/{MODEL}/rmsnorm/fused_add_rmsnorm_h2048.jsonl",
    }
    for name, place in places.items():
        (root / place).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATASET / name, root / place)
    return root


# The fixture files beside the dataset listing ------------------------------------------------------------


def test_the_dataset_maps_as_upstream_says() -> None:
    plan = plan_flashinfer(DATASET)
    assert plan.problems == [] and plan.revision == REVISION
    kinds = plan.kinds()
    # "Three traces at distinct batch sizes: one workload case each"; 1 operation, implementation, project.
    assert (kinds["OperationSpec"], kinds["ImplementationRevision"], kinds["SoftwareProject"]) == (1, 1, 1)
    assert (kinds["WorkloadCase"], plan.runs) == (3, 3)
    # The listing names the baseline files only: the model's solution is not placed, and never guessed.
    assert plan.skipped == {
        "solution not placed in the dataset tree (no solutions/<author>/ path, not in the listing)": 1,
        "trace of a solution skipped (not placed in the dataset tree)": 2,
    }
    [operation] = _of_kind(plan, "OperationSpec")
    assert operation["metadata"]["name"] == "fused-add-rmsnorm-h2048"
    assert operation["spec"]["family"] == "rmsnorm"  # op_type
    assert operation["spec"]["axes"]["hidden_size"] == {"role": "constant", "type": "integer", "value": 2048}
    [project] = _of_kind(plan, "SoftwareProject")
    assert project["metadata"]["name"] == "flashinfer-baseline"
    assert project["spec"]["name"] == "FlashInfer-Bench baselines"


def test_the_solution_mirrors_its_source_by_digest() -> None:
    [implementation] = _of_kind(plan_flashinfer(DATASET), "ImplementationRevision")
    spec = implementation["spec"]
    assert spec["licensing"] == {"declared": "Apache-2.0", "concluded": "Apache-2.0"}
    assert spec["callable"] == {"language": "python", "path": "main.py", "symbol": "run"}
    assert len(spec["support"]["productsTested"]) == 6 and spec["support"]["dtypes"] == ["bf16"]
    code = json.loads((DATASET / "solution.json").read_text())["sources"][0]["content"]
    assert spec["source"] == {
        "contentDigest": "sha256:" + hashlib.sha256(code.encode()).hexdigest(),
        "fileName": "main.py",
        "sizeBytes": 411,  # upstream's report: {solutionsWithCode: 1, totalBytes: 411}
    }
    metadata = implementation["metadata"]
    assert metadata["labels"] == {"project": "flashinfer-baseline", "role": "baseline"}
    assert metadata["sourceRefs"] == [
        {"url": f"https://huggingface.co/datasets/flashinfer-ai/flashinfer-trace/blob/{REVISION}/{SOLUTION_PATH}"}
    ]


def test_upstreams_pinned_digests_reproduce() -> None:
    """flashinfer.test.ts pins the trace protocol's digest, and the baseline implementation's when its
    operation digest is sha256:11...1."""
    plan = plan_flashinfer(DATASET)
    assert [d for d, (_, m) in plan.manifests.items() if m.kind == "BenchmarkProtocol"] == [PROTOCOL]
    [implementation] = _of_kind(plan, "ImplementationRevision")
    pinned = json.loads(json.dumps(implementation))
    pinned["spec"]["operation"]["specDigest"] = "sha256:" + "1" * 64
    expected = "sha256:635f4b7b595c62b00c85f9d65a660f8357ecb5bbe06fbfdda8d5d83c3876eacd"
    assert manifest_digest(pinned) == expected


def test_the_traces_are_per_case_runs() -> None:
    """trace.jsonl: batch 6 at 0.007666674151122668 ms (7,666.67 ns), observed 2025-10-21T13:37:42.930971; line 3
    is batch 34 with a max absolute error of 0.015625."""
    plan = plan_flashinfer(DATASET)
    first = _run_at(plan, "trace.jsonl:1")["spec"]
    assert first["timing"] == {"primaryStatistic": "mean", "latencyNs": {"mean": 7_667}}
    assert first["status"] == "passed" and first["observedAt"] == "2025-10-21T13:37:42.930Z"
    assert first["sourceNative"] == {
        "source": "flashinfer-bench",
        "benchmark": "fused_add_rmsnorm_h2048",
        "metrics": {
            "latency_ms": 0.007666674151122668,
            "reference_latency_ms": 0.055197691422457264,
            "speedup_factor": 7.199691852610483,
        },
    }
    case = plan.manifests[first["workloadDigest"]][1].document["spec"]
    assert case["axes"] == {"batch_size": 6}
    assert case["tensors"]["residual"] == {"shape": [6, 2048], "dtype": "bf16", "data": {"generator": "random"}}
    assert case["tensors"]["weight"]["shape"] == [2048]
    third = _run_at(plan, "trace.jsonl:3")["spec"]
    assert third["correctness"] == {
        "comparator": "sol_execbench_eval",
        "maximumAbsoluteError": 0.015625,
        "maximumRelativeError": 0.005681818351149559,
    }
    environment = plan.manifests[first["environmentDigest"]][1].document["spec"]
    assert environment == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "unknown"},
        "software": {
            "cudaToolkit": "12.8",
            "framework": {"name": "pytorch", "version": "2.8.0+cu128"},
            "libraries": {"triton": "3.4.0"},
        },
    }


def test_the_corpus_digests_reproduce(embedded: registry.GitStore) -> None:
    plan = plan_flashinfer(DATASET)
    for line, (run, case) in RUNS.items():
        assert _run_at(plan, f"trace.jsonl:{line}")["spec"]["workloadDigest"] == case
        assert next(r.run for r in plan.rows if r.where == f"trace.jsonl:{line}") == run
    assert {OPERATION, IMPLEMENTATION, PROTOCOL, ENVIRONMENT} <= set(plan.manifests)
    reconciled = reconcile(plan, embedded, "e775d39b6768675ff8eb086da76420493425c1a4")
    # Everything is published byte for byte but the implementation, whose role label upstream added after
    # the export (metadata: the digest is the same, the published one stands).
    assert reconciled.new == () and len(reconciled.unchanged) == 10
    assert [m.digest for _, m, _ in reconciled.conflicting] == [IMPLEMENTATION]


def test_infinite_error_bounds_record_no_bound(tmp_path: Path) -> None:
    """Upstream's parser (version 2) reads the harness's "Infinity" and "NaN" error values as no bound."""
    data = tmp_path / "dataset"
    shutil.copytree(DATASET, data)
    lines = (data / "trace.jsonl").read_text().splitlines()
    line = json.loads(lines[0])
    line["evaluation"]["correctness"].update(max_absolute_error="Infinity", max_relative_error="NaN")
    (data / "trace.jsonl").write_text(json.dumps(line) + "\n")
    run = _run_at(plan_flashinfer(data), "trace.jsonl:1")
    assert run["spec"]["correctness"] == {"comparator": "sol_execbench_eval"}


# A clone's layout: author directories --------------------------------------------------------------------


def test_a_models_solutions_import_only_when_named(tmp_path: Path, embedded: registry.GitStore) -> None:
    root = _dataset_tree(tmp_path)
    # A clone also has workloads/: lists of cases to run, which are not measurements.
    (root / "workloads" / "rmsnorm").mkdir(parents=True)
    (root / "workloads" / "rmsnorm" / "fused_add_rmsnorm_h2048.jsonl").write_text(
        json.dumps({"definition": "fused_add_rmsnorm_h2048", "workload": {"axes": {"batch_size": 6}}}) + "\n"
    )
    default = plan_flashinfer(root, revision=REVISION)
    assert default.runs == 3
    assert default.skipped == {
        "workload list (the traces name their cases)": 1,
        f"solution by '{MODEL}', an author not selected (--include-author {MODEL} imports it)": 1,
        f"trace of a solution by '{MODEL}', an author not selected": 2,
    }
    plan = plan_flashinfer(root, revision=REVISION, authors=["baseline", MODEL])
    assert plan.runs == 5 and plan.skipped == {"workload list (the traces name their cases)": 1}
    llm = next(d for d in _of_kind(plan, "ImplementationRevision") if d["metadata"]["title"].startswith("claude"))
    assert llm["metadata"]["labels"] == {
        "project": f"flashinfer-{MODEL}",
        "role": "llm-generated",
        "author": MODEL,
    }
    assert llm["metadata"]["authors"] == [{"name": MODEL}]
    assert llm["spec"]["callable"]["language"] == "triton"
    # Against the published baselines only the model's project, implementation and two runs are new: its
    # traces measure the baseline's cases (same uuids).
    reconciled = reconcile(plan, embedded, "e775d39b6768675ff8eb086da76420493425c1a4")
    assert sorted(m.kind for _, m in reconciled.new) == [
        "BenchmarkRun",
        "BenchmarkRun",
        "ImplementationRevision",
        "SoftwareProject",
    ]


def test_a_revision_is_needed(tmp_path: Path, runner: CliRunner) -> None:
    root = _dataset_tree(tmp_path)
    result = invoke(runner, "import", "flashinfer-bench", root, "--dry-run")
    assert result.exit_code == 1 and "no dataset revision" in result.stderr
    listed = invoke(runner, "import", "flashinfer-bench", DATASET, "--revision", "0" * 40, "--dry-run")
    assert listed.exit_code == 1
    line, column = position_of(DATASET / "info.json", f'"{REVISION}"')
    assert listed.stderr.startswith(f"info.json:{line}:{column}: $.sha: the listing is of {REVISION}")


# Outputs ---------------------------------------------------------------------------------------------------


def test_every_manifest_passes_validate(tmp_path: Path, runner: CliRunner) -> None:
    repo = copy_registry(tmp_path, BEFORE_FLASHINFER)
    root = _dataset_tree(tmp_path)
    extra = ("--revision", REVISION, "--include-author", "baseline", "--include-author", MODEL)
    # All 15: the operation, 2 projects, 2 implementations, 3 cases, the protocol, the environment, 5 runs.
    assert validate_out(runner, "flashinfer-bench", root, repo, tmp_path / "out", *extra) == 15


@pytest.mark.slow
def test_import_on_a_branch_then_again_changes_nothing(tmp_path: Path, runner: CliRunner) -> None:
    repo = copy_registry(tmp_path, BEFORE_FLASHINFER)
    first = invoke(runner, "import", "flashinfer-bench", DATASET, "--repo", repo, "--branch", "fi", "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    store = registry.GitStore(repo)
    tip = store.head("refs/heads/fi")
    assert report["commit"] == tip and report["manifests"]["new"] == 11
    info = store.commit_info(tip or "")
    assert info.trailer("Source") == "flashinfer-bench" and info.trailer("Source-Revision") == REVISION
    assert info.trailer("License") == "Apache-2.0"
    assert info.trailer("Attribution") == "FlashInfer-Bench (flashinfer-ai/flashinfer-trace)"
    snapshots = {v.split(" ")[1]: v.split(" ")[0] for v in info.trailer_values("Source-Snapshot")}
    assert sorted(snapshots) == sorted(p.name for p in DATASET.iterdir())
    assert snapshots["trace.jsonl"] == "sha256:" + hashlib.sha256((DATASET / "trace.jsonl").read_bytes()).hexdigest()
    # FlashInfer-Bench is not yet a source of that main: the PR report simulates the merge, three new cohorts
    # (one per case) that each run leads.
    at_merge = report["report"]["atMerge"]
    assert report["report"]["ok"] is True and len(at_merge) == 3
    assert all(run["newCohort"] and run["rank"] == 1 and run["takesRecord"] for run in at_merge)
    second = invoke(runner, "import", "flashinfer-bench", DATASET, "--repo", repo, "--branch", "fi", "--json")
    again = json.loads(second.stdout)
    assert again["commit"] is None and again["manifests"]["unchanged"] == 11
    assert store.head("refs/heads/fi") == tip


# Malformed variants ----------------------------------------------------------------------------------------


def _variant(tmp_path: Path, name: str, edit: Any) -> Path:
    data = tmp_path / "dataset"
    shutil.copytree(DATASET, data)
    path = data / name
    if name.endswith(".jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        edit(lines)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    else:
        document = json.loads(path.read_text())
        edit(document)
        path.write_text(json.dumps(document, indent=2))
    return data


def test_a_truncated_trace_line_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, "trace.jsonl", lambda lines: None)
    trace = data / "trace.jsonl"
    lines = trace.read_text().splitlines()
    trace.write_text("\n".join([lines[0], lines[1][:200], lines[2]]) + "\n")
    report = assert_refused(runner, "flashinfer-bench", data, repo, "trace.jsonl:2:", "invalid JSON")
    assert report["runs"] == 2  # lines 1 and 3 still import with --skip-bad


def test_a_missing_field_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    """upstream: "quarantines a solution document missing its definition binding"."""
    data = _variant(tmp_path, "solution.json", lambda document: document.pop("definition"))
    report = assert_refused(runner, "flashinfer-bench", data, repo, "solution.json:1:1", "definition is missing")
    # Without its solution, the traces cannot be mapped: skipped, said why.
    assert report["runs"] == 0
    assert report["skipped"]["trace of solution 'flashinfer_wrapper_74a870', which is not in the files"] == 3


def test_a_wrong_unit_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    def microseconds(lines: list[dict[str, Any]]) -> None:
        performance = lines[2]["evaluation"]["performance"]
        performance["latency_us"] = performance.pop("latency_ms") * 1000

    data = _variant(tmp_path, "trace.jsonl", microseconds)
    line, column = 3, (data / "trace.jsonl").read_text().splitlines()[2].index('"latency_us"') + 1
    report = assert_refused(
        runner, "flashinfer-bench", data, repo, f"trace.jsonl:{line}:{column + 14}", "latencies are in ms"
    )
    assert report["runs"] == 2


def test_a_non_numeric_latency_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(
        tmp_path, "trace.jsonl", lambda lines: lines[0]["evaluation"]["performance"].update(latency_ms="fast")
    )
    column = (data / "trace.jsonl").read_text().splitlines()[0].index('"fast"') + 1
    assert_refused(runner, "flashinfer-bench", data, repo, f"trace.jsonl:1:{column}", "not a number: 'fast'")


def test_a_repeated_trace_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, "trace.jsonl", lambda lines: lines.append(lines[1]))
    report = assert_refused(
        runner, "flashinfer-bench", data, repo, "trace.jsonl:4:1", "repeats the trace at trace.jsonl:2"
    )
    assert report["runs"] == 3

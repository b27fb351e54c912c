"""The SOL-ExecBench importer against upstream's fixtures (data/kernelindex/fixtures/sol, whose README
says where each file comes from; the facts are those KernelIndex's sol.test.ts asserts), the corpus
export's digests for the same kernel, malformed variants, and the command's outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from importing import FIXTURES, assert_refused, copy_registry, invoke, position_of, validate_out
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.registry.importers.plan import ImportPlan, reconcile
from kernelindex.registry.importers.sol_execbench import plan_sol_execbench

SOL = FIXTURES / "sol"
EXAMPLES_COMMIT = "a9fa0804c793d438e70850c33fe34426e66d53dd"  # upstream's sol.test.ts pins this one
# The corpus export (upstream's catalog, in manifests.git since e221f83) publishes kernel 4's operation and suite:
KERNEL_4_OPERATION = "sha256:2bef7b0c188a44c3fe1801bf95b012b65d417d84b7c82daf09b9315e9e637b8b"
KERNEL_4_SUITE = "sha256:40b67b78664f3dacfaad8470e350d50465e537f7399b5d652edef35a8894be83"


def _of_kind(plan: ImportPlan, kind: str) -> list[dict[str, Any]]:
    return [m.document for _, m in plan.manifests.values() if m.kind == kind]


def _copy(tmp_path: Path, part: str) -> Path:
    target = tmp_path / part
    shutil.copytree(SOL / part, target)
    return target


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_registry(tmp_path)


# The dataset directory ----------------------------------------------------------------------------------


def test_the_dataset_maps_as_upstream_says() -> None:
    plan = plan_sol_execbench(SOL / "rmsnorm", commit=EXAMPLES_COMMIT)
    assert plan.problems == [] and not plan.skipped
    kinds = plan.kinds()
    # "4 workload cases; the two traces reuse existing case UUIDs", 1 operation, 1 implementation, 2 runs.
    assert (kinds["WorkloadCase"], kinds["OperationSpec"], kinds["ImplementationRevision"], plan.runs) == (4, 1, 1, 2)
    [operation] = _of_kind(plan, "OperationSpec")
    assert operation["metadata"]["name"] == "rmsnorm-h4096"
    spec = operation["spec"]
    assert spec["family"] == "rmsnorm"
    assert spec["inputs"][0] == {
        "name": "hidden_states",
        "tensor": {"shape": ["batch_size", "hidden_size"], "dtype": "bf16"},
    }
    assert spec["axes"]["hidden_size"] == {"role": "constant", "type": "integer", "value": 4096}
    assert spec["semantics"]["determinism"] == "unspecified"
    [implementation] = _of_kind(plan, "ImplementationRevision")
    assert implementation["spec"]["licensing"]["concluded"] == "Apache-2.0"
    assert implementation["spec"]["callable"] == {
        "language": "cuda",  # cuda_cpp
        "path": ".",
        "symbol": "main.cpp::run",
        "interface": "pytorch",  # binding: torch
    }
    assert implementation["spec"]["support"]["productsTested"] == ["NVIDIA B200"]  # LOCAL is not a product


def test_the_traces_are_per_case_runs() -> None:
    """trace.jsonl: line 1 PASSED at 0.008 ms on batch 7, line 2 INCORRECT_NUMERICAL with no performance."""
    plan = plan_sol_execbench(SOL / "rmsnorm", commit=EXAMPLES_COMMIT)
    runs = {row.where: plan.manifests[row.run][1].document for row in plan.rows if row.run}
    passed, failed = runs["trace.jsonl:1"]["spec"], runs["trace.jsonl:2"]["spec"]
    assert passed["status"] == "passed"
    assert passed["timing"] == {"primaryStatistic": "mean", "latencyNs": {"mean": 8_000}}
    assert passed["sourceNative"]["metrics"] == {
        "latency_ms": 0.008,
        "reference_latency_ms": 0.019,
        "speedup_factor": 2.375,
    }
    assert passed["correctness"] == {
        "comparator": "sol_execbench_eval",
        "maximumAbsoluteError": 8.9e-06,
        "maximumRelativeError": 1.15e-05,
    }
    assert passed["observedAt"] == "2025-06-27T12:45:00.000Z"
    assert failed["status"] == "incorrect_numerical" and "timing" not in failed
    # The trace's case is workload.jsonl's line 1 (same uuid): batch 7 of hidden 4096.
    case = plan.manifests[passed["workloadDigest"]][1].document
    assert case["spec"]["axes"] == {"batch_size": 7}
    assert case["spec"]["tensors"]["hidden_states"] == {
        "shape": [7, 4096],
        "dtype": "bf16",
        "data": {"generator": "random"},
    }
    environment = plan.manifests[passed["environmentDigest"]][1].document["spec"]
    assert environment == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H100", "architecture": "sm_90"},
        "software": {
            "cudaToolkit": "12.6",
            "framework": {"name": "pytorch", "version": "2.6.0"},
            "libraries": {"triton": "2.4.0"},
        },
    }


def test_without_a_pinned_commit_solutions_and_their_traces_are_skipped() -> None:
    plan = plan_sol_execbench(SOL / "rmsnorm")
    assert plan.runs == 0
    assert sum(plan.skipped.values()) == 3  # the solution file and its two traces
    assert all("pinned examples commit" in reason for reason in plan.skipped)


# The leaderboard snapshot -------------------------------------------------------------------------------


def test_the_leaderboard_snapshot_reproduces_the_corpus_digests(embedded: registry.GitStore) -> None:
    plan = plan_sol_execbench(SOL / "api")
    assert plan.problems == []
    kinds = plan.kinds()
    assert (kinds["WorkloadCase"], kinds["WorkloadSuite"], plan.runs) == (16, 1, 2)  # "16 cases plus the suite"
    [operation] = [d for d, (_, m) in plan.manifests.items() if m.kind == "OperationSpec"]
    [suite] = [d for d, (_, m) in plan.manifests.items() if m.kind == "WorkloadSuite"]
    assert (operation, suite) == (KERNEL_4_OPERATION, KERNEL_4_SUITE)
    reconciled = reconcile(plan, embedded, "e775d39b6768675ff8eb086da76420493425c1a4")
    # Everything but the two newer submissions (their implementations and runs) is already published as is.
    assert sorted(m.name for _, m in reconciled.new) == ["sol-submission-36157"] * 2 + ["sol-submission-36577"] * 2
    assert len(reconciled.unchanged) == 21 and reconciled.conflicting == ()


def test_a_submission_is_a_suite_mean_run() -> None:
    """submissions.json[0]: id 36577, Geometric, 0.050546 ms, SOL score 0.643494, finished 05:38:44.902912."""
    plan = plan_sol_execbench(SOL / "api")
    row = next(r for r in plan.rows if r.where == "submissions.json:$.data.submissions[0]")
    assert row.run is not None
    run = plan.manifests[row.run][1].document
    assert run["metadata"] == {
        "name": "sol-submission-36577",
        "title": "Geometric · 004_attention_output_projection_with_reshape_backward · B200",
        "labels": {"worker": "external-prod-b200-modal-1"},
    }
    spec = run["spec"]
    assert spec["timing"] == {"primaryStatistic": "mean", "latencyNs": {"mean": 50_546}}
    assert spec["sourceNative"]["metrics"] == {
        "latency_ms": 0.050546,
        "sol_score": 0.643494,
        "avg_speedup": 1.4217,
        "fast_1_count": 16,
        "fast_1_total": 16,
    }
    assert spec["observedAt"] == "2026-08-14T05:38:44.902Z"  # upstream's toUtcInstant truncates to ms
    assert spec["workloadDigest"] == KERNEL_4_SUITE


def _submissions_variant(tmp_path: Path, edit: Any) -> Path:
    api = _copy(tmp_path, "api")
    document = json.loads((api / "submissions.json").read_text())
    edit(document["data"]["submissions"])
    (api / "submissions.json").write_text(json.dumps(document, indent=2))
    return api


def test_selection_skips_incorrect_disqualified_and_impossible_submissions(tmp_path: Path) -> None:
    """Upstream's synthetic negatives on the real rows: an incorrect, a disqualified, and one faster than
    the minimum per-case speed-of-light bound (0.003 ms, kernel-4.json's batch 1 x 256 case)."""

    def add(submissions: list[dict[str, Any]]) -> None:
        first = submissions[0]
        submissions += [
            {**first, "id": 900001, "is_correct": False},
            {**first, "id": 900002, "is_disqualified": True},
            {**first, "id": 900003, "latency_ms": 1e-6},
        ]

    plan = plan_sol_execbench(_submissions_variant(tmp_path, add), top=2)
    assert plan.runs == 2
    assert plan.skipped == {
        "not a correct, completed submission": 1,
        "disqualified on the leaderboard": 1,
        "beats the minimum per-case speed-of-light bound 0.003 ms: held for review": 1,
    }


def test_one_submitter_cannot_fill_the_quota(tmp_path: Path) -> None:
    """Both real rows are Geometric's; with a third submitter scoring between them, top 2 keeps each
    submitter's best first: 36577 (0.643) and the newcomer (0.6), not Geometric's 36157 (0.586)."""

    def add(submissions: list[dict[str, Any]]) -> None:
        submissions.append({**submissions[0], "id": 900004, "username": "Newcomer", "sol_score": 0.6})

    plan = plan_sol_execbench(_submissions_variant(tmp_path, add), top=2)
    names = sorted(m.name for _, m in plan.manifests.values() if m.kind == "BenchmarkRun")
    assert names == ["sol-submission-36577", "sol-submission-900004"]
    assert plan.skipped == {"below the best 2 of its kernel": 1}


# Outputs ---------------------------------------------------------------------------------------------------


def test_every_manifest_passes_validate(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    written = validate_out(runner, "sol-execbench", SOL, repo, tmp_path / "out", "--commit", EXAMPLES_COMMIT)
    # 10 new: 2 submissions (implementation + run each), 1 solution, 2 traces, 2 trace cases are new
    # (workload.jsonl's batch 7 and 1), the trace protocol and environment, the examples' project.
    assert written == 10


@pytest.mark.slow
def test_import_on_a_branch_then_again_changes_nothing(runner: CliRunner, repo: Path) -> None:
    first = invoke(runner, "import", "sol-execbench", SOL / "api", "--repo", repo, "--branch", "sol", "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    store = registry.GitStore(repo)
    tip = store.head("refs/heads/sol")
    assert report["commit"] == tip and report["manifests"]["new"] == 4
    info = store.commit_info(tip or "")
    assert info.trailer("Source") == "sol-execbench"
    assert [v.split(" ")[1] for v in info.trailer_values("Source-Snapshot")] == [
        "kernel-4.json",
        "kernels.json",
        "submissions.json",
    ]
    # main already publishes sol-execbench: an unsigned import of it is a maintainer's act, and the
    # PR report refuses it (so it simulates no merge).
    assert report["report"]["ok"] is False and report["report"]["atMerge"] is None
    assert "registered source 'sol-execbench'" in json.dumps(report["report"])
    second = invoke(runner, "import", "sol-execbench", SOL / "api", "--repo", repo, "--branch", "sol", "--json")
    again = json.loads(second.stdout)
    assert again["commit"] is None and again["manifests"]["unchanged"] == 25
    assert store.head("refs/heads/sol") == tip


# Malformed variants ----------------------------------------------------------------------------------------


def test_a_truncated_trace_line_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _copy(tmp_path, "rmsnorm")
    trace = data / "trace.jsonl"
    lines = trace.read_text().splitlines()
    trace.write_text(lines[0][:120] + "\n" + lines[1] + "\n")
    report = assert_refused(
        runner, "sol-execbench", data, repo, "trace.jsonl:1:121", "invalid JSON", "--commit", EXAMPLES_COMMIT
    )
    assert report["runs"] == 1  # line 2 still imports with --skip-bad


def test_a_missing_field_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    api = _submissions_variant(tmp_path, lambda subs: subs[1].pop("gpu_type"))
    line, column = position_of(api / "submissions.json", "{", 4)  # the second submission's object
    report = assert_refused(
        runner, "sol-execbench", api, repo, f"submissions.json:{line}:{column}", "gpu_type is missing"
    )
    assert report["runs"] == 1


def test_a_wrong_unit_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    api = _copy(tmp_path, "api")
    detail = api / "kernel-4.json"
    detail.write_text(detail.read_text().replace('"latency_unit": "ms"', '"latency_unit": "us"'))
    line, column = position_of(detail, '"us"')
    report = assert_refused(
        runner, "sol-execbench", api, repo, f"kernel-4.json:{line}:{column}", "latencies must be in ms, not 'us'"
    )
    # Without its definition, the kernel's submissions cannot be mapped: skipped, said why.
    assert report["runs"] == 0 and report["skipped"] == {
        "kernel 004_attention_output_projection_with_reshape_backward has no kernel detail in the snapshot": 2
    }


def test_a_non_numeric_latency_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    api = _submissions_variant(tmp_path, lambda subs: subs[0].update(latency_ms="fast"))
    line, column = position_of(api / "submissions.json", '"fast"')
    assert_refused(runner, "sol-execbench", api, repo, f"submissions.json:{line}:{column}", "not a number: 'fast'")


def test_a_repeated_submission_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    api = _submissions_variant(tmp_path, lambda subs: subs.append(dict(subs[0])))
    line, column = position_of(api / "submissions.json", '"id": 36577', 2)
    report = assert_refused(
        runner, "sol-execbench", api, repo, f"submissions.json:{line}:{column + 6}", "repeats submission 36577"
    )
    assert report["runs"] == 2


def test_a_repeated_workload_line_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _copy(tmp_path, "rmsnorm")
    workload = data / "workload.jsonl"
    lines = workload.read_text().splitlines()
    workload.write_text("\n".join([*lines, lines[2]]) + "\n")
    assert_refused(
        runner,
        "sol-execbench",
        data,
        repo,
        "workload.jsonl:5:1",
        "repeats the workload case",
        "--commit",
        EXAMPLES_COMMIT,
    )


def test_a_directory_without_sol_files_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "empty").mkdir()
    result = invoke(runner, "import", "sol-execbench", tmp_path / "empty", "--dry-run")
    assert result.exit_code == 1 and "no SOL-ExecBench files here" in result.stderr

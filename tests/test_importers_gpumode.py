"""The GPU MODE KernelBot importer against upstream's fixtures (data/kernelindex/fixtures/gpumode: the
three curated AMD boards, and amd-fp8-mm's top two successful submissions, both user 44's, to pin the
per-user dedupe; the facts are those KernelIndex's gpumode.test.ts asserts), the corpus digests of the
same board, malformed variants, and the command's outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from importing import FIXTURES, assert_refused, copy_registry, invoke, position_of, validate_out
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.registry.importers.gpumode import plan_gpumode

GPUMODE = FIXTURES / "gpumode"
BEFORE_LIGER = "e775d39b6768675ff8eb086da76420493425c1a4"
# The corpus export publishes the board's operation and the case of fp8-mm-top.json's benchmark 1:
FP8_OPERATION = "sha256:a1fd649f9f2b6ba31de4df12c0a0ab056b8b0ae31b99a42b207f338d0aaf653d"
FP8_CASE_1 = "sha256:123a5920d4d1c9c68205516418cb0cabff835fa28c7f0d139b48e8dbc1406b14"  # k1536 m1024 n3072 seed6251


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_registry(tmp_path)


def _documents(kind: str) -> list[dict[str, Any]]:
    plan = plan_gpumode(GPUMODE)
    return [m.document for _, m in plan.manifests.values() if m.kind == kind]


def test_the_rows_map_as_upstream_says() -> None:
    plan = plan_gpumode(GPUMODE)
    assert plan.problems == []
    # "Both fixture rows are one user: dedupe keeps the best submission": 1 operation, 3 workloads, 3 runs.
    assert plan.skipped == {"a better submission of the same user is kept (one per user)": 1}
    kinds = plan.kinds()
    assert (kinds["OperationSpec"], kinds["WorkloadCase"], plan.runs, kinds["ImplementationRevision"]) == (1, 3, 3, 1)
    [operation] = _documents("OperationSpec")
    assert operation["metadata"]["name"] == "gpumode-amd-fp8-mm"
    assert operation["spec"]["inputs"][0]["tensor"]["layout"] == "col_major"
    [implementation] = _documents("ImplementationRevision")
    assert implementation["metadata"]["name"] == "kernelbot-submission-30771"  # the better score, 0.000103 s
    assert implementation["spec"]["licensing"] == {}  # no per-submission licence: reported-only
    assert "source" not in implementation["spec"]  # the fixture nulled the code


def test_benchmark_0_binds_the_derived_axes() -> None:
    """benchmark.0.spec is "k: 7168; m: 1024; n: 1536; seed: 8135": a_scale is m x k//128, b_scale n//128 x k//128."""
    plan = plan_gpumode(GPUMODE)
    row = next(r for r in plan.rows if r.where == "api/fp8-mm-top.json:$.rows[0].row.benchmark.0")
    assert row.run is not None
    run = plan.manifests[row.run][1].document
    case = plan.manifests[run["spec"]["workloadDigest"]][1].document["spec"]
    assert case["axes"] == {"k": 7168, "m": 1024, "n": 1536, "seed": 8135}
    assert case["tensors"]["a_scale"]["shape"] == [1024, 56]
    assert case["tensors"]["b_scale"]["shape"] == [12, 56]
    assert case["tensors"]["a"]["dtype"] == "fp8_e4m3fnuz"
    spec = run["spec"]
    # mean 79544.11, best 77737.0, worst 84790.0, std 1107.44..., 100 runs (ns)
    assert spec["timing"] == {
        "primaryStatistic": "mean",
        "samples": 100,
        "latencyNs": {"mean": 79_544, "minimum": 77_737, "maximum": 84_790},
    }
    assert spec["measurements"] == [
        {"metric": "latency", "unit": "ns", "statistic": "std", "value": 1107.4411117800378, "sampleCount": 100}
    ]
    assert spec["sourceNative"]["metrics"] == {
        "mean_ns": 79544.11,
        "best_ns": 77737.0,
        "leaderboard_score_s": 0.0001033188475318776,
    }
    assert "rocm" in run["metadata"]["labels"]["torch"]
    assert spec["observedAt"] == "2025-06-02T19:14:36.811Z"
    environment = plan.manifests[spec["environmentDigest"]][1].document["spec"]["hardware"]
    assert environment == {"vendor": "amd", "product": "AMD Instinct MI300X", "architecture": "gfx942"}


def test_the_corpus_digests_reproduce(embedded: registry.GitStore) -> None:
    from kernelindex.registry.importers.plan import reconcile

    plan = plan_gpumode(GPUMODE)
    assert FP8_OPERATION in plan.manifests and FP8_CASE_1 in plan.manifests
    reconciled = reconcile(plan, embedded, BEFORE_LIGER)
    # The operation, the 3 cases, user 44's project, the protocol and the MI300X environment are published as is;
    # the implementation is not (the corpus one names its mirrored code), so neither are its runs.
    assert len(reconciled.unchanged) == 7 and reconciled.conflicting == ()
    assert sorted(m.kind for _, m in reconciled.new) == ["BenchmarkRun"] * 3 + ["ImplementationRevision"]
    # kernelbot-submission-30771 is taken by the corpus's implementation: the new one's name is made unique.
    [implementation] = [m for _, m in reconciled.new if m.kind == "ImplementationRevision"]
    assert implementation.name == f"kernelbot-submission-30771-{implementation.digest[7:15]}"


def test_code_in_the_row_is_named_by_digest(tmp_path: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows[0]["row"].update(code="print('fp8')\n"))
    [implementation] = [
        m.document for _, m in plan_gpumode(data).manifests.values() if m.kind == "ImplementationRevision"
    ]
    # sha256 of the 13 bytes "print('fp8')\n", computed with sha256sum
    assert implementation["spec"]["source"] == {
        "contentDigest": "sha256:eb054cf717920d3bc6d989802debd918f9776b4abb6c459f039b70c1f1971dd8",
        "fileName": "submission.py",
        "sizeBytes": 13,
    }


def test_top_keeps_that_many_users(tmp_path: Path) -> None:
    def second_user(rows: list[dict[str, Any]]) -> None:
        rows[1]["row"]["user_id"] = 45

    data = _variant(tmp_path, second_user)
    assert plan_gpumode(data).runs == 6
    limited = plan_gpumode(data, top=1)
    assert limited.runs == 3 and limited.skipped == {"below the best 1 users of the board": 1}


def _variant(tmp_path: Path, edit: Any) -> Path:
    target = tmp_path / "gpumode"
    shutil.copytree(GPUMODE, target)
    path = target / "api" / "fp8-mm-top.json"
    document = json.loads(path.read_text())
    edit(document["rows"])
    path.write_text(json.dumps(document, indent=2))
    return target


def test_every_manifest_passes_validate(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    assert validate_out(runner, "gpumode", GPUMODE, repo, tmp_path / "out") == 4


@pytest.mark.slow
def test_import_on_a_branch_then_again_changes_nothing(runner: CliRunner, repo: Path) -> None:
    first = invoke(runner, "import", "gpumode", GPUMODE, "--repo", repo, "--branch", "kb", "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    store = registry.GitStore(repo)
    tip = store.head("refs/heads/kb")
    assert report["commit"] == tip and report["manifests"]["new"] == 4
    info = store.commit_info(tip or "")
    assert info.trailer("Source") == "gpumode-kernelbot"
    assert info.trailer("Attribution") == "GPU Mode and the KernelBot dataset"
    assert len(info.trailer_values("Source-Snapshot")) == 2
    second = invoke(runner, "import", "gpumode", GPUMODE, "--repo", repo, "--branch", "kb", "--json")
    again = json.loads(second.stdout)
    assert again["commit"] is None and again["manifests"]["unchanged"] == 11
    assert store.head("refs/heads/kb") == tip


def test_a_truncated_file_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: None)
    path = data / "api" / "fp8-mm-top.json"
    text = path.read_text()
    path.write_text(text[: text.index('"run_score"')])
    result = invoke(runner, "import", "gpumode", data, "--repo", repo, "--dry-run")
    assert result.exit_code == 1
    line = len(path.read_text().splitlines())
    assert result.stderr.startswith(f"api/fp8-mm-top.json:{line}:"), result.stderr
    assert "invalid JSON" in result.stderr


def test_a_missing_field_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows[0]["row"]["run_result"].pop("benchmark.1.mean"))
    line, column = position_of(data / "api" / "fp8-mm-top.json", '"run_result"')  # its object is located
    report = assert_refused(
        runner, "gpumode", data, repo, f"api/fp8-mm-top.json:{line}:{column + 14}", "benchmark.1.mean is missing"
    )
    assert report["runs"] == 3  # with --skip-bad, user 44's other submission is their best usable one


def test_a_wrong_unit_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    """Timings are ns as plain numbers; one written with a unit is not a number of ns."""
    data = _variant(tmp_path, lambda rows: rows[0]["row"]["run_result"].update({"benchmark.0.mean": "79.5 us"}))
    line, column = position_of(data / "api" / "fp8-mm-top.json", '"79.5 us"')
    assert_refused(
        runner, "gpumode", data, repo, f"api/fp8-mm-top.json:{line}:{column}", "not a positive number: '79.5 us'"
    )


def test_a_non_numeric_score_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows[0]["row"].update(run_score="fast"))
    line, column = position_of(data / "api" / "fp8-mm-top.json", '"fast"')
    assert_refused(runner, "gpumode", data, repo, f"api/fp8-mm-top.json:{line}:{column}", "not a number: 'fast'")


def test_a_repeated_row_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows.append(rows[0]))
    line, column = position_of(data / "api" / "fp8-mm-top.json", '"submission_id": 30771', 2)
    report = assert_refused(
        runner, "gpumode", data, repo, f"api/fp8-mm-top.json:{line}:{column + 17}", "repeats submission 30771"
    )
    assert report["runs"] == 3

"""The MLPerf Inference importer against upstream's fixtures (data/kernelindex/fixtures/mlperf: 13 rows of
v6.0's summary_results.json with one open-division, one edge and two non-LLM rows, and 4 rows of v5.1; the
facts are those KernelIndex's mlperf.test.ts asserts), the corpus export's digests for the same rows,
malformed variants, and the command's outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from importing import FIXTURES, assert_refused, copy_registry, invoke, position_of, validate_out
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.registry.importers.mlperf import accelerator, model_slug, plan_mlperf
from kernelindex.registry.importers.plan import ImportPlan, reconcile

MLPERF = FIXTURES / "mlperf"
V6 = MLPERF / "summary-v6.0-slice.json"
V51 = MLPERF / "summary-v5.1-slice.json"
AFTER_MLPERF = "314f4d24fd889fc1048942a520881d7750ef542c"  # main once the corpus's MLPerf rows are in
BEFORE_MLPERF = "934bd73f7a7b16a354e5c082f00efd948b4347df"
# v6.0 row 0 (AMD, llama2-70b-99 Interactive, 785522 tokens/s) as the corpus export publishes it:
V6_ROW_0 = "sha256:8684d0f6e02ac9bca27090606b6fa00e5ace67115b27fb3aac7573bc4dd442d9"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_registry(tmp_path)


def _of_kind(plan: ImportPlan, kind: str) -> list[dict[str, Any]]:
    return [m.document for _, m in plan.manifests.values() if m.kind == kind]


def _run_at(plan: ImportPlan, where: str) -> dict[str, Any]:
    row = next(r for r in plan.rows if r.where == where)
    assert row.run is not None
    return plan.manifests[row.run][1].document


def test_the_scope_is_upstreams() -> None:
    """ "keeps closed/datacenter token-throughput LLM rows, counts the rest"; v5.1 rows parse without the
    Total Accelerators field."""
    v6 = plan_mlperf(V6)
    assert v6.problems == [] and v6.runs == 9
    assert v6.skipped == {
        "open or network division (closed only)": 1,
        "not the datacenter suite": 1,
        "not a token-throughput LLM benchmark": 2,
    }
    v51 = plan_mlperf(V51)
    assert v51.problems == [] and v51.runs == 4 and not v51.skipped


def test_accuracy_targets_are_quality_policies_never_models() -> None:
    assert model_slug("llama2-70b-99") == model_slug("llama2-70b-99.9") == "mlperf-llama2-70b"
    assert model_slug("gpt-oss-120b") == "mlperf-gpt-oss-120b"
    plan = plan_mlperf(MLPERF)
    assert plan.runs == 13
    # -99 and -99.9 share one model revision; scenarios split workloads.
    assert len(_of_kind(plan, "ModelRevision")) < len(_of_kind(plan, "ServingWorkload"))
    assert _run_at(plan, "summary-v6.0-slice.json:$[0]")["spec"]["qualityPolicy"] == "mlperf_closed_99"
    assert _run_at(plan, "summary-v6.0-slice.json:$[2]")["spec"]["qualityPolicy"] == "mlperf_closed_99_9"


def test_accelerators_lose_their_count_suffix() -> None:
    assert accelerator("AMD Instinct MI355X 288GB HBM3e (x87)") == ("amd", "AMD Instinct MI355X 288GB HBM3e")
    assert accelerator("NVIDIA B200-SXM-180GB")[0] == "nvidia"


def test_a_row_is_a_serving_run() -> None:
    """v6.0 row 0: AMD's 11-node MI355X cluster, 8 per node, llama2-70b-99 Interactive at 785522 tokens/s."""
    plan = plan_mlperf(V6)
    run = _run_at(plan, "summary-v6.0-slice.json:$[0]")
    spec = run["spec"]
    assert run["metadata"]["name"] == "mlperf-v6-0-6-0-0001"
    assert spec["measurements"] == [
        {"metric": "output_token_throughput_tps", "unit": "tokens_s", "statistic": "reported", "value": 785522}
    ]
    assert spec["topology"] == {
        "acceleratorVendor": "amd",
        "acceleratorModel": "AMD Instinct MI355X 288GB HBM3e",
        "acceleratorsPerNode": 8,
        "nodeCount": 11,
    }
    assert spec["sourceNative"]["externalId"] == "v6.0/6.0-0001" and spec["sourceNative"]["scenario"] == "interactive"
    assert spec["observedAt"] == "2026-03-26T19:39:54Z"  # the v6.0 result repository's creation
    configuration = plan.manifests[spec["configurationDigest"]][1].document["spec"]
    assert configuration["dtype"] == "fp4"
    assert configuration["options"] == {
        "system": "AMD MI355X Custom Cluster",
        "software": "PyTorch 2.9.1+git8907517, ROCm 7.0.0",
        "availability": "available",
    }
    stack = plan.manifests[configuration["stackDigest"]][1].document
    # "titles the stack with the submitted Software string, never the slug"
    assert stack["metadata"]["title"] == "PyTorch 2.9.1+git8907517, ROCm 7.0.0"


def test_slos_are_declared_on_server_and_interactive_only() -> None:
    plan = plan_mlperf(V6)
    interactive = plan.manifests[_run_at(plan, "summary-v6.0-slice.json:$[0]")["spec"]["workloadDigest"]][1]
    assert interactive.document["spec"]["slo"] == [
        {"metric": "ttft_ms", "statistic": "p99", "operator": "<=", "value": 450, "unit": "ms"},
        {"metric": "tpot_ms", "statistic": "p99", "operator": "<=", "value": 40, "unit": "ms"},
    ]
    assert "inference_policies" in interactive.document["metadata"]["sourceRefs"][0]["url"]
    offline = plan.manifests[_run_at(plan, "summary-v6.0-slice.json:$[1]")["spec"]["workloadDigest"]][1]
    assert "slo" not in offline.document["spec"]
    assert offline.document["spec"]["streaming"] is False and offline.document["spec"]["loadGeneration"] == "offline"


def test_a_placeholder_software_string_is_never_a_title(tmp_path: Path) -> None:
    rows = json.loads(V6.read_text())
    rows[0]["Software"] = "TODO"
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps(rows))
    [stack] = [
        d for d in _of_kind(plan_mlperf(path), "ServingStackRevision") if d["spec"]["revision"]["version"] == "TODO"
    ]
    # Identity keeps the raw string; only the title falls back to the submitter.
    assert stack["metadata"]["title"] == "AMD submission (software not stated)"


def test_the_corpus_digests_reproduce(embedded: registry.GitStore) -> None:
    plan = plan_mlperf(MLPERF)
    assert next(r.run for r in plan.rows if r.where == "summary-v6.0-slice.json:$[0]") == V6_ROW_0
    reconciled = reconcile(plan, embedded, AFTER_MLPERF)
    # All 13 runs, their models, configurations, workloads and submitters are published byte for byte; the
    # 5 stacks have the same digests, and a title upstream added after the export (metadata).
    assert reconciled.new == () and len(reconciled.unchanged) == 41
    assert sorted(m.kind for _, m, _ in reconciled.conflicting) == ["ServingStackRevision"] * 5


# Outputs ---------------------------------------------------------------------------------------------------


def test_every_manifest_passes_validate(tmp_path: Path, runner: CliRunner) -> None:
    repo = copy_registry(tmp_path, BEFORE_MLPERF)
    # 6 models, 4 submitters, 5 stacks, 6 configurations, 12 workloads, 13 runs.
    assert validate_out(runner, "mlperf", MLPERF, repo, tmp_path / "out") == 46


@pytest.mark.slow
def test_import_on_a_branch_then_again_changes_nothing(tmp_path: Path, runner: CliRunner) -> None:
    repo = copy_registry(tmp_path, BEFORE_MLPERF)
    first = invoke(runner, "import", "mlperf", MLPERF, "--repo", repo, "--branch", "mlperf", "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    store = registry.GitStore(repo)
    tip = store.head("refs/heads/mlperf")
    assert report["commit"] == tip and report["manifests"]["new"] == 46 and report["report"]["ok"] is True
    info = store.commit_info(tip or "")
    assert info.trailer("Source") == "mlperf-inference" and info.trailer("License") == "Apache-2.0"
    assert info.trailer("Attribution") == "MLPerf™ Inference results by MLCommons; MLPerf™ is a trademark of MLCommons"
    assert [v.split(" ")[1] for v in info.trailer_values("Source-Snapshot")] == [V51.name, V6.name]
    assert "v6.0 mlcommons/inference_results_v6.0@4d3916ac9cf474b679cdfcf492d43a0559418ad1" in (
        info.trailer("Source-Revision") or ""
    )
    # Names are unique within a kind: the rows sharing a submission ID get their digest's prefix appended.
    names = [m["name"] for m in report["report"]["added"] if m["kind"] == "ServingRun"]
    assert len(set(names)) == 13 and "mlperf-v6-0-6-0-0001" in names
    second = invoke(runner, "import", "mlperf", MLPERF, "--repo", repo, "--branch", "mlperf", "--json")
    again = json.loads(second.stdout)
    assert again["commit"] is None and again["manifests"]["unchanged"] == 46
    assert store.head("refs/heads/mlperf") == tip


# Malformed variants ----------------------------------------------------------------------------------------


def _variant(tmp_path: Path, edit: Any) -> Path:
    data = tmp_path / "mlperf"
    shutil.copytree(MLPERF, data)
    path = data / V6.name
    rows = json.loads(path.read_text())
    edit(rows)
    path.write_text(json.dumps(rows, indent=2))
    return data


def test_a_truncated_summary_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: None)
    path = data / V6.name
    text = path.read_text()
    path.write_text(text[: text.index('"Performance_Result"')])
    result = invoke(runner, "import", "mlperf", data, "--repo", repo, "--dry-run")
    assert result.exit_code == 1
    lines = len(path.read_text().splitlines())
    assert result.stderr.startswith(f"{V6.name}:{lines}:"), result.stderr
    assert "invalid JSON" in result.stderr


def test_a_missing_field_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows[0].pop("System"))
    line, column = position_of(data / V6.name, "{")  # the first row's object
    report = assert_refused(runner, "mlperf", data, repo, f"{V6.name}:{line}:{column}", "System is missing")
    assert report["runs"] == 12  # the others still import with --skip-bad


def test_a_wrong_unit_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    """A token throughput stated per millisecond is in scope and wrong (a samples/s row would be out of scope)."""
    data = _variant(tmp_path, lambda rows: rows[3].update(Performance_Units="Tokens/ms"))
    line, column = position_of(data / V6.name, '"Tokens/ms"')
    assert_refused(runner, "mlperf", data, repo, f"{V6.name}:{line}:{column}", "not 'Tokens/ms'")


def test_a_non_numeric_result_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows[4].update(Performance_Result="82136.1 tokens/s"))
    line, column = position_of(data / V6.name, '"82136.1 tokens/s"')
    assert_refused(runner, "mlperf", data, repo, f"{V6.name}:{line}:{column}", "not a number: '82136.1 tokens/s'")


def test_a_repeated_row_is_located(tmp_path: Path, runner: CliRunner, repo: Path) -> None:
    data = _variant(tmp_path, lambda rows: rows.append(rows[5]))
    line, column = position_of(data / V6.name, "{", 14)  # the 14th row's object
    report = assert_refused(
        runner, "mlperf", data, repo, f"{V6.name}:{line}:{column}", f"repeats the row at {V6.name}:$[5]"
    )
    assert report["runs"] == 13

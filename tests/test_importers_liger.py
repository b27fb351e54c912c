"""The Liger-Kernel CSV importer against upstream's golden slice (data/kernelindex/fixtures/liger, whose
README and KernelIndex's liger.test.ts state the facts asserted here), malformed variants of it, and the
command's outputs (report, branch, directory). Expected values come from the CSV rows, worked by hand."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA, EMBEDDED_REPO
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry.importers.liger import plan_liger
from kernelindex.registry.importers.liger_kernels import KERNELS, Binding
from kernelindex.registry.importers.plan import commit_plan, reconcile

SLICE = DATA / "kernelindex" / "fixtures" / "liger" / "all-benchmark-data-slice.csv"
HEADER = SLICE.read_text().splitlines()[0]
LINES = SLICE.read_text().splitlines()


def _run(runner: CliRunner, *args: str | Path, env: Mapping[str, str] | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], env=dict(env or {}), catch_exceptions=False)


def _variant(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "variant.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


LIGER_REVISION = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"  # data/sources/liger/README.md
BEFORE_LIGER = "e775d39b6768675ff8eb086da76420493425c1a4"  # the seed records' commit, main before Liger's import


@pytest.fixture
def embedded_copy(tmp_path: Path) -> Path:
    """A copy of the embedded registry with main as it was before the Liger import."""
    copy = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, copy)
    subprocess.run(["git", "--git-dir", str(copy), "update-ref", "refs/heads/main", BEFORE_LIGER], check=True)
    return copy


# Upstream's goldens ------------------------------------------------------------------------------------


def test_the_slice_maps_as_upstream_says() -> None:
    plan = plan_liger(SLICE)
    assert plan.problems == []
    assert len(plan.rows) == 9  # "expect(outcome.rows).toHaveLength(9)"
    # 8 curated speed rows import (fused_moe joined the curation 2026-08-20); the memory row is counted.
    assert plan.runs == 8
    assert sum(plan.skipped.values()) == 1 and next(iter(plan.skipped)).startswith("memory")
    operations = sorted(m.name for _, m in plan.manifests.values() if m.kind == "OperationSpec")
    assert operations == [
        "liger-embedding",
        "liger-fused-add-rms-norm",
        "liger-fused-moe",
        "liger-rms-norm",
        "liger-rope",
    ]
    titles = [m.document["metadata"]["title"] for _, m in plan.manifests.values() if m.kind == "WorkloadCase"]
    assert any("bf16" in t for t in titles) and any("fp32" in t for t in titles)


def test_rms_norm_binds_the_old_era_config_and_refuses_the_new() -> None:
    rms = KERNELS["rms_norm"]
    assert rms.bind(1024, "H", {"M": 2048, "dtype": "torch.bfloat16", "eps": 1e-6}) == Binding(
        {"rows": 2048, "hidden": 1024}, "bf16", {"eps": 1e-6}
    )
    assert rms.bind(2048, "BT", {"hidden_size": 4096, "dtype": "torch.bfloat16"}) is None


def test_rope_binds_its_sweep_axis() -> None:
    bound = KERNELS["rope"].bind(
        512, "H", {"dtype": "torch.bfloat16", "seq_len": 2048, "num_q_heads": 32, "num_kv_heads": 8}
    )
    assert bound is not None and bound.axes == {"seq": 2048, "hidden": 512, "q_heads": 32, "kv_heads": 8}


def test_a_run_against_its_csv_row() -> None:
    """Line 2: rms_norm, liger, forward, H=1024, medians 0.01360000018030405 / 0.012864000163972378 /
    0.01603199914097786 ms on an A100 at 2024-09-03 15:39:30, config {M: 2048, bf16, eps 1e-6}."""
    plan = plan_liger(SLICE)
    row = next(r for r in plan.rows if r.where == "all-benchmark-data-slice.csv:2")
    assert row.run is not None
    run = plan.manifests[row.run][1].document
    spec = run["spec"]
    assert spec["timing"] == {"primaryStatistic": "median", "latencyNs": {"median": 13_600}}  # 13,600.00018 ns
    assert spec["measurements"] == [
        {"metric": "latency", "unit": "ns", "statistic": "p20", "value": 12_864},  # 12,864.00016
        {"metric": "latency", "unit": "ns", "statistic": "p80", "value": 16_032},  # 16,031.99914
    ]
    assert spec["sourceNative"]["metrics"] == {
        "ms_50": 0.01360000018030405,
        "ms_20": 0.012864000163972378,
        "ms_80": 0.01603199914097786,
    }
    assert spec["observedAt"] == "2024-09-03T15:39:30.000Z"
    assert spec["sourceNative"]["externalId"] == (
        "rms_norm/forward/liger/nvidia-a100-sxm4-80gb/hidden1024-rows2048-bf16/2024-09-03-15-39-30"
    )
    workload = plan.manifests[spec["workloadDigest"]][1].document["spec"]
    assert workload["axes"] == {"rows": 2048, "hidden": 1024}
    assert workload["tensors"] == {
        "x": {"shape": [2048, 1024], "dtype": "bf16"},
        "weight": {"shape": [1024], "dtype": "bf16"},
    }
    assert workload["scalars"] == {"eps": {"dtype": "fp32", "value": 1e-6}}
    environment = plan.manifests[spec["environmentDigest"]][1].document["spec"]
    assert environment["hardware"] == {
        "vendor": "nvidia",
        "product": "NVIDIA A100",
        "architecture": "sm_80",
        "formFactor": "SXM4-80GB",
    }


def test_rope_derives_its_head_dim() -> None:
    """Line 7: rope at hidden 512 with 32 query and 8 KV heads: head_dim = 512 // 32 = 16, seq 2048."""
    plan = plan_liger(SLICE)
    row = next(r for r in plan.rows if r.where == "all-benchmark-data-slice.csv:7")
    assert row.run is not None
    workload = plan.manifests[plan.manifests[row.run][1].document["spec"]["workloadDigest"]][1].document["spec"]
    assert workload["tensors"]["q"]["shape"] == [1, 32, 2048, 16]
    assert workload["tensors"]["k"]["shape"] == [1, 8, 2048, 16]


def test_every_manifest_passes_validate(tmp_path: Path, runner: CliRunner, embedded_copy: Path) -> None:
    out = tmp_path / "out"
    result = _run(runner, "import", "liger", SLICE, "--out", out, "--repo", tmp_path / "nowhere")
    assert result.exit_code == 1  # a --repo that does not exist is an error, not an empty registry
    result = _run(runner, "import", "liger", SLICE, "--out", out, "--repo", embedded_copy)
    assert result.exit_code == 0, result.stderr
    files = sorted(out.rglob("*.json"))
    assert len(files) == 33
    checked = _run(runner, "validate", *files, "--repo", embedded_copy)
    assert checked.exit_code == 0, checked.stderr
    assert checked.stdout.count("ok  sha256:") == 33
    again = _run(runner, "import", "liger", SLICE, "--out", out, "--repo", embedded_copy)
    assert "wrote 0 file(s)" in again.stdout


def test_against_the_embedded_registry_the_slice_is_already_there(runner: CliRunner) -> None:
    """The slice's rows are rows of the full CSV imported at the head: its runs, workloads, implementations
    are unchanged; its 5 operations carry another benchmark-script link (no --revision here): conflicts,
    reported, and the published ones stand."""
    result = _run(runner, "import", "liger", SLICE, "--repo", EMBEDDED_REPO, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["manifests"] | {"byKind": None} == {
        "produced": 33,
        "new": 0,
        "unchanged": 28,
        "conflicting": 5,
        "byKind": None,
    }
    assert {c["kind"] for c in report["conflicts"]} == {"OperationSpec"}


# Malformed variants: refused with a located error, nothing written --------------------------------------


@pytest.mark.slow  # each imports into a copy of the embedded registry, twice
@pytest.mark.parametrize(
    ("edit", "located", "reason", "runs"),
    [
        (lambda ls: [*ls[:3], ls[3].rsplit(",", 1)[0], *ls[4:]], "variant.csv:4:1", "expected 15 fields, found 14", 7),
        (
            lambda ls: [*ls[:2], ls[2].replace(",speed,ms,", ",speed,us,"), *ls[3:]],
            "variant.csv:3:30: metric_unit:",
            "must be in ms, not 'us'",
            7,
        ),
        (
            lambda ls: [*ls[:2], ls[2].replace("0.019999999552965164", "fast"), *ls[3:]],
            "variant.csv:3:52: y_value_50:",
            "not a number: 'fast'",
            7,
        ),
        (lambda ls: [*ls[:5], ls[4], *ls[5:]], "variant.csv:6:1", "repeats line 5", 8),
        (
            lambda ls: [*ls[:2], ls[2].replace('""eps"": 1e-06}', '""eps"": 1e-06'), *ls[3:]],
            "variant.csv:3:",
            "extra_benchmark_config_str: not JSON",
            7,
        ),
    ],
    ids=["missing-field", "wrong-unit", "non-numeric", "duplicate-row", "broken-config-json"],
)
def test_malformed_rows_are_located_and_nothing_is_written(
    tmp_path: Path, runner: CliRunner, embedded_copy: Path, edit: Any, located: str, reason: str, runs: int
) -> None:
    variant = _variant(tmp_path, edit(LINES))
    head = registry.GitStore(embedded_copy).head()
    result = _run(runner, "import", "liger", variant, "--repo", embedded_copy, "--branch", "try")
    assert result.exit_code == 1
    line = next(line for line in result.stderr.splitlines() if line.startswith(located))
    assert reason in line
    assert "nothing was written" in result.stderr
    store = registry.GitStore(embedded_copy)
    assert store.head("refs/heads/try") is None and store.head() == head
    skipped = _run(
        runner, "import", "liger", variant, "--repo", embedded_copy, "--branch", "try", "--skip-bad", "--json"
    )
    assert skipped.exit_code == 0, skipped.stderr
    report = json.loads(skipped.stdout)
    [problem] = report["problems"]
    assert f"{problem['at']}: {problem['path']}: {problem['reason']}".startswith(located)
    assert report["runs"] == runs  # the 8 of the slice, less a refused row that was one


def test_a_missing_column_refuses_the_file(tmp_path: Path, runner: CliRunner) -> None:
    columns = HEADER.split(",")
    at = columns.index("gpu_name")
    lines = [",".join(c for i, c in enumerate(columns) if i != at), *LINES[1:]]
    result = _run(runner, "import", "liger", _variant(tmp_path, lines), "--repo", EMBEDDED_REPO)
    assert result.exit_code == 1
    assert result.stderr.startswith("variant.csv:1:1: missing column(s) gpu_name")


def test_an_unclosed_quote_is_located(tmp_path: Path, runner: CliRunner) -> None:
    lines = [*LINES[:3], LINES[3].split('"{')[0] + '"{ never closed']
    result = _run(runner, "import", "liger", _variant(tmp_path, lines), "--repo", EMBEDDED_REPO)
    assert result.exit_code == 1
    column = lines[3].index('"') + 1
    assert result.stderr.startswith(f"variant.csv:4:{column}: a quoted field is never closed")


# Writing: a branch, idempotence, the report -------------------------------------------------------------


@pytest.mark.slow
def test_import_on_a_branch_then_again_changes_nothing(runner: CliRunner, embedded_copy: Path) -> None:
    first = _run(runner, "import", "liger", SLICE, "--repo", embedded_copy, "--branch", "liger-slice", "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    store = registry.GitStore(embedded_copy)
    tip = store.head("refs/heads/liger-slice")
    assert report["commit"] == tip and report["manifests"]["new"] == 33
    assert report["report"]["ok"] is True
    outcomes = report["report"]["atMerge"]
    assert len(outcomes) == 8
    # rms_norm at H=1024 on the A100: liger 13.6 µs beats huggingface 78.2 µs (lines 2 and 4 of the slice).
    by_name = {o["name"]: o for o in outcomes}
    liger = next(o for n, o in by_name.items() if n.startswith("liger-rms-norm-forward-liger-") and "hidden1024" in n)
    hf = next(o for n, o in by_name.items() if n.startswith("liger-rms-norm-forward-huggingface-"))
    assert (liger["rank"], hf["rank"], liger["cohort"]) == (1, 2, hf["cohort"])
    assert liger["takesRecord"] and not hf["takesRecord"]
    info = store.commit_info(tip or "")
    assert info.trailer("Source") == "liger-kernel-bench"
    assert info.trailer(
        "License",
    ).startswith("BSD-2-Clause")  # type: ignore[union-attr]
    assert info.trailer_values("Source-Snapshot")[0].endswith(" all-benchmark-data-slice.csv")
    second = _run(runner, "import", "liger", SLICE, "--repo", embedded_copy, "--branch", "liger-slice", "--json")
    again = json.loads(second.stdout)
    assert again["commit"] is None and again["manifests"]["unchanged"] == 33
    assert store.head("refs/heads/liger-slice") == tip


def test_a_dry_run_outside_a_clone_writes_nothing(runner: CliRunner, embedded_copy: Path) -> None:
    head = registry.GitStore(embedded_copy).head()
    result = _run(runner, "import", "liger", SLICE, "--repo", embedded_copy)
    assert result.exit_code == 0, result.stderr
    assert "dry run: nothing written" in result.stdout
    assert "33 new, 0 unchanged, 0 conflicting" in result.stdout
    assert registry.GitStore(embedded_copy).head() == head
    assert list(registry.GitStore(embedded_copy).branches()) == ["refs/heads/main"]


def test_the_full_csv_is_already_in_the_embedded_registry() -> None:
    """The real import: every speed row a run (data/sources/liger/README.md: 2,448 rows, 1,649 speed), all already published."""
    plan = plan_liger(DATA / "sources" / "liger" / "all_benchmark_data.csv", revision=LIGER_REVISION)
    assert (len(plan.rows), plan.runs, plan.problems) == (2_448, 1_649, [])
    assert sum(plan.skipped.values()) == 799
    store = registry.GitStore(EMBEDDED_REPO)
    reconciled = reconcile(plan, store, store.head())
    assert (len(reconciled.new), len(reconciled.unchanged), len(reconciled.conflicting)) == (0, 1_994, 0)


def test_a_conflict_keeps_the_published_manifest(tmp_path: Path) -> None:
    """A manifest already published with other metadata is reported, not overwritten."""
    store = registry.GitStore.init(tmp_path / "r.git")
    plan = plan_liger(SLICE)
    commit_plan(store, plan)
    renamed = plan_liger(SLICE)
    digest, (where, manifest) = next((d, v) for d, v in renamed.manifests.items() if v[1].kind == "SoftwareProject")
    document = {**manifest.document, "metadata": {**manifest.document["metadata"], "title": "Renamed"}}
    renamed.manifests[digest] = (where, registry.manifest_from_document(document, where))
    reconciled, result = commit_plan(store, renamed)
    assert result is None
    assert [m.digest for _, m, _ in reconciled.conflicting] == [digest]
    assert "already published with different metadata" in reconciled.conflicting[0][2]

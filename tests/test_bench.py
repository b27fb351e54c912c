"""The benchmark harness at smoke size: every measurement runs and reports value, floor and ratio.
No timing is asserted (machines are noisy): only that the harness measures what it says."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT

from kernelindex.registry.graphcache import cache_path

EXPECTED = {
    "cold_build_1x",
    "rss_1x",
    "rss_settled_1x",
    "warm_start_1x",
    "incremental_100_1x",
    "integrity_check_1x",
    "integrity_remembered_1x",
    "history_check_1x",
    "records_first_1x",
    "leaderboard_vs_datasette_1x",
    "leaderboard_first_vs_datasette_1x",
    "dossier_vs_datasette_1x",
    "dossier_first_vs_datasette_1x",
    "leaderboard_vs_postgraphile_1x",
    "leaderboard_first_vs_postgraphile_1x",
    "dossier_vs_postgraphile_1x",
    "dossier_first_vs_postgraphile_1x",
    "dossier_p50",
    "leaderboard_p50",
    "dossier_first_p50",
    "leaderboard_first_p50",
    "load_rps_1w",
    "run_page_p50",
    "leaderboard_page_p50",
    "run_page_first_p50",
    "leaderboard_page_first_p50",
    "search_worst_p50",
    "search_refusal_255_words",
    "search_edge_worst_p50",
    "search_edge_refusal_255_words",
    "search_concurrent_run_p50",
    "search_concurrent_run_max",
    "loop_healthz_worst_1w",
}


@pytest.mark.slow
def test_the_benchmark_harness_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {**os.environ, "BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("KERNELINDEX_REPO", None)
    run = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--json", str(out)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())
    names = {item["name"] for item in results}
    assert names >= EXPECTED, EXPECTED - names
    for item in results:
        assert set(item) == {"name", "value", "unit", "floor", "ratio", "note"}
        if item["value"] is None:  # a peer or a tool this machine lacks: said so, not faked
            assert item["note"].startswith("skipped:"), item
            continue
        assert item["value"] > 0 and item["floor"] > 0, item
        assert math.isclose(item["ratio"], item["value"] / item["floor"], rel_tol=1e-9), item
    by_name = {item["name"]: item for item in results}
    assert by_name["rss_1x"]["unit"] == "bytes" and by_name["rss_1x"]["floor"] > 20_000_000  # the corpus's bytes
    assert "| `cold_build_1x` |" in run.stdout  # the table a person reads
    # It measured its own clone of the registry (the warm start left its cache with the bench's, not in ours).
    assert cache_path(tmp_path / "cache" / "x1-seed7" / "manifests.git", tmp_path / "cache" / "state").exists()


@pytest.mark.slow
def test_rows_and_scales_measure_only_what_is_asked(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {**os.environ, "BENCH_CACHE": str(tmp_path / "cache")}
    env.pop("KERNELINDEX_REPO", None)
    command = [sys.executable, "-m", "bench", "--smoke", "--json", str(out), "--rows", "rss", "--scales", "1"]
    run = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert {item["name"] for item in json.loads(out.read_text())} == {"rss_1x", "rss_settled_1x", "records_first_1x"}


def test_an_unknown_row_family_is_refused_with_the_known_ones() -> None:
    command = [sys.executable, "-m", "bench", "--smoke", "--rows", "cold_build,rsss"]
    run = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2
    assert "unknown rsss" in run.stderr and "cold_build, integrity, rss" in run.stderr

"""The pull-request report (`kernelindex validate --base --head --format markdown|json`, registry/report.py):
what a branch's new runs would do at merge. The cohort is seed 000's (docs/api.md: sol-submission-6709 at 144.6 µs,
then sol-submission-16043 at 144.5 µs, the record holder); new runs are made from seed 000's own manifest."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import EMBEDDED_REPO
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app

pytestmark = pytest.mark.slow

SEED_000 = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"
COHORT = "sha256:92bc0be5b5ce9f523be5faba2a4e34c39837aab389f3cfd25189af326e2daae0"
AUTHOR = ["--author", "Carol <carol@example.com>"]


def _run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def seed_run() -> dict[str, Any]:
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    found = store.read_document(head, SEED_000)
    assert found is not None
    return found


def _variant(seed: dict[str, Any], name: str, mean_ns: int, **spec: Any) -> dict[str, Any]:
    document = copy.deepcopy(seed)
    document["metadata"] = {"name": name}
    del document["spec"]["sourceNative"]
    document["spec"]["timing"]["latencyNs"] = {"mean": mean_ns}
    document["spec"]["observedAt"] = "2026-09-01T00:00:00Z"
    document["spec"].update(spec)
    return document


def _branch(tmp_path: Path, runner: CliRunner, documents: list[dict[str, Any]]) -> Path:
    repo = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, repo)
    files = []
    for document in documents:
        files.append(tmp_path / f"{document['metadata']['name']}.json")
        files[-1].write_text(json.dumps(document))
    added = _run(runner, "add", *files, "--repo", repo, "--branch", "pr", *AUTHOR)
    assert added.exit_code == 0, added.stderr
    return repo


def test_a_faster_run_takes_seed_000s_record(tmp_path: Path, runner: CliRunner, seed_run: dict[str, Any]) -> None:
    repo = _branch(tmp_path, runner, [_variant(seed_run, "carol-faster", 140_000)])
    result = _run(runner, "validate", "--repo", repo, "--base", "main", "--head", "pr", "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    [outcome] = report["atMerge"]
    assert outcome["name"] == "carol-faster"
    assert outcome["cohort"] == COHORT and outcome["cohortSize"] == 3 and not outcome["newCohort"]
    assert (outcome["rank"], outcome["ranked"]) == (1, 3)  # 140.0 < 144.5 < 144.6 µs
    assert outcome["recordHolder"] == {
        "run": outcome["recordHolder"]["run"],
        "name": "sol-submission-16043",
        "value": "144.5 µs (mean)",
    }
    assert outcome["takesRecord"] is True
    assert outcome["nearestPeer"]["name"] == "sol-submission-16043"  # ranked just behind it
    # 16043 is another implementation than seed 000's (whose manifest this run copies); same cohort
    assert [(d["field"], d["material"]) for d in outcome["nearestPeer"]["differences"]] == [
        ("implementation", False),
        ("value", False),
    ]
    markdown = _run(runner, "validate", "--repo", repo, "--base", "main", "--head", "pr", "--format", "markdown")
    assert markdown.exit_code == 0
    text = markdown.stdout
    assert "**All checks passed.**" in text
    assert "1 new run(s); 1 would take their cohort's record." in text
    assert (
        "| carol-faster | 140.0 µs (mean) | `92bc0be5b5ce9f52` (3) | 1 of 3 | sol-submission-16043 · 144.5 µs (mean) | **yes** |"
        in text
    )


def test_a_slower_run_ranks_behind_and_leaves_the_record(
    tmp_path: Path, runner: CliRunner, seed_run: dict[str, Any]
) -> None:
    repo = _branch(tmp_path, runner, [_variant(seed_run, "carol-slower", 150_000)])
    report = json.loads(_run(runner, "validate", "--repo", repo, "--base", "main", "--head", "pr", "--json").stdout)
    [outcome] = report["atMerge"]
    assert (outcome["rank"], outcome["ranked"], outcome["takesRecord"]) == (3, 3, False)
    assert outcome["nearestPeer"]["name"] == "sol-submission-6709"  # ranked just ahead: 144.6 µs


def test_a_run_in_another_environment_starts_a_cohort_and_says_why(
    tmp_path: Path, runner: CliRunner, seed_run: dict[str, Any]
) -> None:
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    other = next(
        e.digest
        for e in store.entries(head)
        if e.kind == "ExecutionEnvironment" and e.digest != seed_run["spec"]["environmentDigest"]
    )
    repo = _branch(tmp_path, runner, [_variant(seed_run, "carol-elsewhere", 150_000, environmentDigest=other)])
    report = json.loads(
        _run(runner, "validate", "--repo", repo, "--base", "main", "--head", "pr", "--format", "json").stdout
    )
    [outcome] = report["atMerge"]
    assert outcome["newCohort"] is True and outcome["cohortSize"] == 1
    assert (outcome["rank"], outcome["takesRecord"], outcome["recordHolder"]) == (1, True, None)
    differences = outcome["nearestPeer"]["differences"]
    assert [d["field"] for d in differences if d["material"]] == ["environment"]


def test_a_failing_check_has_no_outcome(tmp_path: Path, runner: CliRunner, seed_run: dict[str, Any]) -> None:
    repo = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, repo)
    store = registry.GitStore(repo)
    main = store.head()
    assert main is not None
    store.create_branch("refs/heads/pr", main)
    broken = store.add(
        [registry.manifest_from_document(_variant(seed_run, "carol-x", 1), "x.json")],
        registry.CommitMeta(
            registry.Person("C", "c@example.com", 1_800_000_000),
            registry.Person("C", "c@example.com", 1_800_000_000),
            "Add",
        ),
        ref="refs/heads/pr",
    )
    assert broken.commit is not None
    # Backwards (pr..main) the change deletes a published file: the check fails, and nothing is said at merge.
    result = _run(runner, "validate", "--repo", repo, "--base", "pr", "--head", "main", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["ok"] is False
    assert report["atMerge"] is None

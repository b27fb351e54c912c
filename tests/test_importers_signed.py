"""`kernelindex import ... --sign`: an import of a source main already publishes is a maintainer's act. Unsigned,
the pull-request check refuses it and simulates no merge; signed by a maintainer of the trust root, it passes
and the import prints the rank report. Real ssh-keygen keys, a copy of the embedded registry at a known commit,
and upstream's GPU MODE fixture (a registered source: gpumode-kernelbot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importing import FIXTURES, copy_registry, invoke
from signing import make_key
from typer.testing import CliRunner

from kernelindex import registry

GPUMODE = FIXTURES / "gpumode"


@pytest.fixture
def governed(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """The registry, alice's private key, and an environment whose trust root lists alice."""
    repo = copy_registry(tmp_path)
    alice = make_key(tmp_path, "alice@example.com")
    root = tmp_path / "allowed_signers"
    root.write_bytes(alice.allowed_signer)
    return repo, alice.private, {"KERNELINDEX_TRUST_ROOT": str(root)}


def test_an_unsigned_import_of_a_registered_source_is_refused(
    runner: CliRunner, governed: tuple[Path, Path, dict[str, str]]
) -> None:
    repo, _, env = governed
    result = invoke(runner, "import", "gpumode", GPUMODE, "--repo", repo, "--branch", "kb", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)["report"]
    assert report["ok"] is False and report["atMerge"] is None
    assert "registered source 'gpumode-kernelbot'" in json.dumps(report["problems"])


@pytest.mark.slow
def test_a_maintainer_signed_import_passes_and_prints_the_rank_report(
    runner: CliRunner, governed: tuple[Path, Path, dict[str, str]]
) -> None:
    repo, key, env = governed
    args = ("import", "gpumode", GPUMODE, "--repo", repo, "--branch", "kb", "--author", "Alice <alice@example.com>")
    result = invoke(runner, *args, "--sign", "--signing-key", key, env=env)
    assert result.exit_code == 0, result.stderr
    store = registry.GitStore(repo)
    tip = store.head("refs/heads/kb")
    assert tip is not None and f"commit {tip} on kb" in result.stdout
    assert "**All checks passed.**" in result.stdout
    # The three new runs (user 44's best submission, one per benchmark shape) at merge:
    assert "### At merge" in result.stdout and "3 new run(s)" in result.stdout
    checked = invoke(runner, "validate", "--base", "main", "--head", "kb", "--repo", repo, "--format", "json", env=env)
    report = json.loads(checked.stdout)
    assert checked.exit_code == 0 and report["ok"] is True
    assert sorted(run["name"] for run in report["atMerge"]) == sorted(
        m["name"] for m in report["added"] if m["kind"] == "BenchmarkRun"
    )


def test_sign_needs_a_commit(runner: CliRunner, governed: tuple[Path, Path, dict[str, str]]) -> None:
    repo, key, _ = governed
    result = invoke(runner, "import", "gpumode", GPUMODE, "--repo", repo, "--dry-run", "--sign", "--signing-key", key)
    assert result.exit_code == 2 and "--sign signs a commit" in result.stderr

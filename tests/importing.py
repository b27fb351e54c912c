"""Shared pieces of the source importers' tests: the command runner, a copy of the embedded registry at a
known commit, fixtures' variants, and the check that a refusal is located and writes nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from helpers import DATA, EMBEDDED_REPO
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app

__all__ = [
    "BEFORE_LIGER",
    "FIXTURES",
    "assert_refused",
    "copy_registry",
    "invoke",
    "position_of",
    "validate_out",
]

FIXTURES = DATA / "kernelindex" / "fixtures"
BEFORE_LIGER = "e775d39b6768675ff8eb086da76420493425c1a4"  # main after the seed records, before Liger's import


def invoke(runner: CliRunner, *args: str | Path, env: Mapping[str, str] | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], env=dict(env or {}), catch_exceptions=False)


def copy_registry(tmp_path: Path, at: str = BEFORE_LIGER) -> Path:
    """A copy of the embedded registry with main at `at` (a known commit, never the moving head)."""
    copy = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, copy)
    subprocess.run(["git", "--git-dir", str(copy), "update-ref", "refs/heads/main", at], check=True)
    return copy


def position_of(path: Path, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """Line and column (1-based) of the `occurrence`-th `needle` in a file: where a located error must
    point, found by plain text search, independently of the importer."""
    text = path.read_text()
    index = -1
    for _ in range(occurrence):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def assert_refused(
    runner: CliRunner, source: str, variant: Path, repo: Path, located: str, reason: str, *extra: str
) -> dict[str, Any]:
    """The import of `variant` fails with a problem starting `located` and saying `reason`, writes nothing
    (no branch, main unchanged); with --skip-bad it goes on and lists that problem. Returns the
    --skip-bad report."""
    store = registry.GitStore(repo)
    head = store.head()
    result = invoke(runner, "import", source, variant, *extra, "--repo", repo, "--branch", "try")
    assert result.exit_code == 1, result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith(located)]
    assert lines, result.stderr
    assert reason in lines[0], lines[0]
    assert "nothing was written" in result.stderr
    store = registry.GitStore(repo)
    assert store.head("refs/heads/try") is None and store.head() == head
    skipped = invoke(runner, "import", source, variant, *extra, "--repo", repo, "--dry-run", "--skip-bad", "--json")
    assert skipped.exit_code == 0, skipped.stderr
    report: dict[str, Any] = json.loads(skipped.stdout)
    assert any(f"{p['at']}: {p['path']}: {p['reason']}".startswith(located) for p in report["problems"]), report[
        "problems"
    ]
    return report


def validate_out(runner: CliRunner, source: str, inputs: Path, repo: Path, out: Path, *extra: str) -> int:
    """Write an import's new manifests under `out`, check them with `kernelindex validate` against `repo`,
    and write again (nothing new): returns how many files were written and validated."""
    result = invoke(runner, "import", source, inputs, *extra, "--out", out, "--repo", repo)
    assert result.exit_code == 0, result.stderr
    files = sorted(out.rglob("*.json"))
    checked = invoke(runner, "validate", *files, "--repo", repo)
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("ok  sha256:") == len(files)
    again = invoke(runner, "import", source, inputs, *extra, "--out", out, "--repo", repo)
    assert "wrote 0 file(s)" in again.stdout
    return len(files)

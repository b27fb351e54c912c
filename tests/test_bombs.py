"""Inputs built to exhaust memory or time, refused within bounded memory: zstd bombs against the
export importer (run in a subprocess capped at 1 GiB of address space beyond its start)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from probes import TALLY

pytestmark = pytest.mark.slow

_CAP = 2 << 30  # address space for the importer process: the original bomb died with MemoryError at 3 GB


def _bomb(path: Path, chunk: bytes, total: int) -> Path:
    compressor = zstandard.ZstdCompressor(level=3)
    with path.open("wb") as handle, compressor.stream_writer(handle) as writer:
        for _ in range(total // len(chunk)):
            writer.write(chunk)
    return path


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_CAP, _CAP))


def _import(path: Path, repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernelindex.cli", "import", "kernelindex-export", str(path), "--repo", str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limit,
        check=False,
    )


@pytest.mark.parametrize(
    ("name", "chunk", "total", "message"),
    [
        ("zeros", b"\0" * (1 << 20), 3 << 30, "a line longer than 4,194,304 bytes"),
        ("newlines", b"\n" * (1 << 20), 3 << 30, "more than 1,000,000 lines"),
        ("rows", b'{"table": "t", "row": {}}\n' * 40_000, 3 << 30, "more than 1,000,000"),
    ],
)
def test_zstd_bombs_are_refused_within_bounded_memory(
    tmp_path: Path, name: str, chunk: bytes, total: int, message: str
) -> None:
    bomb = _bomb(tmp_path / f"{name}.jsonl.zst", chunk, total)
    assert bomb.stat().st_size < 1 << 20  # well under a megabyte that inflates to 3 GB
    repo = tmp_path / "manifests.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True)
    result = _import(bomb, repo)
    TALLY["zstd bombs: refused in bounded memory"][0] += 1
    assert result.returncode == 1, result.stderr
    assert message in result.stderr and "MemoryError" not in result.stderr and "Traceback" not in result.stderr
    TALLY["zstd bombs: refused in bounded memory"][1] += 1

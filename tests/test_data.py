"""The project carries its own data: a clone with nothing beside it tests and rebuilds the registry.

Each folder of data/ keeps its upstream licence and has its line in data/SOURCES.md, and nothing in the
repository reaches for a data folder outside it (the old `../shared` beside the checkout)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, EMBEDDED_REPO, EXAMPLES, EXPORT, PROJECT_ROOT, SEEDS

# Every folder of data/ with the licence file that travels with it (data/SOURCES.md names each).
FOLDERS = {
    "kernelindex": "LICENSE",
    "corpus": "LICENSE",
    "seeds": "LICENSE",
    "sources/liger": "LICENSE",
}
# A path into a folder beside the project, as the tests, scripts and docs once spelled it: `../shared`,
# or `shared/<something>` as a path (not the word "shared", nor a package such as `react-devtools-shared/`).
OUTSIDE = re.compile(r"\.\./shared\b|(?<![\w.-])shared/\w")
# The data is in git, so it is in every clone: a few MB is fine, a data set is not.
BUDGET = 8 * 1024 * 1024


def _tracked() -> list[Path]:
    """Every file git tracks in this checkout (the repository as a clone receives it)."""
    listing = subprocess.run(
        ["git", "-C", str(PROJECT_ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    return [PROJECT_ROOT / name for name in listing.split("\0") if name]


def test_the_data_constants_point_inside_the_project() -> None:
    for path in (DATA, EXAMPLES, SEEDS, EXPORT, EMBEDDED_REPO):
        assert path.resolve().is_relative_to(PROJECT_ROOT), path
        assert path.exists(), path
    assert EXPORT.name == "kernelindex-catalog-2026-08-16-0022af0b.jsonl.zst"


@pytest.mark.parametrize(("folder", "licence"), sorted(FOLDERS.items()))
def test_each_data_folder_has_its_licence_and_its_origin(folder: str, licence: str) -> None:
    assert (DATA / folder / licence).is_file()
    rows = [line for line in (DATA / "SOURCES.md").read_text().splitlines() if line.startswith(f"| `{folder}")]
    assert rows, f"data/SOURCES.md has no line for {folder}/"
    assert all(licence in row or "LICENSE" in row for row in rows), rows


def test_every_data_folder_is_accounted_for() -> None:
    """A folder added to data/ without a licence and a SOURCES line fails here, not in review."""
    top = {p.name for p in DATA.iterdir() if p.is_dir()}
    assert top == {folder.split("/")[0] for folder in FOLDERS}
    assert {p.name for p in (DATA / "sources").iterdir() if p.is_dir()} == {"liger"}


def test_the_data_stays_small() -> None:
    size = sum(p.stat().st_size for p in _tracked() if p.is_relative_to(DATA) and p.is_file())
    assert 0 < size <= BUDGET, f"data/ holds {size:,} bytes"


def test_nothing_reaches_outside_the_repository() -> None:
    found = []
    for path in _tracked():
        if not path.is_file() or path.is_relative_to(EMBEDDED_REPO) or path == Path(__file__).resolve():
            continue  # the registry's objects are data; this file spells the pattern out
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # binary: the corpus, screenshots, the packed registry
        found += [f"{path.relative_to(PROJECT_ROOT)}: {m.group()}" for m in OUTSIDE.finditer(text)]
    assert not found, found


@pytest.mark.slow  # imports 21,763 manifests: about 20 s of CPU
def test_the_build_script_rebuilds_the_embedded_registry_byte_for_byte(tmp_path: Path) -> None:
    """scripts/build-embedded-registry, from data/ alone, makes the committed manifests.git again: the same
    commits, and the same files (one pack without deltas), so a clone can check what it was given."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy2(PROJECT_ROOT / "scripts" / "build-embedded-registry", project / "scripts")
    (project / "data").symlink_to(DATA)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TMPDIR": str(tmp_path),
    }
    built = subprocess.run(
        [str(project / "scripts" / "build-embedded-registry")], env=env, capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr[-3000:]

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    rebuilt, committed = files(project / "manifests.git"), files(EMBEDDED_REPO)
    assert rebuilt.keys() == committed.keys()
    assert [name for name in rebuilt if rebuilt[name] != committed[name]] == []


@pytest.mark.parametrize(
    ("text", "outside"),
    [
        ("read ../shared/corpus", True),
        ("default: ../shared", True),
        ("(shared/sources/SOURCES.md)", True),
        ("data/corpus/README.md", False),
        ("react-devtools-shared/src/backend", False),
        ("one shared scale, shared across requests", False),
        ("x.shared/y", False),
    ],
)
def test_the_outside_pattern(text: str, outside: bool) -> None:
    assert bool(OUTSIDE.search(text)) is outside

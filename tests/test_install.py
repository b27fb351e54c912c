"""One package on anyone's machine: the wheel's only top-level name is `kernelindex`, so it installs beside any other
package, one that owns `web/` or `api/` (web.py owns `web`) included, in either order, and uninstalling it takes
only its own files. And before a release, it installs as the pull-request workflow installs it: a commit of the
project in pip's direct-reference form, here from a local clone, after which it names that same requirement.

web.py cannot be downloaded here (no network): the packages that own those names are stand-ins built in the test
(`web/__init__.py` and `api/__init__.py` with something to call). Everything is installed with `pip --no-index`
from files and clones made here (tests/wheels.py).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT
from packaging.requirements import Requirement
from wheels import DISTRIBUTION, Dists, Venv, copy_of_the_project, new_venv

from kernelindex.cli import installing
from kernelindex.registry.parse import load_document

pytestmark = pytest.mark.slow  # builds, virtual environments, pip

THE_REPOSITORYS_FOLDERS = {"api", "web", "registry", "bench", "tests", "scripts", "docs", "data"}
_PROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
DIST_INFO = f"{_PROJECT['name'].replace('-', '_')}-{_PROJECT['version']}.dist-info"
"""The wheel's metadata folder, as the wheel format names it from pyproject.toml's name and version."""


def _wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheels_only_top_level_name_is_kernelindex(dists: Dists) -> None:
    names = _wheel_names(dists.wheel)
    dist_info = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
    assert dist_info == {DIST_INFO}
    assert {n.split("/")[0] for n in names} - dist_info == {"kernelindex"}
    assert not {n.split("/")[0] for n in names} & THE_REPOSITORYS_FOLDERS
    with zipfile.ZipFile(dists.wheel) as archive:
        assert archive.read(f"{DIST_INFO}/top_level.txt") == b"kernelindex\n"


def test_every_subpackage_the_repository_links_is_in_the_wheel(dists: Dists) -> None:
    """kernelindex/'s links to the repository's folders are followed: each is a package of real files in the wheel."""
    links = {p.name: os.readlink(p) for p in (PROJECT_ROOT / "kernelindex").iterdir() if p.is_symlink()}
    assert links["web"] == "../web" and links["cli"] == "../api/cli" and links["registry"] == "../registry"
    names = set(_wheel_names(dists.wheel))
    assert {name for name in links if f"kernelindex/{name}/__init__.py" in names} == set(links)


# Beside a package that owns `web` or `api` -------------------------------------------------------------------


def _stand_in(root: Path, top: str) -> Path:
    """The wheel of a small project, `stand-in-<top>` 1.0, whose only package is `<top>`: something to call."""
    project = root / f"stand-in-{top}"
    (project / top).mkdir(parents=True)
    (project / top / "__init__.py").write_text(f'def owner() -> str:\n    return "stand-in-{top}"\n')
    (project / "pyproject.toml").write_text(
        f'[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "stand-in-{top}"\nversion = "1.0"\n\n[tool.setuptools]\npackages = ["{top}"]\n'
    )
    out = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(project)],
        capture_output=True,
        check=True,
    )
    (wheel,) = out.glob(f"stand_in_{top}-1.0-*.whl")
    return wheel


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stand-ins")
    return {top: _stand_in(root, top) for top in ("web", "api")}


def _record_intact(venv: Venv, dist_info: str) -> list[str]:
    """The files of an installed distribution (its RECORD) that are missing or changed."""
    broken: list[str] = []
    with (venv.purelib / dist_info / "RECORD").open(newline="") as record:
        for path, digest, _size in csv.reader(record):
            file = venv.purelib / path
            if not digest:  # RECORD itself
                continue
            algorithm, _, expected = digest.partition("=")
            assert algorithm == "sha256"
            if not file.is_file():
                broken.append(f"{path}: missing")
                continue
            found = base64.urlsafe_b64encode(hashlib.sha256(file.read_bytes()).digest()).rstrip(b"=").decode()
            if found != expected:
                broken.append(f"{path}: changed")
    return broken


def _theirs_works(venv: Venv, top: str, cwd: Path) -> None:
    said = venv.run("python", "-c", f"import {top}; print({top}.owner()); print({top}.__file__)", cwd=cwd).stdout
    owner, file = said.splitlines()
    assert owner == f"stand-in-{top}" and Path(file) == venv.purelib / top / "__init__.py"


@pytest.mark.parametrize("ours_first", [True, False], ids=["ours-first", "theirs-first"])
@pytest.mark.parametrize("top", ["web", "api"])
def test_beside_a_package_that_owns_a_name_of_the_repository(
    top: str, ours_first: bool, dists: Dists, stand_ins: dict[str, Path], tmp_path: Path
) -> None:
    venv = new_venv(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    order = [dists.wheel, stand_ins[top]] if ours_first else [stand_ins[top], dists.wheel]
    for wheel in order:
        venv.pip("install", "--quiet", "--no-deps", "--no-index", str(wheel))

    _theirs_works(venv, top, elsewhere)
    assert venv.run("kernelindex", "--help", cwd=elsewhere).stdout.startswith("Usage: kernelindex [OPTIONS] COMMAND")
    ours = venv.run("python", "-c", "import kernelindex.web; print(kernelindex.web.__file__)", cwd=elsewhere).stdout
    assert Path(ours.strip()) == venv.purelib / "kernelindex" / "web" / "__init__.py"
    assert _record_intact(venv, f"stand_in_{top}-1.0.dist-info") == []
    assert _record_intact(venv, DIST_INFO) == []

    venv.pip("uninstall", "--yes", "--quiet", DISTRIBUTION)
    assert _record_intact(venv, f"stand_in_{top}-1.0.dist-info") == []
    _theirs_works(venv, top, elsewhere)
    gone = venv.run("python", "-c", "import kernelindex", cwd=elsewhere, check=False)
    assert gone.returncode == 1 and "No module named 'kernelindex'" in gone.stderr
    assert not (venv.bin / "kernelindex").exists() and not (venv.purelib / "kernelindex").exists()


# Installed from a clone, in the workflow's own form -----------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=KernelIndex tests", "-c", "user.email=tests@kernelindex.invalid"]
    return subprocess.run(
        ["git", *identity, "-c", "commit.gpgsign=false", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def _clone_of_the_work_tree(root: Path) -> tuple[Path, str]:
    """A local clone of this repository whose HEAD holds the work tree as it is: the checkout's HEAD when nothing
    differs, else a commit on top of it. Outside a git checkout, a new repository of the project's files."""
    clone = root / "kernelindex"
    if subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True).returncode == 0:
        _git(root, "clone", "--quiet", str(PROJECT_ROOT), str(clone))
        for name in filter(None, _git(clone, "ls-files", "-z").split("\0")):
            (clone / name).unlink()
    else:
        _git(root, "init", "--quiet", str(clone))
    copy_of_the_project(clone)
    _git(clone, "add", "--all")
    if _git(clone, "status", "--porcelain"):
        _git(clone, "commit", "--quiet", "--message", "The work tree under test")
    return clone, _git(clone, "rev-parse", "HEAD")


def test_the_workflows_install_line_installs_from_a_clone_in_the_same_form(tmp_path: Path) -> None:
    clone, commit = _clone_of_the_work_tree(tmp_path)
    requirement = f"{DISTRIBUTION} @ git+{clone.as_uri()}@{commit}"
    parsed = Requirement(requirement)
    assert (parsed.name, parsed.url, str(parsed.specifier)) == (DISTRIBUTION, f"git+file://{clone}@{commit}", "")

    written = installing.pinned_workflows(requirement)[".github/workflows/kernelindex-check.yml"]
    check = load_document(written.encode(), "kernelindex-check.yml")
    assert check["env"]["KERNELINDEX_PIN"] == requirement
    (job,) = check["jobs"].values()
    line = next(step["run"] for step in job["steps"] if step.get("name") == "Install kernelindex")
    offline = line.replace("python -m pip install ", "python -m pip install --no-index --no-build-isolation ")
    assert offline != line

    venv = new_venv(tmp_path)
    env = venv.pip_env() | {"OVERRIDE": "", "KERNELINDEX_PIN": check["env"]["KERNELINDEX_PIN"], "HOME": str(tmp_path)}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", offline], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert venv.run("kernelindex", "--help", cwd=elsewhere).stdout.startswith("Usage: kernelindex [OPTIONS] COMMAND")
    said = venv.run("kernelindex", "version", "--pip", cwd=elsewhere)
    assert said.stdout == requirement + "\n"
    assert said.stderr == f"kernelindex: note: it names {clone} on this machine\n"
    # The installed templates are the documented ones: given the pin, it writes what was just installed from.
    manifests = tmp_path / "manifests"
    _git(tmp_path, "init", "--quiet", str(manifests))
    venv.run("kernelindex", "workflows", str(manifests), "--pin", requirement, cwd=elsewhere)
    assert (manifests / ".github" / "workflows" / "kernelindex-check.yml").read_text() == written
    # Without one, it will not pin a path of this machine into a workflow that runs on GitHub's.
    (manifests / ".github" / "workflows" / "kernelindex-check.yml").unlink()
    refused = venv.run("kernelindex", "workflows", str(manifests), cwd=elsewhere, check=False)
    assert refused.returncode == 1 and "installs only on this machine" in refused.stderr
    assert not (manifests / ".github" / "workflows" / "kernelindex-check.yml").exists()

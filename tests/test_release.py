"""The release path (.github/workflows/release.yml): a version tag builds the sdist and the wheel, checks them with
`twine check --strict` and `check-wheel-contents`, and publishes them with PyPI's trusted publishing.

The workflow validates against GitHub's workflow schema (check-jsonschema's vendored copy, offline, as
tests/test_pr_workflow.py validates the pull-request templates); what it may do is read from it; its tag step runs
here; and its checks run here on the files `python -m build` makes (tests/wheels.py), exactly as its step runs them.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from helpers import PROJECT_ROOT
from packaging.requirements import Requirement
from test_pr_workflow import _check_jsonschema
from wheels import DISTRIBUTION, Dists

from kernelindex.registry.parse import load_document

RELEASE = PROJECT_ROOT / ".github" / "workflows" / "release.yml"
PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
VENDORED_LICENCES = {
    f"kernelindex/service/static/graphiql/LICENSE.{name}" for name in ("graphiql-explorer", "react", "react-dom")
}
"""Three vendored packages' licences, the same MIT text each (scripts/vendor-graphiql keeps each under its name)."""


def _release() -> dict[str, Any]:
    document: dict[str, Any] = load_document(RELEASE.read_bytes(), RELEASE.name)
    return document


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    step: dict[str, Any] = next(s for s in job["steps"] if s.get("name") == name)
    return step


def test_the_release_workflow_validates_against_githubs_workflow_schema(tmp_path: Path) -> None:
    done = _check_jsonschema(RELEASE)
    assert done.returncode == 0, done.stdout + done.stderr
    # The schema is not vacuous: a misspelt permission level is refused.
    broken = tmp_path / "release.yml"
    broken.write_text(RELEASE.read_text().replace("id-token: write", "id-token: wrte"))
    refused = _check_jsonschema(broken)
    assert refused.returncode == 1 and "id-token" in refused.stdout


def test_only_a_version_tag_releases_and_only_publishing_holds_the_identity_token() -> None:
    release = _release()
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {"contents": "read"}
    build, publish = release["jobs"]["build"], release["jobs"]["publish"]
    assert "permissions" not in build  # the workflow's: read-only
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"] == {"name": "pypi", "url": f"https://pypi.org/p/{DISTRIBUTION}"}
    assert publish["needs"] == "build"
    # Publishing runs nothing but the download of what was built and checked, and the publishing action.
    assert [s["uses"].split("@")[0] for s in publish["steps"]] == [
        "actions/download-artifact",
        "pypa/gh-action-pypi-publish",
    ]
    assert not any("run" in s for s in publish["steps"])


def test_every_action_is_pinned_by_full_commit_id_with_its_release_named() -> None:
    uses = [line.strip() for line in RELEASE.read_text().splitlines() if re.match(r"\s*(- )?uses: ", line)]
    assert len(uses) == 5
    for line in uses:
        assert re.fullmatch(r"(- )?uses: [\w-]+/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line), line


def test_the_tools_the_release_installs_are_within_the_test_extras_bounds() -> None:
    """What the release checks with is what the suite checks with (pyproject.toml's test extra)."""
    line = _step(_release()["jobs"]["build"], "Install the build and check tools")["run"]
    pinned = {Requirement(word).name: Requirement(word) for word in re.findall(r'"([^"]+)"', line)}
    assert set(pinned) == {"build", "twine", "check-wheel-contents"}
    bounds = {Requirement(r).name: Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]}
    for name, requirement in pinned.items():
        (exact,) = requirement.specifier
        assert exact.operator == "==" and bounds[name].specifier.contains(exact.version), (name, exact)


@pytest.mark.parametrize(
    ("tag", "passes"),
    [
        (f"v{version(DISTRIBUTION)}", True),
        (version(DISTRIBUTION), False),  # no v
        (f"v{version(DISTRIBUTION)}.1", False),
        (f"v{version(DISTRIBUTION)}rc1", False),
    ],
)
def test_the_tag_must_name_the_version_being_built(tag: str, passes: bool) -> None:
    """The installed metadata's version (setuptools read pyproject.toml) against the step's own reading of it."""
    step = _step(_release()["jobs"]["build"], "The tag names the version in pyproject.toml")
    assert step["env"] == {"TAG": "${{ github.ref_name }}"}
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", step["run"]],
        cwd=PROJECT_ROOT,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "TAG": tag},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode == 0) == passes, done.stderr
    if not passes:
        assert done.stderr == (
            f"the tag {tag} does not name the version pyproject.toml says, {version(DISTRIBUTION)} "
            f"(tag v{version(DISTRIBUTION)})\n"
        )


# The checks, on the files built here -------------------------------------------------------------------------


@pytest.mark.slow  # a build of both files
def test_twine_and_check_wheel_contents_pass_the_built_files(dists: Dists, tmp_path: Path) -> None:
    """The release's "Check them" step, run as it runs: in a checkout's root, which holds pyproject.toml (whose
    [tool.check-wheel-contents] configures the check) and the built files in dist/."""
    checkout = tmp_path / "checkout"
    (checkout / "dist").mkdir(parents=True)
    shutil.copy2(PROJECT_ROOT / "pyproject.toml", checkout)
    for file in (dists.sdist, dists.wheel):
        shutil.copy2(file, checkout / "dist")
    step = _step(_release()["jobs"]["build"], "Check them")
    assert step["run"].splitlines() == ["twine check --strict dist/*", "check-wheel-contents dist/*.whl"]
    bin_ = Path(sys.executable).parent
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", step["run"]],
        cwd=checkout,
        env={"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.sub(r"\x1b\[[0-9;]*m", "", done.stdout).splitlines() == [  # twine colours its verdicts
        f"Checking dist/{dists.wheel.name}: PASSED",
        f"Checking dist/{dists.sdist.name}: PASSED",
        f"dist/{dists.wheel.name}: OK",
    ]
    # The configuration is what passes it: without, W002 names exactly the vendored licences.
    bare = subprocess.run(
        [str(bin_ / "check-wheel-contents"), "--no-config", f"dist/{dists.wheel.name}"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bare.returncode == 1
    assert bare.stdout.splitlines() == [
        f"dist/{dists.wheel.name}: W002: Wheel contains duplicate files:",
        *(f"  {name}" for name in sorted(VENDORED_LICENCES)),
    ]


@pytest.mark.slow
def test_the_only_files_of_equal_content_in_the_wheel_are_the_vendored_licences(dists: Dists) -> None:
    """W002 is configured away for them; every other file of the wheel is unlike every other (its RECORD's hashes)."""
    with zipfile.ZipFile(dists.wheel) as wheel:
        (record,) = [n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")]
        rows = [line.split(",") for line in wheel.read(record).decode().splitlines()]
        by_hash: defaultdict[str, set[str]] = defaultdict(set)
        for path, digest, _size in rows:
            if digest:
                assert (
                    digest
                    == "sha256="
                    + base64.urlsafe_b64encode(hashlib.sha256(wheel.read(path)).digest()).rstrip(b"=").decode()
                )
                by_hash[digest].add(path)
    assert [paths for paths in by_hash.values() if len(paths) > 1] == [VENDORED_LICENCES]


@pytest.mark.slow
def test_the_sdist_holds_the_package_and_the_registry_and_no_tests(dists: Dists) -> None:
    with tarfile.open(dists.sdist) as sdist:
        top = {Path(name).parts[1] for name in sdist.getnames() if len(Path(name).parts) > 1}
    assert "tests" not in top
    assert {"kernelindex", "manifests.git", "pyproject.toml", "setup.py", "README.md", "PKG-INFO"} <= top

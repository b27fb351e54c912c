"""`kernelindex version --pip` and `kernelindex workflows`: the pip requirement that installs this installation again,
read from its record (the dist-info's direct_url.json, as pip writes it), and the pull-request workflows pinned to it.

The installations are dist-info folders made here (METADATA and direct_url.json, the two files read), and the clones
they name real git repositories; the expected requirements are written out by hand from pip's syntax. The slow tests
of tests/test_install.py install from a clone for real, and tests/test_wheel.py by name, as from an index.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from importlib.metadata import PathDistribution
from pathlib import Path
from typing import Any

import pytest
from helpers import PROJECT_ROOT
from packaging.requirements import Requirement
from typer.testing import CliRunner, Result

from kernelindex.cli import app, installing
from kernelindex.registry.parse import load_document

COMMIT = "0123456789abcdef0123456789abcdef01234567"
TEMPLATES = {
    ".github/workflows/kernelindex-check.yml": PROJECT_ROOT / "docs" / "manifests-pr-check.yml",
    ".github/workflows/kernelindex-report.yml": PROJECT_ROOT / "docs" / "manifests-pr-report.yml",
}


def _installation(root: Path, direct_url: Mapping[str, Any] | str | None, version: str = "1.2.3") -> PathDistribution:
    """An installed kernelindex-registry's dist-info, with pip's record of where it came from (None: by name)."""
    folder = root / f"kernelindex_registry-{version}.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.4\nName: kernelindex-registry\nVersion: {version}\n")
    if direct_url is not None:
        text = direct_url if isinstance(direct_url, str) else json.dumps(direct_url)
        (folder / "direct_url.json").write_text(text)
    return PathDistribution(folder)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def _clone(path: Path) -> str:
    """A git repository with one commit at `path`; its commit id."""
    path.mkdir(parents=True)
    _git(path, "init", "--quiet", "--initial-branch", "main")
    (path / "pyproject.toml").write_text("[project]\nname = 'kernelindex-registry'\n")
    _git(path, "add", "pyproject.toml")
    _git(path, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "one")
    return _git(path, "rev-parse", "HEAD")


# The requirement, from each kind of record -----------------------------------------------------------------


def test_an_install_by_name_is_its_version(tmp_path: Path) -> None:
    found = installing.provenance(_installation(tmp_path, None))
    assert found == installing.Provenance("kernelindex-registry==1.2.3", "index", True)


@pytest.mark.parametrize(
    ("record", "requirement", "portable"),
    [
        (
            {"url": "https://git.example.org/team/kernelindex.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT,
             "requested_revision": "main"}},
            f"kernelindex-registry @ git+https://git.example.org/team/kernelindex.git@{COMMIT}",
            True,
        ),
        (
            {"url": "file:///srv/clones/kernelindex", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
            f"kernelindex-registry @ git+file:///srv/clones/kernelindex@{COMMIT}",
            False,
        ),
        (
            {"url": "https://git.example.org/mono.git", "subdirectory": "python/kernelindex",
             "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
            f"kernelindex-registry @ git+https://git.example.org/mono.git@{COMMIT}#subdirectory=python/kernelindex",
            True,
        ),
        (
            {"url": "https://files.example.org/kernelindex_registry-1.2.3-py3-none-any.whl",
             "archive_info": {"hashes": {"sha256": "ab" * 32}}},
            "kernelindex-registry @ https://files.example.org/kernelindex_registry-1.2.3-py3-none-any.whl"
            f"#sha256={'ab' * 32}",
            True,
        ),
        (
            {"url": "file:///tmp/dist/kernelindex_registry-1.2.3.tar.gz", "archive_info": {"hash": f"sha256={'cd' * 32}"}},
            f"kernelindex-registry @ file:///tmp/dist/kernelindex_registry-1.2.3.tar.gz#sha256={'cd' * 32}",
            False,
        ),
    ],
    ids=["vcs-https", "vcs-file", "vcs-subdirectory", "archive-https", "archive-file"],
)  # fmt: skip
def test_a_url_install_is_its_url(tmp_path: Path, record: dict[str, Any], requirement: str, portable: bool) -> None:
    found = installing.provenance(_installation(tmp_path, record))
    assert (found.requirement, found.portable) == (requirement, portable)
    assert found.notes == (() if portable else (f"it names {record['url'].removeprefix('file://')} on this machine",))
    parsed = Requirement(found.requirement)
    assert parsed.name == "kernelindex-registry" and parsed.url == requirement.split(" @ ", 1)[1]


def test_an_editable_install_of_a_clone_is_its_head(tmp_path: Path) -> None:
    head = _clone(tmp_path / "clone")
    record = {"url": (tmp_path / "clone").as_uri(), "dir_info": {"editable": True}}
    found = installing.provenance(_installation(tmp_path / "site", record))
    assert found.requirement == f"kernelindex-registry @ git+file://{tmp_path}/clone@{head}"
    assert not found.portable and found.source == "clone"
    (note,) = found.notes
    assert note.startswith(f"it names {tmp_path}/clone on this machine")
    # Work not committed is in no commit: said, not hidden.
    (tmp_path / "clone" / "new.py").write_text("")
    assert (
        f"{tmp_path}/clone has changes not committed"
        in installing.provenance(_installation(tmp_path / "site2", record)).notes[0]
    )


def test_a_copy_installed_from_a_clone_says_it_names_head_now(tmp_path: Path) -> None:
    head = _clone(tmp_path / "clone")
    record = {"url": (tmp_path / "clone").as_uri(), "dir_info": {}}
    found = installing.provenance(_installation(tmp_path / "site", record))
    assert found.requirement == f"kernelindex-registry @ git+file://{tmp_path}/clone@{head}"
    assert (
        found.notes[0]
        == f"installed from a copy of {tmp_path}/clone: the requirement names the clone's HEAD now, {head[:12]}"
    )


def test_a_project_in_a_subdirectory_of_a_clone(tmp_path: Path) -> None:
    head = _clone(tmp_path / "clone")
    (tmp_path / "clone" / "python").mkdir()
    record = {"url": (tmp_path / "clone" / "python").as_uri(), "dir_info": {"editable": True}}
    found = installing.provenance(_installation(tmp_path / "site", record))
    assert found.requirement == f"kernelindex-registry @ git+file://{tmp_path}/clone@{head}#subdirectory=python"


def test_a_clone_whose_head_is_on_its_https_origin_names_origin_without_credentials(tmp_path: Path) -> None:
    head = _clone(tmp_path / "clone")
    clone = tmp_path / "clone"
    _git(clone, "remote", "add", "origin", "https://carol:s3cret@git.example.org:8443/team/kernelindex.git")
    record = {"url": clone.as_uri(), "dir_info": {"editable": True}}
    # Not fetched from origin yet: nothing says origin has the commit.
    assert not installing.provenance(_installation(tmp_path / "a", record)).portable
    _git(clone, "update-ref", "refs/remotes/origin/main", head)  # as `git fetch` leaves it after a push
    found = installing.provenance(_installation(tmp_path / "b", record))
    assert found == installing.Provenance(
        f"kernelindex-registry @ git+https://git.example.org:8443/team/kernelindex.git@{head}", "clone", True
    )
    assert "s3cret" not in found.requirement and "carol" not in found.requirement


def test_an_ssh_origin_is_not_named(tmp_path: Path) -> None:
    """A runner without your key cannot fetch over SSH, and an scp-like address is no URL pip takes."""
    head = _clone(tmp_path / "clone")
    clone = tmp_path / "clone"
    _git(clone, "remote", "add", "origin", "git@git.example.org:team/kernelindex.git")
    _git(clone, "update-ref", "refs/remotes/origin/main", head)
    found = installing.provenance(_installation(tmp_path / "site", {"url": clone.as_uri(), "dir_info": {}}))
    assert found.requirement == f"kernelindex-registry @ git+file://{clone}@{head}" and not found.portable


def test_a_directory_that_is_no_clone_is_named_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "GIT_CEILING_DIRECTORIES", str(tmp_path)
    )  # wherever the temporary folder is, git looks no higher
    (tmp_path / "unpacked").mkdir()
    found = installing.provenance(
        _installation(tmp_path / "site", {"url": (tmp_path / "unpacked").as_uri(), "dir_info": {}})
    )
    assert found.requirement == f"kernelindex-registry @ file://{tmp_path}/unpacked" and not found.portable


@pytest.mark.parametrize(
    "record", ["{not json", json.dumps({"vcs_info": {}}), json.dumps({"url": "https://x.example.org/k", "what": {}})]
)
def test_a_record_that_says_nothing_installable_is_refused(tmp_path: Path, record: str) -> None:
    with pytest.raises(installing.UnknownProvenance):
        installing.provenance(_installation(tmp_path, record))


# The workflows ---------------------------------------------------------------------------------------------


def test_the_packaged_templates_are_the_documented_ones_where_their_header_says() -> None:
    header = TEMPLATES[".github/workflows/kernelindex-check.yml"].read_text()
    named = dict(re.findall(r"^#   docs/(\S+)\s+-> (\S+)", header, re.MULTILINE))
    assert {target: f"docs/{source}" for source, target in named.items()} == {
        t: str(p.relative_to(PROJECT_ROOT)) for t, p in TEMPLATES.items()
    }
    assert {t: f"docs/{s}" for t, s in installing.WORKFLOWS.items()} == {
        t: str(p.relative_to(PROJECT_ROOT)) for t, p in TEMPLATES.items()
    }
    for source in installing.WORKFLOWS.values():
        assert (PROJECT_ROOT / "api" / "cli" / "workflows" / source).read_bytes() == (
            PROJECT_ROOT / "docs" / source
        ).read_bytes()


def _differing_lines(a: str, b: str) -> list[int]:
    left, right = a.splitlines(keepends=True), b.splitlines(keepends=True)
    assert len(left) == len(right)
    return [number for number, (x, y) in enumerate(zip(left, right, strict=True), 1) if x != y]


@pytest.mark.parametrize(
    "pin",
    [f"kernelindex-registry @ git+file:///srv/clones/kernelindex@{COMMIT}", "kernelindex-registry==0.2.0"],
    ids=["direct-reference", "version"],
)
def test_the_written_workflows_are_the_templates_but_the_pin(pin: str) -> None:
    written = installing.pinned_workflows(pin)
    check = TEMPLATES[".github/workflows/kernelindex-check.yml"].read_text()
    pin_line = next(n for n, line in enumerate(check.splitlines(), 1) if line.startswith("  KERNELINDEX_PIN: "))
    assert _differing_lines(check, written[".github/workflows/kernelindex-check.yml"]) == [pin_line]
    assert (
        written[".github/workflows/kernelindex-report.yml"]
        == TEMPLATES[".github/workflows/kernelindex-report.yml"].read_text()
    )
    loaded = load_document(written[".github/workflows/kernelindex-check.yml"].encode(), "kernelindex-check.yml")
    assert loaded["env"] == {"KERNELINDEX_PIN": pin}


@pytest.mark.parametrize(
    "pin",
    ["kernelindex-registry @", "requests==2.0", "kernelindex-registry==0.2.0; python_version < '3'", "=="],
)
def test_a_pin_that_is_not_a_requirement_of_kernelindex_is_refused(pin: str) -> None:
    with pytest.raises(ValueError, match="not a"):
        installing.pinned_workflows(pin)


# The commands ----------------------------------------------------------------------------------------------


def _run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """A clone of a manifests repository: a work tree."""
    _clone(tmp_path / "manifests")
    return tmp_path / "manifests"


def test_workflows_writes_both_files_at_the_top_of_the_clone(runner: CliRunner, manifests: Path) -> None:
    (manifests / "benchmark-runs").mkdir()
    done = _run(runner, "workflows", manifests / "benchmark-runs", "--pin", "kernelindex-registry==0.2.0")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines() == [
        "wrote      .github/workflows/kernelindex-check.yml",
        "wrote      .github/workflows/kernelindex-report.yml",
        "pinned:    kernelindex-registry==0.2.0",
        "next: commit both on main (a pull request may not change .github/: a maintainer's signed commit does)",
    ]
    assert (manifests / ".github" / "workflows" / "kernelindex-report.yml").read_text() == TEMPLATES[
        ".github/workflows/kernelindex-report.yml"
    ].read_text()
    again = _run(runner, "workflows", manifests, "--pin", "kernelindex-registry==0.2.0")
    assert again.stdout.splitlines()[:2] == [
        "unchanged  .github/workflows/kernelindex-check.yml",
        "unchanged  .github/workflows/kernelindex-report.yml",
    ]


def test_workflows_needs_a_work_tree(runner: CliRunner, tmp_path: Path) -> None:
    bare = tmp_path / "manifests.git"
    _git(tmp_path, "init", "--quiet", "--bare", str(bare))
    for where in (bare, tmp_path / "nothing-here"):
        refused = _run(runner, "workflows", where, "--pin", "kernelindex-registry==0.2.0")
        assert refused.exit_code == 1
        assert refused.stderr == (
            f"kernelindex: {where} is in no work tree of a git repository: the workflows go in its .github/workflows/\n"
        )
    assert not (bare / ".github").exists()


def test_workflows_refuses_a_pin_that_is_not_a_requirement(runner: CliRunner, manifests: Path) -> None:
    refused = _run(runner, "workflows", manifests, "--pin", "requests==2.0")
    assert refused.exit_code == 2 and "'requests==2.0' is not a requirement of kernelindex-registry" in refused.stderr
    assert not (manifests / ".github").exists()


@pytest.fixture
def installed_as(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """Make this installation's record the one given (the command reads `distribution("kernelindex-registry")`)."""

    def install(record: Mapping[str, Any] | str | None) -> PathDistribution:
        found = _installation(tmp_path / "site", record, version="0.2.0")
        monkeypatch.setattr(installing, "distribution", lambda name: found if name == installing.DISTRIBUTION else None)
        return found

    return install


def test_version_and_its_requirement(runner: CliRunner, installed_as: Any) -> None:
    installed_as(None)
    assert _run(runner, "version").stdout == "kernelindex-registry 0.2.0\n"
    assert _run(runner, "version", "--pip").stdout == "kernelindex-registry==0.2.0\n"


def test_workflows_pins_this_installation(runner: CliRunner, installed_as: Any, manifests: Path) -> None:
    installed_as(
        {"url": "https://git.example.org/team/kernelindex.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}
    )
    done = _run(runner, "workflows", manifests)
    assert done.exit_code == 0, done.stderr
    check = load_document((manifests / ".github" / "workflows" / "kernelindex-check.yml").read_bytes(), "check.yml")
    assert check["env"] == {
        "KERNELINDEX_PIN": f"kernelindex-registry @ git+https://git.example.org/team/kernelindex.git@{COMMIT}"
    }


def test_workflows_will_not_pin_a_path_on_this_machine(runner: CliRunner, installed_as: Any, manifests: Path) -> None:
    installed_as({"url": "file:///srv/clones/kernelindex", "vcs_info": {"vcs": "git", "commit_id": COMMIT}})
    refused = _run(runner, "workflows", manifests)
    assert refused.exit_code == 1 and not (manifests / ".github").exists()
    assert refused.stderr.startswith(
        f"kernelindex: this installation's requirement, kernelindex-registry @ git+file:///srv/clones/kernelindex@{COMMIT}, "
        "installs only on this machine (it names /srv/clones/kernelindex on this machine): GitHub's runner could not"
    )
    note = _run(runner, "version", "--pip")
    assert note.stderr == "kernelindex: note: it names /srv/clones/kernelindex on this machine\n"


def test_a_record_that_says_nothing_installable_is_said_so(
    runner: CliRunner, installed_as: Any, manifests: Path
) -> None:
    installed_as({"url": "https://files.example.org/kernelindex", "what": {}})
    for args in (["version", "--pip"], ["workflows", str(manifests)]):
        refused = _run(runner, *args)
        assert refused.exit_code == 1 and refused.stdout == ""
        assert refused.stderr == (
            "kernelindex: what installed kernelindex-registry is not known: its direct_url.json names neither a "
            "repository, an archive nor a directory: https://files.example.org/kernelindex\n"
        )
    assert _run(runner, "version").stdout == "kernelindex-registry 0.2.0\n"  # the version needs no record

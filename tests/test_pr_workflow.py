"""The fork-safe pull-request check (docs/manifests-pr-check.yml, then docs/manifests-pr-report.yml), played locally.

Both files validate against GitHub's workflow schema (check-jsonschema's vendored copy, offline). Stage one's
check step runs in a checkout made as actions/checkout makes one for a fork's pull request: the merge ref,
detached, with no local main; its output directory is the artifact. Stage two's github-script runs in Node
against a recorded GitHub, given that artifact, and the test reads what it would post; what git it runs is real,
against the base repository in a folder standing for GitHub's server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from helpers import PROJECT_ROOT, basic_scenario, commit_manifests, make_operation, make_run, make_workload
from signing import T0, commit_raw, stored

from kernelindex import registry
from kernelindex.registry.parse import load_document

STAGE_ONE = PROJECT_ROOT / "docs" / "manifests-pr-check.yml"
STAGE_TWO = PROJECT_ROOT / "docs" / "manifests-pr-report.yml"
RUNNER = PROJECT_ROOT / "tests" / "js" / "github-script.cjs"
MARKER = "<!-- kernelindex-check -->"
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
WORKFLOWS = sorted([*(PROJECT_ROOT / "docs").glob("*.yml"), *(PROJECT_ROOT / ".github" / "workflows").glob("*.yml")])
LISTING_CAP = 3000
"""The most files GitHub lists of a pull request (`pulls.listFiles`); the check accepts up to 10,000."""


def _workflow(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = load_document(path.read_bytes(), path.name)
    return document


def _step(workflow: dict[str, Any], name: str) -> dict[str, Any]:
    (job,) = workflow["jobs"].values()
    step: dict[str, Any] = next(s for s in job["steps"] if s.get("name") == name)
    return step


def _check_jsonschema(*files: Path) -> subprocess.CompletedProcess[str]:
    binary = Path(sys.executable).with_name("check-jsonschema")
    return subprocess.run(
        [str(binary), "--builtin-schema", "vendor.github-workflows", *map(str, files)],
        capture_output=True,
        text=True,
        env={**os.environ, **OFFLINE},
        check=False,
    )


def test_both_stages_validate_against_githubs_workflow_schema(tmp_path: Path) -> None:
    done = _check_jsonschema(STAGE_ONE, STAGE_TWO)
    assert done.returncode == 0, done.stdout + done.stderr
    # The schema is not vacuous: a misspelt permission level is refused.
    broken = tmp_path / "broken.yml"
    broken.write_text(STAGE_TWO.read_text().replace("statuses: write", "statuses: wrte"))
    refused = _check_jsonschema(broken)
    assert refused.returncode == 1 and "statuses" in refused.stdout


def test_the_stages_hold_only_the_permissions_they_need() -> None:
    one, two = _workflow(STAGE_ONE), _workflow(STAGE_TWO)
    assert one["on"] == {"pull_request": {"branches": ["main"]}}
    assert one["permissions"] == {"contents": "read"}
    assert two["on"] == {"workflow_run": {"workflows": [one["name"]], "types": ["completed"]}}
    assert two["permissions"] == {
        "actions": "read",
        "contents": "read",  # git objects, to compare the pull request with its base
        "pull-requests": "write",
        "statuses": "write",
    }
    (job,) = two["jobs"].values()
    assert job["if"] == "github.event.workflow_run.event == 'pull_request'"
    # Stage two never checks out or runs anything of the pull request: no checkout, no shell step.
    assert [s.get("uses", "").split("@")[0] for s in job["steps"]] == [
        "actions/download-artifact",
        "actions/github-script",
    ]
    assert not any("run" in s for s in job["steps"])


def test_every_third_party_action_is_pinned_by_full_commit_id_with_its_release_named() -> None:
    """A tag can be moved to other code; a commit id cannot (the stages were once pinned by tag)."""
    assert {STAGE_ONE, STAGE_TWO} <= set(WORKFLOWS)
    for path in WORKFLOWS:
        uses = [line.strip() for line in path.read_text().splitlines() if re.match(r"\s*(- )?uses: ", line)]
        assert uses, path
        for line in uses:
            assert re.fullmatch(r"(- )?uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line), (path.name, line)


def test_no_step_decides_from_a_capped_listing() -> None:
    """GitHub lists at most 3,000 files of a pull request (and 300 of a comparison, 250 commits): stage two decides
    whether a pull request changes .github/ from git, which lists every path."""
    for path in WORKFLOWS:
        steps = [step for job in _workflow(path)["jobs"].values() for step in job["steps"]]
        code = "\n".join(step.get("run", "") + step.get("with", {}).get("script", "") for step in steps)
        for capped in ("listFiles", "compareCommits", "listCommits", "changed_files", "/files"):
            assert capped not in code, (path.name, capped)
    script = _step(_workflow(STAGE_TWO), "Post the comment and the commit status")["with"]["script"]
    assert '"diff", "--name-only", "--no-renames", "-z", `${base}...${head}`' in script


def test_the_install_needs_no_repository_variable() -> None:
    """A fork's run gets no repository variable: the install falls back to the pin. Either reaches pip as one
    argument, a direct reference's spaces and `@` included."""
    one = _workflow(STAGE_ONE)
    install = _step(one, "Install kernelindex")
    assert install["env"] == {"OVERRIDE": "${{ vars.KERNELINDEX_PIP_SPEC }}"}
    assert one["env"]["KERNELINDEX_PIN"] == "kernelindex-registry==0.1.0"  # the template's, after a release
    script = install["run"]
    shown = script.replace("python -m pip install --quiet", "printf '%s\\n'")
    assert shown != script
    direct = "kernelindex-registry @ git+file:///tmp/clone@" + "ab" * 20
    for override, pin, expected in (
        ("", one["env"]["KERNELINDEX_PIN"], "kernelindex-registry==0.1.0"),
        ("kernelindex-registry==9.9", one["env"]["KERNELINDEX_PIN"], "kernelindex-registry==9.9"),
        ("", direct, direct),
        (direct, "kernelindex-registry==0.1.0", direct),
    ):
        out = subprocess.run(
            ["bash", "-c", shown],
            env={"PATH": os.environ["PATH"], "OVERRIDE": override, "KERNELINDEX_PIN": pin},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out.splitlines() == [expected]


# Playing both stages -----------------------------------------------------------------------------------


@dataclass
class PullRequest:
    origin: Path
    base: str
    head: str
    workspace: Path
    runner_temp: Path

    @property
    def server(self) -> str:
        """GitHub's server as stage two reaches it: a folder holding example/manifests.git."""
        return self.origin.parent.parent.as_uri()

    def pull(self) -> dict[str, Any]:
        """What GitHub answers of pull request #1."""
        return {"number": 1, "head": {"sha": self.head}, "base": {"sha": self.base}}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def _fork_pull_request(tmp_path: Path, files: dict[str, bytes]) -> PullRequest:
    """A canonical repository with a fork's pull request #1 (only refs/pull/1/head and /merge reach it), checked
    out as actions/checkout does: every branch as origin/*, the merge ref detached, no local branch."""
    store = registry.GitStore.init(tmp_path / "github" / "example" / "manifests.git")
    main = commit_manifests(store, basic_scenario().docs)
    head = commit_raw(store, main, files)
    merge = commit_raw(store, [main, head], {}, base_tree=head, message="Merge head into main\n", when=T0 + 4000)
    _git(store.path, "update-ref", "refs/pull/1/head", head)
    _git(store.path, "update-ref", "refs/pull/1/merge", merge)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _git(workspace, "init", "--quiet")
    _git(workspace, "remote", "add", "origin", str(store.path))
    _git(workspace, "fetch", "--quiet", "--prune", "origin", "+refs/heads/*:refs/remotes/origin/*",
         "+refs/pull/1/merge:refs/remotes/pull/1/merge")  # fmt: skip
    _git(workspace, "checkout", "--quiet", "--detach", "refs/remotes/pull/1/merge")
    assert _git(workspace, "branch", "--list") == "* (HEAD detached at pull/1/merge)"
    return PullRequest(store.path, main, head, workspace, tmp_path / "runner-temp")


def _pull_request(tmp_path: Path, files: dict[str, bytes]) -> PullRequest:
    """GitHub's side alone (stage two's tests): main of one commit and pull request #1 adding `files` on it."""
    store = registry.GitStore.init(tmp_path / "github" / "example" / "manifests.git")
    main = commit_manifests(store, [make_operation("base-op")])
    head = commit_raw(store, main, files)
    _git(store.path, "update-ref", "refs/pull/1/head", head)
    return PullRequest(store.path, main, head, tmp_path / "workspace", tmp_path / "runner-temp")


def _stage_one(pr: PullRequest) -> tuple[int, Path]:
    """Stage one's check step and its final step, as the runner runs them; returns (job exit, artifact)."""
    one = _workflow(STAGE_ONE)
    pr.runner_temp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(pr.runner_temp),
        "GITHUB_WORKSPACE": str(pr.workspace),
        "BASE_REF": "main",
        "HEAD_SHA": pr.head,
        "PR_NUMBER": "1",
    }
    for name in ("Check the pull request", "Fail when the check found a problem"):
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step(one, name)["run"]],
            cwd=pr.workspace,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            return done.returncode, pr.runner_temp / "kernelindex-check"
    return 0, pr.runner_temp / "kernelindex-check"


def _stage_two(artifact: Path | None, tmp_path: Path, **scenario: Any) -> list[dict[str, Any]]:
    """Stage two's github-script with the downloaded artifact (None: the download failed)."""
    script = _step(_workflow(STAGE_TWO), "Post the comment and the commit status")
    work = tmp_path / "stage-two"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    if artifact is not None:
        shutil.copytree(artifact, work / script["env"]["REPORT_DIR"])
    (work / "script.js").write_text(script["with"]["script"])
    (work / "scenario.json").write_text(json.dumps(scenario))
    done = subprocess.run(
        ["node", str(RUNNER), "script.js", "scenario.json"],
        cwd=work,
        env={**os.environ, "REPORT_DIR": script["env"]["REPORT_DIR"], "RUNNER_TEMP": str(work)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    calls: list[dict[str, Any]] = json.loads(done.stdout)
    return calls


def _run_event(head: str) -> dict[str, Any]:
    return {"id": 42, "head_sha": head, "html_url": "https://github.example/runs/42", "event": "pull_request"}


def _posted(calls: list[dict[str, Any]]) -> list[str]:
    return [c["call"] for c in calls]


def _status(calls: list[dict[str, Any]]) -> dict[str, Any]:
    (status,) = [c["params"] for c in calls if c["call"] == "repos.createCommitStatus"]
    assert isinstance(status, dict)
    return status


@pytest.fixture
def passing(tmp_path: Path) -> PullRequest:
    s = basic_scenario()
    run = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 7000, name="fork-run")
    return _fork_pull_request(tmp_path, dict([stored(run)]))


@pytest.mark.slow
def test_a_forks_passing_pull_request_gets_one_comment_and_a_green_status(passing: PullRequest, tmp_path: Path) -> None:
    exit_status, artifact = _stage_one(passing)
    assert exit_status == 0
    assert sorted(p.name for p in artifact.iterdir()) == ["errors.txt", "head", "pull-request", "report.md", "status"]
    assert (artifact / "status").read_text() == "0\n" and (artifact / "head").read_text() == passing.head + "\n"
    report = (artifact / "report.md").read_text()
    assert "**All checks passed.**" in report and "fork-run" in report

    pull, server = passing.pull(), passing.server
    calls = _stage_two(
        artifact, tmp_path, workflowRun=_run_event(passing.head), pull=pull, serverUrl=server, comments=[]
    )
    assert _posted(calls) == [
        "pulls.get",
        "issues.listComments",
        "issues.createComment",
        "repos.createCommitStatus",
    ]
    comment = calls[2]["params"]
    assert comment["issue_number"] == 1
    assert comment["body"] == (
        f"{MARKER}\n{report}\n\n[The check's run](https://github.example/runs/42) · commit {passing.head[:12]}"
    )
    assert _status(calls) == {
        "owner": "example",
        "repo": "manifests",
        "sha": passing.head,
        "state": "success",
        "context": "kernelindex/check",
        "description": "All checks passed.",
        "target_url": "https://github.example/runs/42",
    }

    # The next push: the same comment is updated, never a second one.
    mine = {"id": 7, "user": {"type": "Bot"}, "body": comment["body"]}
    theirs = {"id": 8, "user": {"type": "User"}, "body": MARKER + " (quoted by a person)"}
    calls = _stage_two(artifact, tmp_path, workflowRun=_run_event(passing.head), pull=pull, serverUrl=server,
                       comments=[theirs, mine])  # fmt: skip
    assert _posted(calls)[-2:] == ["issues.updateComment", "repos.createCommitStatus"]
    assert calls[-2]["params"]["comment_id"] == 7


@pytest.mark.slow
def test_a_forks_failing_pull_request_gets_its_problems_and_a_red_status(tmp_path: Path) -> None:
    s = basic_scenario()
    elsewhere = make_workload(s.operation, tokens=999)  # not in the registry: the run's reference dangles
    run = make_run(s.implementations[1], elsewhere, s.protocol, s.environment, 7000, name="dangling")
    pr = _fork_pull_request(tmp_path, dict([stored(run)]))
    exit_status, artifact = _stage_one(pr)
    assert exit_status == 1 and (artifact / "status").read_text() == "1\n"
    report = (artifact / "report.md").read_text()
    assert "problem(s)" in report and "does not resolve to a WorkloadCase or WorkloadSuite" in report
    calls = _stage_two(artifact, tmp_path, workflowRun=_run_event(pr.head), pull=pr.pull(), serverUrl=pr.server)
    assert report in calls[2]["params"]["body"]
    assert (_status(calls)["state"], _status(calls)["description"]) == (
        "failure",
        "The check found problems; see the comment.",
    )


def _artifact(tmp_path: Path, head: str, status: str = "0", report: str = "**All checks passed.**\n") -> Path:
    directory = tmp_path / "artifact"
    directory.mkdir(exist_ok=True)
    for name, text in (("status", status), ("head", head), ("pull-request", "1"), ("report.md", report)):
        (directory / name).write_text(text + ("\n" if name != "report.md" else ""))
    (directory / "errors.txt").write_text("Error: no such option: --format\n")
    return directory


HEAD = "ab" * 20


def test_no_report_is_an_error_status_and_no_comment(tmp_path: Path) -> None:
    calls = _stage_two(None, tmp_path, workflowRun=_run_event(HEAD))
    assert _posted(calls) == ["repos.createCommitStatus"]
    assert _status(calls)["state"] == "error"


def test_a_report_for_another_commit_or_pull_request_is_not_posted(tmp_path: Path) -> None:
    """The artifact is the pull request's own output: its head and number are checked against GitHub."""
    forged = _artifact(tmp_path, "cd" * 20)
    calls = _stage_two(forged, tmp_path, workflowRun=_run_event(HEAD), pull={"number": 1, "head": {"sha": HEAD}})
    assert _posted(calls) == ["repos.createCommitStatus"] and _status(calls)["state"] == "error"
    moved = _artifact(tmp_path, HEAD)
    calls = _stage_two(moved, tmp_path, workflowRun=_run_event(HEAD), pull={"number": 1, "head": {"sha": "ef" * 20}})
    assert _posted(calls) == ["pulls.get", "repos.createCommitStatus"]
    assert _status(calls)["description"] == "The report names no open pull request at this commit."
    calls = _stage_two(moved, tmp_path, workflowRun=_run_event(HEAD), pull=None)
    assert _posted(calls) == ["pulls.get", "repos.createCommitStatus"] and _status(calls)["state"] == "error"


@pytest.mark.parametrize(
    "steering",
    [".github/workflows/kernelindex-check.yml", ".github/workflows/\u00e9vil\tname.yml"],  # git quotes the second
)
def test_a_pull_request_that_changes_the_workflows_is_never_green(tmp_path: Path, steering: str) -> None:
    """Stage one ran the pull request's own workflow file, so its report may be forged."""
    pr = _pull_request(tmp_path, {"benchmark-runs/ab/x.json": b"{}", steering: b"on: push\n"})
    artifact = _artifact(tmp_path, pr.head)
    calls = _stage_two(artifact, tmp_path, workflowRun=_run_event(pr.head), pull=pr.pull(), serverUrl=pr.server)
    body = next(c["params"]["body"] for c in calls if c["call"] == "issues.createComment")
    assert f"changes the repository's own workflows or settings ({steering})" in body
    assert _status(calls)["state"] == "failure"


def test_a_workflow_change_past_githubs_listing_cap_is_seen(tmp_path: Path) -> None:
    """GitHub lists 3,000 files of a pull request; one of 3,001 that changes .github/ listed last is still seen:
    git lists every path."""
    steering = ".github/workflows/kernelindex-check.yml"
    pr = _pull_request(tmp_path, {steering: b"on: push\n"})
    # The head adds LISTING_CAP files besides (a tree built at once: an index takes ~2 s to add them one by one).
    repo = pygit2.Repository(str(pr.origin))
    blob, folders = repo.create_blob(b"{}"), repo.TreeBuilder()
    for folder in range(256):
        files = repo.TreeBuilder()
        for n in range(folder, LISTING_CAP, 256):
            files.insert(f"{n:064x}.json", blob, pygit2.enums.FileMode.BLOB)
        folders.insert(f"{folder:02x}", files.write(), pygit2.enums.FileMode.TREE)
    tree = repo.TreeBuilder(repo.revparse_single(pr.head).peel(pygit2.Tree))
    tree.insert("benchmark-runs", folders.write(), pygit2.enums.FileMode.TREE)
    head = repo.revparse_single(pr.head).peel(pygit2.Commit)
    pr.head = str(repo.create_commit(None, head.author, head.committer, "Many files\n", tree.write(), [pr.base]))
    _git(pr.origin, "update-ref", "refs/pull/1/head", pr.head)
    others = [f"benchmark-runs/{n % 256:02x}/{n:064x}.json" for n in range(LISTING_CAP)]
    assert _git(pr.origin, "diff", "--name-only", pr.base, pr.head).splitlines() == sorted([*others, steering])
    listed = [{"filename": name} for name in [*others, steering]]  # what GitHub would list, had it no cap
    calls = _stage_two(_artifact(tmp_path, pr.head), tmp_path, workflowRun=_run_event(pr.head), pull=pr.pull(),
                       serverUrl=pr.server, files=listed)  # fmt: skip
    assert "pulls.listFiles" not in _posted(calls)
    body = next(c["params"]["body"] for c in calls if c["call"] == "issues.createComment")
    assert f"({steering})" in body and _status(calls)["state"] == "failure"


def test_main_moving_on_is_not_the_pull_requests_change(tmp_path: Path) -> None:
    """What the pull request changes is `git diff base...head`: a workflow main changed since it branched is not."""
    pr = _pull_request(tmp_path, {"benchmark-runs/ab/x.json": b"{}"})
    store = registry.GitStore(pr.origin)
    moved = commit_raw(store, pr.base, {".github/workflows/other.yml": b"on: push\n"}, ref="refs/heads/main")
    pull = {**pr.pull(), "base": {"sha": moved}}
    calls = _stage_two(_artifact(tmp_path, pr.head), tmp_path, workflowRun=_run_event(pr.head), pull=pull,
                       serverUrl=pr.server)  # fmt: skip
    assert (_status(calls)["state"], _status(calls)["description"]) == ("success", "All checks passed.")


def test_a_head_git_cannot_fetch_is_an_error_not_a_pass(tmp_path: Path) -> None:
    pr = _pull_request(tmp_path, {"benchmark-runs/ab/x.json": b"{}"})
    calls = _stage_two(_artifact(tmp_path, HEAD), tmp_path, workflowRun=_run_event(HEAD),
                       pull={**pr.pull(), "head": {"sha": HEAD}}, serverUrl=pr.server)  # fmt: skip
    assert _posted(calls) == ["pulls.get", "core.warning", "repos.createCommitStatus"]
    assert _status(calls)["state"] == "error"
    assert _status(calls)["description"] == "Could not compare the pull request with its base in git; see the run."


def test_a_check_that_could_not_run_says_so(tmp_path: Path) -> None:
    pr = _pull_request(tmp_path, {"benchmark-runs/ab/x.json": b"{}"})
    artifact = _artifact(tmp_path, pr.head, status="2", report="")
    calls = _stage_two(artifact, tmp_path, workflowRun=_run_event(pr.head), pull=pr.pull(), serverUrl=pr.server)
    body = next(c["params"]["body"] for c in calls if c["call"] == "issues.createComment")
    assert "The check could not run (exit status 2)" in body and "no such option: --format" in body
    assert _status(calls)["state"] == "error"


def test_a_long_report_is_cut_to_fit_a_comment(tmp_path: Path) -> None:
    pr = _pull_request(tmp_path, {"benchmark-runs/ab/x.json": b"{}"})
    artifact = _artifact(tmp_path, pr.head, status="1", report="x" * 70_000)
    calls = _stage_two(artifact, tmp_path, workflowRun=_run_event(pr.head), pull=pr.pull(), serverUrl=pr.server)
    body = next(c["params"]["body"] for c in calls if c["call"] == "issues.createComment")
    assert len(body) < 65_536 and "cut at 60000 characters" in body

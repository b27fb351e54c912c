"""`kernelindex validate` and `add` with several manifests in one file: KernelIndex's submission bundle (our own in
its format, docs/examples/bundles/submission.yaml) and plain YAML streams, checked as one change and added as one
commit; a bundle with one bad entry refused whole, the entry named, nothing written.

The expected digests come from outside the code under test: the references other example files make to the same
manifests by hand (a run's four references, a workload's operation, a retraction's run), and, for the project
no example names, RFC 8785 with the `rfc8785` package and hashlib over the file as parsed.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
import rfc8785
from helpers import DOC_EXAMPLES, TEST_TIME, basic_scenario, commit_manifests, object_ids
from ruamel.yaml import YAML
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app

SUBMISSION = DOC_EXAMPLES / "bundles" / "submission.yaml"
KINDS = DOC_EXAMPLES / "kinds"
AUTHOR = ["--author", "Carol <carol@example.com>"]
FIXED_DATES = {"GIT_AUTHOR_DATE": f"{TEST_TIME} +0000", "GIT_COMMITTER_DATE": f"{TEST_TIME} +0000"}
_DIGEST = r"(sha256:[0-9a-f]{64})"


def _run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], env=FIXED_DATES, catch_exceptions=False)


def _reference(stem: str, field: str) -> str:
    """The digest an example file names in `field`, as its author wrote it."""
    found = re.search(rf"^\s*{field}: {_DIGEST}$", (KINDS / f"{stem}.yaml").read_text(), re.MULTILINE)
    assert found, (stem, field)
    return found.group(1)


def _project_digest() -> str:
    project = YAML(typ="safe", pure=True).load(SUBMISSION.read_text())["projects"][0]
    canonical = rfc8785.dumps({key: project[key] for key in ("apiVersion", "kind", "spec")})
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


EXPECTED = {
    "projects[0]": ("SoftwareProject", _project_digest()),
    "operations[0]": ("OperationSpec", _reference("workload-case", "operationSpecDigest")),
    "workloads[0]": ("WorkloadCase", _reference("benchmark-run", "workloadDigest")),
    "implementations[0].manifest": ("ImplementationRevision", _reference("benchmark-run", "implementationDigest")),
    "runs[0].run": ("BenchmarkRun", _reference("retraction", "runDigest")),
    "runs[0].protocol": ("BenchmarkProtocol", _reference("benchmark-run", "protocolDigest")),
    "runs[0].environment": ("ExecutionEnvironment", _reference("benchmark-run", "environmentDigest")),
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return registry.GitStore.init(tmp_path / "manifests.git").path


def _bad_bundle(tmp_path: Path) -> Path:
    """The submission with one bad entry: its protocol's timer is not an identifier."""
    text = SUBMISSION.read_text()
    assert text.count("timer: device_events") == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("timer: device_events", "timer: Device Events"))
    return bad


def test_validate_names_each_entry_with_its_digest(runner: CliRunner, repo: Path) -> None:
    result = _run(runner, "validate", SUBMISSION, "--repo", repo)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"ok  {digest}  {kind}  {SUBMISSION} ({where})" for where, (kind, digest) in EXPECTED.items()
    ]
    report = json.loads(_run(runner, "validate", SUBMISSION, "--repo", repo, "--json").stdout)
    assert [(m["entry"], m["kind"], m["digest"]) for m in report["manifests"]] == [
        (where, kind, digest) for where, (kind, digest) in EXPECTED.items()
    ]


def test_a_bundle_is_added_as_one_commit(runner: CliRunner, repo: Path) -> None:
    result = _run(runner, "add", SUBMISSION, "--repo", repo, *AUTHOR, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    store = registry.GitStore(repo)
    assert report["commit"] == store.head() and store.commit_info(report["commit"]).parents == ()
    assert sorted(a["digest"] for a in report["added"]) == sorted(digest for _, digest in EXPECTED.values())
    assert sorted(e.digest for e in store.entries(report["commit"])) == sorted(d for _, d in EXPECTED.values())
    # The implementation names its project by slug in the file; the registry records the project's name.
    implementation = store.read_document(report["commit"], EXPECTED["implementations[0].manifest"][1])
    assert implementation is not None and implementation["metadata"]["labels"] == {"project": "larkspur-kernels"}
    again = json.loads(_run(runner, "add", SUBMISSION, "--repo", repo, *AUTHOR, "--json").stdout)
    assert again["commit"] is None and len(again["unchanged"]) == len(EXPECTED)


def test_a_bundle_with_one_bad_entry_is_refused_whole(runner: CliRunner, repo: Path, tmp_path: Path) -> None:
    store = registry.GitStore(repo)
    commit_manifests(store, basic_scenario().docs)
    head, objects = store.head(), object_ids(store)
    bad = _bad_bundle(tmp_path)
    expected = f"{bad}: $.runs[0].protocol.spec.measurement.timer: String should match pattern"
    for command in ("validate", "add"):
        result = _run(runner, command, bad, "--repo", repo, *(AUTHOR if command == "add" else ()))
        assert result.exit_code == 1
        assert result.stdout == ""
        assert [line.split(" '^")[0] for line in result.stderr.splitlines()] == [expected]
    assert store.head() == head and object_ids(store) == objects


def test_a_bundle_the_registry_refuses_names_the_entry_and_writes_nothing(
    runner: CliRunner, repo: Path, tmp_path: Path
) -> None:
    """Each entry valid alone; the run's workload is neither in the bundle nor in the registry."""
    text = SUBMISSION.read_text()
    without_workload = tmp_path / "no-workload.yaml"
    without_workload.write_text(text[: text.index("workloads:")] + text[text.index("implementations:") :])
    store = registry.GitStore(repo)
    commit_manifests(store, basic_scenario().docs)
    head, objects = store.head(), object_ids(store)
    result = _run(runner, "add", without_workload, "--repo", repo, *AUTHOR)
    assert result.exit_code == 1
    workload = EXPECTED["workloads[0]"][1]
    assert result.stderr == (
        f"{without_workload}: $.runs[0].run.spec.workloadDigest: {workload} does not resolve to a WorkloadCase or "
        "WorkloadSuite\n"
    )
    assert store.head() == head and object_ids(store) == objects


def test_a_refused_bundle_leaves_no_branch_behind(runner: CliRunner, repo: Path, tmp_path: Path) -> None:
    """`add --branch NEW` makes the branch only for a change it can commit."""
    store = registry.GitStore(repo)
    commit_manifests(store, basic_scenario().docs)
    text = SUBMISSION.read_text()
    dangling = tmp_path / "dangling.yaml"
    dangling.write_text(text[: text.index("workloads:")] + text[text.index("implementations:") :])
    branches, objects = store.branches(), object_ids(store)
    result = _run(runner, "add", dangling, "--repo", repo, "--branch", "add-larkspur", *AUTHOR)
    assert result.exit_code == 1 and "does not resolve" in result.stderr
    assert store.branches() == branches and object_ids(store) == objects
    assert _run(runner, "add", SUBMISSION, "--repo", repo, "--branch", "add-larkspur", *AUTHOR).exit_code == 0
    assert "refs/heads/add-larkspur" in store.branches() and store.branches()["refs/heads/main"] == store.head()


def test_a_yaml_stream_is_one_change_with_its_documents_named(runner: CliRunner, repo: Path, tmp_path: Path) -> None:
    stems = ["operation-spec", "workload-case", "benchmark-protocol", "execution-environment"]
    stream = tmp_path / "stream.yaml"
    stream.write_text("\n---\n".join((KINDS / f"{stem}.yaml").read_text() for stem in stems))
    result = _run(runner, "add", stream, "--repo", repo, *AUTHOR)
    assert result.exit_code == 0, result.stderr
    store = registry.GitStore(repo)
    assert len(store.first_parents(store.head() or "")) == 1
    assert sorted(e.digest for e in store.entries(store.head() or "")) == sorted(
        [EXPECTED[w][1] for w in ("operations[0]", "workloads[0]", "runs[0].protocol", "runs[0].environment")]
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text(stream.read_text().replace("seed: 7", "seed: -7"))
    result = _run(runner, "validate", broken, "--repo", repo)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{broken} (document 2): $.spec.tensors.logits.data.seed: ")


def test_digest_lists_every_entry(runner: CliRunner) -> None:
    result = _run(runner, "digest", SUBMISSION)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"{digest}  {SUBMISSION} ({where})" for where, (_, digest) in EXPECTED.items()
    ]


def test_a_bundle_added_in_a_clone_appears_in_its_work_tree(runner: CliRunner, repo: Path, tmp_path: Path) -> None:
    store = registry.GitStore(repo)
    commit_manifests(store, basic_scenario().docs)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "switch", "-q", "-c", "add-larkspur"], check=True)
    result = runner.invoke(app, ["add", str(SUBMISSION), "--repo", str(clone), *AUTHOR], env=FIXED_DATES)
    assert result.exit_code == 0, result.stderr
    assert (
        result.stdout.splitlines()[-1] == "next: git push origin add-larkspur   # then open a pull request against main"
    )
    run = EXPECTED["runs[0].run"][1].removeprefix("sha256:")
    assert (clone / "benchmark-runs" / run[:2] / f"{run}.json").is_file()

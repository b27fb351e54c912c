"""The `kernelindex` command: init, add, validate, digest, show, log, import.

Runs in process through typer's CliRunner against registries in tmp_path; the embedded
registry is only read (show, log) or copied (import)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    EMBEDDED_REPO,
    EXAMPLES,
    EXPORT,
    SEEDS,
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    digest_of,
    make_operation,
    to_manifest,
)
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app

AUTHOR = ["--author", "Test <test@example.com>"]
FIXED_DATES = {"GIT_AUTHOR_DATE": f"{TEST_TIME} +0000", "GIT_COMMITTER_DATE": f"{TEST_TIME} +0000"}
MISMATCHED_RUN = "sha256:0c42117796ce0ec97435153c9a0d61c968f24fac54645b3478b00586f619990e"


def _run(runner: CliRunner, *args: str | Path, env: Mapping[str, str] | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], env=dict(env or {}), catch_exceptions=False)


def _write(folder: Path, documents: list[dict[str, Any]]) -> list[Path]:
    files = []
    for number, document in enumerate(documents):
        files.append(folder / f"{number:02d}-{document['metadata']['name']}.json")
        files[-1].write_text(json.dumps(document, indent=2))
    return files


@pytest.fixture
def repo(tmp_path: Path, runner: CliRunner) -> Path:
    path = tmp_path / "manifests.git"
    assert _run(runner, "init", "--repo", path).exit_code == 0
    return path


# init ------------------------------------------------------------------------------------------------


def test_init_creates_then_reuses(tmp_path: Path, runner: CliRunner) -> None:
    path = tmp_path / "r.git"
    created = _run(runner, "init", "--repo", path)
    assert created.exit_code == 0
    assert created.stdout == f"created registry {path}\n"
    assert registry.GitStore(path).head() is None
    again = _run(runner, "init", "--repo", path)
    assert again.exit_code == 0
    assert again.stdout.startswith("reusing registry")


def test_init_refuses_a_folder_that_is_something_else(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file.txt").write_text("mine")
    result = _run(runner, "init", "--repo", tmp_path / "busy")
    assert result.exit_code == 1
    assert "exists and is not an empty directory or a git repository" in result.stderr


# add -------------------------------------------------------------------------------------------------


def test_add_prints_digests_and_commits_once(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    scenario = basic_scenario()
    files = _write(tmp_path, scenario.docs)
    result = _run(runner, "add", *files, "--repo", repo, *AUTHOR, "--license", "CC-BY-4.0", "-s", env=FIXED_DATES)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    for document in scenario.docs:
        manifest = to_manifest(document)
        assert f"added      {manifest.digest}  {manifest.kind}  {manifest.path}" in lines
    store = registry.GitStore(repo)
    head = store.head()
    assert lines[-1] == f"commit {head} on main"
    info = store.commit_info(head or "")
    assert info.trailers == (
        ("Source", "community"),
        ("License", "CC-BY-4.0"),
        ("Signed-off-by", "Test <test@example.com>"),
    )
    assert info.author == registry.Person("Test", "test@example.com", TEST_TIME, 0)
    assert info.subject.startswith("Add 9 manifests (BenchmarkProtocol, BenchmarkRun, ")

    again = _run(runner, "add", *files, "--repo", repo, *AUTHOR)
    assert again.exit_code == 0
    assert again.stdout.splitlines()[-1].startswith("nothing to commit")
    assert sum(line.startswith("unchanged  ") for line in again.stdout.splitlines()) == len(files)
    assert store.head() == head


@pytest.mark.parametrize(
    ("author", "why"),
    [
        ("A <>", "the email is empty once git trims spaces and punctuation from its ends"),
        (", <a@b.example>", "the name is empty once git trims spaces and punctuation from its ends"),
        ("A <a <b.example>", "the email holds < or >"),
    ],
)
def test_add_refuses_an_author_git_cannot_record_saying_where_and_why(
    repo: Path, runner: CliRunner, tmp_path: Path, author: str, why: str
) -> None:
    """Once "internal error: InvalidError" (libgit2's refusal, unlocated): now the option and the reason,
    before anything is written."""
    files = _write(tmp_path, [make_operation("a")])
    result = runner.invoke(app, ["add", *map(str, files), "--repo", str(repo), "--author", author])
    assert result.exit_code == 2
    assert "--author" in result.stderr and why in result.stderr and "internal error" not in result.stderr
    assert registry.GitStore(repo).head() is None  # nothing written


def test_add_is_deterministic_with_fixed_dates(tmp_path: Path, runner: CliRunner) -> None:
    files = _write(tmp_path, basic_scenario().docs)
    heads = []
    for name in ("a.git", "b.git"):
        _run(runner, "init", "--repo", tmp_path / name)
        _run(runner, "add", *files, "--repo", tmp_path / name, *AUTHOR, "-m", "Same", env=FIXED_DATES)
        heads.append(registry.GitStore(tmp_path / name).head())
    assert heads[0] == heads[1] is not None


def test_add_json(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    files = _write(tmp_path, [make_operation("a"), make_operation("b")])
    result = _run(
        runner,
        "add",
        *files,
        "--repo",
        repo,
        *AUTHOR,
        "--json",
        "--source",
        "mine",
        "--source-url",
        "https://x.invalid",
    )
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["commit"] == registry.GitStore(repo).head()
    assert [a["digest"] for a in report["added"]] == [digest_of(make_operation(n)) for n in ("a", "b")]
    assert report["unchanged"] == []
    info = registry.GitStore(repo).commit_info(report["commit"])
    assert info.trailer("Source") == "mine"
    assert info.trailer("Source-URL") == "https://x.invalid"
    again = json.loads(_run(runner, "add", *files, "--repo", repo, *AUTHOR, "--json").stdout)
    assert again["commit"] is None
    assert again["added"] == []
    assert len(again["unchanged"]) == 2


def test_add_yaml_and_json_twins(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    yaml_file = EXAMPLES / "operation-spec.yaml"
    json_file = tmp_path / "operation-spec.json"
    json_file.write_text(json.dumps(registry.load_manifest(yaml_file.read_bytes(), "x.yaml").document))
    first = _run(runner, "add", yaml_file, "--repo", repo, *AUTHOR)
    assert first.exit_code == 0
    second = _run(runner, "add", json_file, "--repo", repo, *AUTHOR)
    assert second.exit_code == 0
    assert "nothing to commit" in second.stdout


def test_add_to_a_missing_registry(tmp_path: Path, runner: CliRunner) -> None:
    files = _write(tmp_path, [make_operation("a")])
    result = _run(runner, "add", *files, "--repo", tmp_path / "nowhere.git", *AUTHOR)
    assert result.exit_code == 1
    assert "registry not found" in result.stderr
    assert "kernelindex init" in result.stderr


def test_add_a_missing_file(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    result = _run(runner, "add", tmp_path / "absent.json", "--repo", repo, *AUTHOR)
    assert result.exit_code == 1
    assert result.stderr == f"{tmp_path / 'absent.json'}: cannot read: No such file or directory\n"


def test_add_a_conflict_is_reported(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    operation = make_operation("a")
    (first,) = _write(tmp_path, [operation])
    assert _run(runner, "add", first, "--repo", repo, *AUTHOR).exit_code == 0
    operation["metadata"]["title"] = "Other words"
    second = tmp_path / "retitled.json"
    second.write_text(json.dumps(operation))
    head = registry.GitStore(repo).head()
    result = _run(runner, "add", second, "--repo", repo, *AUTHOR)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{second}: $.metadata: {digest_of(operation)} is already published")
    assert registry.GitStore(repo).head() == head


def test_the_default_registry_comes_from_the_environment(tmp_path: Path, runner: CliRunner) -> None:
    path = tmp_path / "env.git"
    store = registry.GitStore.init(path)
    commit_manifests(store, [make_operation("a")])
    result = _run(runner, "log", env={"KERNELINDEX_REPO": str(path)})
    assert result.exit_code == 0
    assert result.stdout.startswith((store.head() or "")[:12])


def test_the_guard_leaves_no_default_registry(runner: CliRunner) -> None:
    """conftest points KERNELINDEX_REPO nowhere: a command without --repo cannot reach manifests.git."""
    result = _run(runner, "log")
    assert result.exit_code == 1
    assert "registry not found" in result.stderr


# validate and digest ----------------------------------------------------------------------------------


def test_validate_ok(runner: CliRunner) -> None:
    files = sorted(EXAMPLES.glob("*.yaml"))
    result = _run(runner, "validate", *files)
    assert result.exit_code == 0
    assert result.stderr == ""
    for file, line in zip(files, result.stdout.splitlines(), strict=True):
        manifest = registry.load_manifest(file.read_bytes(), file.name)
        assert line == f"ok  {manifest.digest}  {manifest.kind}  {file}"


def test_validate_json(runner: CliRunner, tmp_path: Path) -> None:
    good = EXAMPLES / "benchmark-protocol.yaml"
    ok = json.loads(_run(runner, "validate", "--json", good).stdout)
    assert ok["ok"] is True
    assert ok["problems"] == []
    assert ok["manifests"][0]["digest"] == registry.load_manifest(good.read_bytes(), "x").digest
    bad = tmp_path / "bad.json"
    bad.write_text('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Nope", "metadata": {}, "spec": {}}')
    result = _run(runner, "validate", "--json", good, bad)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert report["problems"] == [{"file": str(bad), "path": "$.kind", "reason": report["problems"][0]["reason"]}]
    assert report["problems"][0]["reason"].startswith("unknown kind 'Nope'")


def test_validate_checks_references_against_a_registry(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    scenario = basic_scenario()
    (run_file,) = _write(tmp_path, [scenario.runs[0]])
    result = _run(runner, "validate", run_file, "--repo", repo)
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 4  # four references, none resolves in an empty registry
    assert [line.split(" does not resolve to ")[1] for line in result.stderr.splitlines()] == [
        "an ImplementationRevision",
        "a WorkloadCase or WorkloadSuite",
        "a BenchmarkProtocol",
        "an ExecutionEnvironment",
    ]
    files = _write(tmp_path, scenario.docs)
    assert _run(runner, "validate", *files, "--repo", repo).exit_code == 0  # they resolve among the files
    commit_manifests(registry.GitStore(repo), scenario.docs[:-1])
    assert _run(runner, "validate", run_file, "--repo", repo).exit_code == 0  # and in the registry


def test_digest(runner: CliRunner, tmp_path: Path) -> None:
    yaml_file = EXAMPLES / "benchmark-run.yaml"
    json_file = tmp_path / "run.json"
    json_file.write_text(json.dumps(registry.load_manifest(yaml_file.read_bytes(), "x").document))
    result = _run(runner, "digest", yaml_file, json_file)
    assert result.exit_code == 0
    expected = "sha256:86d80418deb06f8f6cf44a6b3de9a6b578966773689c18e6c84d44c128207394"
    assert result.stdout.splitlines() == [f"{expected}  {yaml_file}", f"{expected}  {json_file}"]
    as_json = json.loads(_run(runner, "digest", "--json", yaml_file).stdout)
    assert as_json == [{"file": str(yaml_file), "kind": "BenchmarkRun", "digest": expected}]


def test_digest_of_a_bad_file(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"apiVersion: !foo x\n")
    result = _run(runner, "digest", bad)
    assert result.exit_code == 1
    assert result.stderr == f"{bad}: $.apiVersion: tag !foo is not allowed (manifests use plain JSON values)\n"


# show ------------------------------------------------------------------------------------------------


@pytest.fixture
def filled(repo: Path) -> Path:
    store = registry.GitStore(repo)
    commit_manifests(store, basic_scenario().docs)
    return repo


def test_show_by_digest_prefix_and_name(filled: Path, runner: CliRunner) -> None:
    run = to_manifest(basic_scenario().runs[0])
    hexdigest = run.digest.removeprefix("sha256:")
    outputs = [
        _run(runner, "show", ident, "--repo", filled).stdout
        for ident in (run.digest, hexdigest, hexdigest[:12], "sha256:" + hexdigest[:16], "run-a1")
    ]
    assert len(set(outputs)) == 1
    rows = outputs[0].split("\n\n", 1)[0].splitlines()
    assert rows[0] == "kind:      BenchmarkRun"
    assert rows[1] == f"digest:    {run.digest}"
    assert rows[2] == "name:      run-a1"
    assert rows[3] == f"path:      {run.path}"
    assert rows[5].startswith("published: 2023-11-14T22:13:20Z in ")
    assert outputs[0].split("\n\n", 1)[1].encode() == run.stored_bytes()


def test_show_json(filled: Path, runner: CliRunner) -> None:
    run = to_manifest(basic_scenario().runs[1])
    report = json.loads(_run(runner, "show", run.digest, "--repo", filled, "--json").stdout)
    store = registry.GitStore(filled)
    assert report["kind"] == "BenchmarkRun"
    assert report["digest"] == run.digest
    assert report["name"] == "run-a2"
    assert report["commit"] == store.head()
    assert report["published"] == {"commit": store.head(), "at": "2023-11-14T22:13:20Z", "source": "test"}
    assert report["warnings"] == []
    assert report["manifest"] == run.document
    assert report["manifest"]["spec"]["timing"]["latencyNs"]["median"] == 7900  # "7.9 us", normalized


@pytest.mark.parametrize(
    ("ident", "message"),
    [
        ("no-such-name", "manifest not found: 'no-such-name'"),
        ("sha256:" + "0" * 64, "manifest not found"),
        ("0123456789a", "names no manifest, and as a digest prefix it is too short"),  # 11 hex digits
    ],
)
def test_show_not_found(filled: Path, runner: CliRunner, ident: str, message: str) -> None:
    result = _run(runner, "show", ident, "--repo", filled)
    assert result.exit_code == 1
    assert message in result.stderr
    assert result.stdout == ""


def test_show_explains_an_ambiguous_name(filled: Path, runner: CliRunner) -> None:
    twin = make_operation("another-operation")
    twin["metadata"]["name"] = "run-a1"  # one name, two manifests of different kinds
    commit_manifests(registry.GitStore(filled), [twin], TEST_TIME + 1)
    result = _run(runner, "show", "run-a1", "--repo", filled)
    assert result.exit_code == 1
    assert "name 'run-a1' is ambiguous: 2 manifests match" in result.stderr
    assert "BenchmarkRun sha256:" in result.stderr
    assert "OperationSpec sha256:" in result.stderr
    assert "use a digest" in result.stderr


def test_show_at_an_older_commit(filled: Path, runner: CliRunner) -> None:
    store = registry.GitStore(filled)
    old = store.head() or ""
    commit_manifests(store, [make_operation("later")], TEST_TIME + 1)
    assert _run(runner, "show", "later", "--repo", filled).exit_code == 0
    at_old = _run(runner, "show", "later", "--repo", filled, "--at", old[:10])
    assert at_old.exit_code == 1
    assert f"manifest not found: 'later' at {old}" in at_old.stderr
    bad_rev = _run(runner, "show", "later", "--repo", filled, "--at", "nope")
    assert bad_rev.exit_code == 1
    assert "revision not found: 'nope'" in bad_rev.stderr


def test_show_in_an_empty_registry(repo: Path, runner: CliRunner) -> None:
    calls: list[list[str | Path]] = [["show", "x", "--repo", repo], ["show", "x", "--repo", repo, "--at", "HEAD"]]
    for args in calls:
        result = _run(runner, *args)
        assert result.exit_code == 1
        assert result.stderr.startswith("kernelindex: ")
        assert "internal error" not in result.stderr


def test_show_the_integrity_warning_of_an_upstream_mismatch(runner: CliRunner) -> None:
    result = _run(runner, "show", MISMATCHED_RUN, "--repo", EMBEDDED_REPO)
    assert result.exit_code == 0
    warnings = [line for line in result.stdout.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "operation-mismatch: implementation is for operation sha256:" in warnings[0]
    assert "(an upstream data error, kept as published)" in warnings[0]  # as the API and the run page say it
    report = json.loads(_run(runner, "show", MISMATCHED_RUN[7:19], "--repo", EMBEDDED_REPO, "--json").stdout)
    assert report["digest"] == MISMATCHED_RUN
    assert report["published"]["source"] == "flashinfer-bench"
    assert len(report["warnings"]) == 1
    # seed 000's run, by the truncated digest its page prints (its name is shared with its implementation)
    clean = json.loads(_run(runner, "show", "7f6df4bbbdbeb0960fc8acc", "--repo", EMBEDDED_REPO, "--json").stdout)
    assert clean["warnings"] == []
    assert clean["published"]["at"] == "2026-08-24T00:00:00Z"


# log -------------------------------------------------------------------------------------------------


def test_log(filled: Path, runner: CliRunner) -> None:
    store = registry.GitStore(filled)
    commit_manifests(store, [make_operation("later")], TEST_TIME + 3600, source="elsewhere", subject="Later")
    result = _run(runner, "log", "--repo", filled)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].split() == [(store.head() or "")[:12], "2023-11-14T23:13:20Z", "+1", "elsewhere", "Later"]
    assert lines[1].split()[2:4] == ["+9", "test"]
    assert len(_run(runner, "log", "--repo", filled, "-n", "1").stdout.splitlines()) == 1


def test_log_json_of_the_embedded_registry(runner: CliRunner) -> None:
    entries = json.loads(_run(runner, "log", "--repo", EMBEDDED_REPO, "--json").stdout)
    assert len(entries) == 6
    assert sum(e["filesAdded"] for e in entries) == 19_769 + 1_994
    assert next(e["committedAt"][:10] for e in entries) == "2026-08-24"
    assert ["Source", "liger-kernel-bench"] in entries[0]["trailers"]
    assert ["Source", "sol-execbench"] in entries[1]["trailers"]
    assert set(entries[0]) == {"commit", "committedAt", "author", "committer", "subject", "trailers", "filesAdded"}


def test_log_of_an_empty_registry(repo: Path, runner: CliRunner) -> None:
    result = _run(runner, "log", "--repo", repo, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


# import ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_import_is_idempotent_on_the_embedded_registry(tmp_path: Path, runner: CliRunner) -> None:
    """A copy of manifests.git already holds everything: importing again adds nothing, commits nothing."""
    copy = tmp_path / "manifests.git"
    shutil.copytree(EMBEDDED_REPO, copy)
    head = registry.GitStore(copy).head()
    exported = _run(runner, "import", "kernelindex-export", EXPORT, "--repo", copy, "--json")
    assert exported.exit_code == 0, exported.stderr
    report = json.loads(exported.stdout)
    assert (report["commits"], report["added"], report["unchanged"]) == ([], 0, 19_765)
    seeds = _run(runner, "import", "kernelindex-seeds", SEEDS, "--repo", copy)
    assert seeds.exit_code == 0
    assert "nothing new" in seeds.stdout
    assert registry.GitStore(copy).head() == head


def test_import_refuses_what_is_not_an_export(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    fake = tmp_path / "fake.jsonl.zst"
    fake.write_bytes(b"not zstd at all")
    result = _run(runner, "import", "kernelindex-export", fake, "--repo", repo)
    assert result.exit_code == 1
    assert result.stderr.startswith("fake.jsonl.zst: not a zstd file")
    assert registry.GitStore(repo).head() is None


def test_import_reports_a_bad_line(repo: Path, runner: CliRunner, tmp_path: Path) -> None:
    import zstandard

    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(zstandard.ZstdCompressor().compress(b'{"table": "sources", "row": {}}\n[1]\n'))
    result = _run(runner, "import", "kernelindex-export", bad, "--repo", repo)
    assert result.exit_code == 1
    assert result.stderr.startswith("bad.jsonl.zst:2: $: expected")

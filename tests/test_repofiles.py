"""A manifests repository may carry its own files (CI workflows, README, licence): the graph ignores them, a
server follows a main that changes them, and the pull-request check names each change and takes it only
from a maintainer's signed commit."""

from __future__ import annotations

import pygit2
import pytest
from helpers import basic_scenario, commit_meta, make_run, to_manifest
from signing import T0, Key, commit_raw, merge_into_main, stored

from kernelindex import registry
from kernelindex.registry.errors import Problem
from kernelindex.registry.repofiles import is_repository_file
from kernelindex.registry.review import RepositoryFileChange, check_range
from kernelindex.registry.signatures import POLICY_PATH
from kernelindex.registry.snapshots import Snapshots

WORKFLOW = ".github/workflows/kernelindex-check.yml"
WORKFLOW_TEXT = b"name: kernelindex check\non: pull_request\njobs: {}\n"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".github/workflows/check.yml", True),
        (".github/CODEOWNERS", True),
        (".github/", False),
        (".github", False),
        (".githubx/a", False),
        ("README.md", True),
        ("README", True),
        ("readme.rst", True),
        ("LICENSE", True),
        ("LICENCE.txt", True),
        ("CONTRIBUTING.md", True),
        (".gitattributes", True),
        (".gitignore", True),
        (".gitattributes.bak", False),
        ("docs/README.md", False),
        ("benchmark-runs/README.md", False),
        ("policy/README", False),
        ("NOTES.md", False),
        ("xREADME.md", False),
    ],
)
def test_the_repository_files_are_exactly_these(path: str, expected: bool) -> None:
    assert is_repository_file(path) is expected


def _run(name: str, latency: int) -> dict[str, object]:
    scenario = basic_scenario()
    return make_run(
        scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, latency, name=name
    )


def _governed(store: registry.GitStore, alice: Key) -> str:
    result = store.add(
        [to_manifest(d) for d in basic_scenario().docs],
        commit_meta(T0, subject="Initial policy and data", source="test"),
        extra_files={POLICY_PATH: alice.allowed_signer, "README.md": b"# A registry\n"},
    )
    assert result.commit is not None
    return result.commit


def test_a_main_with_its_own_files_is_loaded_and_followed(basic_store: registry.GitStore) -> None:
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    before = snapshots.head
    main = basic_store.head()
    assert main is not None
    own = commit_raw(
        basic_store,
        main,
        {
            WORKFLOW: WORKFLOW_TEXT,
            ".github/scripts/post.sh": (b"#!/bin/sh\n", pygit2.enums.FileMode.BLOB_EXECUTABLE),
            "README.md": b"# Our registry\n",
            "LICENSE": b"CC-BY-4.0\n",
        },
        ref=registry.store.MAIN,
    )
    status = snapshots.refresh()
    assert (status.serving, status.main, status.reason) == (own, own, None)
    assert snapshots.head.nodes.keys() == before.nodes.keys()  # nothing of them is a manifest
    # Edited and deleted later, with a manifest beside: followed again, and the run is served.
    run = _run("after-readme", 7000)
    edited = commit_raw(
        basic_store, own, {"README.md": b"# Our registry, v2\n", "LICENSE": None, **dict([stored(run)])}
    )
    assert basic_store._compare_and_swap(registry.store.MAIN, own, edited)
    status = snapshots.refresh()
    assert (status.serving, status.reason) == (edited, None)
    assert to_manifest(run).digest in snapshots.head.nodes


def test_any_other_file_still_stops_the_server_with_its_reason(basic_store: registry.GitStore) -> None:
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    main = basic_store.head()
    assert main is not None
    stray = commit_raw(basic_store, main, {"NOTES.md": b"x\n"}, ref=registry.store.MAIN)
    status = snapshots.refresh()
    assert status.serving == main and status.main == stray
    assert status.reason is not None and "NOTES.md: outside the layout" in status.reason


def test_a_pull_request_touching_them_is_named_and_needs_a_maintainer(
    store: registry.GitStore, keys: dict[str, Key]
) -> None:
    base = _governed(store, keys["alice"])
    files = {WORKFLOW: WORKFLOW_TEXT, "README.md": b"# A registry, improved\n", **dict([stored(_run("r", 7000))])}
    unsigned = commit_raw(store, base, files, ref="refs/heads/pr")
    report = check_range(store, base, unsigned)
    assert report.repository_files == (
        RepositoryFileChange(WORKFLOW, "added", None),
        RepositoryFileChange("README.md", "modified", None),
    )
    why = (
        "a repository file (not a manifest); a change to it needs a commit signed by a maintainer listed in the "
        f"policy/maintainers in force, as a policy change does; commit {unsigned[:12]}: unsigned"
    )
    assert report.problems == (Problem(WORKFLOW, "", why), Problem("README.md", "", why))
    assert [m.name for m in report.added] == ["r"]  # the manifest beside them is checked as ever

    by_stranger = commit_raw(store, base, files, signer=keys["mallory"], ref="refs/heads/mallory")
    assert [p.source for p in check_range(store, base, by_stranger).problems] == [WORKFLOW, "README.md"]

    signed = commit_raw(store, base, files, signer=keys["alice"], ref="refs/heads/alice")
    report = check_range(store, base, signed)
    assert report.ok
    assert report.repository_files == (
        RepositoryFileChange(WORKFLOW, "added", "alice@example.com"),
        RepositoryFileChange("README.md", "modified", "alice@example.com"),
    )


def test_a_signed_change_then_an_unsigned_one_is_not_signed_for(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    signed = commit_raw(store, base, {"README.md": b"v2\n"}, signer=keys["alice"])
    unsigned = commit_raw(store, signed, {"README.md": b"v3\n"}, when=T0 + 3700)
    report = check_range(store, base, unsigned)
    assert report.repository_files == (RepositoryFileChange("README.md", "modified", None),)
    assert [(p.source, p.reason.rsplit("; ", 1)[1]) for p in report.problems] == [
        ("README.md", f"commit {unsigned[:12]}: unsigned")
    ]


def test_without_signatures_they_are_listed_and_accepted(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    head = commit_raw(store, base, {"README.md": None, ".gitattributes": b"* -text\n"})
    report = check_range(store, base, head, signatures=False)
    assert report.ok
    assert report.repository_files == (
        RepositoryFileChange(".gitattributes", "added"),
        RepositoryFileChange("README.md", "deleted"),
    )


def test_they_are_regular_files(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    link = commit_raw(store, base, {"README.md": (b"policy/maintainers", pygit2.enums.FileMode.LINK)})
    assert check_range(store, base, link, signatures=False).problems == (
        Problem(
            "README.md", "", "file mode 120000: a repository file is a regular file (100644, or 100755 for a script)"
        ),
    )


def test_a_whole_history_takes_the_root_commits_own_files(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """The root commit is the operator's (as the first policy is); later changes still need a maintainer."""
    base = _governed(store, keys["alice"])
    assert check_range(store, None, base).ok
    later = commit_raw(store, base, {"README.md": b"changed\n"}, ref="refs/heads/pr")
    merged = merge_into_main(store, later)
    problems = check_range(store, None, merged).problems
    # Each unsigned commit that changes it is named: the pull request's, and the merge that brought it.
    assert sorted((p.source, p.reason.rsplit("; ", 1)[1]) for p in problems) == sorted(
        [("README.md", f"commit {merged[:12]}: unsigned"), ("README.md", f"commit {later[:12]}: unsigned")]
    )


def test_the_graph_never_reads_them(store: registry.GitStore) -> None:
    """A workflow that happens to be JSON at a digest-like path is still not a manifest."""
    docs = basic_scenario().docs
    result = store.add(
        [to_manifest(d) for d in docs],
        commit_meta(T0),
        extra_files={".github/ab/" + "ab" * 32 + ".json": b"{}", "README.md": b"x"},
    )
    assert result.commit is not None
    assert len(list(store.entries(result.commit))) == len(docs)
    snapshots = Snapshots(store.path)
    snapshots.load()
    assert len(snapshots.head.nodes) == len(docs)

"""`Snapshot.published`: what a commit first published on main (a commit page lists it), against lists
written out by hand for a small registry and against the embedded registry's documented imports."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from helpers import (
    EMBEDDED_REPO,
    TEST_TIME,
    commit_manifests,
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_project,
    make_protocol,
    make_run,
    make_workload,
    to_manifest,
)

from kernelindex import registry
from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

TODAY = dt.date(2026, 11, 30)
PUBLISHED = """query($at: String, $kind: ManifestKind, $first: Int, $after: String) {
  registry(at: $at) {
    publishedCounts { kind count }
    published(kind: $kind, first: $first, after: $after) {
      totalCount pageInfo { hasNextPage endCursor commit }
      edges { node { kind name digest } }
    }
  }
}"""


def _answer(snapshots: Snapshots, variables: dict[str, Any]) -> Any:
    context = Context(snapshots, StoredObjects(snapshots), "http://test", TODAY, snapshots.head)
    return asyncio.run(schema.execute(PUBLISHED, variable_values=variables, context_value=context, root_value=Query()))


def _data(snapshots: Snapshots, **variables: Any) -> dict[str, Any]:
    result = _answer(snapshots, {"first": 100, **variables})
    assert result.errors is None, result.errors
    return result.data["registry"]  # type: ignore[no-any-return]


def _walk(snapshots: Snapshots, at: str, first: int, kind: str | None = None) -> list[list[tuple[str, str]]]:
    """Every page of `published`, following endCursor: (kind, name) per edge, page by page."""
    pages: list[list[tuple[str, str]]] = []
    after = None
    while True:
        found = _data(snapshots, at=at, first=first, after=after, kind=kind)["published"]
        pages.append([(e["node"]["kind"], e["node"]["name"]) for e in found["edges"]])
        assert found["pageInfo"]["commit"] == at
        if not found["pageInfo"]["hasNextPage"]:
            return pages
        assert len(pages) < 50, "the walk does not end"
        after = found["pageInfo"]["endCursor"]


# A small registry, lists by hand -------------------------------------------------------------------

OPERATION = make_operation("op-rmsnorm")
WORKLOAD = make_workload(OPERATION, name="w-case")
PROJECT = make_project("zz-project")
IMPLEMENTATION = make_implementation(OPERATION, "m-kernel")
PROTOCOL = make_protocol("a-protocol")
ENVIRONMENT = make_environment("b200-box")
RUN_A = make_run(IMPLEMENTATION, WORKLOAD, PROTOCOL, ENVIRONMENT, 1000, name="run-a")
RUN_B = make_run(IMPLEMENTATION, WORKLOAD, PROTOCOL, ENVIRONMENT, 900, name="run-b")
RUN_C = make_run(IMPLEMENTATION, WORKLOAD, PROTOCOL, ENVIRONMENT, 800, name="run-c")


@pytest.fixture
def small(store: registry.GitStore) -> tuple[Snapshots, list[str]]:
    """main: the bindings and run-a; then run-b with run-a and the operation sent again; then a branch
    (not main) adding run-c. Returns the snapshots and [first, second, branch] commit ids."""
    first = commit_manifests(store, [OPERATION, WORKLOAD, PROJECT, IMPLEMENTATION, PROTOCOL, ENVIRONMENT, RUN_A])
    second = commit_manifests(store, [RUN_A, OPERATION, RUN_B], TEST_TIME + 60, subject="Add run-b")
    store.create_branch("refs/heads/pr", second)
    branch = store.add([to_manifest(RUN_C)], commit_meta(TEST_TIME + 120), ref="refs/heads/pr").commit
    assert branch is not None
    snapshots = Snapshots(store.path)
    snapshots.load()
    return snapshots, [first, second, branch]


def test_a_commit_lists_what_it_first_published_by_kind_then_name(small: tuple[Snapshots, list[str]]) -> None:
    snapshots, (first, _, _) = small
    found = _data(snapshots, at=first)
    # Kinds in alphabetical order, names within a kind: written out, not sorted by the code under test.
    assert [(e["node"]["kind"], e["node"]["name"]) for e in found["published"]["edges"]] == [
        ("BenchmarkProtocol", "a-protocol"),
        ("BenchmarkRun", "run-a"),
        ("ExecutionEnvironment", "b200-box"),
        ("ImplementationRevision", "m-kernel"),
        ("OperationSpec", "op-rmsnorm"),
        ("SoftwareProject", "zz-project"),
        ("WorkloadCase", "w-case"),
    ]
    assert found["published"]["edges"][1]["node"]["digest"] == digest_of(RUN_A)
    assert found["published"]["totalCount"] == 7
    assert found["publishedCounts"] == [
        {"kind": k, "count": 1}
        for k in (
            "BenchmarkProtocol",
            "BenchmarkRun",
            "ExecutionEnvironment",
            "ImplementationRevision",
            "OperationSpec",
            "SoftwareProject",
            "WorkloadCase",
        )
    ]


def test_manifests_sent_again_stay_with_the_commit_that_first_published_them(
    small: tuple[Snapshots, list[str]],
) -> None:
    snapshots, (_, second, _) = small
    found = _data(snapshots, at=second)
    assert [(e["node"]["kind"], e["node"]["name"]) for e in found["published"]["edges"]] == [("BenchmarkRun", "run-b")]
    assert found["publishedCounts"] == [{"kind": "BenchmarkRun", "count": 1}]
    assert _data(snapshots)["published"]["totalCount"] == 1  # the head is that commit


def test_a_commit_off_main_published_nothing(small: tuple[Snapshots, list[str]]) -> None:
    snapshots, (_, _, branch) = small
    found = _data(snapshots, at=branch)
    assert found["published"] == {
        "totalCount": 0,
        "pageInfo": {"hasNextPage": False, "endCursor": None, "commit": branch},
        "edges": [],
    }
    assert found["publishedCounts"] == []


@pytest.mark.parametrize(("first", "sizes"), [(1, [1] * 7), (2, [2, 2, 2, 1]), (6, [6, 1]), (7, [7]), (8, [7])])
def test_pages_walk_to_the_end_without_an_empty_last_page(
    small: tuple[Snapshots, list[str]], first: int, sizes: list[int]
) -> None:
    snapshots, (commit, _, _) = small
    pages = _walk(snapshots, commit, first)
    assert [len(page) for page in pages] == sizes
    assert len({item for page in pages for item in page}) == 7


def test_kind_narrows_and_an_unknown_kind_is_refused_with_its_code(small: tuple[Snapshots, list[str]]) -> None:
    snapshots, (commit, _, _) = small
    assert _walk(snapshots, commit, 5, kind="BenchmarkRun") == [[("BenchmarkRun", "run-a")]]
    assert _walk(snapshots, commit, 5, kind="Retraction") == [[]]
    result = _answer(snapshots, {"at": commit, "kind": "Run", "first": 5})  # kinds are an enum: refused early
    assert result.errors is not None and result.data is None
    assert "Value 'Run' does not exist in 'ManifestKind' enum" in result.errors[0].message
    assert (result.errors[0].extensions or {}).get("code") == "BAD_USER_INPUT"


# The embedded registry -----------------------------------------------------------------------------------

SEEDED = "e775d39b6768675ff8eb086da76420493425c1a4"  # main after the seed records (tests/test_embedded.py)
LIGER = "667fb1b393371afe7b1663540a73b8bc9ee41f9b"  # the Liger-Kernel import (docs/api.md)
# The digest prefixes the seed pages 000 and 003 show (data/seeds/*.txt, line 29); the seed commit adds
# those two runs and the two implementations the corpus lacks (tests/test_embedded.py, SEED_KINDS).
SEED_RUN_PREFIXES = {"7f6df4bbbdbeb0960fc8acc", "1b9cb94ec711c4943cd8d77"}
# data/sources/liger/README.md: 1,649 speed rows, one run each, and what they bind (tests/test_embedded.py).
LIGER_KINDS = {
    "BenchmarkProtocol": 3,
    "BenchmarkRun": 1649,
    "ExecutionEnvironment": 6,
    "ImplementationRevision": 63,
    "OperationSpec": 31,
    "SoftwareProject": 5,
    "WorkloadCase": 237,
}


@pytest.fixture(scope="module")
def embedded_snapshots() -> Snapshots:
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    return snapshots


@pytest.mark.slow
def test_the_seed_commit_published_the_two_seed_runs_and_their_implementations(
    embedded_snapshots: Snapshots,
) -> None:
    found = _data(embedded_snapshots, at=SEEDED)
    assert found["publishedCounts"] == [
        {"kind": "BenchmarkRun", "count": 2},
        {"kind": "ImplementationRevision", "count": 2},
    ]
    runs = [e["node"]["digest"] for e in found["published"]["edges"] if e["node"]["kind"] == "BenchmarkRun"]
    assert {digest.removeprefix("sha256:")[:23] for digest in runs} == SEED_RUN_PREFIXES


@pytest.mark.slow
def test_the_liger_commit_published_what_its_csv_binds(embedded_snapshots: Snapshots) -> None:
    found = _data(embedded_snapshots, at=LIGER, first=0)
    assert {c["kind"]: c["count"] for c in found["publishedCounts"]} == LIGER_KINDS
    assert found["published"]["totalCount"] == sum(LIGER_KINDS.values()) == 1994
    pages = _walk(embedded_snapshots, LIGER, 100, kind="BenchmarkRun")
    assert [len(page) for page in pages] == [100] * 16 + [49]
    names = [name for page in pages for _, name in page]
    assert len(set(names)) == 1649 and names == sorted(names)

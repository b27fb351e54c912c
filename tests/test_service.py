"""The query service (api/service/queries.py): the one way every edge runs GraphQL, and the one "commit of main" check.

A real registry of two commits on main and one on a branch, with fixed signatures; the expected commit ids
come from git (the store), never from the service."""

from __future__ import annotations

import datetime as dt
import json

import anyio
import pygit2
import pytest
from helpers import TEST_TIME, basic_scenario, commit_manifests, digest_of, make_run

from kernelindex import registry
from kernelindex.core.context import StoredObjects
from kernelindex.core.previews import Previews
from kernelindex.registry.snapshots import Snapshots
from kernelindex.service.queries import Answer, NotPublished, QueryService


def _branch(store: registry.GitStore, parent: str) -> str:
    s = basic_scenario()
    doc = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 100, name="pr-run")
    repo = pygit2.Repository(str(store.git_dir))
    manifest = registry.load_manifest(json.dumps(doc).encode(), "pr.json")
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(parent).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(manifest.path, repo.create_blob(manifest.stored_bytes()), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", TEST_TIME + 100, 0)
    return str(
        repo.create_commit("refs/heads/pr", person, person, "Add\n", index.write_tree(repo), [pygit2.Oid(hex=parent)])
    )


@pytest.fixture
def registry_of_three(store: registry.GitStore) -> tuple[QueryService, list[str]]:
    s = basic_scenario()
    first = commit_manifests(store, s.docs[:-1])
    second = commit_manifests(store, s.docs[-1:], TEST_TIME + 60)
    branch = _branch(store, second)
    snapshots = Snapshots(store.path)
    snapshots.load()
    service = QueryService(snapshots, StoredObjects(snapshots), "", previews=Previews(snapshots))
    return service, [first, second, branch]


def _answer(service: QueryService, document: str, variables: dict[str, object] | None = None) -> Answer:
    return anyio.run(service.answer, document, variables)


def _pinned(service: QueryService, rev: str) -> str:
    return anyio.run(service.pinned, rev)


def test_pinned_names_commits_of_the_served_history(registry_of_three: tuple[QueryService, list[str]]) -> None:
    service, (first, second, _) = registry_of_three
    assert _pinned(service, second) == second  # the served head
    assert _pinned(service, first) == first  # an older commit of main
    assert _pinned(service, first[:12]) == first  # a unique prefix: its full id
    assert _pinned(service, "main") == second  # a branch name: the commit it names


def test_pinned_refuses_a_commit_off_main_and_an_unknown_one(registry_of_three: tuple[QueryService, list[str]]) -> None:
    service, (_, _, branch) = registry_of_three
    with pytest.raises(NotPublished) as off:
        _pinned(service, branch)
    assert off.value.commit == branch
    with pytest.raises(NotPublished):
        _pinned(service, "pr")  # the branch by name: the same commit
    with pytest.raises(registry.RevisionNotFound):
        _pinned(service, "0" * 40)
    with pytest.raises(registry.RevisionNotFound):
        _pinned(service, "no-such-branch")


def test_pinned_without_previews_reads_the_history_itself(registry_of_three: tuple[QueryService, list[str]]) -> None:
    served, (first, _, branch) = registry_of_three
    service = QueryService(served.snapshots, served.objects, "")  # as the CLI makes it: no previews
    assert _pinned(service, first) == first
    with pytest.raises(NotPublished):
        _pinned(service, branch)


def test_an_answer_pinned_to_a_published_commit_is_immutable(registry_of_three: tuple[QueryService, list[str]]) -> None:
    service, (first, second, branch) = registry_of_three
    document = "query($at: String) { registry(at: $at) { commit { id } } }"
    for at in (first, second):
        answer = _answer(service, document, {"at": at})
        assert (answer.immutable, answer.cacheable, answer.errors) == (True, True, [])
        assert answer.data == {"registry": {"commit": {"id": at}}}
    head = _answer(service, document)  # the moving head
    assert (head.immutable, head.cacheable) == (False, True)
    by_name = _answer(service, document, {"at": "main"})  # a name may move: never cached
    assert (by_name.immutable, by_name.cacheable) == (False, False)
    preview = _answer(service, document, {"at": branch})  # off main: main may still change it
    assert (preview.immutable, preview.unpublished) == (False, True)


def test_the_answer_says_which_commits_answered(registry_of_three: tuple[QueryService, list[str]]) -> None:
    service, (first, second, _) = registry_of_three
    answer = _answer(service, "query($at: String) { registry(at: $at) { commit { id } } }", {"at": first})
    body = json.loads(answer.body)
    assert body["extensions"]["registry"]["commit"] == second
    assert [p["commit"] for p in body["extensions"]["registry"]["pinned"]] == [first]
    assert list(body) == ["data", "extensions"]


def test_a_request_error_has_no_data_and_is_never_cached(registry_of_three: tuple[QueryService, list[str]]) -> None:
    service, _ = registry_of_three
    answer = _answer(service, "{ run(id: ")
    assert (answer.request_error, answer.cacheable, answer.data) == (True, False, None)
    assert answer.codes == ["GRAPHQL_PARSE_FAILED"]
    assert list(json.loads(answer.body)) == ["errors", "extensions"]
    unknown = anyio.run(lambda: service.answer("query A { registry { commit { id } } }", operation="B"))
    assert (unknown.request_error, unknown.codes) == (True, ["OPERATION_RESOLUTION_FAILURE"])


def test_a_field_error_keeps_the_data_and_its_code(registry_of_three: tuple[QueryService, list[str]]) -> None:
    service, _ = registry_of_three
    run = digest_of(basic_scenario().runs[0])
    answer = _answer(
        service, 'query($id: String!) { run(id: $id) { name } registry(at: "nope") { commit { id } } }', {"id": run}
    )
    assert answer.request_error is False
    assert answer.data == {"run": {"name": "run-a1"}, "registry": None}
    assert answer.codes == ["REVISION_NOT_FOUND"]
    assert answer.messages == "revision not found: 'nope': no such commit, branch or tag"
    assert (answer.cacheable, answer.immutable) == (True, False)


def test_the_readers_date_is_the_services(registry_of_three: tuple[QueryService, list[str]]) -> None:
    served, _ = registry_of_three
    dated = QueryService(served.snapshots, served.objects, "https://r.example", today=lambda: dt.date(2026, 11, 30))
    run = digest_of(basic_scenario().runs[0])
    document = "query($id: String!) { run(id: $id) { citation } }"
    assert str(_answer(dated, document, {"id": run}).data).endswith("Accessed 2026-11-30.'}}")
    assert "Accessed" not in str(_answer(served, document, {"id": run}).data)  # a server has no date of its own


def test_a_manifests_fact_is_made_once_from_its_stored_document(store: registry.GitStore) -> None:
    s = basic_scenario()
    commit_manifests(store, s.docs)
    snapshots = Snapshots(store.path)
    snapshots.load()
    objects = StoredObjects(snapshots, parsed_bytes=0, facts=4)
    oids = sorted({node.oid for node in snapshots.head.nodes.values()})[:6]
    made: list[str] = []

    def name(document: dict[str, object]) -> str:
        made.append(str(document["kind"]))
        return str(document["metadata"]["name"])  # type: ignore[index]

    def refused(document: dict[str, object]) -> str:
        raise KeyError("spec")

    expected = [json.loads(store.read_blob(oid))["metadata"]["name"] for oid in oids]
    assert [objects.fact(oid, name) for oid in oids[:2]] * 2 == expected[:2] * 2
    assert len(made) == 2  # once a blob, though no parsed document is kept
    assert [objects.fact(oid, name) for oid in oids] == expected
    assert len(made) == 6
    assert objects.fact(oids[5], name) == expected[5] and len(made) == 6  # kept: the newest
    assert objects.fact(oids[0], name) == expected[0] and len(made) == 7  # dropped with the oldest half
    for _ in range(2):
        with pytest.raises(KeyError):
            objects.fact(oids[1], refused)  # nothing is kept of a fact that could not be made

"""The server on a registry that changes while it runs: pinning, refresh, validation of new heads,
unreachable commits, the warm cache, and hostile requests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from helpers import EMBEDDED_REPO, basic_scenario, commit_manifests, digest_of, make_run
from server import Running, serve

from kernelindex import registry
from kernelindex.registry.graphcache import cache_path
from kernelindex.registry.lazymap import LazyMap

RUN_QUERY = (
    "query($at: String, $id: String!) { registry(at: $at) { commit { id } run(id: $id) { rank primary { value } } } }"
)


def _faster_run(value: int, name: str) -> dict[str, object]:
    s = basic_scenario()
    return make_run(
        s.implementations[1], s.workload, s.protocol, s.environment, value, "2026-09-01T00:00:00Z", name=name
    )


def test_a_pinned_query_keeps_its_answer_after_main_moves(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    first = commit_manifests(store, scenario.docs)
    target = digest_of(scenario.runs[1])
    with serve(store.path) as api:
        before = api.graphql(RUN_QUERY, {"at": first, "id": target}).json()["data"]["registry"]
        second = commit_manifests(store, [_faster_run(5000, "run-fast")], when=1_700_003_600)
        assert api.client.post("/hooks/refresh").json()["serving"] == second
        after_head = api.graphql(RUN_QUERY, {"id": target}).json()["data"]["registry"]
        pinned = api.graphql(RUN_QUERY, {"at": first, "id": target}).json()["data"]["registry"]
        pinned_by_prefix = api.graphql(RUN_QUERY, {"at": first[:12], "id": target}).json()["data"]["registry"]
    assert (
        before
        == pinned
        == pinned_by_prefix
        == {"commit": {"id": first}, "run": {"rank": 1, "primary": {"value": 7900.0}}}
    )
    assert after_head == {"commit": {"id": second}, "run": {"rank": 2, "primary": {"value": 7900.0}}}


def test_unknown_and_unreachable_commits_are_clear_errors(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    head = commit_manifests(store, scenario.docs)
    repo = pygit2.Repository(str(store.git_dir))
    signature = pygit2.Signature("Fork", "fork@example.com", 1_700_000_000, 0)
    # An object a fork could push without any branch: same tree, no ref reaches it.
    tree = repo.revparse_single(head).peel(pygit2.Tree).id
    orphan = str(repo.create_commit(None, signature, signature, "injected\n", tree, [pygit2.Oid(hex=head)]))
    with serve(store.path) as api:
        for at, reason in (
            (orphan, "not reachable"),
            ("f" * 40, "revision not found"),
            ("no-such-branch", "revision not found"),
        ):
            body = api.graphql(RUN_QUERY, {"at": at, "id": digest_of(scenario.runs[0])}).json()
            assert body["data"] == {"registry": None}
            assert (
                body["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
                and reason in body["errors"][0]["message"]
            )
            assert body["extensions"]["registry"]["commit"] == head
        assert api.client.get(f"/at/{orphan}/manifests/{digest_of(scenario.runs[0])}").status_code == 404


def test_a_branch_previews_unpublished_runs(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    main = commit_manifests(store, scenario.docs)
    repo = pygit2.Repository(str(store.git_dir))
    extra = registry.load_manifest(json.dumps(_faster_run(100, "pr-run")).encode(), "pr-run.json")
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(main).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(extra.path, repo.create_blob(extra.stored_bytes()), pygit2.enums.FileMode.BLOB))
    signature = pygit2.Signature("Contributor", "c@example.com", 1_700_050_000, 0)
    repo.create_commit(
        "refs/heads/pr-1",
        signature,
        signature,
        "Add a run\n\nSource: community\n",
        index.write_tree(repo),
        [pygit2.Oid(hex=main)],
    )
    query = '{ registry(at: "pr-1") { run(id: "pr-run") { eligible ineligibilityReasons rank publishedAt provenance { commit { id } } } } }'
    with serve(store.path) as api:
        body = api.graphql(query).json()
    assert body["data"]["registry"]["run"] == {
        "eligible": False,
        "ineligibilityReasons": ["UNPUBLISHED"],
        "rank": None,
        "publishedAt": None,
        "provenance": None,
    }


def test_new_commits_are_served_without_restart_and_only_the_change_is_rebuilt(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    commit_manifests(store, scenario.docs)
    from helpers import make_environment, make_implementation, make_operation, make_protocol, make_workload

    op = make_operation("softmax-live", family="softmax")
    other = [
        op,
        make_workload(op, tokens=64),
        make_implementation(op, "live-impl"),
        make_protocol("live-protocol"),
        make_environment("live-env", product="NVIDIA H100", architecture="sm_90"),
    ]
    other.append(make_run(other[2], other[1], other[3], other[4], 900, name="live-run"))
    commit_manifests(store, other, when=1_700_001_000)
    with serve(store.path, poll_seconds=0.1) as api:
        old = api.service.snapshots.head
        new_head = commit_manifests(store, [_faster_run(5000, "run-polled")], when=1_700_003_600)
        deadline = time.monotonic() + 30
        while api.service.snapshots.head.commit != new_head:
            assert time.monotonic() < deadline, "the poller never picked up the new head"
            time.sleep(0.05)
        new = api.service.snapshots.head
        body = api.graphql('{ run(id: "run-polled") { rank } }').json()
    assert body["data"]["run"]["rank"] == 1 and body["extensions"]["registry"]["commit"] == new_head
    untouched = old.facts[digest_of(other[-1])].cohort
    assert untouched is not None and new.cohorts[untouched] is old.cohorts[untouched]  # shared, not rebuilt
    changed = new.facts[digest_of(scenario.runs[0])].cohort
    assert changed is not None and new.cohorts[changed] is not old.cohorts[changed]
    assert all(new.nodes[d] is old.nodes[d] for d in old.nodes)


def test_a_head_that_fails_validation_is_not_served(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    good = commit_manifests(store, scenario.docs)
    repo = pygit2.Repository(str(store.git_dir))
    target = registry.load_manifest(json.dumps(scenario.runs[0]).encode(), "run.json")
    tampered = target.stored_bytes().replace(b'"passed"', b'"timeout"')
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(good).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(target.path, repo.create_blob(tampered), pygit2.enums.FileMode.BLOB))
    signature = pygit2.Signature("Mallory", "m@example.com", 1_700_009_000, 0)
    with serve(store.path) as api:
        bad = str(
            repo.create_commit(
                "refs/heads/main", signature, signature, "edit\n", index.write_tree(repo), [pygit2.Oid(hex=good)]
            )
        )
        refreshed = api.client.post("/hooks/refresh")
        health = api.client.get("/healthz").json()
        answer = api.graphql('{ commit { id } run(id: "run-a1") { status } }').json()
    assert refreshed.status_code == 409
    assert health["serving"] == good and health["main"] == bad and health["status"] == "degraded"
    assert "modified" in health["reason"] and target.path in health["reason"]
    assert answer["data"] == {"commit": {"id": good}, "run": {"status": "PASSED"}}


def test_a_refresh_hook_with_a_secret_wants_it(store: registry.GitStore) -> None:
    commit_manifests(store, basic_scenario().docs)
    # Without the ref watcher: it would serve the new commit on its own, racing the refused hooks below.
    with serve(store.path, hook_secret="s3cret", watch=False) as api:
        second = commit_manifests(store, [_faster_run(5000, "run-hooked")], when=1_700_003_600)
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "s3cret"}):
            refused = api.client.post("/hooks/refresh", headers=headers)
            assert refused.status_code == 401
            assert refused.json()["errors"][0]["extensions"]["code"] == "UNAUTHORIZED"
        assert api.client.get("/healthz").json()["serving"] != second  # nothing moved
        accepted = api.client.post("/hooks/refresh", headers={"authorization": "Bearer s3cret"})
        assert accepted.status_code == 200 and accepted.json()["serving"] == second


def test_the_warm_cache_is_used_and_ignored_when_stale(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    head = commit_manifests(store, scenario.docs)
    cache = cache_path(store.path)
    with serve(store.path, graph_cache=True) as api:
        assert api.graphql('{ run(id: "run-a1") { rank } }').json()["data"]["run"]["rank"] == 2
    assert cache.exists()
    with serve(store.path, graph_cache=True) as api:
        assert api.service.snapshots.status.serving == head
        assert api.graphql('{ run(id: "run-a1") { rank } }').json()["data"]["run"]["rank"] == 2
        for thread in threading.enumerate():
            if thread.name == "prepare-graph":
                thread.join(timeout=60)
        # Started warm, the server skips the ranking pass but indexes the fan-out folders for its refreshes.
        folder = f"benchmark-runs/{digest_of(scenario.runs[0])[7:9]}"
        listed = [entry.digest for entry in store.entries(head) if entry.path.startswith(folder + "/")]
        assert api.service.snapshots.head.fan_out(folder) == listed
    cache.write_bytes(b"not a cache")
    with serve(store.path, graph_cache=True) as api:
        assert api.graphql('{ run(id: "run-a1") { rank } }').json()["data"]["run"]["rank"] == 2
    newer = commit_manifests(store, [_faster_run(5000, "run-after-cache")], when=1_700_003_600)
    with serve(store.path, graph_cache=True) as api:  # the cache describes an older head: moved forward
        assert api.service.snapshots.status.serving == newer
        assert api.graphql('{ run(id: "run-a1") { rank } }').json()["data"]["run"]["rank"] == 3


def test_a_warm_start_decodes_the_cached_graph_in_the_background(store: registry.GitStore) -> None:
    """A warm start serves at once from the cache file, decoding a bucket as a request first reads it; in the
    background it decodes the rest, so that first-time answers do not pay for it."""
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path, graph_cache=True) as api:
        assert api.graphql('{ run(id: "run-a1") { rank } }').json()["data"]["run"]["rank"] == 2
    with serve(store.path, graph_cache=True) as api:
        graph, publication = api.service.snapshots.head, api.service.snapshots.publication
        assert publication is not None
        maps = [graph.nodes, graph.facts, graph.cohorts, graph.names, publication.first]
        assert all(isinstance(m, LazyMap) for m in maps)  # served from the cache file
        deadline = time.monotonic() + 60
        while not all(m.complete for m in maps if isinstance(m, LazyMap)):
            assert time.monotonic() < deadline, "the warm-started graph was not decoded in the background"
            time.sleep(0.01)
        assert api.graphql('{ run(id: "run-a1") { rank } }').json()["data"]["run"]["rank"] == 2


def test_an_empty_registry_reports_why_it_serves_nothing(store: registry.GitStore) -> None:
    with serve(store.path) as api:
        health = api.client.get("/healthz")
        answer = api.graphql("{ commit { id } }")
    assert health.status_code == 503 and "empty" in health.json()["reason"]
    assert answer.status_code == 503


# Abuse ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded_api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _deep(levels: int) -> str:
    inner = "digest"
    for _ in range(levels // 2):
        inner = f"leader {{ cohort {{ {inner} }} }}"
    return f'{{ run(id: "sol-submission-16043") {{ {inner} }} }}'


@pytest.mark.parametrize(
    ("name", "request_kwargs", "status", "needle"),
    [
        ("40 levels deep", {"json": {"query": _deep(40)}}, 400, "exceeds maximum operation depth"),
        (
            "an alias flood",
            {"json": {"query": "{ " + " ".join(f"a{i}: commit {{ id }}" for i in range(200)) + " }"}},
            400,
            "aliases",
        ),
        ("a 1 MB query", {"json": {"query": "{ commit { id } }" + " " * 1_000_000}}, 413, "over"),
        ("first: 100000", {"json": {"query": "{ runs(first: 100000) { totalCount } }"}}, 200, "between 0 and 100"),
        (
            "a malformed body",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            400,
            "not valid JSON",
        ),
        ("no query", {"json": {"variables": {}}}, 400, "no query"),
        ("a syntax error", {"json": {"query": "{ commit { id "}}, 400, "Syntax Error"),
        ("too many tokens", {"json": {"query": "{ commit { " + "id " * 5000 + "} }"}}, 400, "token"),
        ("variables not an object", {"json": {"query": "{ commit { id } }", "variables": [1]}}, 400, "variables"),
        ("a negative page", {"json": {"query": "{ records(first: -1) { totalCount } }"}}, 200, "between 0 and 100"),
        (
            "a forged cursor",
            {"json": {"query": '{ records(after: "bm9wZTo1") { totalCount } }'}},
            200,
            "another snapshot",
        ),
    ],
)
def test_hostile_requests_are_refused_and_the_server_keeps_serving(
    embedded_api: Running, name: str, request_kwargs: dict[str, object], status: int, needle: str
) -> None:
    # A client of the GraphQL-over-HTTP media type: request errors are 400 (the draft says so).
    headers = {"accept": "application/graphql-response+json", **request_kwargs.get("headers", {})}  # type: ignore[dict-item]
    response = embedded_api.client.post("/graphql", **{**request_kwargs, "headers": headers})  # type: ignore[arg-type]
    assert response.status_code == status, (name, response.text[:300])
    assert needle.lower() in response.text.lower(), (name, response.text[:300])
    assert (
        embedded_api.graphql("{ commit { id } }").json()["data"]["commit"]["id"]
        == embedded_api.service.snapshots.head.commit
    )


def test_unexpected_errors_are_masked(embedded_api: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(oid: str) -> object:
        raise RuntimeError("secret internals: /etc/passwd")

    monkeypatch.setattr(embedded_api.service.objects, "get", broken)
    body = embedded_api.graphql('{ run(id: "sol-submission-16043") { name manifest } }').json()
    assert body["errors"] == [
        {
            "message": "Unexpected error.",
            "locations": [{"line": 1, "column": 42}],
            "path": ["run", "manifest"],
            "extensions": {"code": "INTERNAL_SERVER_ERROR"},
        }
    ]
    assert body["data"] == {"run": None} or body["data"]["run"]["name"] == "sol-submission-16043"
    assert "secret" not in json.dumps(body)


def test_the_sdl_snapshot_is_current() -> None:
    from kernelindex.schema.root import schema

    snapshot = Path(__file__).with_name("schema.graphql").read_text()
    assert schema.as_str() + "\n" == snapshot, "the API changed: regenerate tests/schema.graphql and review the diff"

"""What changed since a commit, end to end: the `changes` field of GraphQL, the JSON Feed at
`/feeds/changes.json` and the `/feed` page, on a real server over the governed registry (tests/governed.py:
signed lifecycle facts, whose lists are written out by hand there), on a registry of 21 commits (the feed's
page of 20 at its boundary) and on the embedded registry's six commits (counted from the corpus export's
own columns, the seed files and the Liger CSV's documented counts: tests/test_changes.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from governed import START, Governed, build_governed
from helpers import EMBEDDED_REPO, basic_scenario, commit_meta, make_operation, make_run, to_manifest
from server import Running, serve
from signing import Key, commit_raw, stored
from test_changes import CORPUS_KINDS, EMBEDDED_COMMITS, LIGER_KINDS, SEED_KINDS, _export_counts_by_source

from kernelindex import registry
from kernelindex.http.json_feed import FEED_ITEMS
from kernelindex.service.read_documents import CHANGES
from kernelindex.web.feed_page import CHANGES_PAGE, MANIFESTS_SHOWN

HTML = {"accept": "text/html"}
DOCUMENT = """
query($at: String, $since: String, $first: Int, $after: String, $last: Int, $before: String) {
  registry(at: $at) {
    changes(since: $since, first: $first, after: $after, last: $last, before: $before) {
      totalCount pageInfo { hasNextPage hasPreviousPage endCursor startCursor commit }
      edges { cursor node {
        id position committedAt commit { id } source { slug }
        publishedCount publishedCounts { kind count }
        published(first: 100) { totalCount edges { node { kind digest } } }
        runs: published(kind: BenchmarkRun, first: 1) { totalCount edges { node { digest } } }
        retracted { runDigest reason run { digest } retraction { digest } }
        superseded { runDigest byDigest reason by { digest } supersession { digest reason honoured } }
        verified { runDigest runner rerun { digest } verification { digest } }
        ignored { kind digest }
        moved { totalCount edges { node { cause run { digest } previousRun { digest } } } }
      } }
    }
  }
}
"""


@dataclass(frozen=True)
class Site:
    running: Running
    governed: Governed

    def changes(self, **variables: Any) -> dict[str, Any]:
        answer = self.running.graphql(DOCUMENT, variables).json()
        assert "errors" not in answer, answer
        found: dict[str, Any] = answer["data"]["registry"]["changes"]
        return found

    def error(self, **variables: Any) -> str:
        answer = self.running.graphql(DOCUMENT, variables).json()
        return str(answer["errors"][0]["extensions"]["code"])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Key]) -> Iterator[Site]:
    path = tmp_path_factory.mktemp("governed") / "manifests.git"
    governed = build_governed(registry.GitStore.init(path), keys["alice"])
    with serve(path) as running:
        yield Site(running, governed)


def _nodes(found: dict[str, Any]) -> list[dict[str, Any]]:
    return [edge["node"] for edge in found["edges"]]


# The governed registry, by hand ------------------------------------------------------------------------


def test_each_commit_newest_first_with_what_it_published_by_kind(site: Site) -> None:
    found = site.changes(first=10)
    g = site.governed
    nodes = _nodes(found)
    assert found["totalCount"] == 4 and not found["pageInfo"]["hasNextPage"]
    assert [n["commit"]["id"] for n in nodes] == list(reversed(g.commits))
    assert [n["position"] for n in nodes] == [3, 2, 1, 0]
    assert [n["committedAt"] for n in nodes] == [
        "2026-09-21T14:18:20Z",
        "2026-09-21T14:16:40Z",
        "2026-09-21T14:15:00Z",
        "2026-09-21T14:13:20Z",
    ]  # START + 300, 200, 100, 0
    assert START == 1_790_000_000
    assert [n["source"]["slug"] for n in nodes] == ["governed"] * 4
    assert [{k["kind"]: k["count"] for k in n["publishedCounts"]} for n in nodes] == [
        {"BenchmarkRun": 2, "Supersession": 1, "Verification": 1},
        {"Retraction": 1},
        {"BenchmarkRun": 1, "Retraction": 1},
        {
            "BenchmarkProtocol": 1,
            "BenchmarkRun": 3,
            "ExecutionEnvironment": 1,
            "ImplementationRevision": 2,
            "OperationSpec": 1,
            "WorkloadCase": 1,
        },
    ]
    assert [n["publishedCount"] for n in nodes] == [4, 1, 2, 9]
    for node in nodes:  # the paged list holds exactly what the counts say, kind by kind
        kinds = Counter(edge["node"]["kind"] for edge in node["published"]["edges"])
        assert kinds == {k["kind"]: k["count"] for k in node["publishedCounts"]}
        assert node["published"]["totalCount"] == node["publishedCount"]
    runs = g.runs
    c3, _, _, c0 = nodes
    assert [e["node"]["digest"] for e in c0["published"]["edges"] if e["node"]["kind"] == "BenchmarkRun"] == [
        runs["a1"],
        runs["a2"],
        runs["b1"],
    ]  # by name within a kind
    assert c3["runs"] == {"totalCount": 2, "edges": [{"node": {"digest": runs["d1"]}}]}  # `kind` narrows


def test_lifecycle_facts_that_count_and_those_that_do_not(site: Site) -> None:
    c3, c2, c1, c0 = _nodes(site.changes(first=10))
    runs, overlays = site.governed.runs, site.governed.overlays
    assert c2["retracted"] == [
        {
            "runDigest": runs["c1"],
            "reason": "clock drift",
            "run": {"digest": runs["c1"]},
            "retraction": {"digest": overlays["retraction"]},
        }
    ]
    assert c3["superseded"] == [
        {
            "runDigest": runs["b1"],
            "byDigest": runs["d1"],
            "reason": "wrong protocol",
            "by": {"digest": runs["d1"]},
            "supersession": {"digest": overlays["supersession"], "reason": "wrong protocol", "honoured": True},
        }
    ]
    assert c3["verified"] == [
        {
            "runDigest": runs["a2"],
            "runner": "registry-runner",
            "rerun": {"digest": runs["e1"]},
            "verification": {"digest": overlays["verification"]},
        }
    ]
    # C1's retraction of a1 was published unsigned: listed apart, never as a fact.
    assert c1["retracted"] == [] and c1["ignored"] == [
        {"kind": "Retraction", "digest": overlays["unsigned_retraction"]}
    ]
    assert c0["ignored"] == c2["ignored"] == c3["ignored"] == []


def test_the_records_each_commit_moved(site: Site) -> None:
    c3, c2, c1, c0 = _nodes(site.changes(first=10))
    names = {digest: name for name, digest in site.governed.runs.items()}

    def events(node: dict[str, Any]) -> list[tuple[str, str | None, str]]:
        return [
            (
                names[e["node"]["run"]["digest"]],
                names[e["node"]["previousRun"]["digest"]] if e["node"]["previousRun"] else None,
                e["node"]["cause"],
            )
            for e in node["moved"]["edges"]
        ]

    assert events(c0) == [("a1", None, "NEW_RUN"), ("a2", "a1", "NEW_RUN")]
    assert events(c1) == [("c1", "a2", "NEW_RUN")]
    assert events(c2) == [("a2", "c1", "RETRACTION")]  # the retraction handed the record back
    assert events(c3) == [] and c3["moved"]["totalCount"] == 0


def test_pages_by_cursor_both_ways_and_since(site: Site) -> None:
    g = site.governed
    seen: list[str] = []
    after = None
    while True:
        page = site.changes(first=1, after=after)
        seen.extend(n["commit"]["id"] for n in _nodes(page))
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == list(reversed(g.commits))
    backwards = site.changes(last=2)
    assert [n["position"] for n in _nodes(backwards)] == [1, 0] and backwards["pageInfo"]["hasPreviousPage"]
    since = site.changes(since=g.commits[1])
    assert [n["commit"]["id"] for n in _nodes(since)] == [g.commits[3], g.commits[2]] and since["totalCount"] == 2
    assert site.changes(since=g.commits[1][:12])["totalCount"] == 2  # a unique prefix names it too
    assert site.changes(since=g.commits[3]) == {
        "totalCount": 0,
        "pageInfo": {
            "hasNextPage": False,
            "hasPreviousPage": False,
            "endCursor": None,
            "startCursor": None,
            "commit": g.commits[3],
        },
        "edges": [],
    }
    pinned = site.changes(at=g.commits[1])  # a snapshot sees its own past only
    assert [n["position"] for n in _nodes(pinned)] == [1, 0]
    assert site.error(at=g.commits[1], since=g.commits[2]) == "REVISION_NOT_FOUND"  # later than the snapshot
    assert site.error(since="0" * 40) == "REVISION_NOT_FOUND"
    count = "query($first: Int) { changes(first: $first) { totalCount edges { node { position } } } }"
    assert site.running.graphql(count, {"first": 100}).json()["data"]["changes"]["totalCount"] == 4  # at the limit
    too_many = site.running.graphql(count, {"first": 101}).json()  # one past
    assert too_many["errors"][0]["extensions"]["code"] == "PAGE_SIZE_ERROR"


def test_a_commits_changes_are_a_node(site: Site) -> None:
    node = _nodes(site.changes(first=1))[0]
    again = site.running.graphql(
        "query($id: ID!) { node(id: $id) { ... on CommitChanges { position publishedCount } } }", {"id": node["id"]}
    ).json()
    assert again["data"]["node"] == {"position": 3, "publishedCount": 4}


def test_the_json_feed(site: Site) -> None:
    g = site.governed
    response = site.running.client.get("/feeds/changes.json")
    assert response.status_code == 200 and response.headers["content-type"] == "application/feed+json"
    assert response.headers["cache-control"] == "public, max-age=60"
    feed = response.json()
    assert feed["version"] == "https://jsonfeed.org/version/1.1" and feed["title"]
    assert feed["feed_url"] == "/feeds/changes.json" and feed["home_page_url"] == "/feed"
    assert "next_url" not in feed
    items = feed["items"]
    assert [item["id"] for item in items] == list(reversed(g.commits))
    for item in items:  # what JSON Feed requires of an item, and the dates it knows
        assert item["id"] and (item.get("content_text") or item.get("content_html"))
        assert item["url"] == f"/commits/{item['id']}" and item["date_published"].endswith("Z")
    newest = items[0]["_kernelindex"]
    assert newest["published"] == {"total": 4, "byKind": {"BenchmarkRun": 2, "Supersession": 1, "Verification": 1}}
    assert newest["superseded"] == [
        {
            "run": g.runs["b1"],
            "by": g.runs["d1"],
            "reason": "wrong protocol",
            "supersession": g.overlays["supersession"],
        }
    ]
    assert items[1]["_kernelindex"]["retracted"][0]["reason"] == "clock drift"
    assert items[1]["_kernelindex"]["signer"] == "alice@example.com"
    assert items[2]["_kernelindex"]["ignored"] == [g.overlays["unsigned_retraction"]]
    assert items[2]["_kernelindex"]["signer"] is None  # C1 is unsigned
    assert items[3]["_kernelindex"]["moved"]["total"] == 2
    assert items[0]["content_text"] == (
        "Published 4 manifests (2 BenchmarkRun, 1 Supersession, 1 Verification); superseded 1 run; verified 1 run."
    )
    since = site.running.client.get("/feeds/changes.json", params={"since": g.commits[1]}).json()
    assert [item["id"] for item in since["items"]] == [g.commits[3], g.commits[2]]
    assert since["feed_url"] == f"/feeds/changes.json?since={g.commits[1]}"
    tag = response.headers["etag"]
    assert site.running.client.get("/feeds/changes.json", headers={"if-none-match": tag}).status_code == 304


def test_the_json_feed_pinned_and_its_refusals(site: Site) -> None:
    g = site.governed
    client = site.running.client
    pinned = client.get(f"/at/{g.commits[2]}/feeds/changes.json")
    assert pinned.status_code == 200 and pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert [item["id"] for item in pinned.json()["items"]] == list(reversed(g.commits[:3]))
    short = client.get(f"/at/{g.commits[2][:12]}/feeds/changes.json", params={"since": g.commits[0]})
    assert short.status_code == 307
    assert short.headers["location"] == f"/at/{g.commits[2]}/feeds/changes.json?since={g.commits[0]}"
    bad = client.get("/feeds/changes.json", params={"since": "HEAD"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    unknown = client.get("/feeds/changes.json", params={"since": "0" * 40})
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    nowhere = client.get(f"/at/{'0' * 40}/feeds/changes.json")
    assert nowhere.status_code == 404 and nowhere.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    cursor = client.get("/feeds/changes.json", params={"after": "not a cursor!"})
    assert cursor.status_code == 400
    # A branch's commit is a preview, not the publication record: no feed or feed page pins it.
    store = registry.GitStore(site.running.service.settings.repo_path)
    scenario = basic_scenario()
    run = make_run(*scenario.implementations[:1], scenario.workload, scenario.protocol, scenario.environment, 6000)
    path, data = stored(run)
    branch = commit_raw(store, g.commits[3], {path: data}, ref="refs/heads/preview", when=START + 400)
    refused = client.get(f"/at/{branch}/feeds/changes.json")
    assert refused.status_code == 404 and refused.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    assert client.get(f"/at/{branch}/feed", headers=HTML).status_code == 404


def test_the_feed_page(site: Site) -> None:
    g = site.governed
    client = site.running.client
    html = client.get("/feed", headers=HTML)
    assert html.status_code == 200
    text = html.text
    for commit in g.commits:
        assert f'href="/commits/{commit}"' in text
    assert "clock drift" in text and "wrong protocol" in text and "Not counted (no maintainer signed it)" in text
    assert 'href="/feeds/changes.json"' in text
    since = client.get("/feed", params={"since": g.commits[2]}, headers=HTML).text
    assert f'href="/commits/{g.commits[3]}"' in since and f'href="/commits/{g.commits[1]}"' not in since
    variables: dict[str, object] = {
        "at": None,
        "since": g.commits[2],
        "first": CHANGES_PAGE,
        "after": None,
        "published": MANIFESTS_SHOWN,
        "moved": MANIFESTS_SHOWN,
    }
    twin = client.get("/feed.json", params={"since": g.commits[2]}).json()
    assert twin == site.running.graphql(CHANGES, variables).json()  # the page's JSON is the API's answer
    assert client.get("/feed", params={"since": "nope"}, headers=HTML).status_code == 400
    assert client.get("/feed", params={"since": "0" * 40}, headers=HTML).status_code == 400
    assert client.get(f"/at/{g.commits[1]}/feed", headers=HTML).status_code == 200


# The feed's page of 20, at its boundary ---------------------------------------------------------------


def _commits(path: Path, count: int) -> list[str]:
    store = registry.GitStore.init(path)
    made = []
    for i in range(count):
        result = store.add([to_manifest(make_operation(f"op-{i:02d}"))], commit_meta(START + i))
        assert result.commit is not None
        made.append(result.commit)
    return made


@pytest.mark.parametrize(("count", "pages"), [(FEED_ITEMS, 1), (FEED_ITEMS + 1, 2)])
def test_the_json_feed_pages_on_past_twenty_commits(tmp_path: Path, count: int, pages: int) -> None:
    made = _commits(tmp_path / "manifests.git", count)
    with serve(tmp_path / "manifests.git", base_url="https://registry.example") as running:
        url: str | None = "https://registry.example/feeds/changes.json"
        ids: list[str] = []
        fetched = 0
        while url is not None:
            assert url.startswith("https://registry.example/")  # absolute under a base URL
            feed = running.client.get(url.removeprefix("https://registry.example")).json()
            ids.extend(item["id"] for item in feed["items"])
            fetched += 1
            url = feed.get("next_url")
            assert feed["items"][0]["url"].startswith("https://registry.example/commits/")
        assert ids == list(reversed(made)) and fetched == pages


# The embedded registry's six commits --------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


@pytest.mark.slow
def test_the_embedded_registrys_six_commits(embedded: Running) -> None:
    answer = embedded.graphql(DOCUMENT, {"first": 6}).json()
    nodes = _nodes(answer["data"]["registry"]["changes"])
    assert [(n["commit"]["id"], n["source"]["slug"]) for n in reversed(nodes)] == EMBEDDED_COMMITS
    runs, serving, events = _export_counts_by_source()
    entries = list(reversed(nodes))
    together: Counter[str] = Counter()
    for entry, (_, slug) in zip(entries[:4], EMBEDDED_COMMITS, strict=False):
        counts = {k["kind"]: k["count"] for k in entry["publishedCounts"]}
        assert counts.get("BenchmarkRun", 0) == runs[slug] and counts.get("ServingRun", 0) == serving[slug]
        assert entry["moved"]["totalCount"] == events[slug]
        together.update(counts)
    assert together == CORPUS_KINDS
    assert {k["kind"]: k["count"] for k in entries[4]["publishedCounts"]} == SEED_KINDS
    assert {k["kind"]: k["count"] for k in entries[5]["publishedCounts"]} == LIGER_KINDS
    assert all(not (e["retracted"] or e["superseded"] or e["verified"] or e["ignored"]) for e in entries)
    feed = embedded.client.get("/feeds/changes.json").json()
    assert [item["id"] for item in feed["items"]] == [commit for commit, _ in reversed(EMBEDDED_COMMITS)]
    assert feed["items"][0]["_kernelindex"]["published"]["byKind"] == LIGER_KINDS
    page = embedded.client.get("/feed", headers=HTML)
    assert page.status_code == 200 and "1,649 runs" in page.text

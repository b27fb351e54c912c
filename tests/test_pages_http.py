"""The pages over HTTP on a small registry: one URL for two audiences, pinning and caching, links
that never come from the Host header, refusals that say where and why, badges, KernelIndex's ids."""

from __future__ import annotations

import gzip
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import brotli
import pygit2
import pytest
import zstandard
from helpers import basic_scenario, commit_manifests, make_implementation, make_operation, make_run
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.web import documents
from kernelindex.web.render import ORIGIN

COPY = {"copy": True, "copyBase": ORIGIN}

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # Chromium's
JSON = {"accept": "application/json"}


@dataclass(frozen=True)
class Site:
    client: TestClient
    main: str
    branch: str  # a commit of a pull-request branch, not on main
    runs: dict[str, registry.Digest]  # name -> digest
    cohort: str


def _branch_commit(store: registry.GitStore, parent: str, doc: dict[str, Any]) -> str:
    repo = pygit2.Repository(str(store.git_dir))
    manifest = registry.load_manifest(json.dumps(doc).encode(), "pr.json")
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(parent).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(manifest.path, repo.create_blob(manifest.stored_bytes()), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", 1_700_050_000, 0)
    tree = index.write_tree(repo)
    return str(repo.create_commit("refs/heads/pr", person, person, "Add a run\n", tree, [pygit2.Oid(hex=parent)]))


def _site(store: registry.GitStore, **settings: Any) -> Iterator[Site]:
    s = basic_scenario()
    ci = make_run(
        s.implementations[1],
        s.workload,
        s.protocol,
        s.environment,
        8500,
        "2026-08-04T12:00:00Z",
        confidence95=(8300, 8700),
        name="run-b2",
    )
    main = commit_manifests(store, [*s.docs, ci])
    branch = _branch_commit(
        store, main, make_run(s.implementations[1], s.workload, s.protocol, s.environment, 100, name="pr-run")
    )
    names = {"run-a1": s.runs[0], "run-a2": s.runs[1], "run-b1": s.runs[2], "run-b2": ci}
    digests = {
        name: registry.load_manifest(json.dumps(doc).encode(), f"{name}.json").digest for name, doc in names.items()
    }
    with TestClient(
        create_app(Settings(repo_path=store.git_dir, poll_seconds=3600, graph_cache=False, **settings))
    ) as client:
        cohort = client.post("/graphql", json={"query": '{ run(id: "run-a1") { cohort { key } } }'}).json()
        yield Site(client, main, branch, digests, cohort["data"]["run"]["cohort"]["key"])


@pytest.fixture
def site(store: registry.GitStore) -> Iterator[Site]:
    yield from _site(store)


def _text(html: str) -> str:
    """What a reader reads: tags dropped, entities decoded, whitespace collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


# One URL, two audiences ---------------------------------------------------------------------------


def test_a_run_permalink_is_a_page_for_browsers_and_the_dossier_for_clients(site: Site) -> None:
    url = f"/at/{site.main}/runs/{site.runs['run-a1']}"
    page = site.client.get(url, headers=HTML)
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert "Rank 2 in its comparison group · strict exact comparison · observed 2026-08-01" in _text(page.text)
    assert "8.12 µs" in _text(page.text)  # 8,120 ns: two decimals below 10 µs, as KernelIndex's toFixed
    dossier = site.client.get(url, headers=JSON)
    assert dossier.headers["content-type"] == "application/json"
    assert dossier.json()["run"]["digest"] == site.runs["run-a1"]
    assert site.client.get(url).content == dossier.content  # no Accept, or */*: the API's answer, as before pages
    twin = site.client.get(url + ".json", headers=HTML)
    assert twin.content == dossier.content  # the .json twin is the same bytes, whatever the browser asks
    for response in (page, dossier, twin):
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "accept" in page.headers["vary"].lower().split(", ")


def test_a_page_as_json_is_the_apis_answer_to_the_pages_document(site: Site) -> None:
    for path, document, variables in (
        (
            f"/cohorts/{site.cohort}",
            documents.LEADERBOARD,
            # No base URL here: the page also asks for the citations its copy buttons copy (kernelindex.web.render).
            {"at": None, "key": site.cohort, "first": 50, "after": None, "minTrust": None, **COPY},
        ),
        ("/records", documents.RECORDS, {"at": None, "first": 25, "after": None}),
        ("/operations/rmsnorm-h4096", documents.OPERATION, {"at": None, "id": "rmsnorm-h4096"}),
        (f"/commits/{site.main}", documents.COMMIT, {"at": site.main, "first": 50, "after": None}),
    ):
        api = site.client.post("/graphql", json={"query": document, "variables": variables}).json()
        negotiated = site.client.get(path, headers=JSON).json()
        twin = site.client.get(path + ".json", headers=HTML).json()
        assert negotiated == twin == api, path


def test_every_page_links_the_query_behind_it_which_answers_what_the_page_shows(site: Site) -> None:
    for path in (
        f"/cohorts/{site.cohort}",
        "/records",
        "/compare?run=run-a1&run=run-b1",
        "/implementations/kernel-a",
    ):
        html = site.client.get(path, headers=HTML).text
        link = re.search(r'<a href="([^"]+)">Open it in GraphiQL</a>', html)
        assert link is not None, path
        query = parse_qs(urlsplit(unescape(link.group(1))).query)
        answer = site.client.get(
            "/graphql", params={"query": query["query"][0], "variables": query["variables"][0]}
        ).json()
        json_path = path.replace("?", ".json?") if "?" in path else path + ".json"
        assert answer["data"] == site.client.get(json_path).json()["data"], path


def test_every_page_type_has_a_description_and_an_icon(site: Site) -> None:
    """What search engines show under a result, and the icon a tab and a bookmark show (Lighthouse's SEO
    audit): every page, its 404s too, says what it is, and `/favicon.ico` is the registry's own icon."""
    paths = (
        "/",
        f"/at/{site.main}/runs/{site.runs['run-a1']}",
        f"/cohorts/{site.cohort}",
        "/records",
        "/compare?run=run-a1&run=run-b1",
        "/search?q=rmsnorm",
        "/operations/rmsnorm-h4096",
        "/implementations/kernel-a",
        f"/commits/{site.main}",
        "/operations/no-such-operation",
    )
    for path in paths:
        html = site.client.get(path, headers=HTML).text
        found = re.findall(r'<meta name="description" content="([^"]*)">', html)
        assert len(found) == 1 and len(unescape(found[0])) >= 50, path
        assert '<link rel="icon" href="/favicon.ico" sizes="32x32">' in html, path
        assert '<link rel="icon" href="/static/icon.svg" type="image/svg+xml">' in html, path
    run = site.client.get(f"/at/{site.main}/runs/{site.runs['run-a1']}", headers=HTML).text
    description = unescape(re.findall(r'<meta name="description" content="([^"]*)">', run)[0])
    assert (
        description.startswith("Rank 2 of 4 in its comparison group · 8.12 µs median ")
        and " on NVIDIA B200" in description
    )
    icon = site.client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00" and icon.content[22:30] == b"\x89PNG\r\n\x1a\n"
    svg = site.client.get("/static/icon.svg")
    assert svg.status_code == 200 and svg.text.startswith("<svg")


# Pinning and caching ------------------------------------------------------------------------------


def test_head_pages_say_which_commit_and_link_to_pin_it(site: Site) -> None:
    page = site.client.get(f"/cohorts/{site.cohort}", headers=HTML)
    assert page.headers["cache-control"] == "public, max-age=0, must-revalidate"
    assert f"As of commit {site.main[:12]}" in _text(page.text)
    assert f'href="/at/{site.main}/cohorts/{site.cohort}">Pin this page</a>' in page.text
    pinned = site.client.get(f"/at/{site.main}/cohorts/{site.cohort}", headers=HTML)
    assert pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "this page never changes" in _text(pinned.text)
    again = site.client.get(
        f"/at/{site.main}/cohorts/{site.cohort}", headers={**HTML, "if-none-match": pinned.headers["etag"]}
    )
    assert again.status_code == 304


def test_a_commit_prefix_redirects_to_the_full_id_and_commits_off_main_are_refused(site: Site) -> None:
    moved = site.client.get(f"/at/{site.main[:10]}/records", headers=HTML, follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == f"/at/{site.main}/records"
    off_main = site.client.get(f"/at/{site.branch}/records", headers=HTML)
    assert off_main.status_code == 404 and f"{site.branch} is not a commit of main" in _text(off_main.text)
    as_json = site.client.get(f"/at/{site.branch}/records.json")
    assert as_json.status_code == 404 and as_json.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    run = site.client.get(f"/at/{site.branch}/runs/{site.runs['run-a1']}", headers=HTML)
    assert run.status_code == 404  # a permalink pins commits of main only (the API's rule, before the page)
    shown = site.client.get(f"/at/{site.main}/runs/{site.runs['run-a1']}", headers=HTML)
    again = site.client.get(f"/at/{site.main}/runs/{site.runs['run-a1']}", headers=HTML)  # from the page cache
    assert shown.status_code == again.status_code == 200 and shown.content == again.content
    prefix = site.client.get(f"/at/{site.main[:10]}/runs/{site.runs['run-a1']}", headers=HTML, follow_redirects=False)
    assert prefix.status_code == 307  # a cached page never answers for a URL that was not checked
    commit = site.client.get(f"/commits/{site.main[:8]}", follow_redirects=False, headers=HTML)
    assert commit.status_code == 307 and commit.headers["location"] == f"/commits/{site.main}"


def test_links_never_come_from_the_host_header(site: Site) -> None:
    hostile = {**HTML, "host": "evil.example", "x-forwarded-host": "evil.example", "forwarded": "host=evil.example"}
    for path in ("/", f"/at/{site.main}/runs/{site.runs['run-a1']}", f"/cohorts/{site.cohort}", "/records"):
        page = site.client.get(path, headers=hostile)
        assert page.status_code == 200 and "evil.example" not in page.text, path
        assert 'href="/' in page.text  # root-relative without a configured base URL


def test_with_a_base_url_links_are_absolute_under_it(store: registry.GitStore) -> None:
    for site in _site(store, base_url="https://registry.example.org/"):
        page = site.client.get(f"/at/{site.main}/runs/{site.runs['run-a1']}", headers=HTML).text
        assert 'href="https://registry.example.org/cohorts/' not in page  # a pinned page links pinned pages
        assert f'href="https://registry.example.org/at/{site.main}/cohorts/{site.cohort}"' in page
        assert 'href="https://registry.example.org/static/site.css"' in page
        assert re.search(r'(href|src)="/(?!/)', page) is None  # nothing root-relative left


# Pages and their refusals ----------------------------------------------------------------------------


def test_the_leaderboard_marks_intervals_ranks_and_the_trust_filter(site: Site) -> None:
    html = site.client.get(f"/cohorts/{site.cohort}", headers=HTML).text
    rows = re.findall(r"<tr(?: class=\"tied\")?>\s*<td class=\"num\">(\d+)", html)
    assert rows == ["1", "2", "3", "4"]  # 7.90, 8.12, 8.50 (CI 8.30-8.70), 9.00 µs: no tie
    assert re.findall(r'<td class="num">[^<]* to [^<]*</td>', html) == ['<td class="num">8,300 to 8,700 ns</td>']
    assert html.count('<td class="num">—</td>') == 3  # the three runs without an interval
    assert len(re.findall(r"<line x1=", html)) == 1  # only run-b2 reports an interval
    verified = site.client.get(f"/cohorts/{site.cohort}?minTrust=VERIFIED", headers=HTML).text
    assert "(0 entries at least verified" in _text(verified)
    bad = site.client.get(f"/cohorts/{site.cohort}?minTrust=GOLD", headers=HTML)
    assert (
        bad.status_code == 400
        and "minTrust: expected one of REPORTED, REPRODUCIBLE, VERIFIED, REPLICATED, not 'GOLD'" in _text(bad.text)
    )


@pytest.mark.parametrize(("accepted", "coding"), [("zstd", "zstd"), ("gzip", "gzip"), ("br", "br"), ("identity", None)])
def test_a_page_goes_out_in_the_coding_its_client_accepts(site: Site, accepted: str, coding: str | None) -> None:
    path = f"/cohorts/{site.cohort}"
    plain = site.client.get(path, headers={**HTML, "accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers and len(plain.content) >= 1024  # worth compressing
    pages = site.client.app.state.server.pages  # type: ignore[attr-defined]
    weighed = pages.bytes
    grown: list[int] = []
    for _ in range(2):  # made, then kept with the cached page
        with site.client.stream("GET", path, headers={**HTML, "accept-encoding": accepted}) as coded:
            raw = b"".join(coded.iter_raw())
            assert coded.headers.get("content-encoding") == coding
            assert {"accept", "accept-encoding"} <= {v.strip().lower() for v in coded.headers["vary"].split(",")}
            expected = plain.headers["etag"] if coding is None else plain.headers["etag"][:-1] + f'-{coding}"'
            assert coded.headers["etag"] == expected
            assert coded.headers["content-security-policy"] == plain.headers["content-security-policy"]
        decoded = {
            "zstd": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
            "gzip": gzip.decompress,
            "br": brotli.decompress,
            None: lambda b: b,
        }[coding](raw)
        assert decoded == plain.content
        assert coding is None or len(raw) < len(plain.content) // 3
        grown.append(pages.bytes - weighed)
    # The cache weighs what it keeps, once: the coded bytes and what keeping them holds (a few hundred bytes).
    assert grown[0] == grown[1] and (grown[0] == 0 if coding is None else len(raw) <= grown[0] <= len(raw) + 512)
    # Whichever coding the client holds, its entity tag names the page (the weak comparison).
    for held in (plain.headers["etag"], expected, f"W/{expected}"):
        again = site.client.get(path, headers={**HTML, "accept-encoding": accepted, "if-none-match": held})
        assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize(("count", "status"), [(1, 400), (2, 200), (8, 200), (9, 400)])
def test_compare_takes_two_to_eight_runs(site: Site, count: int, status: int) -> None:
    names = (["run-a1", "run-a2", "run-b1", "run-b2"] * 3)[:count]
    response = site.client.get("/compare?" + "&".join(f"run={n}" for n in names), headers=HTML)
    assert response.status_code == status
    if status == 400:
        assert f"compare takes 2 to 8 runs (?run=A&run=B), not {count}" in _text(response.text)


def test_unknown_things_are_404_pages_that_say_what_and_where(site: Site) -> None:
    for path, missing in (
        ("/cohorts/ffffffffffffffff", "no cohort ffffffffffffffff"),
        ("/operations/no-such-op", "no operation no-such-op"),
        ("/implementations/nope", "no implementation nope"),
        ("/projects/nope", "no project nope"),
        ("/sources/nope", "no runs from source 'nope'"),
    ):
        page = site.client.get(path, headers=HTML)
        assert page.status_code == 404 and f"{missing} at commit {site.main}" in _text(page.text), path
        body = site.client.get(path, headers=JSON).json()
        assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND", path
    assert site.client.get("/commits/not-hex", headers=HTML).status_code == 400


def test_the_home_page_for_browsers_and_the_index_for_clients(site: Site) -> None:
    index = site.client.get("/").json()
    assert index["graphql"] == "/graphql" and index["serving"] == site.main
    home = _text(site.client.get("/", headers=HTML).text)
    assert "4 runs" in home and "the newest observation is of 2026-08-04" in home
    assert site.client.get("/index.json").json()["data"]["registry"]["newest"]["totalCount"] == 4
    pinned = site.client.get(f"/at/{site.main}", headers=HTML)
    assert pinned.status_code == 200 and pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert f'href="/at/{site.main}/index.json"' in pinned.text
    assert site.client.get(f"/at/{site.main}/index.json").json()["data"]["registry"]["commit"]["id"] == site.main


def test_search_shows_how_the_query_was_read_and_what_it_matched(site: Site) -> None:
    page = _text(site.client.get("/search?q=gpu:zz99+tech:fast", headers=HTML).text)
    assert "tech:fast : 'tech:' is not searchable here" in page and "0 runs, most relevant first" in page
    variables = {"at": None, "q": "rmsnorm", "first": 50, "after": None, "cases": 5}
    api = site.client.post("/graphql", json={"query": documents.SEARCH, "variables": variables}).json()
    assert site.client.get("/search.json?q=rmsnorm").json() == api
    assert api["data"]["registry"]["search"]["runs"]["totalCount"] == 4  # every run of rmsnorm-h4096
    # The search limits of every edge (512 characters): the page answers as /graphql does.
    assert site.client.get("/search?q=" + "a" * 512, headers=HTML).status_code == 200
    too_long = site.client.get("/search?q=" + "a" * 513, headers=HTML)
    assert too_long.status_code == 400
    assert "SEARCH_TOO_LARGE" in too_long.text
    assert "a search query holds at most 512 characters (this one holds 513)" in _text(too_long.text)
    as_json = site.client.get("/search.json?q=" + "a" * 513).json()
    assert as_json["errors"][0]["extensions"]["code"] == "SEARCH_TOO_LARGE"


# Badges ------------------------------------------------------------------------------------------


def _badge_text(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_badges_say_rank_in_cohort_and_value(site: Site) -> None:
    run = site.client.get("/badges/runs/run-a2.svg")
    assert run.headers["content-type"] == "image/svg+xml"
    assert _badge_text(run.text) == ["kernelindex", "rank 1/4 · 7.90 µs"]
    impl = site.client.get("/badges/implementations/kernel-b.svg")
    assert _badge_text(impl.text) == ["kernel-b", "rank 3/4 · 8.50 µs"]  # its best: run-b2, not run-b1 (9.00 µs, 4th)
    assert _badge_text(site.client.get("/badges/runs/nope.svg").text) == ["kernelindex", "run not found"]
    pinned = site.client.get(f"/at/{site.main}/badges/runs/run-b1.svg")
    assert _badge_text(pinned.text) == ["kernelindex", "rank 4/4 · 9.00 µs"]


# KernelIndex's run ids -------------------------------------------------------------------------------


def test_kernelindex_run_ids_not_in_this_registry_are_404(site: Site) -> None:
    known_elsewhere = site.client.get("/runs/01a006c1-ddd8-7753-9af4-b12b0cc75772", follow_redirects=False)
    assert (
        known_elsewhere.status_code == 404
        and "is not in this registry" in known_elsewhere.json()["errors"][0]["message"]
    )
    unknown = site.client.get("/runs/00000000-0000-0000-0000-000000000000", follow_redirects=False)
    assert unknown.status_code == 404 and "no KernelIndex run" in unknown.json()["errors"][0]["message"]


def test_the_static_assets_are_ours(site: Site) -> None:
    css = site.client.get("/static/site.css")
    assert css.status_code == 200 and "http" not in re.sub(r"/\*.*?\*/", "", css.text, flags=re.S)
    assert site.client.get("/static/site.js").status_code == 200
    assert not Path(__file__).resolve().parent.parent.joinpath("web", "static", "fonts").exists()


# The commit page: what a commit published ------------------------------------------------------------


def test_the_commit_page_lists_what_the_commit_published_with_links_to_each(site: Site) -> None:
    html = site.client.get(f"/commits/{site.main}", headers=HTML).text
    text = _text(html)
    # basic_scenario's nine manifests and run-b2, counted by hand: 4 runs, 2 implementations, and one each.
    assert "10 manifests first published on main by this commit: 4 runs, 2 implementations" in text
    rows = re.findall(r"<tr><td>(\w+)</td><td><a href=\"([^\"]+)\">([^<]+)</a>", html)
    assert [(kind, name) for kind, _, name in rows] == [
        ("BenchmarkProtocol", "test-protocol"),
        ("BenchmarkRun", "run-a1"),
        ("BenchmarkRun", "run-a2"),
        ("BenchmarkRun", "run-b1"),
        ("BenchmarkRun", "run-b2"),
        ("ExecutionEnvironment", "test-b200"),
        ("ImplementationRevision", "kernel-a"),
        ("ImplementationRevision", "kernel-b"),
        ("OperationSpec", "Operation rmsnorm-h4096"),
        ("WorkloadCase", "rmsnorm-h4096-t2048"),
    ]
    links = {name: href for _, href, name in rows}
    assert links["run-a1"] == f"/at/{site.main}/runs/{site.runs['run-a1']}"
    for name, href in links.items():  # every link opens, pinned to this commit
        assert href.startswith(f"/at/{site.main}/"), name
        assert site.client.get(href, headers=HTML).status_code == 200, name
    assert 'rel="next"' not in html


@pytest.mark.parametrize(("count", "pages"), [(50, [50]), (51, [50, 1])])
def test_the_commit_page_pages_fifty_at_a_time(store: registry.GitStore, count: int, pages: list[int]) -> None:
    main = commit_manifests(store, [make_operation(f"op-{i:03d}", hidden=64 + i) for i in range(count)])
    with TestClient(create_app(Settings(repo_path=store.git_dir, poll_seconds=3600, graph_cache=False))) as client:
        seen: list[list[str]] = []
        url: str | None = f"/commits/{main}"
        while url is not None:
            html = client.get(url, headers=HTML).text
            seen.append(re.findall(r"<tr><td>OperationSpec</td><td><a [^>]+>Operation (op-\d+)</a>", html))
            found = re.search(r'rel="next" href="([^"]+)"', html)
            url = unescape(found.group(1)) if found else None
            assert len(seen) <= len(pages)
    assert [len(page) for page in seen] == pages
    assert [name for page in seen for name in page] == [f"op-{i:03d}" for i in range(count)]


def test_the_evidence_text_names_only_what_the_run_lacks(store: registry.GitStore) -> None:
    """REPRODUCIBLE needs public source and raw evidence: a run with neither is told both,
    a run with raw samples but a closed implementation only the source, and the reverse only the evidence."""
    s = basic_scenario()
    closed = make_implementation(s.operation, "kernel-closed", repository=None)
    runs = {
        "neither": make_run(closed, s.workload, s.protocol, s.environment, 1000, name="neither"),
        "samples-only": make_run(closed, s.workload, s.protocol, s.environment, 1001, raw_samples=True, name="samples"),
        "source-only": make_run(s.implementations[0], s.workload, s.protocol, s.environment, 1002, name="source"),
    }
    main = commit_manifests(store, [*s.docs, closed, *runs.values()])
    expected = {
        "neither": "Reproducible needs public source for its implementation and raw evidence with the run "
        "(raw samples or logs); verified needs",
        "samples-only": "Reproducible needs public source for its implementation; verified needs",
        "source-only": "Reproducible needs raw evidence with the run (raw samples or logs); verified needs",
    }
    with TestClient(create_app(Settings(repo_path=store.git_dir, poll_seconds=3600, graph_cache=False))) as client:
        for name, doc in runs.items():
            digest = registry.load_manifest(json.dumps(doc).encode(), "run.json").digest
            text = _text(client.get(f"/at/{main}/runs/{digest}", headers=HTML).text)
            assert "Reported: the source published the number" in text, name
            assert expected[name] in text, name


@pytest.mark.parametrize(("status", "expected"), [(200, 304), (404, 404)])
def test_only_a_page_that_would_be_200_is_not_modified(status: int, expected: int) -> None:
    """RFC 9110 section 15.4.5: 304 stands for a 200 the client holds; a kept error page is sent again."""
    from starlette.requests import Request

    from kernelindex.core.cache import Representation
    from kernelindex.http.responses import finish

    page = Representation(b"x" * 2048, "text/html; charset=utf-8", {"vary": "accept"}, status=status)
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "headers": [(b"accept-encoding", b"gzip"), (b"if-none-match", page.etag.encode())],
    }
    answer = finish(
        Request(scope), page.body, media_type=page.media_type, headers=page.headers, status=status, kept=page
    )
    assert answer.status_code == expected

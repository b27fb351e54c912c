"""The edges' defences over HTTP, against a real server on loopback: the security headers of every HTML, SVG
and JSON answer (their exact values read from docs/security.md), Vary and Cache-Control on every answer,
page-cache keys that cannot be poisoned, no redirect built from Host, searches held to the same limits at
every edge (and their work counted in passes over the index), /mcp's Origin and Host checks, and the
refresh hook's secret and coalescing. Each family adds its probes to the suite's abuse tally."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import EMBEDDED_REPO, basic_scenario, commit_manifests, make_operation
from probes import probe_all
from security_docs import documented_headers
from server import Running, serve

from kernelindex import registry
from kernelindex.core.settings import Settings
from kernelindex.registry import search
from kernelindex.registry.search import MAX_QUERY_CHARS, MAX_TERMS
from kernelindex.service.coalesce import Coalescer

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
JSON = {"accept": "application/json"}
MAIN = "667fb1b393371afe7b1663540a73b8bc9ee41f9b"
SEED = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"
SERVING = "sha256:01c6ab47eceddeb82079274a54b28f7f1e34e9c7de5f355dbe973f1e8683334f"
COHORT = "sha256:39d43c1992795178d10cba3e0981ac913d0242d5d34e9a9cd4ec9ed763039662"
SERVING_COHORT = "sha256:b47faeb4eecab1be28bc6c2dfff86e36d8714f160baa24f868c69785c807c9b3"
EVIL = "evil.example"

PAGES = {
    "home": "/",
    "run": f"/at/{MAIN}/runs/{SEED}",
    "leaderboard": f"/cohorts/{COHORT}",
    "records": "/records",
    "compare": f"/compare?run={SEED}&run=sol-submission-16043",
    "search": "/search?q=rmsnorm",
    "operation": "/operations/060-fused-attention-qk-matmul-scale-mask-softmax-backward",
    "implementation": "/implementations/sol-submission-6709",
    "project": "/projects/sol-user-recursive",
    "source": "/sources/sol-execbench",
    "commit": f"/commits/{MAIN}",
    "serving run": f"/at/{MAIN}/runs/{SERVING}",
    "serving cohort": f"/serving/cohorts/{SERVING_COHORT}",
    "an error page": "/operations/no-such-operation",
    "a 404 page": "/no/such/page",
}
BADGES = {
    "run badge": f"/badges/runs/{SEED}.svg",
    "implementation badge": "/badges/implementations/sol-submission-6709.svg",
}


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


@pytest.fixture(scope="module")
def documented() -> dict[str, dict[str, str]]:
    return documented_headers()


def _holds(headers: httpx.Headers, expected: dict[str, str]) -> str | None:
    wrong = {k: headers.get(k) for k, v in expected.items() if headers.get(k) != v}
    return None if not wrong else f"{wrong}"


# Security headers ------------------------------------------------------------------------------------


def test_every_page_answers_with_the_documented_headers(api: Running, documented: dict[str, dict[str, str]]) -> None:
    def case(name: str, path: str) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            response = api.client.get(path, headers=HTML)
            assert response.headers["content-type"].startswith("text/html"), (name, response.status_code)
            assert _holds(response.headers, documented["pages"]) is None, (
                name,
                _holds(response.headers, documented["pages"]),
            )
            return True

        return name, attack

    assert probe_all("headers: pages (HTML)", [case(n, p) for n, p in PAGES.items()]) == []


def test_pages_hold_no_inline_script_or_style(api: Running) -> None:
    for name, path in PAGES.items():
        page = api.client.get(path, headers=HTML).text
        assert not re.search(r"<script(?![^>]*\ssrc=)[^>]*>", page), name
        assert "<style" not in page and " style=" not in page and not re.search(r"\son[a-z]+=", page), name


def test_graphiql_answers_with_its_own_narrow_policy(api: Running, documented: dict[str, dict[str, str]]) -> None:
    page = api.client.get("/graphql", headers=HTML)
    assert page.headers["content-type"].startswith("text/html")
    assert _holds(page.headers, documented["graphiql"]) is None
    assert "<script>" not in page.text and "<style>" not in page.text  # everything it runs is a file it pins
    assert len(re.findall(r'integrity="sha384-', page.text)) == 8


def test_badges_are_sandboxed_and_run_nothing(api: Running, documented: dict[str, dict[str, str]]) -> None:
    def case(name: str, path: str) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            response = api.client.get(path)
            return (
                response.headers["content-type"] == "image/svg+xml"
                and _holds(response.headers, documented["svg"]) is None
            )

        return name, attack

    assert probe_all("headers: SVG badges", [case(n, p) for n, p in BADGES.items()]) == []


def test_every_other_answer_is_nosniff_and_loads_nothing(api: Running, documented: dict[str, dict[str, str]]) -> None:
    requests: dict[str, tuple[str, str, dict[str, Any]]] = {
        "graphql": ("POST", "/graphql", {"json": {"query": "{ commit { id } }"}}),
        "a page's JSON twin": ("GET", "/records.json", {}),
        "the index": ("GET", "/", {"headers": JSON}),
        "healthz": ("GET", "/healthz", {}),
        "a dossier": ("GET", f"/at/{MAIN}/runs/{SEED}", {"headers": JSON}),
        "a manifest": ("GET", f"/at/{MAIN}/manifests/{SEED}", {}),
        "an error": ("GET", "/at/nope/manifests/sha256:00", {}),
        "a feed": ("GET", "/feeds/records.atom", {}),
        "a framework's 405": ("POST", "/healthz", {}),
        "a static file": ("GET", "/static/site.css", {}),
    }

    def case(name: str) -> tuple[str, Callable[[], bool]]:
        method, path, kwargs = requests[name]

        def attack() -> bool:
            response = api.client.request(method, path, **kwargs)
            return _holds(response.headers, documented["other"]) is None

        return name, attack

    assert probe_all("headers: JSON and everything else", [case(n) for n in requests]) == []


# Caches: Vary, Cache-Control, keys -------------------------------------------------------------------


def test_every_answer_says_how_to_cache_it(api: Running) -> None:
    page = api.client.get("/records", headers=HTML)
    graphql = api.client.post("/graphql", json={"query": "{ commit { id } }"})
    requests: dict[str, tuple[str, str, dict[str, Any]]] = {
        "/ as JSON": ("GET", "/", {"headers": JSON}),
        "/ as HTML": ("GET", "/", {"headers": HTML}),
        "a 404 as JSON": ("GET", "/no/such/page", {"headers": JSON}),
        "a 404 page": ("GET", "/no/such/page", {"headers": HTML}),
        "a page's 304": ("GET", "/records", {"headers": {**HTML, "if-none-match": page.headers.get("etag", "")}}),
        "a GraphQL 304": (
            "POST",
            "/graphql",
            {"json": {"query": "{ commit { id } }"}, "headers": {"if-none-match": graphql.headers["etag"]}},
        ),
        "a head permalink's redirect": ("GET", f"/runs/{SEED}", {}),
        "a prefix's redirect": ("GET", f"/at/{MAIN[:12]}/records", {"headers": HTML}),
        "a trailing slash's redirect": ("GET", "/records/", {}),
        "a GraphQL refusal": (
            "POST",
            "/graphql",
            {"content": b"{nope", "headers": {"content-type": "application/json"}},
        ),
        "a 405": ("POST", "/healthz", {}),
        "a CORS preflight": (
            "OPTIONS",
            "/graphql",
            {"headers": {"origin": "https://app.example", "access-control-request-method": "POST"}},
        ),
        "the refresh hook": ("POST", "/hooks/refresh", {}),
        "a badge": ("GET", BADGES["run badge"], {}),
        "/mcp": (
            "POST",
            "/mcp",
            {
                "json": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                "headers": {"accept": "application/json, text/event-stream"},
            },
        ),
    }
    statuses = {"a page's 304": 304, "a GraphQL 304": 304}

    def case(name: str) -> tuple[str, Callable[[], bool]]:
        method, path, kwargs = requests[name]

        def attack() -> bool:
            response = api.client.request(method, path, follow_redirects=False, **kwargs)
            assert response.status_code == statuses.get(name, response.status_code), (name, response.status_code)
            return bool(response.headers.get("cache-control"))

        return name, attack

    assert probe_all("caches: Cache-Control on every answer", [case(n) for n in requests]) == []


def test_every_negotiated_answer_varies_on_accept(api: Running) -> None:
    both = {
        "/": "/",
        "a page": "/records",
        "a run's permalink": f"/at/{MAIN}/runs/{SEED}",
        "GraphiQL or GraphQL": "/graphql?query=%7Bcommit%7Bid%7D%7D",
        "an error page": "/operations/no-such-operation",
        "a 404": "/no/such/page",
    }

    def case(name: str) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            html = api.client.get(both[name], headers=HTML)
            data = api.client.get(both[name], headers={**JSON, "accept-encoding": "br"})
            assert html.headers["content-type"] != data.headers["content-type"], name  # negotiated indeed
            for response in (html, data):
                vary = {v.strip().lower() for v in response.headers.get("vary", "").split(",")}
                assert "accept" in vary, (name, response.headers.get("vary"))
                if response.headers.get("content-encoding"):
                    assert "accept-encoding" in vary, name
            return True

        return name, attack

    assert probe_all("caches: Vary on every negotiated answer", [case(n) for n in both]) == []


def test_a_page_cached_for_a_url_holds_nothing_another_url_sent(api: Running) -> None:
    poisoned = {
        "search": ("/search?q=rmsnorm&ref=POISON%22%3E", "/search?q=rmsnorm"),
        "leaderboard": (f"/cohorts/{COHORT}?minTrust=VERIFIED&x=POISON", f"/cohorts/{COHORT}?minTrust=VERIFIED"),
        "records": ("/records?utm=POISON", "/records"),
        "commit": (f"/commits/{MAIN}?POISON=1", f"/commits/{MAIN}"),
        "compare": (
            f"/compare?run={SEED}&run=sol-submission-16043&z=POISON",
            f"/compare?run={SEED}&run=sol-submission-16043",
        ),
        "operations": ("/operations?family=rmsnorm&x=POISON", "/operations?family=rmsnorm"),
        "projects": ("/projects?utm=POISON", "/projects"),
        "serving": ("/serving?direction=minimize&x=POISON", "/serving?direction=minimize"),
    }

    def case(name: str) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            first, clean = poisoned[name]
            sent = api.client.get(first, headers=HTML)
            after = api.client.get(clean, headers=HTML)
            assert sent.status_code == after.status_code == 200, name
            return "POISON" not in sent.text and "POISON" not in after.text and sent.text == after.text

        return name, attack

    assert probe_all("caches: page-cache keys", [case(n) for n in poisoned]) == []


# Redirects -------------------------------------------------------------------------------------------


TRAILING = {
    "/records/": "/records",
    "/graphql/": "/graphql",
    f"/runs/{SEED}/": f"/runs/{SEED}",
    "/runs/01a0032e-d57a-74d8-8b5c-15a3ea25ed78/": "/runs/01a0032e-d57a-74d8-8b5c-15a3ea25ed78",
    f"/at/{MAIN}/": f"/at/{MAIN}",
    "/search/?q=rmsnorm": "/search?q=rmsnorm",
    "///records//": "/records",
}


def test_no_redirect_is_built_from_the_host(api: Running) -> None:
    hostile_hosts = ({"host": EVIL}, {"host": f"{EVIL}:8443"}, {"x-forwarded-host": EVIL, "x-forwarded-proto": "https"})

    def case(path: str, headers: dict[str, str]) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            for method in ("GET", "POST", "HEAD"):
                # The whole URL: httpx would read a path of `//host` against its base URL as another host.
                response = api.client.request(method, api.url + path, headers=headers, follow_redirects=False)
                if path.split("?")[0].rstrip("/") == "/graphql" or method == "GET":
                    assert response.status_code == 308, (path, method, response.status_code)
                if response.status_code == 308:
                    assert response.headers["location"] == TRAILING[path], (path, response.headers["location"])
            return EVIL not in str(response.headers)

        return f"{path} {headers}", attack

    cases = [case(path, headers) for path in TRAILING for headers in hostile_hosts]
    # Other redirects the app makes, and a path that must not become a redirect to another site.
    others = {
        f"/runs/{SEED}": f"/at/{MAIN}/runs/{SEED}",
        f"/at/{MAIN[:12]}/records": f"/at/{MAIN}/records",
        f"/at/{MAIN[:12]}/feeds/records.atom": f"/at/{MAIN}/feeds/records.atom",
    }

    def other(path: str) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            response = api.client.get(path, headers={**HTML, "host": EVIL}, follow_redirects=False)
            return bool(response.headers.get("location") == others[path])

        return path, attack

    def elsewhere(path: str) -> tuple[str, Callable[[], bool]]:
        def attack() -> bool:
            response = api.client.get(api.url + path, follow_redirects=False)
            return response.status_code == 404 and "location" not in response.headers

        return path, attack

    cases += [other(path) for path in others]
    cases += [elsewhere(p) for p in ("//evil.example/", "//evil.example/records/", "/\\evil.example/", "/nope/")]
    assert probe_all("redirects: none built from Host", cases) == []


def test_a_configured_base_url_places_every_redirect(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path, base_url="https://registry.example") as running:
        response = running.client.get("/records/?after=x", headers={"host": EVIL}, follow_redirects=False)
        assert (response.status_code, response.headers["location"]) == (308, "https://registry.example/records?after=x")


# Search at every edge --------------------------------------------------------------------------------


def _words(count: int) -> str:
    return " ".join(f"w{i}" for i in range(count))


def _mcp_search(running: Running, query: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_catalog", "arguments": {"q": query}},
    }
    response = running.client.post("/mcp", json=body, headers={"accept": "application/json, text/event-stream"})
    result: dict[str, Any] = response.json()["result"]
    return result


def test_every_edge_refuses_a_search_past_its_limits_and_admits_one_at_them(api: Running) -> None:
    graphql = "query($q: String!) { search(query: $q, first: 1) { runs { totalCount } } }"
    sizes = {
        f"{MAX_TERMS} terms": (_words(MAX_TERMS), True),
        f"{MAX_TERMS + 1} terms": (_words(MAX_TERMS + 1), False),
        f"{MAX_QUERY_CHARS} characters": ("x" * MAX_QUERY_CHARS, True),
        f"{MAX_QUERY_CHARS + 1} characters": ("x" * (MAX_QUERY_CHARS + 1), False),
        "255 one-letter words": (" ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(255)), False),
    }

    def edges(query: str) -> dict[str, tuple[int, str | None]]:
        """(status, error code or None) of each edge for `query`."""
        page = api.client.get("/search", params={"q": query}, headers=HTML)
        twin = api.client.get("/search.json", params={"q": query})
        post = api.graphql(graphql, {"q": query})
        tool = _mcp_search(api, query)
        return {
            "page": (page.status_code, "SEARCH_TOO_LARGE" if "SEARCH_TOO_LARGE" in page.text else None),
            "json twin": (twin.status_code, _code(twin.json())),
            "graphql": (post.status_code, _code(post.json())),
            # The tool's own argument schema says 512 characters too: refused by the SDK with its own words.
            "mcp": (200, "SEARCH_TOO_LARGE" if tool.get("isError") and re.search(_TOO_LARGE, str(tool)) else None),
        }

    def case(name: str) -> tuple[str, Callable[[], bool]]:
        query, admitted = sizes[name]

        def attack() -> bool:
            found = edges(query)
            if admitted:
                return all(code is None for _, code in found.values()) and found["page"][0] == 200
            return all(code == "SEARCH_TOO_LARGE" for _, code in found.values()) and found["page"][0] == 400

        return name, attack

    assert probe_all("search: limits at every edge", [case(n) for n in sizes]) == []


_TOO_LARGE = r"SEARCH_TOO_LARGE|at most 512 characters"


def _code(body: dict[str, Any]) -> str | None:
    errors = body.get("errors") or []
    return str(errors[0]["extensions"]["code"]) if errors else None


def test_a_search_does_the_work_its_cost_says_and_a_refused_one_none(api: Running) -> None:
    """Counted in passes over the index (kernelindex.registry.search.passes), never in time."""
    head = api.service.snapshots.head
    document = "query($q: String!) { search(query: $q, first: 1) { runs { totalCount } } }"
    api.graphql(document, {"q": "warm"})  # the index is built
    for terms, admitted in ((MAX_TERMS, True), (MAX_TERMS + 1, False), (3, True)):
        query = " ".join(["rmsnorm", "fused", "attention", *(f"w{i}" for i in range(terms - 3))])
        before = search.passes(head)
        body = api.graphql(document, {"q": query}).json()
        done = search.passes(head) - before
        if admitted:
            cost = body["extensions"]["cost"]["requested"]
            assert done <= 1 + terms  # what search_cost said it would cost at most
            assert cost >= 500 * (1 + terms)  # and the query's cost counted every pass
        else:
            assert done == 0 and "data" not in body  # refused before any work
    # A search of each page of a batch counts against the batch's one limit.
    batch = [{"query": document, "variables": {"q": _words(MAX_TERMS)}}] * 2
    answers = api.client.post("/graphql", json=batch).json()
    assert "data" in answers[0] and _code(answers[1]) == "QUERY_TOO_COMPLEX"


def test_operations_search_is_bounded_like_search(api: Running) -> None:
    document = "query($q: String) { operations(search: $q, first: 1) { totalCount } }"
    assert _code(api.graphql(document, {"q": _words(MAX_TERMS)}).json()) is None
    assert _code(api.graphql(document, {"q": _words(MAX_TERMS + 1)}).json()) == "SEARCH_TOO_LARGE"
    assert _code(api.graphql(document, {"q": "y" * (MAX_QUERY_CHARS + 1)}).json()) == "SEARCH_TOO_LARGE"
    cost = api.graphql(document, {"q": "attention"}).json()["extensions"]["cost"]["requested"]
    assert cost == api.graphql(document, {"q": None}).json()["extensions"]["cost"]["requested"] + 2 * 500


def test_a_refused_operation_of_a_batch_spends_nothing_of_its_budget(api: Running) -> None:
    costly = "{ a: runs(first: 100) { edges { node { name cohort { entries(first: 100) { edges { node { run { name } } } } } } } } }"
    cheap = "{ commit { id } }"
    answers = api.client.post("/graphql", json=[{"query": costly}, {"query": cheap}]).json()
    assert _code(answers[0]) == "QUERY_TOO_COMPLEX"
    assert answers[1]["extensions"]["cost"] == {"requested": 2, "limit": 25_000}  # all of it was left


def test_trusted_documents_hold_every_edge(tmp_path: Path) -> None:
    """With an allow-list, the pages and the MCP tools run their own (fixed) documents and nothing else, the
    search limits still hold there, and /graphql runs the list and the server's own documents only."""
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    listed = "{ commit { id } }"
    trusted = tmp_path / "trusted.json"
    trusted.write_text(json.dumps([listed]))
    with serve(store.path, trusted_documents_path=trusted) as running:
        assert running.graphql(listed).status_code == 200
        assert running.graphql("{ commit { shortId } }").status_code == 403
        from kernelindex.web.documents import SEARCH

        own = running.graphql(SEARCH, {"q": "kernel", "first": 5, "cases": 5})
        assert own.status_code == 200 and _code(own.json()) is None
        assert running.client.get("/search", params={"q": "kernel"}, headers=HTML).status_code == 200
        assert running.client.get("/search", params={"q": _words(MAX_TERMS + 1)}, headers=HTML).status_code == 400
        assert not _mcp_search(running, "rmsnorm").get("isError")
        refused = running.service.queries.answer("{ commit { shortId } }")
        assert _code(json.loads(asyncio.run(refused).body)) == "PERSISTED_QUERY_NOT_ALLOWED"


def test_a_new_head_is_prepared_for_search_in_the_background(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path, prepare_search=True) as running:
        for thread in threading.enumerate():
            if thread.name in ("prepare-graph", "prepare-search"):
                thread.join(timeout=60)
        head = running.service.snapshots.head

        def unread(digest: str) -> dict[str, Any]:
            raise AssertionError(f"the first facet search read {digest}")

        query = search.parse_query("dtype:bf16 layout:row_major framework:torch cuda:12 license:mit installable:true")
        search.search_runs(head, query, unread)  # every facet answered from what was prepared


# /mcp: Origin and Host -------------------------------------------------------------------------------


def _mcp(running: Running, headers: dict[str, str]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return running.client.post("/mcp", json=body, headers={"accept": "application/json, text/event-stream", **headers})


def test_mcp_answers_only_allowed_origins_and_hosts(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path, base_url="https://registry.example", mcp_origins=("http://localhost:6274",)) as running:
        port = running.url.rsplit(":", 1)[1]
        allowed = {
            "no Origin (an MCP client)": {},
            "the base URL's origin": {"origin": "https://registry.example"},
            "an origin of the allow-list": {"origin": "http://localhost:6274"},
            "a loopback Host": {"host": f"localhost:{port}"},
        }
        refused = {
            "a foreign origin": ({"origin": "http://attacker.example"}, "ORIGIN_NOT_ALLOWED"),
            "the base URL's host on another scheme": ({"origin": "http://registry.example"}, "ORIGIN_NOT_ALLOWED"),
            "an origin of null": ({"origin": "null"}, "ORIGIN_NOT_ALLOWED"),
            "a rebound Host": ({"host": "attacker.example"}, "HOST_NOT_ALLOWED"),
            "a rebound Host and its Origin": (
                {"host": f"attacker.example:{port}", "origin": f"http://attacker.example:{port}"},
                "ORIGIN_NOT_ALLOWED",
            ),
        }

        def admitted(name: str) -> tuple[str, Callable[[], bool]]:
            return name, lambda: _mcp(running, allowed[name]).status_code == 200

        def turned_away(name: str) -> tuple[str, Callable[[], bool]]:
            def attack() -> bool:
                headers, code = refused[name]
                response = _mcp(running, headers)
                return response.status_code == 403 and _code(response.json()) == code

            return name, attack

        cases = [admitted(n) for n in allowed] + [turned_away(n) for n in refused]
        assert probe_all("/mcp: Origin and Host", cases) == []


def test_mcp_answers_any_host_when_none_is_configured(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path) as running:
        assert _mcp(running, {"host": "registry.internal"}).status_code == 200
        assert _mcp(running, {"origin": "http://attacker.example"}).status_code == 403
    with serve(store.path, mcp_origins=("*",)) as running:
        assert _mcp(running, {"origin": "http://attacker.example"}).status_code == 200


def test_the_mcp_allow_lists_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "KERNELINDEX_MCP_ORIGINS": "https://a.example, http://localhost:6274,",
            "KERNELINDEX_ALLOWED_HOSTS": "r.internal",
        }
    )
    assert settings.mcp_origins == ("https://a.example", "http://localhost:6274")
    assert settings.allowed_hosts == ("r.internal",)


# The refresh hook ------------------------------------------------------------------------------------


def test_the_hook_needs_its_secret_beyond_loopback(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    cases = []
    with serve(store.path, host="0.0.0.0") as running:  # listening beyond loopback, no secret: off
        response = running.client.post("/hooks/refresh")
        cases.append(
            ("no secret, public", lambda: response.status_code == 403 and _code(response.json()) == "HOOK_DISABLED")
        )
    with serve(store.path, host="0.0.0.0", hook_secret="s3cret") as running:
        without = running.client.post("/hooks/refresh")
        wrong = running.client.post("/hooks/refresh", headers={"authorization": "Bearer nope"})
        right = running.client.post("/hooks/refresh", headers={"authorization": "Bearer s3cret"})
        cases.append(("no token", lambda: without.status_code == 401))
        cases.append(("a wrong token", lambda: wrong.status_code == 401))
        cases.append(("the token", lambda: right.status_code == 200))
    with serve(store.path) as running:  # loopback only, called from loopback: no secret needed
        local = running.client.post("/hooks/refresh")
        cases.append(("loopback", lambda: local.status_code == 200))
    assert probe_all("refresh hook: who may call it", cases) == []


def test_a_burst_runs_one_refresh_in_flight_and_queues_one() -> None:
    """The coalescing itself, with a job that waits to be released: the counts are exact."""

    async def burst() -> tuple[Counter[str], int, int]:  # statuses, runs, whether a later call ran
        release = asyncio.Event()
        started = asyncio.Event()

        async def job() -> str:
            started.set()
            await release.wait()
            return "refreshed"

        hook: Coalescer[str] = Coalescer(job)
        first = asyncio.create_task(hook.submit())
        await started.wait()
        outcomes = await asyncio.gather(*(hook.submit() for _ in range(49)))
        release.set()
        statuses: Counter[str] = Counter([(await first).status, *(o.status for o in outcomes)])
        for _ in range(100):  # the queued run, in a task of its own
            await asyncio.sleep(0)
        after = await hook.submit()  # idle again: a new call runs at once
        return statuses, hook.runs, int(after.status == "ran")

    statuses, runs, ran_again = asyncio.run(burst())
    assert statuses == Counter({"ran": 1, "queued": 1, "pending": 48})
    assert runs == 3 and ran_again == 1  # the one, the queued one, and the call after


def test_a_burst_of_hook_calls_costs_at_most_two_refreshes(tmp_path: Path) -> None:
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit_manifests(store, basic_scenario().docs)
    with serve(store.path, watch=False) as running:
        # A new head with work to judge (the refresh validates what it adds): the burst lands during it.
        head = commit_manifests(store, [make_operation(f"op-{i}", hidden=1024 + i) for i in range(300)], subject="More")

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(
                base_url=running.url, timeout=60, limits=httpx.Limits(max_connections=40)
            ) as client:
                return await asyncio.gather(*(client.post("/hooks/refresh") for _ in range(30)))

        answers = asyncio.run(burst())
        statuses = Counter(a.status_code for a in answers)
        kinds = Counter(a.json().get("status", "ran") for a in answers)
        health = running.client.get("/healthz").json()
    assert set(statuses) <= {200, 202}
    assert health["refreshHook"]["runs"] == kinds["ran"] + kinds["queued"] <= 3
    assert kinds["already pending"] >= 27
    assert health["serving"] == head  # the burst's purpose held: the new head is served
    assert probe_all("refresh hook: bursts", [("30 calls at once", lambda: health["refreshHook"]["runs"] <= 3)]) == []

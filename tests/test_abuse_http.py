"""Hostile clients against a real server on loopback (the API's part): Host poisoning,
every error code, each limit at its boundary, previews that fail the pull-request check, and
immutability that holds. Each family prints what it tried: tried, handled cleanly, failed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pygit2
import pytest
from helpers import EMBEDDED_REPO, basic_scenario, commit_manifests, make_retraction, make_run
from server import Running, serve

from kernelindex import registry

GRAPHQL_RESPONSE = "application/graphql-response+json"

SEED_000 = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"
EVIL = "evil.example"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=0, must-revalidate"
Probe = Callable[[], str | None]  # None when the server handled it cleanly, else what went wrong


@dataclass
class Tally:
    rows: dict[str, list[int]] = field(default_factory=dict)

    def run(self, family: str, probes: dict[str, Probe]) -> list[str]:
        """Run each probe; count it; return the failures ("name: why")."""
        row = self.rows.setdefault(family, [0, 0, 0])
        failures = []
        for name, probe in probes.items():
            try:
                problem = probe()
            except (AssertionError, KeyError, TypeError, ValueError, httpx.HTTPError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            row[0] += 1
            row[1 if problem is None else 2] += 1
            if problem is not None:
                failures.append(f"{name}: {problem}")
        return failures


@pytest.fixture(scope="module")
def tally(request: pytest.FixtureRequest) -> Iterator[Tally]:
    found = Tally()
    yield found
    lines = ["", "abuse over HTTP | tried | handled cleanly | failed"]
    lines += [f"{family} | {tried} | {clean} | {failed}" for family, (tried, clean, failed) in found.rows.items()]
    _report(request, lines)


def _report(request: pytest.FixtureRequest, lines: list[str]) -> None:
    """Write lines to the terminal even under -q and output capture."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        return
    with capture.global_and_fixture_disabled():
        for line in lines:
            reporter.write_line(line)


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _errors(response: httpx.Response) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = response.json().get("errors") or []
    return errors


# Host header poisoning -------------------------------------------------------------------------------

_HOSTILE_HEADERS = (
    {"host": EVIL},
    {"host": f"{EVIL}:8443"},
    {"x-forwarded-host": EVIL, "x-forwarded-proto": "https"},
    {"forwarded": f"host={EVIL};proto=https"},
)


def _link_requests(head: str) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """name -> (method, path, request kwargs) of every answer that holds or is a link."""
    query = (
        "query($at: String, $id: String!) { registry(at: $at) { run(id: $id) { permalink "
        'citation(accessed: "2026-11-29") bib: citation(format: BIBTEX) csl: citation(format: CSL_JSON) } } }'
    )
    return {
        "graphql pinned": ("POST", "/graphql", {"json": {"query": query, "variables": {"at": head, "id": SEED_000}}}),
        "graphql head": ("POST", "/graphql", {"json": {"query": query, "variables": {"id": SEED_000}}}),
        "graphql GET": ("GET", "/graphql", {"params": {"query": '{ run(id: "sol-submission-6709") { permalink } }'}}),
        "run permalink": ("GET", f"/at/{head}/runs/{SEED_000}", {}),
        "run redirect": ("GET", f"/runs/{SEED_000}", {}),
        "manifest redirect": ("GET", f"/manifests/{SEED_000}", {}),
        "short commit redirect": ("GET", f"/at/{head[:12]}/runs/{SEED_000}", {}),
        "index": ("GET", "/", {}),
    }


def _poisoned(response: httpx.Response) -> str | None:
    seen = response.text + " ".join(f"{k}: {v}" for k, v in response.headers.items())
    return f"{response.request.url.path} carries {EVIL}" if EVIL in seen else None


def test_nothing_from_the_request_host_reaches_an_answer(api: Running, tally: Tally) -> None:
    head = api.service.snapshots.head.commit
    requests = _link_requests(head)
    first: dict[str, httpx.Response] = {}

    def hostile(name: str, headers: dict[str, str]) -> Probe:
        def probe() -> str | None:
            method, path, kwargs = requests[name]
            response = api.client.request(method, path, headers=headers, follow_redirects=False, **kwargs)
            first.setdefault(name, response)
            return _poisoned(response)

        return probe

    def later(name: str) -> Probe:
        def probe() -> str | None:
            method, path, kwargs = requests[name]
            response = api.client.request(method, path, follow_redirects=False, **kwargs)
            if response.content != first[name].content or response.headers.get("location") != first[name].headers.get(
                "location"
            ):
                return "a later client got a different answer than the hostile one"
            return _poisoned(response)

        return probe

    probes = {f"{name} {headers}": hostile(name, headers) for headers in _HOSTILE_HEADERS for name in requests}
    probes |= {f"{name} afterwards": later(name) for name in requests}
    failures = tally.run("host poisoning", probes)
    assert not failures, failures
    # Links are root-relative without a configured base URL: the redirects say exactly where.
    assert first["run redirect"].status_code == 302
    assert first["run redirect"].headers["location"] == f"/at/{head}/runs/{SEED_000}"
    assert first["short commit redirect"].status_code == 307
    assert first["short commit redirect"].headers["location"] == f"/at/{head}/runs/{SEED_000}"
    run = first["graphql pinned"].json()["data"]["registry"]["run"]
    assert run["permalink"] == f"/at/{head}/runs/{SEED_000}"
    # A citation never carries a root-relative link: without a base URL it says it has no permalink.
    assert run["citation"].endswith(
        "No permalink: this registry has no public base URL configured. Accessed 2026-11-29."
    )
    assert "/at/" not in run["citation"]


def test_a_configured_base_url_makes_every_link_absolute(tally: Tally) -> None:
    base = "https://registry.example.org/kernels"
    with serve(EMBEDDED_REPO, base_url=base + "/") as api:
        head = api.service.snapshots.head.commit
        requests = _link_requests(head)
        answers = {
            name: api.client.request(method, path, headers={"host": EVIL}, follow_redirects=False, **kwargs)
            for name, (method, path, kwargs) in requests.items()
        }
    expected = f"{base}/at/{head}/runs/{SEED_000}"

    def check(name: str, fact: Callable[[httpx.Response], bool]) -> Probe:
        return lambda: _poisoned(answers[name]) or (None if fact(answers[name]) else answers[name].text[:200])

    failures = tally.run(
        "host poisoning",
        {
            "configured: run redirect": check("run redirect", lambda r: r.headers["location"] == expected),
            "configured: short commit": check("short commit redirect", lambda r: r.headers["location"] == expected),
            "configured: manifest redirect": check(
                "manifest redirect", lambda r: r.headers["location"] == f"{base}/at/{head}/manifests/{SEED_000}"
            ),
            "configured: permalink field": check(
                "graphql pinned", lambda r: r.json()["data"]["registry"]["run"]["permalink"] == expected
            ),
            "configured: run permalink JSON": check(
                "run permalink", lambda r: r.json()["run"]["permalink"] == expected
            ),
            "configured: index": check("index", lambda r: r.json()["graphql"] == f"{base}/graphql"),
        },
    )
    assert not failures, failures


# Error codes -------------------------------------------------------------------------------------------

_RUNS_N = "query($n: Int!) { runs(first: $n) { totalCount } }"

# (name, request kwargs, status, code, a fragment of the message graphql-core or the server words it with)
ERROR_CASES: list[tuple[str, dict[str, Any], int, str, str]] = [
    ("a string for Int!", {"json": {"query": _RUNS_N, "variables": {"n": "x"}}}, 400, "BAD_USER_INPUT",
     "Int cannot represent non-integer value: 'x'"),
    ("a missing variable", {"json": {"query": _RUNS_N, "variables": {}}}, 400, "BAD_USER_INPUT",
     "Expected a value of non-null type 'Int!' to be provided"),
    ("2^40 for an Int", {"json": {"query": _RUNS_N, "variables": {"n": 2**40}}}, 400, "BAD_USER_INPUT",
     "non 32-bit signed integer value: 1099511627776"),
    ("an unknown enum value", {"json": {"query": "query($t: Trust) { runs(filter: {minTrust: $t}) { totalCount } }",
                                        "variables": {"t": "GOLDEN"}}}, 400, "BAD_USER_INPUT",
     "Value 'GOLDEN' does not exist in 'Trust' enum"),
    ("null for an argument with a default", {"json": {"query": "query($o: CohortOrder) { cohorts(order: $o) { totalCount } }",
                                                      "variables": {"o": None}}}, 200, "BAD_USER_INPUT",
     "Argument 'order' has invalid value"),
    ("an access date that is no date", {"json": {"query": '{ run(id: "sol-submission-6709") { citation(accessed: "2026-02-30") } }'}},
     200, "BAD_USER_INPUT", "accessed must be a date as YYYY-MM-DD"),
    ("a syntax error", {"json": {"query": "{ commit { id "}}, 400, "GRAPHQL_PARSE_FAILED", "Syntax Error"),
    ("an unknown field", {"json": {"query": "{ nope }"}}, 400, "GRAPHQL_VALIDATION_FAILED",
     "Cannot query field 'nope' on type 'Query'"),
    ("a wrong argument type", {"json": {"query": '{ runs(first: "ten") { totalCount } }'}}, 400,
     "GRAPHQL_VALIDATION_FAILED", "Int cannot represent non-integer value"),
    ("101 validation errors", {"json": {"query": "{ " + " ".join(f"f{i}" for i in range(101)) + " }"}}, 400,
     "TOO_MANY_VALIDATION_ERRORS", "Validation aborted."),
    ("an unknown operationName", {"json": {"query": "query A { commit { id } }", "operationName": "B"}}, 400,
     "OPERATION_RESOLUTION_FAILURE", 'Unknown operation named "B"'),
    ("a mutation", {"json": {"query": "mutation { x }"}}, 400, "GRAPHQL_VALIDATION_FAILED", "The mutation operation is not supported"),
    ("a document without operations", {"json": {"query": "fragment F on Query { commit { id } }"}}, 400,
     "OPERATION_RESOLUTION_FAILURE", "operation"),
    ("an unknown revision", {"json": {"query": '{ registry(at: "no-such-branch") { commit { id } } }'}}, 200,
     "REVISION_NOT_FOUND", "no such commit, branch or tag"),
    ("a page over 100", {"json": {"query": "{ runs(first: 101) { totalCount } }"}}, 200, "PAGE_SIZE_ERROR",
     "first must be between 0 and 100 (got 101)"),
    ("a malformed body", {"content": b"{not json", "headers": {"content-type": "application/json"}}, 400,
     "BAD_REQUEST", "not valid JSON"),
    ("no query", {"json": {"variables": {}}}, 400, "BAD_REQUEST", "no query"),
    ("variables not an object", {"json": {"query": "{ commit { id } }", "variables": [1]}}, 400, "BAD_REQUEST",
     "variables must be a JSON object"),
    ("variables nested 600 deep", {"content": b'{"query": "{ commit { id } }", "variables": {"a": ' + b"[" * 600 + b"1"
                                   + b"]" * 600 + b"}}", "headers": {"content-type": "application/json"}},
     400, "BAD_REQUEST", "nested too deeply"),
    ("operationName not a string", {"json": {"query": "{ commit { id } }", "operationName": 3}}, 400, "BAD_REQUEST",
     "operationName must be a string"),
    ("a body over 128 KiB", {"json": {"query": "{ commit { id } }" + " " * 140_000}}, 413, "QUERY_TOO_LARGE", "over"),
]  # fmt: skip


def test_every_client_error_has_its_code_and_keeps_its_message(api: Running, tally: Tally) -> None:
    def probe(kwargs: dict[str, Any], status: int, code: str, fragment: str) -> Probe:
        def run() -> str | None:
            # A client of the GraphQL-over-HTTP media type: request errors are 400 (the draft says so).
            headers = {"accept": GRAPHQL_RESPONSE, **kwargs.get("headers", {})}
            response = api.client.post("/graphql", **{**kwargs, "headers": headers})
            errors = _errors(response)
            if response.status_code != status:
                return f"status {response.status_code}, expected {status}: {response.text[:200]}"
            coded = [e for e in errors if (e.get("extensions") or {}).get("code") == code]
            if not coded:
                return f"expected {code}: {response.text[:300]}"
            if any(e["message"] == "Unexpected error." for e in errors) or fragment not in coded[0]["message"]:
                return f"the message was lost: {coded[0]['message']!r}"
            if any("code" not in (e.get("extensions") or {}) for e in errors):
                return "an error without a code"
            return None

        return run

    failures = tally.run(
        "error codes",
        {name: probe(kwargs, status, code, fragment) for name, kwargs, status, code, fragment in ERROR_CASES},
    )
    assert not failures, failures
    assert api.graphql("{ commit { id } }").json()["data"]["commit"]["id"] == api.service.snapshots.head.commit


def test_the_largest_coded_request_errors_still_answer_in_the_documented_shape(api: Running) -> None:
    response = api.client.post("/graphql", json={"query": _RUNS_N, "variables": {"n": "x"}})
    body = response.json()
    assert set(body) == {"errors", "extensions"}  # a request error has no `data` (nothing ran)
    assert body["errors"] == [
        {
            "message": "Variable '$n' has invalid value: Int cannot represent non-integer value: 'x'",
            "locations": [{"line": 1, "column": 7}],
            "extensions": {"code": "BAD_USER_INPUT"},
        }
    ]


# Limits at their boundaries ----------------------------------------------------------------------------


def _chain(levels: int) -> str:
    """A query whose deepest field sits `levels` fields below the root field (root field: depth 0)."""
    names = ["leader" if i % 2 else "cohort" for i in range(1, levels)]
    leaf = "digest" if names and names[-1] == "leader" else "key"
    inner = leaf
    for name in reversed(names):
        inner = f"{name} {{ {inner} }}"
    return f'{{ run(id: "sol-submission-16043") {{ {inner} }} }}'


def _aliases(count: int) -> str:
    return "{ " + " ".join(f"a{i}: committedAt" for i in range(count)) + " }"


def _tokens(count: int) -> str:
    # { runs ( filter : { status : [ PASSED x k ] } ) { totalCount } } : 16 tokens besides the k values
    return "{ runs(filter: {status: [" + " PASSED" * (count - 16) + "]}) { totalCount } }"


def _cost(cost: int) -> str:
    # runs 1 + edges 1 + node 100 + 100 per `name` (k of them) + 1 per root `committedAt` (m of them)
    k, m = divmod(cost - 102, 100)
    return "{ runs(first: 100) { edges { node {" + " name" * k + " } } }" + " committedAt" * m + " }"


def _bytes(size: int) -> str:
    head = "{ commit { id } }\n#"
    return head + "x" * (size - len(head))


LIMIT_CASES: list[tuple[str, str, str, int, str]] = [
    # (limit, the query at the limit, one past it, status past it, code past it)
    ("depth 12", _chain(12), _chain(13), 400, "QUERY_TOO_DEEP"),
    ("20 aliases", _aliases(20), _aliases(21), 400, "TOO_MANY_ALIASES"),
    ("4,000 tokens", _tokens(4000), _tokens(4001), 400, "TOO_MANY_TOKENS"),
    ("cost 25,000", _cost(25_000), _cost(25_001), 400, "QUERY_TOO_COMPLEX"),
    ("64 KiB query", _bytes(65_536), _bytes(65_537), 413, "QUERY_TOO_LARGE"),
    ("page of 100", "{ runs(first: 100) { totalCount } }", "{ runs(first: 101) { totalCount } }", 200, "PAGE_SIZE_ERROR"),
]  # fmt: skip


@pytest.mark.parametrize(("limit", "at", "past", "status", "code"), LIMIT_CASES, ids=[c[0] for c in LIMIT_CASES])
def test_each_limit_admits_its_boundary_and_refuses_one_more(
    api: Running, tally: Tally, limit: str, at: str, past: str, status: int, code: str
) -> None:
    def admitted() -> str | None:
        response = api.graphql(at)
        return None if response.status_code == 200 and not _errors(response) else response.text[:300]

    def refused() -> str | None:
        response = api.graphql(past, headers={"accept": GRAPHQL_RESPONSE})
        errors = _errors(response)
        if response.status_code != status or not errors or errors[0].get("extensions", {}).get("code") != code:
            return f"{response.status_code}: {response.text[:300]}"
        return None

    failures = tally.run("limits at their boundary", {f"{limit}: at": admitted, f"{limit}: past": refused})
    assert not failures, failures


def test_the_cost_is_reported_with_every_answer_and_with_its_refusal(api: Running) -> None:
    answered = api.graphql(_cost(25_000)).json()
    assert answered["extensions"]["cost"] == {"requested": 25_000, "limit": 25_000}
    refused = api.graphql(_cost(25_001)).json()
    assert refused["extensions"]["cost"] == {"requested": 25_001, "limit": 25_000}
    assert refused["errors"][0]["extensions"] == {
        "code": "QUERY_TOO_COMPLEX",
        "cost": {"requested": 25_001, "limit": 25_000},
    }
    assert "data" not in refused


# Previews and immutability -----------------------------------------------------------------------------


@dataclass
class Branches:
    main: str
    ok: str
    edit: str
    retract: str
    garbage: str
    new_run: str
    edited_path: str


def _branch(repo: pygit2.Repository, name: str, parent: str, files: dict[str, bytes], when: int, message: str) -> str:
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(parent).peel(pygit2.Tree))
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", when, 0)
    tree = index.write_tree(repo)
    return str(repo.create_commit(f"refs/heads/{name}", person, person, message, tree, [pygit2.Oid(hex=parent)]))


@pytest.fixture
def branches(store: registry.GitStore) -> Branches:
    s = basic_scenario()
    main = commit_manifests(store, s.docs)
    repo = pygit2.Repository(str(store.git_dir))
    run = registry.load_manifest(
        json.dumps(make_run(s.implementations[1], s.workload, s.protocol, s.environment, 100, name="pr-run")).encode(),
        "pr-run.json",
    )
    published = registry.load_manifest(json.dumps(s.runs[0]).encode(), "run.json")
    retraction = registry.load_manifest(json.dumps(make_retraction(s.runs[1])).encode(), "retraction.json")
    garbage_path = "benchmark-runs/ab/" + "ab" * 32 + ".json"
    return Branches(
        main=main,
        ok=_branch(repo, "pr-ok", main, {run.path: run.stored_bytes()}, 1_700_050_000, "Add a run\n"),
        edit=_branch(
            repo,
            "pr-edit",
            main,
            {published.path: published.stored_bytes().replace(b'"passed"', b'"timeout"')},
            1_700_050_100,
            "Edit a published run\n",
        ),
        retract=_branch(
            repo, "pr-retract", main, {retraction.path: retraction.stored_bytes()}, 1_700_050_200, "Retract\n"
        ),
        garbage=_branch(repo, "pr-garbage", main, {garbage_path: b"{not json"}, 1_700_050_300, "Garbage\n"),
        new_run=run.digest,
        edited_path=published.path,
    )


PINNED = (
    "query($at: String, $id: String!) { registry(at: $at) { commit { id } "
    'run(id: $id) { rank eligible ineligibilityReasons citation(accessed: "2026-11-29") } } }'
)


def test_previews_that_fail_the_pull_request_check_are_refused_with_its_report(
    store: registry.GitStore, branches: Branches, tally: Tally
) -> None:
    with serve(store.path) as api:

        def refused(commit: str, needle: str) -> Probe:
            def probe() -> str | None:
                for at in (commit, commit[:12]):
                    response = api.graphql(PINNED, {"at": at, "id": "run-a1"})
                    errors = _errors(response)
                    if not errors or errors[0]["extensions"].get("code") != "PREVIEW_REJECTED":
                        return response.text[:300]
                    if needle not in errors[0]["message"] or response.json()["data"] != {"registry": None}:
                        return str(errors[0]["message"])
                return None

            return probe

        failures = tally.run(
            "previews",
            {
                "an edit of a published run": refused(branches.edit, f"{branches.edited_path}: modified"),
                "an unsigned retraction": refused(branches.retract, "signed by a maintainer"),
                "a file that is not JSON": refused(branches.garbage, "benchmark-runs/ab/"),
            },
        )
        edited = api.graphql(PINNED, {"at": "pr-edit", "id": "run-a1"}).json()["errors"][0]["extensions"]
        passing = api.graphql(PINNED, {"at": "pr-ok", "id": "pr-run"})
        checks = api.service.previews.checks
        again = api.graphql(PINNED, {"at": branches.edit, "id": "run-a2"})  # another query, same commit
    assert not failures, failures
    assert edited["problems"] == [
        {
            "file": branches.edited_path,
            "path": "",
            "reason": "modified: published files never change (a correction is a new manifest)",
        }
    ]
    assert edited["commit"] == branches.edit and edited["base"] == branches.main
    assert passing.status_code == 200 and passing.json()["data"]["registry"]["run"]["ineligibilityReasons"] == [
        "UNPUBLISHED"
    ]
    assert _errors(again)[0]["extensions"]["code"] == "PREVIEW_REJECTED"
    assert api.service.previews.checks == checks  # the verdict on a commit is kept


def test_only_answers_that_can_never_change_are_immutable(store: registry.GitStore, branches: Branches) -> None:
    with serve(store.path) as api:
        published = api.graphql(PINNED, {"at": branches.main, "id": "run-a1"})
        preview = api.graphql(PINNED, {"at": branches.ok, "id": "pr-run"})
        by_name = api.graphql(PINNED, {"at": "main", "id": "run-a1"})
        head = api.graphql(PINNED, {"id": "run-a1"})
        revalidated = api.graphql(
            PINNED, {"at": branches.main, "id": "run-a1"}, headers={"if-none-match": published.headers["etag"]}
        )
        # The pull request merges (main fast-forwards to it): the preview's answer changes.
        pygit2.Repository(str(store.git_dir)).references["refs/heads/main"].set_target(pygit2.Oid(hex=branches.ok))
        assert api.client.post("/hooks/refresh").json()["serving"] == branches.ok
        merged = api.graphql(
            PINNED, {"at": branches.ok, "id": "pr-run"}, headers={"if-none-match": preview.headers["etag"]}
        )
        permalink = api.client.get(f"/at/{branches.ok}/runs/{branches.new_run}")
    assert published.headers["cache-control"] == IMMUTABLE and revalidated.status_code == 304
    assert preview.headers["cache-control"] == REVALIDATE
    assert preview.json()["data"]["registry"]["run"]["ineligibilityReasons"] == ["UNPUBLISHED"]
    assert by_name.headers["cache-control"] == REVALIDATE and head.headers["cache-control"] == REVALIDATE
    assert merged.status_code == 200 and merged.headers["cache-control"] == IMMUTABLE
    assert merged.json()["data"]["registry"]["run"]["rank"] == 1  # 100 ns beats 7,900
    assert permalink.headers["cache-control"] == IMMUTABLE and "Accessed" not in permalink.text
    # No base URL here: the citation says it has no permalink (a root-relative one would be none to a reader).
    assert permalink.json()["run"]["statusUrl"] == f"/runs/{branches.new_run}/status?readAt={branches.ok}"
    assert permalink.json()["run"]["citation"].endswith(
        f"Run {branches.new_run}. No permalink: this registry has no public base URL configured."
    )


def test_validation_reports_100_errors_and_aborts_at_the_101st(api: Running, tally: Tally) -> None:
    def unknown_fields(count: int) -> list[dict[str, Any]]:
        return _errors(api.graphql("{ " + " ".join(f"f{i}" for i in range(count)) + " }"))

    def at_the_cap() -> str | None:
        errors = unknown_fields(100)
        codes = {e["extensions"]["code"] for e in errors}
        return None if len(errors) == 100 and codes == {"GRAPHQL_VALIDATION_FAILED"} else str(codes)

    def past_it() -> str | None:
        errors = unknown_fields(101)  # graphql-core stops at 100 and says so
        if len(errors) != 101 or errors[-1]["extensions"]["code"] != "TOO_MANY_VALIDATION_ERRORS":
            return f"{len(errors)} errors, the last {errors[-1]}"
        return None

    failures = tally.run("limits at their boundary", {"100 validation errors: at": at_the_cap, "...: past": past_it})
    assert not failures, failures

"""Every route family answers the bytes it answered when the recording was made: a fixed list of requests
(GraphQL over POST and GET, GraphiQL, permalinks pinned and at the head, manifests, /healthz, every page
type as HTML and JSON, badges, feeds, exports, the well-known files, /mcp, 404s and refusals) against the
embedded registry and a small registry built here, each answer's status, the headers a client acts on and
its body, compared with `tests/data/golden/<registry>.json.zst`.

The recording is a behaviour contract for refactoring the edges: a change of any byte fails here. Record again
only for a deliberate change of answers, and say why by probe (`_REASONS`; `CHANGES` collects every reason):

    KERNELINDEX_GOLDEN=record pytest tests/test_golden.py

Volatile parts are left out, never guessed: /healthz's clock readings and process id (replaced by their
names), and the modification-time validators of static files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
import pytest
import zstandard
from helpers import (
    EMBEDDED_REPO,
    TEST_DATA,
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    digest_of,
    make_attestation,
    make_implementation,
    make_operation,
    make_project,
    make_run,
)
from server import Running, serve

from kernelindex import registry
from kernelindex.service.graphiql import GraphiQL

GOLDEN = TEST_DATA / "golden"
RECORDING = os.environ.get("KERNELINDEX_GOLDEN") == "record"

HTML = (("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),)  # Chromium's
JSON = (("accept", "application/json"),)
GRAPHQL_RESPONSE = (("accept", "application/graphql-response+json"),)
POST_JSON = (("content-type", "application/json"),)
MCP = (("accept", "application/json, text/event-stream"), ("content-type", "application/json"))

KEPT_HEADERS = (
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
    "access-control-expose-headers",
    "access-control-max-age",
    "allow",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-security-policy",
    "content-type",
    "etag",
    "last-modified",
    "location",
    "referrer-policy",
    "repr-digest",
    "retry-after",
    "vary",
    "x-content-type-options",
    "x-frame-options",
    "x-kernelindex-commit",
)
"""What a client acts on; `date`, `server` and `content-length` (which follows the body) are not kept."""

LARGEST_KEPT = 256 * 1024
"""A body larger than this is kept as its length and sha256 (an export of the embedded registry)."""

_HEALTH_CLOCKS = re.compile(
    rb'"(checkedAt|buildSeconds|checkSeconds|uptimeSeconds|worker|lastCheckSecondsAgo)":("[^"]*"|[0-9.]+|null)'
)

CHANGES: dict[str, str] = {}
"""Why a probe's answer changed since it was first recorded, by probe name. The recordings were made again after
each change, so the recorded answer is the expected one; the reason stays for whoever meets the changed answer.
Every entry is a change a client can see: list it in the changelog too. They are declared at the end of this
module (`_CHANGES`, `_REASONS`)."""


_HEAD = (
    "every page's <head> gained a meta description (what search results show under the title) and the "
    "icon links (/favicon.ico and /static/icon.svg): the base template words them for every page"
)
_REASONS = {
    (
        "the read side: run, leaderboard, implementation and search pages (HTML and JSON) gained the run's status "
        "link and signed lifecycle facts, citations with copy buttons (absolute, or saying they have no permalink), "
        "\"Can I ship it?\" and the resolver's answer; the dossier carries `statusUrl` and `supersession`; MCP's "
        "resolve_kernel is the resolver (its description and input schema in tools/list); the base template's "
        "whitespace"
    ): (
        "mcp: a tool",
        "mcp: tools/list",
        "page compare: HTML",
        "page compare: HTML, not modified",
        "page gpu: HTML",
        "page gpu: HTML, not modified",
        "page gpus: HTML",
        "page gpus: HTML, not modified",
        "page home: HTML",
        "page implementation: HTML",
        "page implementation: HTML, not modified",
        "page implementation: JSON by Accept",
        "page implementation: no Accept",
        "page implementation: pinned off main",
        "page implementation: pinned off main, JSON",
        "page implementation: pinned, HTML",
        "page implementation: pinned, JSON",
        "page implementation: the .json twin",
        "page leaderboard: HTML",
        "page leaderboard: HTML, not modified",
        "page leaderboard: JSON by Accept",
        "page leaderboard: minTrust",
        "page leaderboard: next page",
        "page leaderboard: no Accept",
        "page leaderboard: pinned off main",
        "page leaderboard: pinned off main, JSON",
        "page leaderboard: pinned, HTML",
        "page leaderboard: pinned, JSON",
        "page leaderboard: the .json twin",
        "page model: HTML",
        "page model: HTML, not modified",
        "page models: HTML",
        "page models: HTML, not modified",
        "page operation: HTML",
        "page operation: HTML, not modified",
        "page operations: HTML",
        "page operations: HTML, not modified",
        "page operations: a family",
        "page project: HTML",
        "page project: HTML, not modified",
        "page projects: HTML",
        "page projects: HTML, not modified",
        "page records: HTML",
        "page records: HTML, not modified",
        "page run: HTML",
        "page run: HTML again (cached)",
        "page run: HTML, not modified",
        "page run: dossier by Accept",
        "page run: dossier, .json twin",
        "page run: dossier, brotli",
        "page run: dossier, no Accept",
        "page run: dossier, not modified",
        "page run: pinned off main",
        "page run: pinned off main, JSON",
        "page run: published earlier",
        "page search: HTML",
        "page search: HTML, not modified",
        "page search: JSON by Accept",
        "page search: empty",
        "page search: no Accept",
        "page search: pinned off main",
        "page search: pinned off main, JSON",
        "page search: pinned, HTML",
        "page search: pinned, JSON",
        "page search: the .json twin",
        "page serving cohort: HTML",
        "page serving cohort: HTML, not modified",
        "page serving run: .json twin",
        "page serving run: HTML",
        "page serving run: dossier",
        "page serving: HTML",
        "page serving: HTML, not modified",
        "page serving: a question",
        "page source: HTML",
        "page source: HTML, not modified",
        "page sources: HTML",
        "page sources: HTML, not modified",
        "static: the stylesheet",
    ),
    (
        "index pages' own links (their JSON twin, their pin) repeat the filters and form fields the page read "
        "(they dropped them); the serving form's next page repeats only the fields it read, never the raw query"
    ): (
        "page operations: a family",
        "page serving: a question",
    ),
    (
        "pages gained link previews (a description from their data or the registry's own line, Open Graph and "
        "Twitter tags, a canonical URL under a base URL, their Atom feeds advertised) and the index pages in their "
        "navigation; the operation page's document asks for related operations and the sweep over its workloads; "
        "llms.txt and the sitemap list the index pages; the stylesheet styles them"
    ): (
        "404",
        "fault: a run's page",
        "llms.txt",
        "page commit: HTML",
        "page commit: HTML, not modified",
        "page commit: an older one",
        "page commit: not an id",
        "page commit: off main",
        "page commit: unknown",
        "page compare: HTML",
        "page compare: HTML, not modified",
        "page compare: one run",
        "page compare: pinned off main",
        "page compare: pinned, HTML",
        "page home: HTML",
        "page home: pinned",
        "page home: pinned off main",
        "page home: pinned to an older commit",
        "page home: pinned to nothing",
        "page implementation: HTML",
        "page implementation: HTML, not modified",
        "page implementation: missing",
        "page implementation: pinned off main",
        "page implementation: pinned, HTML",
        "page leaderboard: HTML",
        "page leaderboard: HTML, not modified",
        "page leaderboard: bad cursor",
        "page leaderboard: bad minTrust",
        "page leaderboard: minTrust",
        "page leaderboard: next page",
        "page leaderboard: no such cohort",
        "page leaderboard: pinned off main",
        "page leaderboard: pinned, HTML",
        "page operation: HTML",
        "page operation: HTML, not modified",
        "page operation: JSON by Accept",
        "page operation: missing",
        "page operation: no Accept",
        "page operation: pinned off main",
        "page operation: pinned off main, JSON",
        "page operation: pinned, HTML",
        "page operation: pinned, JSON",
        "page operation: the .json twin",
        "page project: HTML",
        "page project: HTML, not modified",
        "page project: pinned off main",
        "page project: pinned, HTML",
        "page records: HTML",
        "page records: HTML, not modified",
        "page records: pinned off main",
        "page records: pinned, HTML",
        "page run: HTML",
        "page run: HTML again (cached)",
        "page run: HTML, not modified",
        "page run: pinned off main",
        "page run: published earlier",
        "page search: HTML",
        "page search: HTML, not modified",
        "page search: empty",
        "page search: pinned off main",
        "page search: pinned, HTML",
        "page search: too long",
        "page serving cohort: HTML",
        "page serving cohort: HTML, not modified",
        "page serving cohort: missing",
        "page serving cohort: pinned off main",
        "page serving cohort: pinned, HTML",
        "page serving run: HTML",
        "page source: HTML",
        "page source: HTML, not modified",
        "page source: missing",
        "page source: pinned off main",
        "page source: pinned, HTML",
        "sitemap",
        "sitemap: no such",
        "sitemap: past the last",
        "sitemap: runs",
        "sitemap: the site",
        "static: the stylesheet",
    ),
    _HEAD: (
        "fault: a run's page",
        "page commit: HTML",
        "page commit: HTML, not modified",
        "page commit: an older one",
        "page commit: not an id",
        "page commit: off main",
        "page commit: unknown",
        "page compare: HTML",
        "page compare: HTML, not modified",
        "page compare: one run",
        "page compare: pinned off main",
        "page compare: pinned, HTML",
        "page home: HTML",
        "page home: pinned",
        "page home: pinned off main",
        "page home: pinned to an older commit",
        "page home: pinned to nothing",
        "page implementation: HTML",
        "page implementation: HTML, not modified",
        "page implementation: missing",
        "page implementation: pinned off main",
        "page implementation: pinned, HTML",
        "page leaderboard: HTML",
        "page leaderboard: HTML, not modified",
        "page leaderboard: bad cursor",
        "page leaderboard: bad minTrust",
        "page leaderboard: minTrust",
        "page leaderboard: next page",
        "page leaderboard: pinned off main",
        "page leaderboard: pinned, HTML",
        "page operation: HTML",
        "page operation: HTML, not modified",
        "page operation: missing",
        "page operation: pinned off main",
        "page operation: pinned, HTML",
        "page project: HTML",
        "page project: HTML, not modified",
        "page project: pinned off main",
        "page project: pinned, HTML",
        "page records: HTML",
        "page records: HTML, not modified",
        "page records: pinned off main",
        "page records: pinned, HTML",
        "page run: HTML",
        "page run: HTML again (cached)",
        "page run: HTML, not modified",
        "page run: pinned off main",
        "page run: published earlier",
        "page search: HTML",
        "page search: HTML, not modified",
        "page search: empty",
        "page search: pinned off main",
        "page search: pinned, HTML",
        "page search: too long",
        "page serving cohort: HTML",
        "page serving cohort: HTML, not modified",
        "page serving cohort: missing",
        "page serving cohort: pinned off main",
        "page serving cohort: pinned, HTML",
        "page serving run: HTML",
        "page source: HTML",
        "page source: HTML, not modified",
        "page source: missing",
        "page source: pinned off main",
        "page source: pinned, HTML",
    ),
    "connections are nullable: a refused argument (a bad cursor, a page over 100) nulls only its field, "
    "`data: {runs: null}`, instead of all of `data`": (
        "graphql: a bad cursor",
        "graphql: page too large",
    ),
    "a malformed cohort key (`sha256:0000`: too short for a prefix) is refused as BAD_USER_INPUT, 400, saying "
    "what a key looks like, where it was looked up and not found (404)": (
        "page leaderboard: no such cohort",
        "page leaderboard: no such cohort, JSON",
    ),
    "the search page pages with `runs(first:, after:)` instead of search's deprecated paging arguments: the "
    "same runs, and a cost that no longer counts its facets and issues as a page of runs": (
        "page search: JSON by Accept",
        "page search: no Accept",
        "page search: pinned off main, JSON",
        "page search: pinned, JSON",
        "page search: the .json twin",
    ),
    "BibTeX citations brace their corporate author twice (`author = {{NVIDIA SOL-ExecBench}}`): one literal "
    "name to BibTeX and pybtex, not a person": (
        "mcp: a tool",
        "page run: dossier by Accept",
        "page run: dossier, .json twin",
        "page run: dossier, brotli",
        "page run: dossier, no Accept",
        "page run: dossier, not modified",
        "page run: pinned off main, JSON",
    ),
    "brotli answers are coded in the smallest window that holds the body rather than brotli's default 4 MB one "
    "(the same decoded bytes and entity tags, a byte or two smaller; a first-time answer codes in ~0.2 ms rather "
    "than ~0.35 ms)": (
        "graphql: records, brotli",
        "page run: dossier, brotli",
    ),
    "the schema gained `Query.rateLimit` and its `RateLimit` type (each client's budget of cost points)": (
        "schema.graphql",
        "schema.graphql: not modified",
    ),
}


@dataclass(frozen=True)
class Probe:
    """One request. `<name>` in the path or body is a value of the registry's `ids`; `tag_of` sends the
    entity tag the named earlier probe got (as `If-None-Match`)."""

    name: str
    path: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    tag_of: str | None = None
    static: bool = False  # a static file: its validators come from the file's modification time
    health: bool = False
    only: str | None = None  # "embedded" or "built": a probe of one registry only
    extra: tuple[tuple[str, str], ...] = field(default=())


def _graphql(
    name: str, document: str, variables: dict[str, Any] | None = None, operation: str | None = None, **kw: Any
) -> Probe:
    request: dict[str, Any] = {"query": document}
    if variables is not None:
        request["variables"] = variables
    if operation is not None:
        request["operationName"] = operation
    body = json.dumps(request)
    headers = kw.pop("headers", JSON)
    return Probe(name, "/graphql", "POST", (*headers, *POST_JSON), body, **kw)


def _get_graphql(name: str, document: str, headers: tuple[tuple[str, str], ...] = JSON, **params: str) -> Probe:
    from urllib.parse import urlencode

    return Probe(name, "/graphql?" + urlencode({"query": document, **params}), headers=headers)


def _mcp(name: str, method: str, params: dict[str, Any]) -> Probe:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    return Probe(name, "/mcp", "POST", MCP, body)


# The requests ---------------------------------------------------------------------------------------

_RUN_DOC = "query($id: String!) { run(id: $id) { digest name rank primary { display } cohort { key } } }"
_PINNED_DOC = '{ registry(at: "<main>") { commit { id } run(id: "<run1>") { digest rank } } }'

GRAPHQL_PROBES = [
    _graphql("graphql: a query", _RUN_DOC, {"id": "<run1>"}),
    _graphql("graphql: a query, graphql-response+json", _RUN_DOC, {"id": "<run1>"}, headers=GRAPHQL_RESPONSE),
    _graphql("graphql: pinned to a full commit id (immutable)", _PINNED_DOC),
    _graphql("graphql: pinned by name (revalidates)", '{ registry(at: "main") { commit { id } } }'),
    _graphql("graphql: pinned to a commit off main", '{ registry(at: "<branch>") { commit { id } } }'),
    _graphql("graphql: unknown revision", '{ registry(at: "no-such-branch") { commit { id } } }'),
    _graphql("graphql: syntax error", "{ run(id: ", headers=JSON),
    _graphql("graphql: syntax error, graphql-response+json", "{ run(id: ", headers=GRAPHQL_RESPONSE),
    _graphql("graphql: validation error", "{ nope }"),
    _graphql("graphql: bad variable", _RUN_DOC, {"id": 5}),
    _graphql("graphql: a bad cursor", '{ runs(first: 2, after: "bogus") { totalCount } }'),
    _graphql("graphql: page too large", "{ runs(first: 1000) { totalCount } }"),
    _graphql("graphql: a mutation", "mutation { x }"),
    _graphql("graphql: unknown operation name", "query A { registry { commit { id } } }", None, "B"),
    _graphql(
        "graphql: an operation of two",
        "query A { registry { commit { id } } } query B { records(first: 1) { totalCount } }",
        None,
        "B",
    ),
    _graphql(
        "graphql: two operations, no name",
        "query A { registry { commit { id } } } query B { records(first: 1) { totalCount } }",
    ),
    _graphql("graphql: too deep", "{ " + "registry { " * 14 + "commit { id }" + " }" * 15),
    _graphql(
        "graphql: too costly",
        "{ a: runs(first: 100) { edges { node { name cohort { entries(first: 100) { "
        "edges { node { run { name } } } } } } } } }",
    ),
    _graphql(
        "graphql: records, 100",
        "{ records(first: 100) { totalCount edges { node { since cohort { key } "
        "holder { name primary { display } } } } } }",
    ),
    Probe(
        "graphql: records, brotli",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON, ("accept-encoding", "br")),
        json.dumps({"query": "{ records(first: 100) { edges { node { since cohort { key } holder { name } } } } }"}),
    ),
    Probe(
        "graphql: records, gzip",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON, ("accept-encoding", "gzip")),
        json.dumps({"query": "{ records(first: 100) { edges { node { since cohort { key } holder { name } } } } }"}),
    ),
    Probe(
        "graphql: records, not modified",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps(
            {
                "query": "{ records(first: 100) { totalCount edges { node { since cohort { key } "
                "holder { name primary { display } } } } } }"
            }
        ),
        tag_of="graphql: records, 100",
    ),
    _graphql(
        "graphql: changes",
        "{ changes(first: 2) { totalCount edges { node { position commit { id } publishedCount "
        "publishedCounts { kind count } retracted { runDigest } moved { totalCount } } } } }",
    ),
    _graphql("graphql: changes since an unknown commit", '{ changes(since: "0000000000000000") { totalCount } }'),
    _graphql(
        "graphql: resolveKernel",
        '{ resolveKernel(operation: "<request_operation>", gpu: "<request_gpu>") { mode summary openParts '
        "exact(first: 2) { totalCount edges { node { rankedCount leader { rank why run { digest } } "
        "bestVerified { why } bestDeployable { why } } } } problems { part message suggestions } } }",
    ),
    _graphql(
        "graphql: resolveKernel, nothing known",
        '{ resolveKernel(operation: "no-such-operation-zz") { mode problems { part message suggestions } } }',
    ),
    _graphql(
        "graphql: implementation facts",
        '{ implementation(id: "<implementation>") { license { declared concluded known permissive } installable '
        "installVariants { name kind pinned } sourceCode { available } deployability { deployable reasons } } "
        "runs(filter: {licenseKnown: true}, first: 1) { totalCount } }",
    ),
    _graphql(
        "graphql: citations of a cohort",
        '{ cohort(key: "<cohort>") { citation bib: citation(format: BIBTEX) csl: citation(format: CSL_JSON) '
        'other: citation(baseUrl: "https://mirror.example") } }',
    ),
    _graphql("graphql: a base URL refused", '{ cohort(key: "<cohort>") { citation(baseUrl: "javascript:x") } }'),
    _graphql(
        "graphql: runStanding",
        '{ runStanding(run: "<run1>", readAt: "<first>") { state eligible changed later { kind } readAt { id } } }',
    ),
    _get_graphql("graphql: GET", _RUN_DOC, variables=json.dumps({"id": "<run1>"})),
    _get_graphql("graphql: GET, variables not JSON", _RUN_DOC, variables="{nope"),
    _get_graphql("graphql: GET, an operation", "query A { registry { commit { id } } }", operationName="A"),
    _get_graphql("graphql: GET by a browser is GraphiQL", _RUN_DOC, headers=HTML),
    Probe("graphql: GraphiQL for a browser", "/graphql", headers=HTML),
    Probe("graphql: HEAD without a query", "/graphql", "HEAD"),
    Probe("graphql: GET without a query", "/graphql", headers=JSON),
    Probe(
        "graphql: not acceptable",
        "/graphql?query=%7Bregistry%7Bcommit%7Bid%7D%7D%7D",
        headers=(("accept", "text/csv"),),
    ),
    Probe("graphql: POST without a content type", "/graphql", "POST", JSON, "{}"),
    Probe("graphql: POST of text/plain", "/graphql", "POST", (*JSON, ("content-type", "text/plain")), "{}"),
    Probe(
        "graphql: POST of application/graphql",
        "/graphql",
        "POST",
        (*JSON, ("content-type", "application/graphql")),
        "{ registry { commit { id } } }",
    ),
    Probe("graphql: body not JSON", "/graphql", "POST", (*JSON, *POST_JSON), "{nope"),
    Probe("graphql: body not an object", "/graphql", "POST", (*JSON, *POST_JSON), "42"),
    Probe("graphql: empty batch", "/graphql", "POST", (*JSON, *POST_JSON), "[]"),
    Probe(
        "graphql: a batch",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps([{"query": "{ registry { commit { id } } }"}, {"query": _PINNED_DOC}, {"nope": 1}]),
    ),
    Probe(
        "graphql: a batch, pinned",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps([{"query": _PINNED_DOC}, {"query": _PINNED_DOC.replace("rank", "name")}]),
    ),
    Probe(
        "graphql: a batch too large",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps([{"query": "{ registry { commit { id } } }"}] * 11),
    ),
    Probe("graphql: a body too large", "/graphql", "POST", (*JSON, *POST_JSON), json.dumps({"query": "#" * 140_000})),
    Probe(
        "graphql: a query too large",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps({"query": "{ registry { commit { id } } }" + " " * 70_000}),
    ),
    Probe(
        "graphql: persisted query, not known yet",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps(
            {
                "extensions": {
                    "persistedQuery": {
                        "version": 1,
                        "sha256Hash": hashlib.sha256(b"{ registry { commit { id shortId } } }").hexdigest(),
                    }
                }
            }
        ),
    ),
    Probe(
        "graphql: persisted query, registered",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps(
            {
                "query": "{ registry { commit { id shortId } } }",
                "extensions": {
                    "persistedQuery": {
                        "version": 1,
                        "sha256Hash": hashlib.sha256(b"{ registry { commit { id shortId } } }").hexdigest(),
                    }
                },
            }
        ),
    ),
    Probe(
        "graphql: persisted query, by hash",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps(
            {
                "extensions": {
                    "persistedQuery": {
                        "version": 1,
                        "sha256Hash": hashlib.sha256(b"{ registry { commit { id shortId } } }").hexdigest(),
                    }
                }
            }
        ),
    ),
    Probe(
        "graphql: persisted query, wrong hash",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON),
        json.dumps(
            {
                "query": "{ registry { commit { id } } }",
                "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}},
            }
        ),
    ),
    _graphql("graphql: minCommit served", '{ registry(minCommit: "<main>") { commit { id } } }'),
    _graphql("graphql: minCommit not a full id", '{ registry(minCommit: "abc") { commit { id } } }'),
    _graphql("graphql: minCommit off main", '{ registry(minCommit: "<branch>") { commit { id } } }'),
    Probe(
        "graphql: min-commit header, bad",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON, ("x-registry-min-commit", "nope")),
        json.dumps({"query": "{ registry { commit { id } } }"}),
    ),
    Probe(
        "graphql: CORS preflight",
        "/graphql",
        "OPTIONS",
        (
            ("origin", "https://app.example"),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "content-type, apollo-require-preflight"),
        ),
    ),
    Probe(
        "graphql: CORS simple request",
        "/graphql",
        "POST",
        (*JSON, *POST_JSON, ("origin", "https://app.example")),
        json.dumps({"query": "{ registry { commit { id } } }"}),
    ),
    Probe("graphiql: an asset", "/static/graphiql/<graphiql>/graphiql.min.css"),
    Probe(
        "graphiql: an asset, brotli",
        "/static/graphiql/<graphiql>/graphiql.min.js",
        headers=(("accept-encoding", "br"),),
    ),
    Probe(
        "graphiql: an asset, not modified", "/static/graphiql/<graphiql>/graphiql.min.css", tag_of="graphiql: an asset"
    ),
    Probe("graphiql: an old version", "/static/graphiql/0000000000000000/graphiql.min.css"),
    Probe("graphiql: no such asset", "/static/graphiql/<graphiql>/nope.js"),
]


_QUESTION = "c1_metric=ttft_ms&c1_op=%3C%3D&c1_value=2000&objective=output_token_throughput_tps"
"""A question to the serving resolver's form: TTFT p99 at most 2 s, most throughput first."""


def _page_probes(kind: str, path: str, *, pinned: bool = True, twin: str | None = None) -> list[Probe]:
    """A page at the head as HTML, as JSON by Accept and by its `.json` twin, and pinned to main's head."""
    if twin is None:
        base, _, query = path.partition("?")
        twin = base + ".json" + (f"?{query}" if query else "")
    probes = [
        Probe(f"page {kind}: HTML", path, headers=HTML),
        Probe(f"page {kind}: JSON by Accept", path, headers=JSON),
        Probe(f"page {kind}: the .json twin", twin, headers=HTML),
        Probe(f"page {kind}: no Accept", path),
        Probe(f"page {kind}: HTML, not modified", path, headers=HTML, tag_of=f"page {kind}: HTML"),
    ]
    if pinned:
        probes += [
            Probe(f"page {kind}: pinned, HTML", "/at/<main>" + path, headers=HTML),
            Probe(f"page {kind}: pinned, JSON", "/at/<main>" + twin, headers=HTML),
            Probe(f"page {kind}: pinned to a prefix", "/at/<main12>" + path, headers=HTML),
            Probe(f"page {kind}: pinned off main", "/at/<branch>" + path, headers=HTML),
            Probe(f"page {kind}: pinned off main, JSON", "/at/<branch>" + twin, headers=HTML),
        ]
    return probes


PAGE_PROBES = [
    Probe("page home: HTML", "/", headers=HTML),
    Probe("page home: JSON index by Accept", "/", headers=JSON),
    Probe("page home: no Accept", "/"),
    Probe("page home: /index.json", "/index.json", headers=HTML),
    Probe("page home: pinned", "/at/<main>", headers=HTML),
    Probe("page home: pinned, JSON", "/at/<main>/index.json", headers=HTML),
    Probe("page home: pinned to a prefix", "/at/<main12>", headers=HTML),
    Probe("page home: pinned to an older commit", "/at/<first>", headers=HTML),
    Probe("page home: pinned off main", "/at/<branch>", headers=HTML),
    Probe("page home: pinned to nothing", "/at/0000000000000000000000000000000000000000", headers=HTML),
    *_page_probes("leaderboard", "/cohorts/<cohort>"),
    Probe("page leaderboard: next page", "/cohorts/<cohort>?after=<cohort_after>", headers=HTML),
    Probe("page leaderboard: minTrust", "/cohorts/<cohort>?minTrust=VERIFIED", headers=HTML),
    Probe("page leaderboard: bad minTrust", "/cohorts/<cohort>?minTrust=SURE", headers=HTML),
    Probe("page leaderboard: bad minTrust, JSON", "/cohorts/<cohort>.json?minTrust=SURE", headers=HTML),
    Probe("page leaderboard: bad cursor", "/cohorts/<cohort>?after=bogus", headers=HTML),
    Probe("page leaderboard: bad cursor, JSON", "/cohorts/<cohort>?after=bogus", headers=JSON),
    Probe("page leaderboard: no such cohort", "/cohorts/sha256:0000", headers=HTML),
    Probe("page leaderboard: no such cohort, JSON", "/cohorts/sha256:0000.json", headers=HTML),
    *_page_probes("records", "/records"),
    *_page_probes("compare", "/compare?run=<run1>&run=<run2>", twin="/compare.json?run=<run1>&run=<run2>"),
    Probe("page compare: one run", "/compare?run=<run1>", headers=HTML),
    Probe("page compare: one run, JSON", "/compare.json?run=<run1>", headers=HTML),
    *_page_probes("search", "/search?q=<search>", twin="/search.json?q=<search>"),
    Probe("page search: empty", "/search", headers=HTML),
    # One past the search limit of every edge (512 characters; the page's own limit was 500 when recorded).
    Probe("page search: too long", "/search?q=" + "x" * 513, headers=HTML),
    Probe("page search: too long, JSON", "/search.json?q=" + "x" * 513, headers=HTML),
    *_page_probes("operation", "/operations/<operation>"),
    Probe("page operation: missing", "/operations/no-such-operation", headers=HTML),
    Probe("page operation: missing, JSON", "/operations/no-such-operation.json", headers=HTML),
    *_page_probes("implementation", "/implementations/<implementation>"),
    Probe("page implementation: missing", "/implementations/nope", headers=HTML),
    *_page_probes("project", "/projects/<project>"),
    Probe("page project: missing, JSON", "/projects/nope", headers=JSON),
    *_page_probes("source", "/sources/<source>"),
    Probe("page source: missing", "/sources/nope", headers=HTML),
    *_page_probes("commit", "/commits/<main>", pinned=False),
    Probe("page commit: an older one", "/commits/<first>", headers=HTML),
    Probe("page commit: a prefix", "/commits/<main12>", headers=HTML),
    Probe("page commit: not an id", "/commits/HEAD", headers=HTML),
    Probe("page commit: not an id, JSON", "/commits/HEAD.json", headers=HTML),
    Probe("page commit: off main", "/commits/<branch>", headers=HTML),
    Probe("page commit: unknown", "/commits/0000000000000000000000000000000000000000", headers=HTML),
    *_page_probes("feed", "/feed"),
    Probe("page feed: since", "/feed?since=<first>", headers=HTML),
    Probe("page feed: since, not an id", "/feed?since=HEAD", headers=HTML),
    *_page_probes("exports", "/exports"),
    Probe("page run status", "/runs/<run1>/status?readAt=<first>", headers=HTML),
    Probe("page run status: JSON", "/runs/<run1>/status.json?readAt=<first>", headers=HTML),
    Probe("page run status: no reader's commit", "/runs/<run1>/status", headers=HTML),
    Probe("page run status: no such run", "/runs/sha256:" + "0" * 64 + "/status", headers=HTML),
    Probe("page run status: a bad readAt", "/runs/<run1>/status?readAt=nope", headers=HTML),
    Probe("page search: a kernel request", "/search?q=<request_query>", headers=HTML),
    Probe("page run: HTML", "/at/<main>/runs/<run1>", headers=HTML),
    Probe("page run: HTML again (cached)", "/at/<main>/runs/<run1>", headers=HTML),
    Probe("page run: HTML, not modified", "/at/<main>/runs/<run1>", headers=HTML, tag_of="page run: HTML"),
    Probe("page run: dossier by Accept", "/at/<main>/runs/<run1>", headers=JSON),
    Probe("page run: dossier, no Accept", "/at/<main>/runs/<run1>"),
    Probe("page run: dossier, .json twin", "/at/<main>/runs/<run1>.json", headers=HTML),
    Probe("page run: dossier, brotli", "/at/<main>/runs/<run1>", headers=(*JSON, ("accept-encoding", "br"))),
    Probe(
        "page run: dossier, not modified", "/at/<main>/runs/<run1>", headers=JSON, tag_of="page run: dossier by Accept"
    ),
    Probe("page run: published earlier", "/at/<main>/runs/<run_first>", headers=HTML),
    Probe("page run: pinned to a prefix", "/at/<main12>/runs/<run1>", headers=HTML),
    Probe("page run: pinned to a prefix, JSON", "/at/<main12>/runs/<run1>", headers=JSON),
    Probe("page run: pinned off main", "/at/<branch>/runs/<run1>", headers=HTML),
    Probe("page run: pinned off main, JSON", "/at/<branch>/runs/<run1>", headers=JSON),
    Probe("page run: unknown commit", "/at/0000000000000000000000000000000000000000/runs/<run1>", headers=HTML),
    Probe("page run: a bad digest", "/at/<main>/runs/sha256:nope", headers=HTML),
    Probe("page run: no such run", "/at/<main>/runs/sha256:" + "0" * 64, headers=HTML),
    Probe("page run: no such run, JSON", "/at/<main>/runs/sha256:" + "0" * 64, headers=JSON),
    Probe("page run: not a run", "/at/<main>/runs/<operation_digest>", headers=HTML),
    Probe("page run: not a run, JSON", "/at/<main>/runs/<operation_digest>.json", headers=HTML),
    Probe("page run: at the head redirects", "/runs/<run1>", headers=HTML),
    Probe("page run: at the head, a bad digest", "/runs/nope", headers=HTML),
    Probe("page run: a KernelIndex id", "/runs/<uuid>", headers=HTML),
    Probe("page run: an unknown KernelIndex id", "/runs/00000000-0000-4000-8000-000000000000", headers=HTML),
    Probe("page serving run: HTML", "/at/<main>/runs/<serving_run>", headers=HTML, only="embedded"),
    Probe("page serving run: dossier", "/at/<main>/runs/<serving_run>", headers=JSON, only="embedded"),
    Probe("page serving run: .json twin", "/at/<main>/runs/<serving_run>.json", headers=HTML, only="embedded"),
    *[
        Probe(p.name, p.path, p.method, p.headers, p.body, p.tag_of, only="embedded")
        for p in _page_probes("serving cohort", "/serving/cohorts/<serving_cohort>")
    ],
    Probe("page serving cohort: missing", "/serving/cohorts/nope", headers=HTML),
    *_page_probes("operations", "/operations"),
    Probe("page operations: a family", "/operations?family=rmsnorm&q=h4096", headers=HTML),
    Probe("page operations: too long", "/operations?q=" + "x" * 201, headers=HTML),
    *_page_probes("gpus", "/gpus"),
    *_page_probes("gpu", "/gpus/<gpu>"),
    Probe("page gpu: missing", "/gpus/b200", headers=HTML),
    Probe("page gpu: missing, JSON", "/gpus/b200.json", headers=HTML),
    *_page_probes("models", "/models"),
    *[
        Probe(p.name, p.path, p.method, p.headers, p.body, p.tag_of, only="embedded")
        for p in _page_probes("model", "/models/<model>")
    ],
    Probe("page model: missing", "/models/nope", headers=HTML),
    *_page_probes("projects", "/projects"),
    *_page_probes("sources", "/sources"),
    *_page_probes("serving", "/serving"),
    Probe("page serving: a question", "/serving?model=<model>&" + _QUESTION, headers=HTML, only="embedded"),
    Probe("page serving: a question, JSON", "/serving.json?model=<model>&" + _QUESTION, headers=HTML, only="embedded"),
    Probe("page serving: not a number", "/serving?c1_metric=ttft_ms&c1_op=%3C%3D&c1_value=soon", headers=HTML),
    Probe("page serving: an unknown metric, JSON", "/serving.json?c1_metric=tps&c1_op=%3C%3D&c1_value=1", headers=HTML),
    Probe("page compare: Markdown", "/compare.md?run=<run1>&run=<run2>", headers=HTML),
    Probe("page compare: CSV", "/compare.csv?run=<run1>&run=<run2>", headers=HTML),
    Probe("page compare: CSV, pinned", "/at/<main>/compare.csv?run=<run1>&run=<run2>", headers=HTML),
    Probe("page compare: CSV of one run", "/compare.csv?run=<run1>", headers=HTML),
    # The preview images' bytes are Pillow's and zlib's: tests/test_previews.py checks them, not a recording.
    Probe("card run: pinned to a prefix", "/at/<main12>/runs/<run1>/card.png"),
    Probe("card run: no such run", "/at/<main>/runs/sha256:" + "0" * 64 + "/card.png"),
    Probe("card cohort: no such cohort", "/at/<main>/cohorts/sha256:0000/card.png"),
    Probe("card operation: pinned to a prefix", "/at/<main12>/operations/<operation>/card.png"),
    Probe("card operation: at the head", "/operations/<operation>/card.png"),
    Probe("badge run", "/badges/runs/<run1>.svg"),
    Probe("badge run: not modified", "/badges/runs/<run1>.svg", tag_of="badge run"),
    Probe("badge run: pinned", "/at/<main>/badges/runs/<run1>.svg"),
    Probe("badge run: pinned off main", "/at/<branch>/badges/runs/<run1>.svg"),
    Probe("badge run: unranked", "/badges/runs/<run_unranked>.svg"),
    Probe("badge run: missing", "/badges/runs/nope.svg"),
    Probe("badge implementation", "/badges/implementations/<implementation>.svg"),
    Probe("badge implementation: pinned", "/at/<main>/badges/implementations/<implementation>.svg"),
    Probe("badge implementation: missing", "/badges/implementations/nope.svg"),
    Probe("static: the stylesheet", "/static/site.css", static=True),
    Probe("static: missing", "/static/nope.css", static=True),
]

PERMALINK_PROBES = [
    Probe("manifest: pinned", "/at/<main>/manifests/<operation_digest>"),
    Probe("manifest: not modified", "/at/<main>/manifests/<operation_digest>", tag_of="manifest: pinned"),
    Probe("manifest: published earlier", "/at/<main>/manifests/<run_first>"),
    Probe("manifest: pinned to a prefix", "/at/<main12>/manifests/<operation_digest>"),
    Probe("manifest: pinned by name", "/at/main/manifests/<operation_digest>"),
    Probe("manifest: off main", "/at/<branch>/manifests/<operation_digest>"),
    Probe("manifest: unknown commit", "/at/0000000000000000000000000000000000000000/manifests/<operation_digest>"),
    Probe("manifest: a bad digest", "/at/<main>/manifests/sha256:XYZ"),
    Probe("manifest: missing", "/at/<main>/manifests/sha256:" + "0" * 64),
    Probe("manifest: at the head redirects", "/manifests/<operation_digest>"),
    Probe("manifest: at the head, a bad digest", "/manifests/nope"),
]

PUBLISHING_PROBES = [
    Probe("feed records", "/feeds/records.atom"),
    Probe("feed records: not modified", "/feeds/records.atom", tag_of="feed records"),
    Probe(
        "feed records: not modified since",
        "/feeds/records.atom",
        headers=(("if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT"),),
    ),
    Probe(
        "feed records: modified since",
        "/feeds/records.atom",
        headers=(("if-modified-since", "Mon, 01 Jan 1990 00:00:00 GMT"),),
    ),
    Probe("feed records: pinned", "/at/<main>/feeds/records.atom"),
    Probe("feed records: pinned to a prefix", "/at/<main12>/feeds/records.atom"),
    Probe("feed records: pinned off main", "/at/<branch>/feeds/records.atom"),
    Probe("feed records: pinned to nothing", "/at/nope/feeds/records.atom"),
    Probe("feed publications", "/feeds/publications.atom"),
    Probe("feed publications: pinned to the first commit", "/at/<first>/feeds/publications.atom"),
    Probe("feed operation", "/feeds/operations/<operation>.atom"),
    Probe("feed operation: pinned", "/at/<main>/feeds/operations/<operation>.atom"),
    Probe("feed operation: missing", "/feeds/operations/nope.atom"),
    Probe("feed cohort", "/feeds/cohorts/<cohort>.atom"),
    Probe("feed cohort: missing", "/feeds/cohorts/sha256:0000.atom"),
    Probe("export: latest", "/exports/latest.json"),
    Probe("export: latest, not modified", "/exports/latest.json", tag_of="export: latest"),
    Probe("export: HEAD", "/at/<main>/export.jsonl.zst", "HEAD"),
    Probe("export: GET", "/at/<main>/export.jsonl.zst"),
    Probe("export: not modified", "/at/<main>/export.jsonl.zst", tag_of="export: HEAD"),
    Probe("export: pinned to a prefix", "/at/<main12>/export.jsonl.zst"),
    Probe("export: off main", "/at/<branch>/export.jsonl.zst"),
    Probe("export: unknown", "/at/nope/export.jsonl.zst"),
    Probe("llms.txt", "/llms.txt"),
    Probe("robots.txt", "/robots.txt"),
    Probe("sitemap", "/sitemap.xml"),
    Probe("sitemap: the site", "/sitemaps/site.xml"),
    Probe("sitemap: runs", "/sitemaps/runs-1.xml"),
    Probe("sitemap: past the last", "/sitemaps/runs-9.xml"),
    Probe("sitemap: no such", "/sitemaps/nope.xml"),
    Probe("feed changes", "/feeds/changes.json"),
    Probe("feed changes: not modified", "/feeds/changes.json", tag_of="feed changes"),
    Probe("feed changes: since", "/feeds/changes.json?since=<first>"),
    Probe("feed changes: pinned", "/at/<main>/feeds/changes.json"),
    Probe("feed changes: pinned to a prefix", "/at/<main12>/feeds/changes.json"),
    Probe("feed changes: pinned off main", "/at/<branch>/feeds/changes.json"),
    Probe("feed changes: since, not an id", "/feeds/changes.json?since=HEAD"),
    Probe("schema.graphql", "/schema.graphql"),
    Probe("schema.graphql: not modified", "/schema.graphql", tag_of="schema.graphql"),
    Probe("sitemap: the site, at the root", "/sitemap-site.xml"),
    Probe("sitemap: operations", "/sitemap-operations-1.xml"),
    Probe("sitemap: runs, at the root", "/sitemap-runs-1.xml"),
    Probe("sitemap: no such family", "/sitemap-nope-1.xml"),
]

OPERATIONS_PROBES = [
    Probe("healthz", "/healthz", health=True),
    Probe("healthz: POST", "/healthz", "POST"),
    Probe("refresh: without a secret", "/hooks/refresh", "POST"),
    Probe("refresh: with the secret", "/hooks/refresh", "POST", (("authorization", "Bearer s3cret"),)),
    Probe("refresh: GET", "/hooks/refresh"),
    Probe("404", "/no/such/page", headers=HTML),
    Probe("404, JSON", "/no/such/page", headers=JSON),
    _mcp("mcp: tools/list", "tools/list", {}),
    _mcp(
        "mcp: a tool",
        "tools/call",
        {"name": "get_benchmark_evidence", "arguments": {"idOrDigest": "<run1>", "at": "<main>"}},
    ),
    _mcp("mcp: a tool's refusal", "tools/call", {"name": "get_operation", "arguments": {"idOrSlug": "nope"}}),
    _mcp("mcp: a resource", "resources/read", {"uri": "kernelindex://at/<main>/manifests/<operation_digest>"}),
]

PROBES = [*GRAPHQL_PROBES, *PAGE_PROBES, *PERMALINK_PROBES, *PUBLISHING_PROBES, *OPERATIONS_PROBES]

FAULT_PROBES = [
    Probe("fault: a manifest", "/at/<main>/manifests/<run_first>"),
    Probe("fault: a run's dossier", "/at/<main>/runs/<run_first>", headers=JSON),
    Probe("fault: a run's page", "/at/<main>/runs/<run_first>", headers=HTML),
    _graphql("fault: graphql", '{ run(id: "<run_first>") { name manifest } }'),
    _graphql("fault: graphql, pinned", '{ registry(at: "<main>") { run(id: "<run_first>") { name manifest } } }'),
    _mcp("fault: mcp", "resources/read", {"uri": "kernelindex://at/<main>/manifests/<run_first>"}),
    Probe("fault: healthz", "/healthz", health=True),
]
"""Asked of the small registry after one stored run was altered under the server: the faults' answers."""


# The registries --------------------------------------------------------------------------------------

BUILT_SEARCH = "rmsnorm"
"""What the small registry's search probes ask."""

EMBEDDED_IDS = {
    "main": "667fb1b393371afe7b1663540a73b8bc9ee41f9b",
    "first": "e775d39b6768675ff8eb086da76420493425c1a4",  # the seeds' commit
    "branch": "e775d39b6768675ff8eb086da76420493425c1a4",  # the embedded registry has no branch: an older commit
    "run1": "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308",  # seed 000
    "run2": "sol-submission-16043",
    "run_first": "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308",
    "run_unranked": "sha256:8855f7d9b77891cfca2a37dd9d307883c74d4582a3fa14a525cebb413c0c133d",
    "cohort": "sha256:39d43c1992795178d10cba3e0981ac913d0242d5d34e9a9cd4ec9ed763039662",  # the largest
    "operation": "060-fused-attention-qk-matmul-scale-mask-softmax-backward",
    "implementation": "sol-submission-6709",
    "project": "sol-user-recursive",
    "source": "sol-execbench",
    "search": "op:rmsnorm b200",
    "serving_run": "sha256:01c6ab47eceddeb82079274a54b28f7f1e34e9c7de5f355dbe973f1e8683334f",
    "serving_cohort": "sha256:b47faeb4eecab1be28bc6c2dfff86e36d8714f160baa24f868c69785c807c9b3",
    "uuid": "01a0032e-d57a-74d8-8b5c-15a3ea25ed78",
    "request_operation": "rmsnorm",  # the title of Liger-Kernel's RMSNorm
    "request_gpu": "A100",
    "request_query": "rmsnorm+a100+bf16+hidden%3D4096",
    "gpu": "nvidia-b200",
    "model": "mlperf-llama2-70b",
}


@dataclass(frozen=True)
class Registry:
    name: str
    running: Running
    ids: dict[str, str]


def _branch_commit(store: registry.GitStore, parent: str, doc: dict[str, Any]) -> str:
    """A commit of a pull-request branch (`refs/heads/pr`) adding `doc`, with a fixed signature."""
    repo = pygit2.Repository(str(store.git_dir))
    manifest = registry.load_manifest(json.dumps(doc).encode(), "pr.json")
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(parent).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(manifest.path, repo.create_blob(manifest.stored_bytes()), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", TEST_TIME + 200_000, 0)
    tree = index.write_tree(repo)
    return str(repo.create_commit("refs/heads/pr", person, person, "Add a run\n", tree, [pygit2.Oid(hex=parent)]))


def _built(path: Path) -> dict[str, str]:
    """A small registry in two commits of main and a branch: the basic scenario, then a second
    implementation's runs (one source-native, one with an interval), an attestation and a run without
    a value; the branch adds a run main never got."""
    store = registry.GitStore.init(path)
    s = basic_scenario()
    first = commit_manifests(store, s.docs)
    other = make_operation("layernorm-h4096", family="layernorm")
    reported = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 8500, "2026-08-04T12:00:00Z",
                        confidence95=(8300, 8700), name="run-b2", source_native="test-source")  # fmt: skip
    unranked = make_run(s.implementations[0], s.workload, s.protocol, s.environment, None, name="run-no-value")
    kernel_c = make_implementation(other, "kernel-c")
    kernel_c["metadata"]["labels"] = {"project": "test-kernels"}
    main = commit_manifests(
        store,
        [other, make_project("test-kernels"), kernel_c, reported, unranked, make_attestation(s.runs[0])],
        TEST_TIME + 86_400,
        subject="Add a second batch",
        source="test-source",
    )
    branch = _branch_commit(
        store, main, make_run(s.implementations[1], s.workload, s.protocol, s.environment, 100, name="pr-run")
    )
    graph = registry.snapshots.Snapshots(path)
    graph.load()
    cohort = graph.head.facts[digest_of(s.runs[0])].cohort
    assert cohort is not None
    return {
        "main": main,
        "first": first,
        "branch": branch,
        "run1": digest_of(s.runs[0]),
        "run2": digest_of(s.runs[1]),
        "run_first": digest_of(s.runs[2]),
        "run_unranked": digest_of(unranked),
        "cohort": cohort,
        "operation": "rmsnorm-h4096",
        "implementation": "kernel-a",
        "project": "test-kernels",
        "source": "test-source",
        "search": BUILT_SEARCH,
        "uuid": "01a0032e-d57a-74d8-8b5c-15a3ea25ed78",
        "request_operation": "rmsnorm",  # the basic scenario's operation is of the family rmsnorm
        "request_gpu": "B200",
        "request_query": "rmsnorm+b200+tokens%3D2048",
        "gpu": "nvidia-b200",
    }


@pytest.fixture(scope="module")
def embedded() -> Iterator[Registry]:
    with serve(EMBEDDED_REPO) as running:
        yield Registry("embedded", running, EMBEDDED_IDS)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    path = tmp_path_factory.mktemp("golden") / "manifests.git"
    ids = _built(path)
    with serve(
        path, base_url="https://registry.example", hook_secret="s3cret", cors_origins=("https://app.example",)
    ) as running:
        yield Registry("built", running, ids)


@pytest.fixture(scope="module")
def tampered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """The small registry, served, then one run's stored bytes altered behind the server's back."""
    path = tmp_path_factory.mktemp("golden-tampered") / "manifests.git"
    ids = _built(path)
    with serve(path) as running:
        store = registry.GitStore(path)
        entry = store.find_entry(ids["main"], ids["run_first"])
        assert entry is not None
        loose = store.git_dir / "objects" / entry.oid[:2] / entry.oid[2:]
        forged = store.read_blob(entry.oid).replace(b'"run-b1"', b'"run-ZZ"')
        loose.chmod(0o644)
        loose.write_bytes(zlib.compress(b"blob %d\0" % len(forged) + forged))
        yield Registry("tampered", running, ids)


# Asking and comparing -------------------------------------------------------------------------------

_TOKEN = re.compile(r"(?:<|%3C)([a-z_0-9]+)(?:>|%3E)")


def _filled(text: str, ids: dict[str, str]) -> str:
    return _TOKEN.sub(lambda m: ids.get(m.group(1), m.group(0)), text)


def _ids(reg: Registry) -> dict[str, str]:
    ids = dict(reg.ids)
    ids["main12"] = ids["main"][:12]
    ids["graphiql"] = GraphiQL().version
    ids.setdefault("operation_digest", _operation_digest(reg))
    ids.setdefault("cohort_after", _cursor(reg))
    return ids


def _operation_digest(reg: Registry) -> str:
    found = reg.running.graphql(
        "query($id: String!) { operation(id: $id) { digest } }", {"id": reg.ids["operation"]}
    ).json()
    return str(found["data"]["operation"]["digest"])


def _cursor(reg: Registry) -> str:
    document = "query($key: String!) { cohort(key: $key) { entries(first: 1) { pageInfo { endCursor } } } }"
    found = reg.running.graphql(document, {"key": reg.ids["cohort"]})
    return str(found.json()["data"]["cohort"]["entries"]["pageInfo"]["endCursor"])


def _ask(reg: Registry, probe: Probe, ids: dict[str, str], tags: dict[str, str]) -> dict[str, Any]:
    headers = {"accept-encoding": "identity", **dict(probe.headers)}
    if probe.tag_of is not None:
        headers["if-none-match"] = tags.get(probe.tag_of, '"none"')
    body = _filled(probe.body, ids).encode() if probe.body is not None else None
    with reg.running.client.stream(
        probe.method, _filled(probe.path, ids), headers=headers, content=body, follow_redirects=False
    ) as response:
        raw = b"".join(response.iter_raw())
    kept = {k: response.headers[k] for k in KEPT_HEADERS if k in response.headers}
    if "allow" in kept:  # Starlette lists a route's methods from a set: their order is not part of the answer
        kept["allow"] = ", ".join(sorted(kept["allow"].split(", ")))
    if "etag" in kept:
        tags[probe.name] = kept["etag"]
    if probe.static:
        kept.pop("etag", None)
        kept.pop("last-modified", None)
    if probe.health:
        raw = _HEALTH_CLOCKS.sub(lambda m: b'"' + m.group(1) + b'":"<' + m.group(1) + b'>"', raw)
    return {"name": probe.name, "status": response.status_code, "headers": kept, "body": _kept_body(raw)}


def _kept_body(raw: bytes) -> Any:
    if len(raw) > LARGEST_KEPT:
        return {"length": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode()}


def _answers(reg: Registry, probes: list[Probe]) -> list[dict[str, Any]]:
    ids = _ids(reg)
    tags: dict[str, str] = {}
    return [_ask(reg, probe, ids, tags) for probe in probes if probe.only in (None, reg.name)]


def _recording(name: str) -> Path:
    return GOLDEN / f"{name}.json.zst"


def _check(reg: Registry, probes: list[Probe] = PROBES) -> None:
    answers = _answers(reg, probes)
    path = _recording(reg.name)
    if RECORDING:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        text = json.dumps(answers, indent=1, ensure_ascii=False, sort_keys=True).encode()
        path.write_bytes(zstandard.ZstdCompressor(level=19).compress(text))
        return
    recorded = json.loads(zstandard.ZstdDecompressor().decompress(path.read_bytes()))
    assert [a["name"] for a in answers] == [r["name"] for r in recorded], "the probes changed: record again"
    differ = []
    for answer, expected in zip(answers, recorded, strict=True):
        if answer != expected:
            differ.append(_difference(answer, expected))
    assert not differ, f"{len(differ)} of {len(answers)} answers changed:\n" + "\n".join(differ[:20])


def _difference(answer: dict[str, Any], expected: dict[str, Any]) -> str:
    parts = [f"- {answer['name']}:"]
    for key in ("status", "headers"):
        if answer[key] != expected[key]:
            parts.append(f"  {key}: {expected[key]!r} -> {answer[key]!r}")
    if answer["body"] != expected["body"]:
        was, now = str(expected["body"]), str(answer["body"])
        at = next((i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), min(len(was), len(now)))
        parts.append(
            f"  body from {at}: {was[max(0, at - 60) : at + 120]!r}\n    -> {now[max(0, at - 60) : at + 120]!r}"
        )
    return "\n".join(parts)


def test_the_embedded_registry_answers_as_recorded(embedded: Registry) -> None:
    _check(embedded)


def test_a_small_registry_answers_as_recorded(built: Registry) -> None:
    _check(built)


def test_the_faults_answer_as_recorded(tampered: Registry) -> None:
    _check(tampered, FAULT_PROBES)


def test_every_probe_has_its_own_name() -> None:
    names = [p.name for p in [*PROBES, *FAULT_PROBES]]
    assert len(names) == len(set(names))


def test_every_change_names_a_probe() -> None:
    assert set(CHANGES) <= {p.name for p in [*PROBES, *FAULT_PROBES]}


# Deliberate changes since the first recording ------------------------------------------------------------

# Each is (why, the probes it concerns). The recordings were made again after these changes, so a recorded
# answer is the expected one; the reasons stay so that whoever meets a changed answer learns why. The headers
# themselves are checked against docs/security.md by tests/test_edges_http.py.

_GRAPHIQL = {
    "graphql: GET by a browser is GraphiQL",
    "graphql: GraphiQL for a browser",
    "graphql: HEAD without a query",
}

_NOT_FOUND = {"static: missing", "404", "404, JSON"}

_SEARCH_TWINS = {
    "page search: JSON by Accept",
    "page search: the .json twin",
    "page search: no Accept",
    "page search: pinned, JSON",
    "page search: pinned off main, JSON",
}


def _named(*names: str) -> Callable[[str], bool]:
    return lambda name: name in names


_CHANGES: list[tuple[str, Callable[[str], bool]]] = [
    (
        "an error page and the error shape answer the same URL by Accept: they vary on it",
        lambda name: name.startswith(("page ", "fault: a run's page")) or name in _NOT_FOUND,
    ),
    (
        "an unknown path is the registry's 404 (a page, or the error shape), not Starlette's text",
        _NOT_FOUND.__contains__,
    ),
    (
        "every answer carries the security headers of its media type (Content-Security-Policy, nosniff; framing "
        "protection and Referrer-Policy on HTML and SVG) and says how to cache it",
        lambda name: True,
    ),
    (
        "/ answers the home page or the API's index by Accept: the index varies on it and revalidates",
        _named("page home: JSON index by Accept", "page home: no Accept"),
    ),
    (
        "GraphiQL's page holds no inline script or style; it varies on Accept and Accept-Encoding",
        _GRAPHIQL.__contains__,
    ),
    (
        "a search's cost counts its passes over the search index",
        _SEARCH_TWINS.__contains__,
    ),
    (
        "the search page's limit is every edge's: 512 characters, SEARCH_TOO_LARGE",
        lambda n: n.startswith("page search: too long"),
    ),
    (
        "the pages' stylesheet revalidates",
        _named("static: the stylesheet"),
    ),
    (
        "exports are served from a cache with their digest",
        _named("export: HEAD", "export: GET", "export: off main"),
    ),
    (
        "/exports/latest.json names the export's sha256 and size",
        _named("export: latest", "export: latest, not modified"),
    ),
    (
        "/healthz counts the refresh hook's runs",
        _named("healthz", "fault: healthz"),
    ),
    (
        "search_catalog's query takes up to 512 characters",
        _named("mcp: tools/list"),
    ),
    (
        "/healthz says how main is followed (`following`), and `degraded` while main goes unchecked",
        _named("healthz", "fault: healthz"),
    ),
    (
        "a page of 1 KB or more (HTML, its JSON twin, another format) goes out in the content coding the client "
        "accepts, so it varies on Accept-Encoding too (recorded with `identity`: the bytes are unchanged; refusals, "
        "redirects and smaller pages are as they were)",
        lambda name: name.startswith("page "),
    ),
]

for _probe in [*PROBES, *FAULT_PROBES]:
    _applied = [why for why, concerns in _CHANGES if concerns(_probe.name)]
    if _applied:
        CHANGES[_probe.name] = "; ".join(_applied)

for _why, _names in _REASONS.items():
    for _name in _names:
        CHANGES[_name] = f"{CHANGES[_name]}; {_why}" if _name in CHANGES else _why

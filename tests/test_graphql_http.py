"""GraphQL over HTTP as standard clients use it: media types and status codes, persisted
queries, batches, compression, entity tags, CORS, HEAD, object ids, pagination both ways, GraphiQL's
assets. Against a served copy of the embedded registry."""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import brotli
import httpx
import orjson
import pytest
import zstandard
from server import Running, serve

from kernelindex.core.settings import EMBEDDED_REPO

pytestmark = pytest.mark.slow

GQL = "application/graphql-response+json"
SEEDS = "314f4d24fd889fc1048942a520881d7750ef542c"  # before the seed records: seed 000's cohort held one run
COHORT = "92bc0be5b5ce9f52"  # seed 000's cohort: 2 runs at the head, 1 at SEEDS (docs/api.md, "Pinning")
LARGEST = "39d43c1992795178"  # the largest corpus cohort: 260 runs (docs/api.md)


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _post(api: Running, body: object, **headers: str) -> httpx.Response:
    return api.client.post(
        "/graphql", content=orjson.dumps(body), headers={"content-type": "application/json", **headers}
    )


# Media types and status codes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "media", "status"),
    [
        (GQL, GQL, 400),
        ("application/json", "application/json", 200),
        ("*/*", "application/json", 200),
        (f"{GQL}, application/json;q=0.9", GQL, 400),
        ("application/json, " + GQL + ";q=0.5", "application/json", 200),
    ],
)
def test_a_request_error_is_400_only_to_clients_of_the_graphql_media_type_and_never_has_data(
    api: Running, accept: str, media: str, status: int
) -> None:
    response = _post(api, {"query": "{ nope }"}, accept=accept)
    assert (response.status_code, response.headers["content-type"].split(";")[0]) == (status, media)
    body = response.json()
    assert "data" not in body and body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


def test_an_answer_with_data_is_200_in_either_media_type(api: Running) -> None:
    for accept in (GQL, "application/json"):
        response = _post(api, {"query": "{ commit { id } }"}, accept=accept)
        assert response.status_code == 200 and response.headers["content-type"].startswith(accept)


def test_refused_before_graphql(api: Running) -> None:
    no_type = api.client.post("/graphql", content=b'{"query": "{ commit { id } }"}')
    assert no_type.status_code == 415 and no_type.json()["errors"][0]["extensions"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    text = api.client.post("/graphql", content=b"x", headers={"content-type": "text/plain"})
    assert text.status_code == 415
    html_only = _post(api, {"query": "{ commit { id } }"}, accept="image/png")
    assert html_only.status_code == 406


def test_head_answers_like_get(api: Running) -> None:
    assert api.client.head("/graphql").status_code == 200
    with_query = api.client.head("/graphql", params={"query": "{ commit { id } }"})
    assert with_query.status_code == 200 and with_query.headers["etag"]


# Persisted queries ----------------------------------------------------------------------------------


def test_automatic_persisted_queries_round_trip(api: Running) -> None:
    query = "query ApqProbe { records(first: 1) { totalCount } }"
    digest = hashlib.sha256(query.encode()).hexdigest()  # Apollo's link hashes the printed document
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": digest}}
    miss = _post(api, {"extensions": extensions})
    assert miss.status_code == 200
    assert miss.json()["errors"] == [
        {"message": "PersistedQueryNotFound", "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}
    ]
    assert _post(api, {"extensions": extensions}, accept=GQL).status_code == 400  # a request error to those clients
    registered = _post(api, {"query": query, "extensions": extensions})
    assert registered.json()["data"]["records"]["totalCount"] > 0
    hit = _post(api, {"extensions": extensions})
    assert hit.json()["data"] == registered.json()["data"]
    got = api.client.get("/graphql", params={"extensions": orjson.dumps(extensions).decode()})
    assert got.status_code == 200 and got.json()["data"] == registered.json()["data"] and got.headers["etag"]
    wrong = _post(api, {"query": query + " ", "extensions": extensions})
    assert wrong.status_code == 400 and "not the document's" in wrong.json()["errors"][0]["message"]


def test_an_allow_list_runs_only_its_documents(tmp_path: Path) -> None:
    trusted = "{ commit { id } }"
    digest = hashlib.sha256(trusted.encode()).hexdigest()
    path = tmp_path / "persisted-documents.json"
    path.write_bytes(orjson.dumps({digest: trusted}))
    with serve(EMBEDDED_REPO, trusted_documents_path=path) as running:
        by_hash = _post(running, {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": digest}}})
        assert by_hash.status_code == 200 and by_hash.json()["data"]["commit"]["id"]
        assert _post(running, {"query": trusted}).status_code == 200
        other = _post(running, {"query": "{ runs { totalCount } }"})
        assert (
            other.status_code == 403
            and other.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_ALLOWED"
        )
        unknown = hashlib.sha256(b"{ runs { totalCount } }").hexdigest()
        missing = _post(running, {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": unknown}}})
        assert missing.status_code == 403


def test_codegen_prefixed_hashes_and_document_ids_name_documents(tmp_path: Path) -> None:
    """graphql-codegen writes `sha256:<hex>` keys (persisted-documents.json) and its clients send them as
    `persistedQuery.sha256Hash` or, as the GraphQL-over-HTTP draft has it, as `documentId`."""
    trusted = "query Codegen { commit { id } }"
    digest = hashlib.sha256(trusted.encode()).hexdigest()
    path = tmp_path / "persisted-documents.json"
    path.write_bytes(orjson.dumps({f"sha256:{digest}": trusted}))
    with serve(EMBEDDED_REPO, trusted_documents_path=path) as running:
        prefixed = {"persistedQuery": {"version": 1, "sha256Hash": f"sha256:{digest}"}}
        assert _post(running, {"extensions": prefixed}).json()["data"]["commit"]["id"]
        by_id = _post(running, {"documentId": f"sha256:{digest}", "variables": {}})
        assert by_id.status_code == 200 and by_id.json()["data"]["commit"]["id"]
        got = running.client.get(
            "/graphql", params={"documentId": f"sha256:{digest}"}, headers={"accept": "application/json"}
        )
        assert got.status_code == 200 and got.json()["data"] == by_id.json()["data"]
        other = hashlib.sha256(b"{ runs { totalCount } }").hexdigest()
        assert _post(running, {"documentId": f"sha256:{other}"}).status_code == 403
        for bad in (digest, f"sha1:{digest[:40]}", f"sha256:{digest.upper()}", 5):
            refused = _post(running, {"documentId": bad})
            assert refused.status_code == 400, bad
            assert "documentId: expected sha256: and 64 lowercase hex digits" in refused.json()["errors"][0]["message"]


def test_an_allow_list_whose_hash_is_not_its_document_is_refused_at_start(tmp_path: Path) -> None:
    from kernelindex.core.graphql_http import load_trusted_documents

    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps({"0" * 64: "{ commit { id } }"}))
    with pytest.raises(ValueError, match="is not the sha256 of its document"):
        load_trusted_documents(path)


# Batches ----------------------------------------------------------------------------------------------


def test_a_batch_of_two_is_answered_as_an_array_in_order(api: Running) -> None:
    response = _post(api, [{"query": "{ commit { id } }"}, {"query": f'{{ cohort(key: "{COHORT}") {{ size }} }}'}])
    assert response.status_code == 200
    first, second = response.json()
    assert first["data"]["commit"]["id"] == api.service.snapshots.head.commit
    assert second["data"]["cohort"]["size"] == 2


def _aliases(fields: int) -> str:
    # 20 aliases of runs(first: 100) with `fields` leaves a run: 20 * (1 + 1 + 100 + 100 * fields) (api/engine/cost.py)
    leaves = " ".join(["name", "digest", "title", "status", "observedAt", "publishedAt"][:fields])
    return "{ " + " ".join(f"a{i}: runs(first: 100) {{ edges {{ node {{ {leaves} }} }} }}" for i in range(20)) + " }"


def test_a_batch_is_bounded_in_count_and_shares_one_cost_limit(api: Running) -> None:
    heavy = _aliases(6)  # 20 * 702 = 14,040: alone under 25,000, twice over it
    first, second = _post(api, [{"query": heavy}, {"query": heavy}]).json()
    assert first["extensions"]["cost"] == {"requested": 14_040, "limit": 25_000}
    assert second["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
    assert second["extensions"]["cost"] == {"requested": 14_040, "limit": 25_000 - 14_040}
    too_many = _post(api, [{"query": "{ commit { id } }"}] * 11)
    assert too_many.status_code == 400 and too_many.json()["errors"][0]["extensions"]["code"] == "BATCH_TOO_LARGE"
    assert _post(api, [{"query": "{ commit { id } }"}] * 10).status_code == 200


# Compression and entity tags ----------------------------------------------------------------------


RECORDS = "{ records(first: 100) { edges { node { since holder { name } cohort { key } } } } }"


@pytest.mark.parametrize(
    ("coding", "decode"),
    [("zstd", zstandard.ZstdDecompressor().decompress), ("br", brotli.decompress), ("gzip", gzip.decompress)],
)
def test_large_answers_are_compressed_and_tagged_per_coding(api: Running, coding: str, decode: object) -> None:
    identity = _post(api, {"query": RECORDS}, **{"accept-encoding": "identity"})
    assert "content-encoding" not in identity.headers and len(identity.content) > 1024
    with httpx.Client(base_url=api.url) as raw:  # read the coded bytes as they travel
        request = raw.build_request(
            "POST", "/graphql", content=orjson.dumps({"query": RECORDS}),
            headers={"content-type": "application/json", "accept-encoding": coding},
        )  # fmt: skip
        coded = raw.send(request, stream=True)
        wire = b"".join(coded.iter_raw())
    assert coded.headers["content-encoding"] == coding and len(wire) < len(identity.content) / 3
    assert decode(wire) == identity.content  # type: ignore[operator]
    assert coded.headers["etag"] == identity.headers["etag"][:-1] + f'-{coding}"'
    assert "accept-encoding" in coded.headers["vary"].lower()


@pytest.mark.parametrize(
    ("accepted", "expected"),
    [
        ("gzip, deflate, br, zstd", "zstd"),  # what Chromium, Firefox and httpx send
        ("gzip, deflate, br", "br"),
        ("zstd;q=0.5, br;q=0.9, gzip", "gzip"),
        ("*", "zstd"),
        ("identity, zstd;q=0", None),
    ],
)
def test_the_coding_is_the_one_the_client_weighs_highest_zstd_first(
    api: Running, accepted: str, expected: str | None
) -> None:
    response = _post(api, {"query": RECORDS}, **{"accept-encoding": accepted})
    assert response.headers.get("content-encoding") == expected


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl, whose decoders are not ours")
def test_curl_reads_our_zstd_answer_as_it_reads_the_identity(api: Running) -> None:
    identity = _post(api, {"query": RECORDS}, **{"accept-encoding": "identity"})
    body = orjson.dumps({"query": RECORDS})
    command = ["curl", "-sS", "--compressed", "-D", "-", "-H", "content-type: application/json", "--data-binary", "@-"]
    shown = subprocess.run([*command, f"{api.url}/graphql"], input=body, capture_output=True, check=True).stdout
    head, _, decoded = shown.partition(b"\r\n\r\n")
    assert b"content-encoding: zstd" in head.lower()  # curl asks for zstd among others; we chose it
    assert decoded == identity.content


def test_small_answers_go_out_as_they_are(api: Running) -> None:
    response = _post(api, {"query": "{ commit { id } }"}, **{"accept-encoding": "br, gzip"})
    assert "content-encoding" not in response.headers


def test_if_none_match_uses_the_weak_comparison(api: Running) -> None:
    first = _post(api, {"query": RECORDS}, **{"accept-encoding": "identity"})
    tag = first.headers["etag"]
    for given in (tag, f"W/{tag}", f'"other", {tag}', tag[:-1] + '-gzip"', "*"):
        assert _post(api, {"query": RECORDS}, **{"if-none-match": given}).status_code == 304, given
    assert _post(api, {"query": RECORDS}, **{"if-none-match": '"nope"'}).status_code == 200


# CORS ----------------------------------------------------------------------------------------------


def test_a_preflight_with_the_headers_apollo_and_urql_send_is_allowed(api: Running) -> None:
    asked = "content-type,apollo-require-preflight,x-apollo-operation-name,graphql-client-name,graphql-client-version"
    response = api.client.options(
        "/graphql",
        headers={"origin": "https://app.example", "access-control-request-method": "POST",
                 "access-control-request-headers": asked},
    )  # fmt: skip
    assert response.status_code == 200
    allowed = {h.strip().lower() for h in response.headers["access-control-allow-headers"].split(",")}
    assert set(asked.split(",")) <= allowed


def test_cors_origins_are_configurable() -> None:
    from kernelindex.core.settings import Settings

    settings = Settings.from_env({"KERNELINDEX_CORS_ORIGINS": "https://a.example, https://b.example"})
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    with serve(EMBEDDED_REPO, cors_origins=settings.cors_origins) as running:
        preflight = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
        ok = running.client.options("/graphql", headers={"origin": "https://a.example", **preflight})
        refused = running.client.options("/graphql", headers={"origin": "https://evil.example", **preflight})
        assert ok.status_code == 200 and refused.status_code == 400


# Object identity ---------------------------------------------------------------------------------------


def test_ids_name_their_snapshot_and_node_refetches_each_as_it_was(api: Running) -> None:
    query = '{ cohort(key: "%s") { id size } registry(at: "%s") { cohort(key: "%s") { id size } } commit { id } }'
    data = _post(api, {"query": query % (COHORT, SEEDS, COHORT)}).json()["data"]
    head, pinned = data["cohort"], data["registry"]["cohort"]
    assert (head["size"], pinned["size"]) == (2, 1) and head["id"] != pinned["id"]
    decoded = base64.urlsafe_b64decode(pinned["id"] + "=" * (-len(pinned["id"]) % 4)).decode()
    assert decoded.startswith(f"Cohort:{SEEDS}:sha256:{COHORT}")
    refetch = "query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Cohort { size } } }"
    nodes = _post(api, {"query": refetch, "variables": {"ids": [head["id"], pinned["id"], data["commit"]["id"]]}})
    assert [(x["__typename"], x.get("size")) for x in nodes.json()["data"]["nodes"]] == [
        ("Cohort", 2), ("Cohort", 1), ("Commit", None),
    ]  # fmt: skip
    bad = _post(api, {"query": '{ node(id: "bm9wZQ") { id } }'}).json()
    assert bad["data"] == {"node": None} and bad["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_every_manifest_backed_and_serving_type_is_a_node(api: Running) -> None:
    sdl = (Path(__file__).parent / "schema.graphql").read_text()
    implementing = set(re.findall(r"^type (\w+) implements Node", sdl, flags=re.M))
    assert {
        "Run", "Operation", "Workload", "Implementation", "Project", "Protocol", "Environment", "Manifest",
        "Cohort", "RecordEntry", "Commit", "Attestation", "Retraction", "Verification",
        "ServingRun", "ServingCohort", "Model", "ServingStack", "ServingConfiguration", "ServingWorkload",
    } <= implementing  # fmt: skip


# Pagination both ways ------------------------------------------------------------------------------


def _names(api: Running, args: str) -> tuple[list[str], dict[str, object]]:
    query = '{ cohort(key: "%s") { entries(%s) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor commit } edges { node { run { digest } } } } } }'
    entries = _post(api, {"query": query % (LARGEST, args)}).json()["data"]["cohort"]["entries"]
    return [e["node"]["run"]["digest"] for e in entries["edges"]], entries["pageInfo"]


@pytest.mark.parametrize("size", [1, 7, 100])
def test_backward_pages_are_the_forward_pages_reversed(api: Running, size: int) -> None:
    forward: list[str] = []
    after = ""
    while True:
        names, info = _names(api, f"first: {size}" + (f', after: "{after}"' if after else ""))
        forward.extend(names)
        if not info["hasNextPage"]:
            break
        after = str(info["endCursor"])
    backward: list[str] = []
    before = ""
    while True:
        names, info = _names(api, f"last: {size}" + (f', before: "{before}"' if before else ""))
        backward[:0] = names
        if not info["hasPreviousPage"]:
            break
        before = str(info["startCursor"])
    assert len(forward) == 260 and len(set(forward)) == 260
    assert backward == forward
    assert info["commit"] == api.service.snapshots.head.commit


def test_first_and_last_together_are_refused(api: Running) -> None:
    body = _post(api, {"query": "{ runs(first: 1, last: 1) { totalCount } }"}).json()
    assert body["errors"][0]["extensions"]["code"] == "PAGE_SIZE_ERROR"
    assert _post(api, {"query": "{ runs(last: 101) { totalCount } }"}).json()["errors"][0]["message"] == (
        "last must be between 0 and 100 (got 101)"
    )


# GraphiQL --------------------------------------------------------------------------------------------


def test_graphiql_loads_only_its_own_assets_each_as_pinned(api: Running) -> None:
    page = api.client.get("/graphql", params={"query": "{ commit { id } }"}, headers={"accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assets = re.findall(r'(?:src|href)="([^"]+)"\s+integrity="sha384-([^"]+)"', page.text)
    # React, ReactDOM, GraphiQL and its explorer plugin (a script and a stylesheet each but React's), and the page's
    # own script and stylesheet (no inline script or style: the page's Content-Security-Policy allows none).
    names = sorted(url.rsplit("/", 1)[1] for url, _ in assets)
    assert names == sorted(
        [
            "react.production.min.js",
            "react-dom.production.min.js",
            "graphiql.min.js",
            "graphiql.min.css",
            "plugin-explorer.umd.js",
            "plugin-explorer.css",
            "kernelindex-graphiql.js",
            "kernelindex-graphiql.css",
        ]
    )
    assert "<script>" not in page.text and "<style" not in page.text and not re.search(r"https?://", page.text)
    for url, pinned in assets:
        response = api.client.get(url)
        assert response.status_code == 200 and response.headers["cache-control"].endswith("immutable")
        assert base64.b64encode(hashlib.sha384(response.content).digest()).decode() == pinned, url
    assert api.client.get(assets[0][0].replace("/static/graphiql/", "/static/graphiql/0")).status_code == 404

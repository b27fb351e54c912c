"""The fast lane (api/http/fastlane.py): a cached GraphQL answer leaves it byte for byte, headers included, as
the normal path (endpoint, CORS, SafeAnswers) sends the same answer; it never answers from another commit, and
it gives every request it does not answer to the normal path whole (its body replayed)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from helpers import EMBEDDED_REPO, basic_scenario, commit_manifests, make_run
from server import Running, serve

from kernelindex import registry
from kernelindex.core.settings import plain_mode
from kernelindex.http.fastlane import FastLane

pytestmark = pytest.mark.skipif(plain_mode(), reason="a shortcut's own tests: plain mode has none")

RUNS = "{ runs(first: 3) { totalCount edges { node { digest name } } } }"
RECORDS = "{ records(first: 100) { totalCount edges { node { since holder { name } cohort { key } } } } }"
"""Over a kilobyte: compressed when a client accepts a coding."""
UNSTABLE = ("date", "server", "ratelimit")
"""What differs between two sendings of one answer: the clock, and the client's budget left (`RateLimit`:
the two sendings were charged differently, an execution and a cached answer; its policy is compared)."""


def _lane(api: Running) -> FastLane:
    """The application's fast lane (Starlette builds its middleware on the first request)."""
    layer = api.app.middleware_stack
    while not isinstance(layer, FastLane):
        layer = layer.app  # type: ignore[union-attr]
    return layer


def _wire(response: httpx.Response) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Everything a client receives but the clock and the server's name, headers in order and raw."""
    headers = [(k.lower(), v) for k, v in response.headers.raw if k.lower().decode() not in UNSTABLE]
    return response.status_code, headers, response.content


Wire = tuple[int, list[tuple[bytes, bytes]], bytes]


def _fresh(api: Running) -> None:
    api.service.responses = type(api.service.responses)(api.service.responses.max_bytes, lambda r: r.weight())


def _twice(api: Running, send: dict[str, object]) -> tuple[Wire, Wire]:
    """The same request twice on a fresh cache: first down the normal path (a miss), then from the lane."""
    _fresh(api)
    lane = _lane(api)
    before = lane.hits, lane.executed
    lane.executes = False
    try:
        first = api.client.request(**send)  # type: ignore[arg-type]
    finally:
        lane.executes = True
    assert (lane.hits, lane.executed) == before, "a miss went down the fast lane"
    second = api.client.request(**send)  # type: ignore[arg-type]
    assert lane.hits == before[0] + 1, "a cached answer did not come from the fast lane"
    return _wire(first), _wire(second)


def _executed_in_the_lane(api: Running, send: dict[str, object]) -> Wire:
    """The request on a fresh cache, executed in the lane."""
    _fresh(api)
    lane = _lane(api)
    before = lane.hits, lane.executed
    answer = api.client.request(**send)  # type: ignore[arg-type]
    assert (lane.hits, lane.executed) == (before[0], before[1] + 1), "a miss was not executed in the lane"
    return _wire(answer)


@pytest.fixture(scope="module")
def embedded_api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as api:
        api.graphql(RUNS)  # the first request builds the middleware
        yield api


def _post(query: str, **headers: str) -> dict[str, object]:
    body = json.dumps({"query": query, "variables": {}}).encode()
    return {
        "method": "POST",
        "url": "/graphql",
        "content": body,
        "headers": {"content-type": "application/json", **headers},
    }


REQUESTS: dict[str, dict[str, object]] = {
    "POST, application/json": _post(RUNS, accept="application/json"),
    "POST, no Accept": _post(RUNS),
    "POST, graphql-response+json": _post(RUNS, accept="application/graphql-response+json"),
    "POST, brotli": _post(RECORDS, **{"accept-encoding": "br"}),
    "POST, gzip": _post(RECORDS, **{"accept-encoding": "gzip"}),
    "POST, identity": _post(RECORDS, **{"accept-encoding": "identity"}),
    "POST, an Origin": _post(RUNS, origin="https://elsewhere.example"),
    "POST, an Origin, brotli": _post(RECORDS, origin="https://elsewhere.example", **{"accept-encoding": "br"}),
    "GET": {"method": "GET", "url": "/graphql", "params": {"query": RUNS}, "headers": {"accept": "application/json"}},
    "GET, variables": {
        "method": "GET",
        "url": "/graphql",
        "params": {"query": "query($n: Int) { runs(first: $n) { totalCount } }", "variables": '{"n": 2}'},
    },
    "POST, a pinned answer (immutable)": _post(
        '{ registry(at: "667fb1b393371afe7b1663540a73b8bc9ee41f9b") { runs(first: 1) { totalCount } } }'
    ),
}


@pytest.mark.parametrize("name", REQUESTS)
def test_a_cached_answer_leaves_the_lane_exactly_as_the_normal_path_sends_it(embedded_api: Running, name: str) -> None:
    normal, fast = _twice(embedded_api, REQUESTS[name])
    assert normal[0] == 200
    assert fast == normal


@pytest.mark.parametrize("name", REQUESTS)
def test_a_new_answer_executed_in_the_lane_leaves_as_the_normal_path_sends_it(embedded_api: Running, name: str) -> None:
    normal, _ = _twice(embedded_api, REQUESTS[name])
    assert _executed_in_the_lane(embedded_api, REQUESTS[name]) == normal


def test_not_modified_from_the_lane_is_the_normal_paths_304(embedded_api: Running) -> None:
    plain = embedded_api.client.request(**_post(RECORDS, **{"accept-encoding": "br"}))  # type: ignore[arg-type]
    tag = plain.headers["etag"]
    request = _post(RECORDS, **{"accept-encoding": "br", "if-none-match": tag})
    normal, fast = _twice(embedded_api, request)
    assert normal[0] == 304 and normal[2] == b""
    assert fast == normal == _executed_in_the_lane(embedded_api, request)


def test_with_a_list_of_origins_allowed_and_refused_origins_get_the_normal_paths_headers() -> None:
    with serve(EMBEDDED_REPO, cors_origins=("https://app.example",)) as api:
        api.graphql(RUNS)
        for origin in ("https://app.example", "https://elsewhere.example"):
            normal, fast = _twice(api, _post(RUNS, origin=origin))
            assert fast == normal == _executed_in_the_lane(api, _post(RUNS, origin=origin))
            allowed = dict(fast[1]).get(b"access-control-allow-origin")
            assert allowed == (b"https://app.example" if origin == "https://app.example" else None)


def test_what_the_lane_does_not_answer_reaches_the_endpoint_whole(embedded_api: Running) -> None:
    lane = _lane(embedded_api)
    before = lane.hits + lane.executed
    batch = json.dumps([{"query": RUNS}, {"query": RUNS}]).encode()
    answered = embedded_api.client.post("/graphql", content=batch, headers={"content-type": "application/json"})
    assert answered.status_code == 200 and len(answered.json()) == 2  # a batch: the body was replayed whole
    embedded_api.graphql(RUNS)
    refused = embedded_api.client.post("/graphql", content=b"{nope", headers={"content-type": "application/json"})
    assert refused.status_code == 400 and refused.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    page = embedded_api.client.get("/graphql", headers={"accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")  # GraphiQL
    assert lane.hits + lane.executed == before + 1  # only the single query


def test_a_cached_answer_never_crosses_commits(basic_store: registry.GitStore) -> None:
    scenario = basic_scenario()
    with serve(basic_store.path) as api:
        lane = _lane_after_first(api)
        first = api.graphql(RUNS)
        assert first.json()["data"]["runs"]["totalCount"] == 3
        assert api.graphql(RUNS).content == first.content and lane.hits == 1  # cached at this commit
        run = make_run(*scenario.implementations[:1], scenario.workload, scenario.protocol, scenario.environment, 7000)
        commit = commit_manifests(basic_store, [run])
        api.service.refresh()
        moved = api.graphql(RUNS)
        assert lane.hits == 1  # the old commit's answer is still cached, and not sent
        assert moved.json()["data"]["runs"]["totalCount"] == 4
        assert moved.headers["x-kernelindex-commit"] == commit != first.headers["x-kernelindex-commit"]
        assert api.graphql(RUNS).content == moved.content and lane.hits == 2


def _lane_after_first(api: Running) -> FastLane:
    api.client.get("/healthz")  # the first request builds the middleware
    return _lane(api)


def test_a_burst_of_the_same_new_request_executes_it_once(basic_store: registry.GitStore) -> None:
    """Clients asking at once what nobody asked before wait for one execution (then the cache answers)."""
    import asyncio

    with serve(basic_store.path) as api:
        api.client.get("/healthz")
        before = api.service.queries.executions

        async def burst() -> list[bytes]:
            async with httpx.AsyncClient(base_url=api.url) as client:
                answers = await asyncio.gather(*(client.post("/graphql", json={"query": RECORDS}) for _ in range(8)))
            return [answer.content for answer in answers]

        answers = asyncio.run(burst())
        assert len(set(answers)) == 1 and b'"records"' in answers[0]
        assert api.service.queries.executions == before + 1


@pytest.mark.parametrize("coding", ["identity", "br", "gzip"])
def test_answers_of_one_shape_get_their_own_entity_tags_and_lengths(embedded_api: Running, coding: str) -> None:
    # Each answer after the first of its shape (status, media type, coding, cache headers) has its header list
    # made from that first one's: its own tag and length put in, everything else as the normal path sends it.
    lane = _lane(embedded_api)
    lane._shapes.clear()
    wires = []
    for first in (1, 2, 7, 30):
        query = f"{{ runs(first: {first}) {{ totalCount edges {{ node {{ digest name }} }} }} }}"
        request = _post(query, **{"accept-encoding": coding})
        normal, _ = _twice(embedded_api, request)
        assert _executed_in_the_lane(embedded_api, request) == normal
        wires.append(normal)
    assert len(lane._shapes) == (1 if coding == "identity" else 2)  # small answers go out uncompressed
    tags = [dict(headers)[b"etag"] for _, headers, _ in wires]
    lengths = [int(dict(headers)[b"content-length"]) for _, headers, _ in wires]
    assert len(set(tags)) == 4 and len(set(lengths)) == 4
    if coding == "identity":
        assert lengths == [len(body) for _, _, body in wires]

"""Budgets over HTTP: a client over its budget is answered 429, Retry-After and THROTTLED and nothing runs;
its budget refills on the (injected) clock; another client is unaffected; a forged X-Forwarded-For from an untrusted
peer changes nothing and a trusted proxy's does; the headers and `rateLimit` agree with what was charged. Every
boundary is exact: at the budget passes, one point past is refused. One server for the module."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import EMBEDDED_REPO
from server import Running, serve

from kernelindex.core.budgets import FIXED_COST, Budgets
from kernelindex.core.tokens import token_digest

CAPACITY = 100_000
RATE = 100.0


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


CLOCK = Clock()


TOKEN = "kx-mirror-0123456789abcdef"


def write_tokens(path: Path, *entries: dict[str, object]) -> None:
    path.write_bytes(json.dumps({"tokens": list(entries)}).encode())


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    write_tokens(path, {"name": "mirror", "sha256": token_digest(TOKEN), "budget": 50_000, "rate": 10})
    return path


@pytest.fixture(scope="module")
def api(tokens: Path) -> Iterator[Running]:
    # Peers at 127.0.0.1 are a trusted proxy; a client at 127.0.0.2 (loopback too, on Linux) is not.
    proxies = ("127.0.0.1/32",)
    with serve(
        EMBEDDED_REPO, budget=CAPACITY, budget_rate=RATE, tokens_path=tokens, trusted_proxies=proxies
    ) as running:
        budgets(running).clock = CLOCK
        yield running


@pytest.fixture(scope="module")
def stranger(api: Running) -> Iterator[httpx.Client]:
    """A client at an address that is no trusted proxy."""
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(base_url=api.url, transport=transport, timeout=60) as client:
        yield client


def budgets(api: Running) -> Budgets:
    found = api.service.budgets
    assert found is not None
    return found


def ask(client: httpx.Client, query: str, forwarded_for: str | None = None) -> httpx.Response:
    headers = {"x-forwarded-for": forwarded_for} if forwarded_for else {}
    return client.post("/graphql", json={"query": query}, headers=headers)


def runs(alias: str, first: int = 7) -> str:
    """A document that runs (an alias of its own is an answer of its own); its cost follows `first` alone."""
    return f"{{ {alias}: runs(first: {first}) {{ totalCount edges {{ node {{ digest name }} }} }} }}"


def cost_of(api: Running, first: int) -> int:
    """What `runs(..., first)` costs, asked by a client of its own."""
    answer = ask(api.client, runs(f"probe{first}", first), "192.0.2.250")
    assert answer.status_code == 200
    requested: int = answer.json()["extensions"]["cost"]["requested"]
    return requested


def leave(api: Running, key: str, points: int) -> None:
    """Spend `key`'s bucket down to exactly `points` (the clock is still)."""
    available = budgets(api).peek(key).available
    assert budgets(api).charge(key, int(available) - points).granted
    assert budgets(api).peek(key).available == points


def rate_limit(response: httpx.Response) -> dict[str, int]:
    """`RateLimit: "cost";r=..;t=..` as numbers."""
    name, *params = response.headers["ratelimit"].split(";")
    assert name == '"cost"'
    return {k: int(v) for k, v in (p.split("=") for p in params)}


def test_over_budget_is_429_retry_after_throttled_and_nothing_runs(api: Running) -> None:
    cost = cost_of(api, 9)
    key = "ip:198.51.100.1"
    leave(api, key, cost - 1)  # one point short
    executions, throttled = api.service.queries.executions, api.service.queries.throttled
    refused = ask(api.client, runs("over", 9), "198.51.100.1")
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == str(math.ceil(1 / RATE))
    assert refused.headers["cache-control"] == "no-store"
    body = refused.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["THROTTLED"]
    assert "data" not in body
    assert body["extensions"]["cost"] == {
        "requested": cost,
        "limit": 25_000,
        "throttleStatus": {"maximumAvailable": CAPACITY, "currentlyAvailable": cost - 1, "restoreRate": RATE},
    }
    assert (api.service.queries.executions, api.service.queries.throttled) == (executions, throttled + 1)
    assert rate_limit(refused)["r"] == cost - 1

    # A point later, exactly the budget: it runs, and leaves nothing.
    CLOCK.now += 1 / RATE
    paid = ask(api.client, runs("over", 9), "198.51.100.1")
    assert paid.status_code == 200 and paid.json()["extensions"]["cost"]["requested"] == cost
    assert api.service.queries.executions == executions + 1
    assert rate_limit(paid)["r"] == 0
    # Now cached, it costs one point: one past the budget.
    again = ask(api.client, runs("over", 9), "198.51.100.1")
    assert again.status_code == 429 and again.json()["extensions"]["cost"]["requested"] == 1
    assert api.service.queries.executions == executions + 1


def test_the_budget_refills_on_time(api: Running) -> None:
    key = "ip:198.51.100.2"
    leave(api, key, 0)
    assert ask(api.client, runs("refill", 3), "198.51.100.2").status_code == 429
    cost = cost_of(api, 3)
    CLOCK.now += (cost - 1) / RATE  # a point short of it
    assert ask(api.client, runs("refill", 3), "198.51.100.2").status_code == 429
    CLOCK.now += 1 / RATE
    assert ask(api.client, runs("refill", 3), "198.51.100.2").status_code == 200


def test_another_client_is_unaffected(api: Running) -> None:
    leave(api, "ip:198.51.100.3", 0)
    assert ask(api.client, runs("other", 4), "198.51.100.3").status_code == 429
    answer = ask(api.client, runs("other", 4), "198.51.100.4")
    assert answer.status_code == 200
    assert rate_limit(answer)["r"] == CAPACITY - answer.json()["extensions"]["cost"]["requested"]


def test_a_forged_forwarded_for_changes_nothing_and_a_trusted_proxys_does(api: Running, stranger: httpx.Client) -> None:
    leave(api, "ip:127.0.0.2", 0)
    forged = ask(stranger, runs("forged", 5), "198.51.100.5")
    assert forged.status_code == 429  # still the stranger's own (empty) budget
    assert budgets(api).peek("ip:198.51.100.5").available == CAPACITY  # nothing was charged to the forged one
    proxied = ask(api.client, runs("forged", 5), "198.51.100.5")
    assert proxied.status_code == 200
    assert (
        budgets(api).peek("ip:198.51.100.5").available == CAPACITY - proxied.json()["extensions"]["cost"]["requested"]
    )


def test_the_headers_and_rate_limit_agree_with_what_was_charged(api: Running) -> None:
    query = "{ rateLimit { cost limit remaining restoreRate fullInSeconds } r: runs(first: 2) { totalCount } }"
    answer = ask(api.client, query, "198.51.100.6")
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    charged = body["extensions"]["cost"]["requested"]
    remaining = CAPACITY - charged
    assert body["data"]["rateLimit"] == {
        "cost": charged,
        "limit": CAPACITY,
        "remaining": remaining,
        "restoreRate": RATE,
        "fullInSeconds": math.ceil(charged / RATE),
    }
    assert body["extensions"]["cost"]["throttleStatus"] == {
        "maximumAvailable": CAPACITY,
        "currentlyAvailable": remaining,
        "restoreRate": RATE,
    }
    assert rate_limit(answer) == {"r": remaining, "t": math.ceil(charged / RATE)}
    assert answer.headers["ratelimit-policy"] == f'"cost";q={CAPACITY};w={math.ceil(CAPACITY / RATE)};qu="cost-points"'
    assert answer.headers["cache-control"] == "private, no-cache"
    # About its client alone: never cached, so asked again it runs again, charged again.
    executions = api.service.queries.executions
    second = ask(api.client, query, "198.51.100.6").json()
    assert second["data"]["rateLimit"]["remaining"] == remaining - charged
    assert api.service.queries.executions == executions + 1


def test_a_page_spends_its_fixed_cost_and_is_refused_past_it(api: Running) -> None:
    page = api.client.get("/records", headers={"accept": "application/json", "x-forwarded-for": "198.51.100.7"})
    assert page.status_code == 200 and rate_limit(page)["r"] == CAPACITY - FIXED_COST
    leave(api, "ip:198.51.100.7", FIXED_COST - 1)
    refused = api.client.get("/records", headers={"accept": "application/json", "x-forwarded-for": "198.51.100.7"})
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
    assert refused.json()["errors"][0]["extensions"]["code"] == "THROTTLED"
    assert "nosniff" in refused.headers["x-content-type-options"]
    assert api.client.get("/healthz", headers={"x-forwarded-for": "198.51.100.7"}).status_code == 200  # free


def test_a_tokens_budget_applies_and_a_revoked_token_stops(api: Running, tokens: Path) -> None:
    bearer = {"authorization": f"Bearer {TOKEN}", "x-forwarded-for": "198.51.100.8"}
    answer = api.client.post("/graphql", json={"query": runs("token", 6)}, headers=bearer)
    assert answer.status_code == 200
    cost = answer.json()["extensions"]["cost"]["requested"]
    assert answer.headers["ratelimit-policy"] == '"cost";q=50000;w=5000;qu="cost-points"'
    assert rate_limit(answer)["r"] == 50_000 - cost
    assert budgets(api).peek("ip:198.51.100.8").available == CAPACITY  # the address's own budget is untouched
    unknown = api.client.post("/graphql", json={"query": "{ __typename }"}, headers={"authorization": "Bearer nope"})
    assert unknown.status_code == 401 and unknown.json()["errors"][0]["extensions"]["code"] == "UNAUTHORIZED"
    write_tokens(tokens)  # revoked: the file no longer lists it, and is read again at the next request
    revoked = api.client.post("/graphql", json={"query": runs("token", 6)}, headers=bearer)
    assert revoked.status_code == 401 and "revoked" in revoked.json()["errors"][0]["message"]

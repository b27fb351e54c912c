"""`Cohort.leaderboard`: a cohort's first page as plain rows, the same facts as `entries`,
against the embedded registry pinned to the seed records' commit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers import EMBEDDED_REPO
from server import Running, serve

SEEDED = "e775d39b6768675ff8eb086da76420493425c1a4"  # main after the seed records (tests/test_export.py)
LARGEST = "39d43c1992795178"  # the largest corpus cohort, 260 runs (docs/api.md)

PINNED = '{ registry(at: "' + SEEDED + '") '
ROWS = (
    "query($key: String!, $first: Int!, $trust: Trust) " + PINNED + "{ cohort(key: $key) { leaderboard(first: $first, "
    "minTrust: $trust) { rank tiedWithPrevious digest name trust value display unit implementation } } } }"
)
ENTRIES = (
    "query($key: String!, $first: Int!, $trust: Trust) " + PINNED + "{ cohort(key: $key) { entries(first: $first, "
    "minTrust: $trust) { edges { node { rank tiedWithPrevious run { digest name trust primary { value display unit } "
    "implementation { displayName } } } } } } } }"
)


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _answer(api: Running, query: str, **variables: Any) -> dict[str, Any]:
    body = api.graphql(query, variables).json()
    assert "errors" not in body, body["errors"]
    return body  # type: ignore[no-any-return]


def test_the_largest_cohort_leads_as_the_readme_shows(api: Running) -> None:
    rows = _answer(api, ROWS, key=LARGEST, first=3)["data"]["registry"]["cohort"]["leaderboard"]
    assert [(r["rank"], r["tiedWithPrevious"], r["name"], r["display"], r["implementation"]) for r in rows] == [
        (1, False, "kernelbot-745202-leaderboard", "69.9 µs", "Danishlynx"),
        (2, False, "kernelbot-714495-leaderboard", "70.5 µs", "Danishlynx"),
        (3, False, "kernelbot-749286-leaderboard", "70.6 µs", "Hamza"),
    ]
    assert all(r["trust"] == "REPORTED" and r["unit"] for r in rows)


@pytest.mark.parametrize("trust", [None, "REPRODUCIBLE", "VERIFIED"])
def test_rows_are_the_entries_of_the_same_page(api: Running, trust: str | None) -> None:
    listed = _answer(
        api,
        PINNED + "{ cohorts(first: 12) { edges { node { key } } } "
        "runs(first: 20, filter: {minTrust: REPRODUCIBLE}) { edges { node { cohort { key } } } } } }",
    )["data"]["registry"]
    keys = [edge["node"]["key"] for edge in listed["cohorts"]["edges"]]
    keys += [edge["node"]["cohort"]["key"] for edge in listed["runs"]["edges"] if edge["node"]["cohort"]]
    keys += ["sha256:92bc0be5b5ce9f523be5faba2a4e34c39837aab389f3cfd25189af326e2daae0"]  # seed 000's, with a tie
    compared = 0
    for key in keys:
        for first in (1, 20):
            rows = _answer(api, ROWS, key=key, first=first, trust=trust)["data"]["registry"]["cohort"]["leaderboard"]
            edges = _answer(api, ENTRIES, key=key, first=first, trust=trust)["data"]["registry"]["cohort"]["entries"]
            expected = [
                {
                    "rank": e["node"]["rank"],
                    "tiedWithPrevious": e["node"]["tiedWithPrevious"],
                    "digest": e["node"]["run"]["digest"],
                    "name": e["node"]["run"]["name"],
                    "trust": e["node"]["run"]["trust"],
                    "value": (e["node"]["run"]["primary"] or {}).get("value"),
                    "display": (e["node"]["run"]["primary"] or {}).get("display"),
                    "unit": (e["node"]["run"]["primary"] or {}).get("unit"),
                    "implementation": (e["node"]["run"]["implementation"] or {}).get("displayName"),
                }
                for e in edges["edges"]
            ]
            assert rows == expected, key
            compared += len(rows)
    # the comparison saw real pages, not empty ones (the embedded registry has no VERIFIED run)
    assert compared > {None: 100, "REPRODUCIBLE": 10, "VERIFIED": -1}[trust]


@pytest.mark.parametrize(("first", "size"), [(0, 0), (1, 1), (100, 100)])
def test_a_page_holds_first_rows_up_to_a_hundred(api: Running, first: int, size: int) -> None:
    rows = _answer(api, ROWS, key=LARGEST, first=first)["data"]["registry"]["cohort"]["leaderboard"]
    assert len(rows) == size and [r["rank"] for r in rows][:3] == [1, 2, 3][:size]


@pytest.mark.parametrize("first", [-1, 101])
def test_a_page_outside_zero_to_a_hundred_is_refused(api: Running, first: int) -> None:
    body = api.graphql(ROWS, {"key": LARGEST, "first": first}).json()
    assert body["data"]["registry"]["cohort"]["leaderboard"] is None  # only the refused field is null
    assert [e["extensions"]["code"] for e in body["errors"]] == ["PAGE_SIZE_ERROR"]


def test_the_cost_counts_every_row_asked_for(api: Running) -> None:
    body = _answer(api, PINNED + '{ cohort(key: "' + LARGEST + '") { leaderboard(first: 100) { rank name } } } }')
    # registry 1 + cohort 1 + leaderboard 1 + 100 rows x (rank + name)
    assert body["extensions"]["cost"]["requested"] == 1 + 1 + 1 + 100 * 2

"""The cost model of kernelindex.engine.cost: expected values are counted by hand from its documented rule (each
field costs how many times it can resolve; a connection's edges as many times as its page)."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import OperationDefinitionNode, parse

from kernelindex.engine.cost import CostModel, estimate
from kernelindex.schema.root import schema

MODEL = CostModel(max_page=100, list_items=10)


def _cost(query: str, variables: dict[str, Any] | None = None) -> int:
    document = parse(query)
    operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
    return estimate(schema._schema, document, operation, variables or {}, MODEL)


@pytest.mark.parametrize(
    ("query", "variables", "expected"),
    [
        # commit 1 + id 1
        ("{ commit { id } }", None, 2),
        # runs 1 + totalCount 1 + edges 1 + node 100 + name 100
        ("{ runs(first: 100) { totalCount edges { node { name } } } }", None, 203),
        # the same page from a variable; and the argument's default (20) when it is absent
        ("query($n: Int!) { runs(first: $n) { totalCount edges { node { name } } } }", {"n": 7}, 3 + 2 * 7),
        ("{ runs { edges { node { name } } } }", None, 2 + 2 * 20),
        # a page over the maximum is refused by the resolver anyway: it counts as 100
        ("{ runs(first: 100000) { edges { node { name } } } }", None, 2 + 2 * 100),
        ("{ runs(first: -5) { edges { node { name } } } }", None, 2),
        # nested pages multiply: cohorts 1 + edges 1 + node 10 + entries 10 + edges 10 + node 10*5 + rank 50
        ("{ cohorts(first: 10) { edges { node { entries(first: 5) { edges { node { rank } } } } } } }", None, 132),
        # a list of objects without a page counts 10 items: run 1 + measurements 1 + value 10
        ('{ run(id: "x") { measurements { value } } }', None, 12),
        # a list of leaves costs one: run 1 + warnings 1
        ('{ run(id: "x") { warnings } }', None, 2),
        # a fragment counts where it is spread, once per spread
        ("{ a: commit { ...C } b: commit { ...C } } fragment C on Commit { id subject }", None, 6),
        # introspection costs one per field, whatever it selects
        ("{ __schema { types { name fields { name } } } }", None, 1),
        # a repeated field counts each time it is written (an upper bound)
        ("{ committedAt committedAt committedAt }", None, 3),
    ],
)
def test_cost_by_hand(query: str, variables: dict[str, Any] | None, expected: int) -> None:
    assert _cost(query, variables) == expected


def test_ten_heavy_aliases_stay_under_the_limit_and_twenty_do_not() -> None:
    from kernelindex.schema.root import LIMITS

    fields = "name rank trust eligible primary { display value } cohort { key size } implementation { displayName }"
    one = f"runs(first: 100) {{ edges {{ node {{ {fields} }} }} }}"
    # per alias: runs 1 + edges 1 + 100 x (node + 12 fields below it)
    per_alias = 2 + 100 * 13
    ten = "{ " + " ".join(f"a{k}: {one}" for k in range(10)) + " }"
    twenty = "{ " + " ".join(f"a{k}: {one}" for k in range(20)) + " }"
    assert _cost(ten) == 10 * per_alias <= LIMITS["max_cost"] < _cost(twenty) == 20 * per_alias


# The same document text asked again, as a first-time answer asks it with another id: the cost is remembered
# by the text and the variables that set page sizes or search queries, so each of these must still count.
PAGED = (
    "query($id: String!, $n: Int, $m: Int) { run(id: $id) { name } runs(first: $n) { edges { node { name } } } ...F }"
)
PAGED += " fragment F on Query { cohorts(first: $m) { edges { node { key } } } }"


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        # run 1 + name 1, runs 1 + edges 1 + 2 x n, cohorts 1 + edges 1 + 2 x m
        ({"id": "a", "n": 3, "m": 4}, 2 + 2 + 6 + 2 + 8),
        ({"id": "b", "n": 3, "m": 4}, 2 + 2 + 6 + 2 + 8),  # another id: the same cost
        ({"id": "a", "n": 5, "m": 4}, 2 + 2 + 10 + 2 + 8),  # another page size: counted again
        ({"id": "a", "n": 3, "m": 1}, 2 + 2 + 6 + 2 + 2),  # a page size set inside a fragment
        ({"id": "a", "n": None, "m": 4}, 2 + 2 + 40 + 2 + 8),  # null: the default page (20)
        ({"id": "a", "m": 4}, 2 + 2 + 40 + 2 + 8),  # absent: the default page too
        ({"id": "a", "n": True, "m": 4}, 2 + 2 + 200 + 2 + 8),  # not an int (never coerced so): the maximum
        ({"id": "a", "n": 1, "m": 4}, 2 + 2 + 2 + 2 + 8),  # 1 after True: not the same key
    ],
)
def test_a_remembered_cost_follows_the_variables_it_depends_on(variables: dict[str, Any], expected: int) -> None:
    assert _cost(PAGED, variables) == expected
    assert _cost(PAGED, variables) == expected  # asked again: remembered, the same


def test_a_search_over_the_limits_is_refused_every_time() -> None:
    from kernelindex.registry.errors import SearchTooLarge

    query = "query($q: String!) { search(query: $q) { runs(first: 1) { totalCount } } }"
    assert _cost(query, {"q": "rmsnorm"}) > 0
    for _ in range(2):
        with pytest.raises(SearchTooLarge):
            _cost(query, {"q": " ".join(f"w{k}" for k in range(40))})

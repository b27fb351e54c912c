"""kernelindex.engine.compiled.Executor reads scalar fields straight: every answer is the one graphql-core's own executor
gives, data and errors alike (messages, paths, locations), on the real corpus and on fields that fail in each
way a scalar can (a resolver that raises, null for a non-null field, a value its type refuses)."""

from __future__ import annotations

import enum
import math
from typing import Any

import pytest
import strawberry
from helpers import EMBEDDED_REPO
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from kernelindex.core.context import Context, StoredObjects
from kernelindex.engine.compiled import Executor
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema import root as api_schema
from kernelindex.schema.types.scalars import SCALAR_MAP
from kernelindex.service.dossier import DOSSIER_QUERY

LEADERBOARD = """query($key: String!) { cohort(key: $key) { key size entries(first: 20) { edges { node {
  rank tiedWithPrevious run { digest name primary { value display } trust implementation { displayName } } } } }
  leaderboard(first: 20) { rank tiedWithPrevious digest name value display unit trust implementation cursor } } }"""
RECORDS = "{ records(first: 30) { totalCount edges { cursor node { since holder { name digest } cohort { key } } } } }"


@pytest.fixture(scope="module")
def both() -> tuple[strawberry.Schema, strawberry.Schema]:
    """The API's schema, and the same schema executed by graphql-core's own executor (as strawberry sets it)."""
    plain = strawberry.Schema(
        query=api_schema.Query,
        types=[api_schema.Snapshot],
        config=StrawberryConfig(scalar_map=SCALAR_MAP),
        execution_context_class=StrawberryGraphQLCoreExecutionContext,
        extensions=api_schema.schema.extensions,
    )
    return api_schema.schema, plain


@pytest.fixture(scope="module")
def snapshots() -> Snapshots:
    found = Snapshots(EMBEDDED_REPO)
    found.load()
    return found


def _run(schema: strawberry.Schema, snapshots: Snapshots, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    context = Context(snapshots, StoredObjects(snapshots), "http://registry.test", None, snapshots.head, None)
    result = schema.execute_sync(query, variable_values=variables, context_value=context, root_value=api_schema.Query())
    return {"data": result.data, "errors": [error.formatted for error in result.errors or ()]}


def test_the_corpus_answers_are_graphql_cores(
    both: tuple[strawberry.Schema, strawberry.Schema], snapshots: Snapshots
) -> None:
    head = snapshots.head
    cohorts = sorted(head.cohorts, key=lambda key: (-len(head.cohorts[key].members), key))[:12]
    runs = sorted(head.facts)[:12]
    fast, plain = both
    requests = [(LEADERBOARD, {"key": key}) for key in cohorts]
    requests += [(DOSSIER_QUERY, {"id": run}) for run in runs]
    requests += [(RECORDS, {})]
    for query, variables in requests:
        answer = _run(fast, snapshots, query, variables)
        assert not answer["errors"], answer["errors"]
        assert answer == _run(plain, snapshots, query, variables)


class Colour(enum.Enum):
    RED = "red"


@strawberry.type
class Row:
    number: float
    name: str | None
    colour: Colour

    @strawberry.field
    def fails(self) -> str:
        raise ValueError("this field always fails")

    @strawberry.field
    def missing(self) -> str:
        return None  # type: ignore[return-value]

    @strawberry.field
    def maybe(self) -> int | None:
        return None

    @strawberry.field
    def counted(self) -> int:
        return int(self.number)


@strawberry.type
class Root:
    @strawberry.field
    def rows(self) -> list[Row]:
        return [
            Row(number=1.5, name="a", colour=Colour.RED),
            Row(number=math.nan, name=None, colour=Colour.RED),
            Row(number=2.0, name="c", colour="not a colour"),  # type: ignore[arg-type]
            Row(number=2**40, name=None, colour=Colour.RED),
        ]


@pytest.mark.parametrize(
    "query",
    [
        "{ rows { number name colour maybe counted } }",
        "{ rows { fails } }",
        "{ rows { name missing } }",
        "{ rows { number } }",  # NaN: Float refuses it
        "{ rows { colour } }",  # a value the enum does not hold
        "{ rows { counted } }",  # 2**40: over Int's 32 bits
        "{ rows { a: name b: name __typename } }",
    ],
)
def test_each_way_a_scalar_fails_is_reported_as_graphql_core_reports_it(query: str) -> None:
    fast = strawberry.Schema(query=Root, execution_context_class=Executor)
    plain = strawberry.Schema(query=Root, execution_context_class=StrawberryGraphQLCoreExecutionContext)
    results = [schema.execute_sync(query) for schema in (fast, plain)]
    formatted = [(r.data, [e.formatted for e in r.errors or ()]) for r in results]
    assert formatted[0] == formatted[1]
    if query != "{ rows { number name colour maybe counted } }" and "__typename" not in query:
        assert formatted[0][1], "the case was meant to fail"

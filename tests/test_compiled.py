"""kernelindex.engine.compiled: a compiled program answers exactly what graphql-core's own executor answers, on the real
corpus, for the benchmark's documents, every GraphQL document the documentation shows, and documents that
use what collection settles (aliases, fragments, `__typename`, `@include`/`@skip` per request); a request
the program cannot answer (an error to report) is answered by graphql-core, errors and all."""

from __future__ import annotations

import enum
import itertools
from typing import Any, cast

import pytest
import strawberry
from helpers import EMBEDDED_REPO
from strawberry.annotation import StrawberryAnnotation
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.types.scalar import DEFAULT_SCALAR_REGISTRY
from test_docs_examples import EXAMPLES

from bench.__main__ import DOSSIER, DOSSIER_ACCESSED, LEADERBOARD, LEADERBOARD_ROWS, RECORDS
from kernelindex.core.context import Context, StoredObjects
from kernelindex.core.settings import plain_mode
from kernelindex.engine import compiled
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema import root as api_schema
from kernelindex.schema.types.scalars import SCALAR_MAP
from kernelindex.service.direct import execute_known

pytestmark = pytest.mark.skipif(plain_mode(), reason="a shortcut's own tests: plain mode has none")

PLAIN = strawberry.Schema(
    query=api_schema.Query,
    types=[api_schema.Snapshot],
    config=StrawberryConfig(scalar_map=SCALAR_MAP),
    execution_context_class=StrawberryGraphQLCoreExecutionContext,
    extensions=api_schema.schema.extensions,
)
"""The API's schema executed by graphql-core's own executor, as strawberry sets it."""

SHAPES = """
query($key: String!, $withRows: Boolean!, $withoutSize: Boolean!) {
  first: cohort(key: $key) {
    __typename
    ...Head
    size @skip(if: $withoutSize)
    rows: leaderboard(first: 3) @include(if: $withRows) { rank name unit kind: __typename }
    entries(first: 2) { edges { cursor node { ... on CohortEntry { rank run { digest ...Named } } } } }
  }
  again: cohort(key: $key) { key size }
}
fragment Head on Cohort { key profile key }
fragment Named on Run { name primary { value display } trust }
"""
"""Aliases, repeated and nested fragments, inline fragments, `__typename` at every depth, conditions."""


@pytest.fixture(scope="module")
def snapshots() -> Snapshots:
    found = Snapshots(EMBEDDED_REPO)
    found.load()
    return found


def _answer(schema: strawberry.Schema, snapshots: Snapshots, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    context = Context(snapshots, StoredObjects(snapshots), "http://registry.test", None, snapshots.head, None)
    result = schema.execute_sync(query, variable_values=variables, context_value=context, root_value=api_schema.Query())
    return {"data": result.data, "errors": [error.formatted for error in result.errors or ()]}


def _full(schema: strawberry.Schema, snapshots: Snapshots, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """Data, errors and extensions, as the query service reads them."""
    context = Context(snapshots, StoredObjects(snapshots), "http://registry.test", None, snapshots.head, None)
    result = schema.execute_sync(query, variable_values=variables, context_value=context, root_value=api_schema.Query())
    errors = [error.formatted for error in result.errors or ()]
    return {"data": result.data, "errors": errors, "extensions": result.extensions}


def _known(snapshots: Snapshots, query: str, variables: dict[str, Any], budget: int | None = None) -> Any:
    context = Context(snapshots, StoredObjects(snapshots), "http://registry.test", None, snapshots.head, None)
    context.cost_budget = budget
    result = execute_known(query, variables, context, None, api_schema.Query())
    if result is None:
        return None
    return {"data": result.data, "errors": [], "extensions": result.extensions}


def _compiled(snapshots: Snapshots, query: str, variables: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The API schema's answer, and whether a program built it."""
    before = compiled.COUNTS["compiled"]
    answer = _answer(api_schema.schema, snapshots, query, variables)
    return answer, compiled.COUNTS["compiled"] > before


def test_the_benchmark_documents_are_compiled_and_answer_as_graphql_core(snapshots: Snapshots) -> None:
    head = snapshots.head
    cohorts = sorted(head.cohorts, key=lambda key: (-len(head.cohorts[key].members), key))
    runs = sorted(head.facts)
    picked_cohorts = cohorts[:6] + cohorts[-3:]
    picked_runs = runs[:6] + runs[-3:]
    requests = [(document, {"key": key}) for document in (LEADERBOARD, LEADERBOARD_ROWS) for key in picked_cohorts]
    requests += [(DOSSIER, {"id": run}) for run in picked_runs]
    requests += [(DOSSIER_ACCESSED, {"id": run, "accessed": "2026-12-01"}) for run in picked_runs[:3]]
    requests += [(RECORDS, {})]
    for query, variables in requests:
        answer, by_program = _compiled(snapshots, query, variables)
        assert not answer["errors"], answer["errors"]
        assert by_program, (query[:40], variables)
        assert answer == _answer(PLAIN, snapshots, query, variables)


@pytest.mark.parametrize(("with_rows", "without_size"), list(itertools.product([True, False], repeat=2)))
def test_conditions_aliases_and_fragments_per_request(
    snapshots: Snapshots, with_rows: bool, without_size: bool
) -> None:
    head = snapshots.head
    key = max(head.cohorts, key=lambda k: (len(head.cohorts[k].members), k))
    variables = {"key": key, "withRows": with_rows, "withoutSize": without_size}
    answer, by_program = _compiled(snapshots, SHAPES, variables)
    assert by_program and not answer["errors"]
    assert answer == _answer(PLAIN, snapshots, SHAPES, variables)
    cohort = answer["data"]["first"]
    assert ("rows" in cohort) is with_rows and ("size" in cohort) is not without_size
    assert list(cohort)[:3] == ["__typename", "key", "profile"]


def test_a_request_with_errors_is_answered_by_graphql_core(snapshots: Snapshots) -> None:
    # A run that does not exist (an error at its path) and a cohort that does not (null): the program gives
    # way, and the answer, errors included, is graphql-core's.
    query = DOSSIER.replace("query($id: String!) {", "query($id: String!, $key: String!) { cohort(key: $key) { key }")
    variables = {"id": "sha256:" + "0" * 64, "key": "no such cohort"}
    before = compiled.COUNTS["fallback"]
    answer, by_program = _compiled(snapshots, query, variables)
    assert not by_program and compiled.COUNTS["fallback"] > before
    assert answer["errors"] and answer == _answer(PLAIN, snapshots, query, variables)


def test_documents_it_does_not_cover_are_never_compiled(snapshots: Snapshots) -> None:
    introspection = "{ __schema { queryType { name } } cohorts(first: 1) { edges { node { key } } } }"
    answer, by_program = _compiled(snapshots, introspection, {})
    assert not by_program and not answer["errors"]
    assert answer == _answer(PLAIN, snapshots, introspection, {})


@pytest.mark.parametrize("example", [e for e in EXAMPLES if "query" in e.body], ids=lambda e: e.where)
def test_every_documented_query_answers_as_graphql_core(snapshots: Snapshots, example: Any) -> None:
    query = example.body["query"]
    variables = example.body.get("variables") or {}
    assert _compiled(snapshots, query, variables)[0] == _answer(PLAIN, snapshots, query, variables)


def test_a_known_document_is_answered_without_the_pipeline_as_the_pipeline_answers(snapshots: Snapshots) -> None:
    head = snapshots.head
    key = max(head.cohorts, key=lambda k: (len(head.cohorts[k].members), k))
    run = sorted(head.facts)[3]
    requests: list[tuple[str, dict[str, Any]]] = [(LEADERBOARD, {"key": key}), (LEADERBOARD_ROWS, {"key": key})]
    requests += [(DOSSIER, {"id": run}), (RECORDS, {}), (SHAPES, {"key": key, "withRows": True, "withoutSize": False})]
    for query, variables in requests:
        expected = _full(PLAIN, snapshots, query, variables)  # parses and validates it into the shared cache
        assert not expected["errors"] and expected["extensions"]["cost"]["requested"] > 0
        assert _known(snapshots, query, variables) == expected
        assert _full(api_schema.schema, snapshots, query, variables) == expected


def test_the_pipeline_answers_what_it_would_change(snapshots: Snapshots) -> None:
    head = snapshots.head
    key = max(head.cohorts, key=lambda k: (len(head.cohorts[k].members), k))
    unseen = LEADERBOARD_ROWS.replace("rank ", "rank  ")
    assert _known(snapshots, unseen, {"key": key}) is None  # never parsed and validated
    _full(PLAIN, snapshots, unseen, {"key": key})
    assert _known(snapshots, unseen, {"key": key}) is not None
    assert _known(snapshots, unseen, {"key": 7}) is None  # variables that do not coerce
    assert _known(snapshots, unseen, {"key": "no such cohort"}) is None  # an error to report
    # A batch's remainder: at the operation's cost it runs, one less and the pipeline refuses it.
    cost = _full(PLAIN, snapshots, unseen, {"key": key})["extensions"]["cost"]["requested"]
    assert _known(snapshots, unseen, {"key": key}, budget=cost) is not None
    assert _known(snapshots, unseen, {"key": key}, budget=cost - 1) is None
    invalid = "{ cohorts(first: 1) { edges { node { nope } } } }"
    assert _full(PLAIN, snapshots, invalid, {})["errors"]
    assert _known(snapshots, invalid, {}) is None  # validation errors


@strawberry.type
class _Odd:
    """Fields that fail in each way a value can, each behind an argument-less resolver."""

    kind: str

    @strawberry.field
    def names(self) -> list[str] | None:
        value: Any = {"string": "abc", "mapping": {"a": 1}, "fine": ["a", "b"]}.get(self.kind)
        return value  # type: ignore[no-any-return]

    @strawberry.field
    def must(self) -> str:
        value: Any = None if self.kind == "string" else "here"
        return value  # type: ignore[no-any-return]

    @strawberry.field
    def raises(self) -> int | None:
        if self.kind == "mapping":
            raise ValueError("no")
        return 1

    @strawberry.field
    def where(self, info: strawberry.Info) -> str:
        """What strawberry's `Info` says of the field: its name, path and the variables."""
        if self.kind == "string":
            raise ValueError("not here")
        return f"{info.field_name} at {info.path.as_list()} with {info.variable_values}"


@strawberry.type
class _OddQuery:
    @strawberry.field
    def odd(self, kind: str) -> _Odd:
        return _Odd(kind=kind)


@pytest.mark.parametrize("kind", ["fine", "string", "mapping"])
def test_values_a_type_refuses_are_graphql_cores_errors(kind: str) -> None:
    fast = strawberry.Schema(query=_OddQuery, execution_context_class=compiled.CompiledExecutor)
    plain = strawberry.Schema(query=_OddQuery, execution_context_class=StrawberryGraphQLCoreExecutionContext)
    query = "query($k: String!) { odd(kind: $k) { kind names must raises w: where } again: odd(kind: $k) { where } }"
    before = dict(compiled.COUNTS)
    answers = []
    for schema in (fast, plain):
        result = schema.execute_sync(query, variable_values={"k": kind})
        answers.append({"data": result.data, "errors": [error.formatted for error in result.errors or ()]})
    assert answers[0] == answers[1]
    assert bool(answers[0]["errors"]) is (kind != "fine")
    by_program = compiled.COUNTS["compiled"] > before["compiled"]
    assert by_program is (kind == "fine") and (compiled.COUNTS["fallback"] > before["fallback"]) is (kind != "fine")


def test_a_document_heavier_than_a_program_may_be_is_never_compiled(snapshots: Snapshots) -> None:
    # Every comment is a token the parsed document keeps: ~3,300 of them weigh over an eighth of what the
    # programs may hold together (a program keeps its document's tokens alive), ~300 far less.
    def with_comments(count: int) -> str:
        return "{ cohorts(first: 2) {\n" + "#\n" * count + " totalCount } }"

    for count, compiles in ((300, True), (3300, False)):
        query = with_comments(count)
        assert len(query.encode()) <= compiled.MAX_QUERY_BYTES
        answer, by_program = _compiled(snapshots, query, {})
        assert by_program is compiles and not answer["errors"]
        assert answer == _answer(PLAIN, snapshots, query, {})


@strawberry.enum
class _Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


@strawberry.input
class _Box:
    side: int


@strawberry.type
class _Args:
    """Resolvers a program calls straight (scalars, enums, lists of them, the object by any name) and one it
    leaves to strawberry's wrapper (an input type)."""

    base: int

    @strawberry.field
    def plain(self, word: str, times: int = 2, shade: _Shade = _Shade.DARK, note: str | None = None) -> str:
        return f"{word * times} {shade.value} {note!r} {self.base}"

    @strawberry.field
    def grown(self, numbers: list[int] = [1, 2], shades: list[_Shade] | None = None) -> list[str]:  # noqa: B006
        numbers.append(len(numbers))  # a resolver that changes its list: the next request must not see it
        return [str(n) for n in numbers] + [s.value for s in shades or ()]

    @strawberry.field
    def rooted(self, root: Any, info: strawberry.Info, extra: int = 0) -> str:
        return f"{root.base + extra} at {info.path.as_list()}"

    @strawberry.field
    def boxed(self, box: _Box) -> int:
        return box.side * self.base


@strawberry.type
class _ArgsQuery:
    @strawberry.field
    def args(self, base: int) -> _Args:
        return _Args(base=base)


def test_resolvers_called_straight_answer_as_strawberrys_wrapper_calls_them() -> None:
    fast = strawberry.Schema(query=_ArgsQuery, execution_context_class=compiled.CompiledExecutor)
    plain = strawberry.Schema(query=_ArgsQuery, execution_context_class=StrawberryGraphQLCoreExecutionContext)
    query = """query($b: Int!, $w: String!, $n: [Int!], $s: [_Shade!]) { args(base: $b) {
      a: plain(word: $w) b: plain(word: $w, times: 3, shade: LIGHT, note: "n") grown g2: grown(numbers: $n, shades: $s)
      rooted r2: rooted(extra: 5) boxed(box: {side: 4}) } }"""
    variables = {"b": 7, "w": "ab", "n": [5], "s": ["DARK", "LIGHT"]}
    expected = {
        "args": {
            "a": "abab dark None 7",
            "b": "ababab light 'n' 7",
            "grown": ["1", "2", "2"],
            "g2": ["5", "1", "dark", "light"],
            "rooted": "7 at ['args', 'rooted']",
            "r2": "12 at ['args', 'r2']",
            "boxed": 28,
        }
    }
    for _ in range(2):  # the second time from the kept program, with the defaults as they were
        before = compiled.COUNTS["compiled"]
        for schema in (fast, plain):
            result = schema.execute_sync(query, variable_values=variables)
            assert not result.errors and result.data == expected
        assert compiled.COUNTS["compiled"] == before + 1


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, False),
        (str | None, False),
        (int, False),
        (_Shade, False),
        (_Shade | None, False),
        (list[int], True),
        (list[_Shade | None] | None, True),
        (list[list[int]], None),
        (_Box, None),
        (strawberry.relay.GlobalID, None),
        (cast(Any, strawberry.Maybe)[str], None),
    ],
)
def test_which_arguments_are_passed_as_graphql_core_coerces_them(annotation: Any, expected: bool | None) -> None:
    kind = StrawberryAnnotation(annotation).resolve()
    assert compiled._plain_argument(kind, DEFAULT_SCALAR_REGISTRY) is expected


class _Text(str):
    """A `str` subclass: graphql-core's `serialize_string` returns it as it is (no exact `str`)."""


@strawberry.type
class _Leaves:
    """Scalars read straight, each of a value its type coerces otherwise than by returning it."""

    text: str
    flag: bool
    maybe: str | None

    @strawberry.field
    def subclassed(self) -> str:
        return _Text("sub")

    @strawberry.field
    def number_as_text(self) -> str:
        return cast(str, 12)

    @strawberry.field
    def flag_as_text(self) -> str:
        return cast(str, True)

    @strawberry.field
    def number_as_flag(self) -> bool:
        return cast(bool, 0)

    @strawberry.field
    def shade(self) -> _Shade:
        return _Shade.LIGHT


@strawberry.type
class _LeavesQuery:
    @strawberry.field
    def leaves(self, text: str) -> list[_Leaves]:
        return [_Leaves(text=text, flag=True, maybe=None), _Leaves(text=text * 2, flag=False, maybe="m")]


def test_scalars_read_straight_are_coerced_as_graphql_core_coerces_them() -> None:
    fast = strawberry.Schema(query=_LeavesQuery, execution_context_class=compiled.CompiledExecutor)
    plain = strawberry.Schema(query=_LeavesQuery, execution_context_class=StrawberryGraphQLCoreExecutionContext)
    query = """query($t: String!) { leaves(text: $t) { text flag maybe subclassed numberAsText flagAsText
      numberAsFlag shade } }"""
    row = {"subclassed": "sub", "numberAsText": "12", "flagAsText": "true", "numberAsFlag": False, "shade": "LIGHT"}
    expected = {
        "leaves": [
            {"text": "a", "flag": True, "maybe": None, **row},
            {"text": "aa", "flag": False, "maybe": "m", **row},
        ]
    }
    before = compiled.COUNTS["compiled"]
    for schema in (fast, plain):
        result = schema.execute_sync(query, variable_values={"t": "a"})
        assert not result.errors and result.data == expected
    assert compiled.COUNTS["compiled"] == before + 1

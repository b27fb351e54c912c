"""Ids and cursors a normalized client cache can trust across commits, on a registry built here: a head id
names one state of an object (unchanged by a commit that does not touch it, new when one does), pinned
ids name their commit, a page and its parent come from one commit, and ids and keys that cannot name
anything are refused loudly (`BAD_USER_INPUT`, `CURSOR_ERROR`) while well-formed ones that name nothing
answer null."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from helpers import (
    basic_scenario,
    commit_manifests,
    digest_of,
    make_implementation,
    make_operation,
    make_run,
    make_workload,
)

from kernelindex import registry
from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

TODAY = dt.date(2026, 11, 29)
S = basic_scenario()  # cohort X: run-a2 7.9 us (1), run-a1 8120 ns (2), run-b1 9000 ns (3)
OTHER = make_operation("layernorm-h4096", family="layernorm")
OTHER_WORKLOAD = make_workload(OTHER, name="layernorm-t2048")
OTHER_IMPLEMENTATION = make_implementation(OTHER, "kernel-c")
LONE = make_run(OTHER_IMPLEMENTATION, OTHER_WORKLOAD, S.protocol, S.environment, 5000, name="run-c1")  # cohort Y
NEW = make_run(S.implementations[1], S.workload, S.protocol, S.environment, 8000, "2026-08-05T12:00:00Z", name="run-b2")


@dataclass
class Registry:
    store: registry.GitStore
    snapshots: Snapshots
    first: str  # commit A
    second: str = ""  # commit B: NEW joins cohort X at rank 2

    def land(self) -> None:
        self.second = commit_manifests(self.store, [NEW], 1_700_100_000, subject="Add run-b2")
        self.snapshots.refresh()
        assert self.snapshots.head.commit == self.second


@pytest.fixture
def reg(store: registry.GitStore) -> Registry:
    first = commit_manifests(store, [*S.docs, OTHER, OTHER_WORKLOAD, OTHER_IMPLEMENTATION, LONE])
    snapshots = Snapshots(store.path)
    snapshots.load()
    return Registry(store, snapshots, first)


def ask(reg: Registry, query: str, **variables: Any) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(data, errors with their codes) of a query at the served head."""
    snapshots = reg.snapshots
    context = Context(snapshots, StoredObjects(snapshots), "", TODAY, snapshots.head)
    result = asyncio.run(schema.execute(query, variable_values=variables, context_value=context, root_value=Query()))
    errors = [
        {"message": e.message, "code": (e.extensions or {}).get("code"), "path": e.path} for e in result.errors or ()
    ]
    return result.data, errors


def data(reg: Registry, query: str, **variables: Any) -> dict[str, Any]:
    found, errors = ask(reg, query, **variables)
    assert not errors and found is not None, errors
    return found


def codes(reg: Registry, query: str, **variables: Any) -> list[str]:
    return [e["code"] for e in ask(reg, query, **variables)[1]]


def cohort_of(reg: Registry, run: dict[str, Any]) -> str:
    key = reg.snapshots.head.facts[digest_of(run)].cohort
    assert key is not None
    return key


IDS = """{ x: run(id: "run-a1") { id } a2: run(id: "run-a2") { id } b1: run(id: "run-b1") { id }
  c1: run(id: "run-c1") { id cohort { id } operation { id } workload { id } implementation { id } }
  xop: operation(id: "rmsnorm-h4096") { id } xc: run(id: "run-a2") { cohort { id size } }
  protocol(id: "test-protocol") { id } environment(id: "test-b200") { id } }"""


def _ids(reg: Registry) -> dict[str, Any]:
    found = data(reg, IDS)
    return {
        "a1": found["x"]["id"],
        "a2": found["a2"]["id"],
        "b1": found["b1"]["id"],
        "xcohort": found["xc"]["cohort"]["id"],
        "xoperation": found["xop"]["id"],
        **{f"c1.{k}": v["id"] for k, v in found["c1"].items() if isinstance(v, dict)},
        "c1": found["c1"]["id"],
        "protocol": found["protocol"]["id"],
        "environment": found["environment"]["id"],
    }


# The rule: head ids name a state --------------------------------------------------------------------


def test_a_commit_keeps_the_ids_of_what_it_does_not_touch_and_renews_the_rest(reg: Registry) -> None:
    before = _ids(reg)
    reg.land()
    after = _ids(reg)
    untouched = ["c1", "c1.cohort", "c1.operation", "c1.workload", "c1.implementation", "protocol", "environment"]
    # run-a2 still ranks first, with the same leader (itself): nothing it answers changed.
    untouched.append("a2")
    touched = ["a1", "b1", "xcohort", "xoperation"]  # a1 and b1 moved down a rank; X grew; X's op has a new run
    assert {k: after[k] for k in untouched} == {k: before[k] for k in untouched}
    assert all(after[k] != before[k] for k in touched), {k: (before[k], after[k]) for k in touched}
    assert len(set(before.values())) == len(before)  # every object its own id


def test_an_id_is_the_same_whichever_field_reaches_the_object(reg: Registry) -> None:
    found = data(
        reg,
        """query($key: String!) { run(id: "run-a2") { id cohort { id leader { id } } }
             cohort(key: $key) { id entries(first: 3) { edges { node { run { id } } } } } }""",
        key=cohort_of(reg, S.runs[0]),
    )
    assert found["run"]["cohort"]["id"] == found["cohort"]["id"]
    assert found["run"]["cohort"]["leader"]["id"] == found["run"]["id"]
    assert found["cohort"]["entries"]["edges"][0]["node"]["run"]["id"] == found["run"]["id"]


def test_pinned_ids_name_their_commit_and_never_equal_head_ones(reg: Registry) -> None:
    reg.land()
    query = """query($a: String!, $b: String!) { run(id: "run-c1") { id } a: registry(at: $a) { run(id: "run-c1") { id } }
      b: registry(at: $b) { run(id: "run-c1") { id } } head: registry { run(id: "run-c1") { id } } }"""
    found = data(reg, query, a=reg.first, b=reg.second)
    head, at_first, at_second = found["run"]["id"], found["a"]["run"]["id"], found["b"]["run"]["id"]
    assert len({head, at_first, at_second}) == 3  # the head commit pinned is still a pinned answer
    assert found["head"]["run"]["id"] == head  # `registry` without `at` is the head
    assert base64.urlsafe_b64decode(at_first + "==").decode().split(":")[1] == reg.first


def test_node_refetches_a_head_id_as_the_object_stands_now_and_a_pinned_one_as_it_stood(reg: Registry) -> None:
    key = cohort_of(reg, S.runs[0])
    query = (
        "query($k: String!, $at: String!) { cohort(key: $k) { id size } registry(at: $at) { cohort(key: $k) { id } } }"
    )
    found = data(reg, query, k=key, at=reg.first)
    head_id, pinned_id = found["cohort"]["id"], found["registry"]["cohort"]["id"]
    reg.land()
    query = "query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Cohort { size } } }"
    now, then = data(reg, query, ids=[head_id, pinned_id])["nodes"]
    assert (now["size"], then["size"]) == (4, 3)
    assert now["id"] != head_id  # the cohort changed: its id says so
    assert then["id"] == pinned_id


def test_a_commit_is_its_own_id_everywhere(reg: Registry) -> None:
    found = data(reg, "query($at: String!) { commit { id } registry(at: $at) { commit { id } } }", at=reg.first)
    assert found["commit"]["id"] == found["registry"]["commit"]["id"] == reg.first


# A page and its parent come from one commit --------------------------------------------------------

PAGE = """query($key: String!, $after: String) { cohort(key: $key) { id size leader { name }
  entries(first: 2, after: $after) { totalCount pageInfo { commit endCursor hasNextPage }
    edges { node { rank run { name id } } } } } }"""


def test_paging_on_across_a_commit_answers_the_parent_from_the_cursors_commit(reg: Registry) -> None:
    key = cohort_of(reg, S.runs[0])
    first = data(reg, PAGE, key=key)["cohort"]
    reg.land()
    second, errors = ask(reg, PAGE, key=key, after=first["entries"]["pageInfo"]["endCursor"])
    assert not errors and second is not None
    cohort = second["cohort"]
    assert (cohort["id"], cohort["size"], cohort["entries"]["totalCount"]) == (first["id"], 3, 3)
    assert cohort["entries"]["pageInfo"]["commit"] == first["entries"]["pageInfo"]["commit"] == reg.first
    names = [e["node"]["run"]["name"] for page in (first, cohort) for e in page["entries"]["edges"]]
    assert names == ["run-a2", "run-a1", "run-b1"]  # every entry once, as commit A ranked them
    restarted = data(reg, PAGE, key=key)["cohort"]  # from the first page: the new head, a new object
    assert (restarted["size"], restarted["entries"]["pageInfo"]["commit"]) == (4, reg.second)
    assert restarted["id"] != first["id"]


def test_every_head_field_of_a_request_that_pages_on_answers_from_the_cursors_commit(reg: Registry) -> None:
    key = cohort_of(reg, S.runs[0])
    cursor = data(reg, PAGE, key=key)["cohort"]["entries"]["pageInfo"]["endCursor"]
    reg.land()
    query = """query($key: String!, $after: String) { commit { id } runs { totalCount }
      ...Page registry { cohort(key: $key) { size } } }
      fragment Page on Query { cohort(key: $key) { entries(first: 1, after: $after) { pageInfo { commit } } } }"""
    found = data(reg, query, key=key, after=cursor)
    assert found["commit"]["id"] == reg.first
    assert found["runs"]["totalCount"] == 4  # run-c1 and X's three at A
    assert found["registry"]["cohort"]["size"] == 3


def test_a_cursor_of_another_commit_inside_registry_at_is_a_cursor_error(reg: Registry) -> None:
    key = cohort_of(reg, S.runs[0])
    cursor = data(reg, PAGE, key=key)["cohort"]["entries"]["pageInfo"]["endCursor"]
    reg.land()
    query = """query($at: String!, $key: String!, $after: String) { registry(at: $at) { commit { id }
      cohort(key: $key) { size entries(first: 2, after: $after) { totalCount } } } }"""
    found, errors = ask(reg, query, at=reg.second, key=key, after=cursor)
    assert [e["code"] for e in errors] == ["CURSOR_ERROR"]
    assert "page again from the first page" in errors[0]["message"] and reg.first in errors[0]["message"]
    assert found == {"registry": {"commit": {"id": reg.second}, "cohort": {"size": 4, "entries": None}}}
    same = data(reg, query, at=reg.first, key=key, after=cursor)  # its own commit: fine
    assert same["registry"]["cohort"]["entries"]["totalCount"] == 3


def test_cursors_of_two_commits_in_one_request_are_a_cursor_error(reg: Registry) -> None:
    key = cohort_of(reg, S.runs[0])
    old = data(reg, PAGE, key=key)["cohort"]["entries"]["pageInfo"]["endCursor"]
    reg.land()
    new = data(reg, PAGE, key=key)["cohort"]["entries"]["pageInfo"]["endCursor"]
    query = """query($a: String, $b: String) { a: runs(first: 1, after: $a) { totalCount }
      b: runs(first: 1, after: $b) { totalCount } }"""
    found, errors = ask(reg, query, a=old, b=new)
    assert {e["code"] for e in errors} == {"CURSOR_ERROR"} and "2 commits" in errors[0]["message"]
    assert found == {"a": None, "b": None}


def test_a_cursor_of_a_commit_main_does_not_hold_is_a_cursor_error(reg: Registry) -> None:
    cursor = base64.urlsafe_b64encode(b"0" * 40 + b":1").decode()
    found, errors = ask(reg, "query($c: String) { runs(first: 1, after: $c) { totalCount } }", c=cursor)
    assert [e["code"] for e in errors] == ["CURSOR_ERROR"] and found == {"runs": None}


def test_a_cursor_that_is_not_one_is_a_cursor_error_of_its_field_only(reg: Registry) -> None:
    found, errors = ask(reg, '{ commit { id } runs(first: 1, after: "bogus") { totalCount } }')
    assert [e["code"] for e in errors] == ["CURSOR_ERROR"]
    assert found == {"commit": {"id": reg.first}, "runs": None}


# Ids and keys that fail loudly ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("sha256:zzzz", "is not a digest or a digest prefix"),  # not hex
        ("sha256:7f6df4bb", "is not a digest or a digest prefix"),  # a prefix too short
        ("SOL-SUBMISSION-6709", "names nothing"),  # names and digests are lower-case
        ("7F6DF4BBBDBEB096", "names nothing"),
        ("run a1", "names nothing"),
        ("", "names nothing"),
        ("7f6df4", "too short"),  # hex, names nothing: a prefix needs 12 digits
    ],
)
def test_a_malformed_run_id_is_bad_user_input_saying_what_was_expected(
    reg: Registry, argument: str, expected: str
) -> None:
    found, errors = ask(reg, "query($id: String!) { commit { id } run(id: $id) { name } }", id=argument)
    assert [e["code"] for e in errors] == ["BAD_USER_INPUT"]
    assert expected in errors[0]["message"] and "sha256: and 64 lower-case hex digits" in errors[0]["message"]
    assert found == {"commit": {"id": reg.first}, "run": None}


@pytest.mark.parametrize("argument", ["sha256:" + "0" * 64, "0" * 12, "no-such-run", "sha256:" + "0" * 20])
def test_a_well_formed_id_that_names_nothing_is_null_without_an_error(reg: Registry, argument: str) -> None:
    assert data(reg, "query($id: String!) { run(id: $id) { name } }", id=argument) == {"run": None}


def test_object_arguments_take_node_ids_of_their_own_type_only(reg: Registry) -> None:
    found = data(reg, '{ run(id: "run-a1") { id digest cohort { id key } operation { id } } }')["run"]
    by_id = data(
        reg,
        "query($r: String!, $c: String!, $o: String!) { run(id: $r) { digest } cohort(key: $c) { key } "
        "operation(id: $o) { name } }",
        r=found["id"],
        c=found["cohort"]["id"],
        o=found["operation"]["id"],
    )
    assert by_id == {"run": {"digest": found["digest"]}, "cohort": {"key": found["cohort"]["key"]},
                     "operation": {"name": "rmsnorm-h4096"}}  # fmt: skip
    _, errors = ask(reg, "query($c: String!) { run(id: $c) { name } }", c=found["cohort"]["id"])
    assert [e["code"] for e in errors] == ["BAD_USER_INPUT"] and "the id of a Cohort" in errors[0]["message"]


@pytest.mark.parametrize(
    ("key", "code"),
    [
        ("XYZ", "BAD_USER_INPUT"),
        ("sha256:zzzz", "BAD_USER_INPUT"),
        ("39d43c19", "BAD_USER_INPUT"),  # 8 digits: too short for a prefix
        ("39D43C1992795178", "BAD_USER_INPUT"),
        ("0" * 64, None),  # well-formed, names nothing
        ("sha256:" + "0" * 12, None),
    ],
)
def test_cohort_keys_fail_loudly_or_answer_null(reg: Registry, key: str, code: str | None) -> None:
    found, errors = ask(reg, "query($k: String!) { cohort(key: $k) { size } }", k=key)
    assert found == {"cohort": None}
    assert [e["code"] for e in errors] == ([code] if code else [])
    if code:
        assert "a cohort key: sha256: and 64 lower-case hex digits" in errors[0]["message"]


def test_the_api_guide_lists_every_type_without_an_id() -> None:
    """A cache meets every object type: each has an `id` (implements Node) or the guide lists it as a value
    (`keys: null`), so a Graphcache configured from the guide warns of no type."""
    import re

    from graphql import GraphQLObjectType
    from helpers import PROJECT_ROOT

    types = schema._schema.type_map
    node = types["Node"]
    values = {
        name
        for name, kind in types.items()
        if isinstance(kind, GraphQLObjectType)
        and not name.startswith("__")
        and name != "Query"
        and node not in kind.interfaces
        and not name.endswith(("Connection", "Edge"))
        and name != "PageInfo"
    }
    guide = (PROJECT_ROOT / "docs" / "api.md").read_text()
    paragraph = guide[guide.index("**Types without an `id` are values**") :].split("\n\n")[0]
    assert set(re.findall(r"`(\w+)`", paragraph)) - {"id", "null", "PageInfo"} == values

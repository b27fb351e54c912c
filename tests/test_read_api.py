"""The read API (`kernelindex.registry.read`) answers what GraphQL answered before it existed: every filter and
order `runs`, `cohorts` and `records` offer (enumerated from the schema: tests/read_cases.py), over the embedded
corpus, against tests/data/read_api/answers.json, recorded from the resolvers as they were (`_filtered_runs`,
`_records`, `_filtered_cohorts` in the schema). The GraphQL fields, now reading through the read API, still
answer the same (the slow test), and the read API's own lookups and guards hold at their boundaries."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from helpers import EMBEDDED_REPO
from read_cases import ANSWERS, Case, answer, cases, graphql_answer, load

from kernelindex.core.context import StoredObjects
from kernelindex.core.errors import BadUserInput
from kernelindex.registry import read
from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Workload
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema import root
from kernelindex.schema import types as t
from kernelindex.schema.types.deployment import facts_of
from kernelindex.schema.types.scalars import parse_datetime


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Snapshots:
    return load(EMBEDDED_REPO, tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(ANSWERS.read_text())
    return found


def _enum(kind: Any, value: Any) -> Any:
    return [kind[v] for v in value] if isinstance(value, list) else kind[value]


_FIELDS: dict[str, Any] = {
    "status": lambda v: _enum(t.RunStatus, v),
    "minTrust": lambda v: _enum(t.Trust, v),
    "trust": lambda v: _enum(t.Trust, v),
    "observedSince": parse_datetime,
    "since": parse_datetime,
}
_SNAKE = {
    "minTrust": "min_trust",
    "eligibleOnly": "eligible_only",
    "observedSince": "observed_since",
    "deployableOnly": "deployable_only",
    "licenseKnown": "license_known",
    "minSize": "min_size",
}


def _input(kind: Any, given: dict[str, Any] | None) -> Any:
    """The GraphQL input object a case's variables make (as strawberry would build it)."""
    if given is None:
        return None
    arguments = {_SNAKE.get(k, k): (_FIELDS[k](v) if k in _FIELDS and v is not None else v) for k, v in given.items()}
    return kind(**arguments)


def _read(snapshots: Snapshots, case: Case) -> dict[str, Any]:
    """The case answered by the read API, its filter converted by the GraphQL input type's own conversion."""
    graph = snapshots.head
    objects = StoredObjects(snapshots)
    try:
        if case.field == "runs":
            where = _input(root.RunFilter, case.filter)
            found = read.runs(
                graph,
                where.to_domain(graph) if where else None,
                read.RunOrder[case.order],
                facts=lambda node: facts_of(objects, node),
            )
        elif case.field == "cohorts":
            cohort_filter = _input(root.CohortFilter, case.filter)
            found = read.cohorts(
                graph, cohort_filter.to_domain(graph) if cohort_filter else None, read.CohortOrder[case.order]
            )
        else:
            record_filter = _input(root.RecordFilter, case.filter)
            found = read.records(
                graph, record_filter.to_domain(graph) if record_filter else None, read.RecordOrder[case.order]
            )
    except BadUserInput:
        return {"error": ["BAD_USER_INPUT"]}
    return answer(list(found))


def test_the_golden_answers_cover_every_case_the_schema_offers(snapshots: Snapshots, golden: dict[str, Any]) -> None:
    """Every filter field and order value the schema has is in the golden file (a new one must be recorded),
    and the file was recorded at the embedded registry's head."""
    names = [case.name for case in cases(snapshots.head)]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(golden["answers"])
    assert golden["commit"] == snapshots.head.commit


def test_the_read_api_answers_as_graphql_did(snapshots: Snapshots, golden: dict[str, Any]) -> None:
    wrong = {}
    for case in cases(snapshots.head):
        expected = golden["answers"][case.name]
        found = _read(snapshots, case)
        if found != expected:
            wrong[case.name] = (found, expected)
    assert not wrong, list(wrong)[:5]


@pytest.mark.slow
def test_graphql_still_answers_as_it_did(snapshots: Snapshots, golden: dict[str, Any]) -> None:
    """The resolvers, now reading through the read API: every case's first page and total over GraphQL, and
    every page of the unfiltered lists in each order."""
    wrong = {}
    for case in cases(snapshots.head):
        expected = golden["answers"][case.name]
        whole = case.filter is None
        found = graphql_answer(snapshots, case, pages=None if whole else 1)
        if not whole and "error" not in found:
            expected = {"count": expected["count"], "head": _head(expected)}
            found = {"count": found["count"], "head": _head(found)}
        if found != expected:
            wrong[case.name] = (found, expected)
    assert not wrong, list(wrong)[:5]


def _head(answered: dict[str, Any]) -> list[str]:
    shown: list[str] = answered["items"] if "items" in answered else answered["head"]
    return shown[:12]


# The read API on its own ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph(snapshots: Snapshots) -> Graph:
    return snapshots.head


def test_an_absent_reference_keeps_nothing_and_no_reference_keeps_everything(graph: Graph) -> None:
    assert read.runs(graph, read.RunFilter(operations=frozenset())) == []
    assert read.cohorts(graph, read.CohortFilter(workloads=frozenset())) == []
    assert read.records(graph, read.RecordFilter(operations=frozenset())) == []
    assert len(read.runs(graph, read.RunFilter())) == len(read.runs(graph)) == 9508  # tests/test_embedded.py
    assert len(read.cohorts(graph, read.CohortFilter())) == len(graph.cohorts)


def test_an_empty_set_of_statuses_or_levels_keeps_no_run(graph: Graph) -> None:
    """The domain takes an empty set at its word (GraphQL's `status: []` is no condition, and converts so)."""
    assert read.runs(graph, read.RunFilter(statuses=frozenset())) == []
    assert read.runs(graph, read.RunFilter(trusts=frozenset())) == []


def test_several_references_keep_the_runs_of_any(graph: Graph) -> None:
    by_source = {s: set(read.runs(graph, read.RunFilter(source=s))) for s in ("sol-execbench", "flashinfer-bench")}
    operations = {graph.facts[d].operation for runs in by_source.values() for d in runs}
    some = sorted(o for o in operations if o)[:2]
    either = set(read.runs(graph, read.RunFilter(operations=frozenset(some))))
    each = [set(read.runs_with(graph, read.RunIndex.OPERATION, o)) for o in some]
    assert either == each[0] | each[1] and each[0] and each[1]


def test_min_size_at_the_largest_cohort_keeps_it_and_one_past_keeps_none(graph: Graph) -> None:
    largest = max(len(c.members) for c in graph.cohorts.values())
    for order in read.CohortOrder:
        assert len(read.cohorts(graph, read.CohortFilter(min_size=largest), order)) == 1
        assert read.cohorts(graph, read.CohortFilter(min_size=largest + 1), order) == []


def test_observed_since_keeps_a_run_observed_at_that_instant_and_not_one_ns_later(graph: Graph) -> None:
    newest = max(graph.nodes[d].observed_ns for d in graph.facts)  # type: ignore[union-attr]
    assert len(read.runs(graph, read.RunFilter(observed_since_ns=newest))) >= 1
    assert read.runs(graph, read.RunFilter(observed_since_ns=newest + 1)) == []


def test_a_filter_on_implementations_facts_without_a_reader_is_refused(graph: Graph) -> None:
    with pytest.raises(ValueError, match="needs `facts`"):
        read.runs(graph, read.RunFilter(installable=True))


def test_lookups_name_manifests_kinds_and_cohorts(graph: Graph) -> None:
    run = read.runs(graph)[0]
    node = read.manifest(graph, run)
    assert node is not None and node.digest == run
    assert read.kind_of(graph, run) == "BenchmarkRun"
    assert read.kind_of(graph, "sha256:" + "0" * 64) is None
    assert read.manifest(graph, run, ("OperationSpec",)) is None
    assert read.manifest(graph, run[7:19]) is node  # the shortest prefix, 12 digits
    key = read.cohorts(graph)[0]
    found = read.cohort(graph, key[:19])
    assert found is not None and found.key == key
    assert read.cohort(graph, "sha256:" + "0" * 64) is None


def test_the_largest_run_group_is_the_commonest_key_counted_from_the_nodes(graph: Graph) -> None:
    """What a query's cost charges a scan of one operation's or implementation's runs: counted here from the
    run nodes themselves (each run's implementation, its workload's operation), not from the graph's indexes."""
    runs = [graph.nodes[d] for d in graph.facts]
    by_implementation = Counter(run.implementation for run in runs)  # type: ignore[union-attr]
    operation_of = {d: n.operation for d, n in graph.nodes.items() if isinstance(n, Workload)}
    by_operation = Counter(operation_of[run.workload] for run in runs)  # type: ignore[union-attr]
    assert read.largest_run_group(graph, read.RunIndex.IMPLEMENTATION) == max(by_implementation.values())
    assert read.largest_run_group(graph, read.RunIndex.OPERATION) == max(by_operation.values())

"""Every filter and order `runs`, `cohorts` and `records` offer, as cases over the embedded corpus, and their
answers over GraphQL: what tests/data/read_api/answers.json holds (recorded from the resolvers as they were
before the read API, `python tests/read_cases.py` records them again).

The filters' fields and the orders' values are read from the schema, never listed here: a field the schema
gains without a sample below fails `cases` (test_read_api.py), so the golden answers cover it before it ships.
Strings are sampled from the corpus by what they name (the operation with the most runs, one with none...);
enums take each value; booleans both; instants and sizes sit at the corpus's own boundaries.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
)

from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

__all__ = ["ANSWERS", "LISTS", "Case", "answer", "cases", "graphql_answer", "load"]

ANSWERS = Path(__file__).resolve().parent / "data" / "read_api" / "answers.json"
SHOWN = 12  # a list this short is kept whole in the golden file; a longer one as its count, head and hash


@dataclass(frozen=True)
class List:
    """One root list field: its filter input, its order enum and what names an item."""

    field: str
    filter: str
    order: str
    item: str  # the GraphQL selection that names an item, and the key under `node` to read


LISTS = (
    List("runs", "RunFilter", "RunOrder", "digest"),
    List("cohorts", "CohortFilter", "CohortOrder", "key"),
    List("records", "RecordFilter", "RecordOrder", "cohort { key }"),
)


@dataclass(frozen=True)
class Case:
    field: str
    filter: dict[str, Any] | None
    order: str

    @property
    def name(self) -> str:
        return json.dumps([self.field, self.filter, self.order], sort_keys=True, separators=(",", ":"))


def load(repo: Path, cache: Path) -> Snapshots:
    snapshots = Snapshots(repo, cache_root=cache)
    snapshots.load()
    return snapshots


def _most(counted: Counter[str]) -> str:
    """The most counted key, the smallest of equals: a choice fixed by the corpus alone."""
    return min(counted.items(), key=lambda item: (-item[1], item[0]))[0]


def _idents(graph: Graph, digest: str, absent_kind: type[n.Node]) -> list[str]:
    """A manifest named every way an id argument takes, plus one absent and one malformed."""
    node = graph.nodes[digest]
    used = _used(graph)
    idle = min(d for d, other in graph.nodes.items() if type(other) is absent_kind and d not in used)
    return [
        digest,
        digest.removeprefix("sha256:")[:12],  # the shortest prefix
        node.name,
        f"  {node.name}  ",
        idle,  # a manifest of the kind with no runs
        "sha256:" + "0" * 64,  # well-formed, absent
        "no-such-manifest",
        "sha256:xyz",  # malformed
        "abc",  # a bare hex too short for a prefix
    ]


def _used(graph: Graph) -> set[str]:
    used: set[str] = set()
    for digest, facts in graph.facts.items():
        run = graph.nodes[digest]
        assert isinstance(run, n.Run)
        used.update((facts.operation or "", run.implementation, run.workload))
    return used


def _operation(graph: Graph) -> list[str]:
    counted = Counter(f.operation for f in graph.facts.values() if f.operation)
    return _idents(graph, _most(counted), n.Operation)


def _implementation(graph: Graph) -> list[str]:
    counted = Counter(node.implementation for d, node in graph.nodes.items() if d in graph.facts)  # type: ignore[union-attr]
    return _idents(graph, _most(counted), n.Implementation)


def _workload(graph: Graph) -> list[str]:
    runs = [graph.nodes[d] for d in graph.facts]
    counted = Counter(node.workload for node in runs)  # type: ignore[union-attr]
    cases = Counter({w: c for w, c in counted.items() if graph.nodes[w].kind == "WorkloadCase"})
    suites = Counter({w: c for w, c in counted.items() if graph.nodes[w].kind == "WorkloadSuite"})
    found = _idents(graph, _most(cases), n.Workload)  # a case named every way
    return found + ([_most(suites)] if suites else [])  # and the suite with the most runs


def _cohort(graph: Graph) -> list[str]:
    largest = min(graph.cohorts, key=lambda k: (-len(graph.cohorts[k].members), k))
    single = min(k for k, c in graph.cohorts.items() if len(c.members) == 1)
    return [largest, largest.removeprefix("sha256:")[:12], single, "sha256:" + "0" * 64, "sha256:xyz", "abcdef"]


def _gpu(graph: Graph) -> list[str]:
    return ["b200", "NVIDIA B200", "nvidia b200", "sm_90", "h100", "nvidia", "mi300x", "gfx942", "rtx", "tpu", " "]


def _source(graph: Graph) -> list[str]:
    slugs = sorted({f.source for f in graph.facts.values() if f.source})
    return [*slugs, f" {slugs[0]} ", "no-such-source", ""]


def _instants(times: list[int]) -> list[str]:
    """Instants at the corpus's boundaries: the oldest and newest (each kept: at or after), one second past
    the newest (nothing), the median, and far before."""
    times = sorted(times)
    newest = times[-1] // 1_000_000_000
    return [
        "2000-01-01T00:00:00Z",
        utc_instant(times[0] // 1_000_000_000),
        utc_instant(times[len(times) // 2] // 1_000_000_000),
        utc_instant(newest),
        utc_instant(newest + 1),
    ]


def _observed(graph: Graph) -> list[str]:
    return _instants([graph.nodes[d].observed_ns for d in graph.facts])  # type: ignore[union-attr]


def _since(graph: Graph) -> list[str]:
    return _instants([graph.cohorts[k].holder(graph).at_ns for k in graph.records])  # type: ignore[union-attr]


def _sizes(graph: Graph) -> list[int]:
    largest = max(len(c.members) for c in graph.cohorts.values())
    return [0, 1, 2, 3, 10, largest, largest + 1]


# filter name -> field -> the values it is asked with (strings and scalars; enums and booleans come from the schema)
SAMPLES: dict[str, dict[str, Callable[[Graph], list[Any]]]] = {
    "RunFilter": {
        "operation": _operation,
        "gpu": _gpu,
        "source": _source,
        "observedSince": _observed,
        "implementation": _implementation,
        "workload": _workload,
        "cohort": _cohort,
    },
    "CohortFilter": {"operation": _operation, "gpu": _gpu, "workload": _workload, "minSize": _sizes},
    "RecordFilter": {"operation": _operation, "gpu": _gpu, "source": _source, "since": _since},
}
# Conditions together, for each list: their intersection is what a combined filter must keep.
COMBINED: dict[str, list[dict[str, Any]]] = {
    "RunFilter": [
        {"gpu": "b200", "eligibleOnly": True},
        {"gpu": "h100", "status": ["PASSED"], "minTrust": "REPRODUCIBLE"},
        {"source": "gpumode-kernelbot", "gpu": "sm_90", "observedSince": "2025-06-01T00:00:00Z"},
        {"eligibleOnly": True, "deployableOnly": True, "licenseKnown": True, "installable": True},
        {"gpu": "b200", "licenseKnown": True, "installable": False},
        {"operation": "gpumode-amd-fp8-mm", "trust": ["REPORTED"], "status": ["PASSED", "RUNTIME_ERROR"]},
    ],
    "CohortFilter": [{"gpu": "b200", "minSize": 3}],
    "RecordFilter": [{"gpu": "b200", "source": "flashinfer-bench"}],
}


def _unwrap(kind: Any) -> Any:
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        kind = kind.of_type
    return kind


def _values(graph: Graph, filter_name: str, field: str, kind: Any) -> list[Any]:
    listed = isinstance(kind.of_type if isinstance(kind, GraphQLNonNull) else kind, GraphQLList)
    base = _unwrap(kind)
    sampler = SAMPLES[filter_name].get(field)
    if sampler is not None:
        return sampler(graph)
    if isinstance(base, GraphQLEnumType):
        names = list(base.values)
        if listed:  # each alone, the first two together, and none
            return [[name] for name in names] + [names[:2], []]
        return names
    if isinstance(base, GraphQLScalarType) and base.name == "Boolean":
        return [True, False] if isinstance(kind, GraphQLNonNull) else [True, False, None]
    raise KeyError(f"{filter_name}.{field} ({kind}) has no sample: add one to tests/read_cases.py SAMPLES")


def cases(graph: Graph) -> Iterator[Case]:
    """Each list in each order unfiltered, each filter field at each sample value (default order), and the
    combined filters in each order."""
    types = schema._schema.type_map
    for listed in LISTS:
        order = types[listed.order]
        filter_type = types[listed.filter]
        assert isinstance(order, GraphQLEnumType) and isinstance(filter_type, GraphQLInputObjectType)
        snapshot = types["Snapshot"]
        assert isinstance(snapshot, GraphQLObjectType)
        given: Any = snapshot.fields[listed.field].args["order"].default_value
        default = str(given.name)
        for value in order.values:
            yield Case(listed.field, None, value)
        yield Case(listed.field, {}, default)
        for field, spec in filter_type.fields.items():
            for sample in _values(graph, listed.filter, field, spec.type):
                yield Case(listed.field, {field: sample}, default)
        for combined in COMBINED[listed.filter]:
            for value in order.values:
                yield Case(listed.field, combined, value)


def _context(snapshots: Snapshots) -> Context:
    return Context(snapshots, StoredObjects(snapshots), "", dt.date(2026, 11, 29), snapshots.head)


def graphql_answer(snapshots: Snapshots, case: Case, *, pages: int | None = None) -> dict[str, Any]:
    """The case's answer over GraphQL, every page of it (or the first `pages`), as `answer` shapes it."""
    listed = next(x for x in LISTS if x.field == case.field)
    query = (
        f"query($filter: {listed.filter}, $order: {listed.order}!, $after: String) {{ {listed.field}"
        f"(filter: $filter, order: $order, first: 100, after: $after) {{ totalCount pageInfo {{ hasNextPage "
        f"endCursor }} edges {{ node {{ {listed.item} }} }} }} }}"
    )
    items: list[str] = []
    after: str | None = None
    total = 0
    for page in range(pages or 10**6):
        variables = {"filter": case.filter, "order": case.order, "after": after}
        result = asyncio.run(
            schema.execute(query, variable_values=variables, context_value=_context(snapshots), root_value=Query())
        )
        if result.errors:
            return {"error": sorted({str((e.extensions or {}).get("code")) for e in result.errors})}
        assert result.data is not None
        connection = result.data[case.field]
        total = connection["totalCount"]
        for edge in connection["edges"]:
            node = edge["node"]
            items.append(node["cohort"]["key"] if case.field == "records" else node[listed.item])
        if not connection["pageInfo"]["hasNextPage"]:
            break
        after = connection["pageInfo"]["endCursor"]
        if pages is not None and page + 1 >= pages:
            return {"count": total, "head": items[:SHOWN]}
    assert total == len(items), (case.name, total, len(items))
    return answer(items)


def answer(items: list[str]) -> dict[str, Any]:
    """A list as the golden file keeps it: whole when short, else its count, first items and a hash of all."""
    if len(items) <= SHOWN:
        return {"count": len(items), "items": items}
    text = "\n".join(items).encode()
    return {"count": len(items), "head": items[:SHOWN], "sha256": hashlib.sha256(text).hexdigest()}


def record(repo: Path, cache: Path) -> None:
    snapshots = load(repo, cache)
    found = {case.name: graphql_answer(snapshots, case) for case in cases(snapshots.head)}
    ANSWERS.parent.mkdir(parents=True, exist_ok=True)
    body = {"commit": snapshots.head.commit, "answers": found}
    ANSWERS.write_text(json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{len(found)} cases -> {ANSWERS}")


if __name__ == "__main__":
    import tempfile

    from helpers import EMBEDDED_REPO

    with tempfile.TemporaryDirectory() as folder:
        record(Path(sys.argv[1]) if len(sys.argv) > 1 else EMBEDDED_REPO, Path(folder))

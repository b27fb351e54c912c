"""Runs side by side: material differences first, ranks only inside one cohort."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import strawberry

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.enums import _TRUST
from kernelindex.schema.types.identity import find_manifest
from kernelindex.schema.types.runs import Run, primary_display

__all__ = ["Compare", "CompareEntry", "CompareRow", "compare_runs"]


@strawberry.type(description="One field of the compared runs, side by side.")
class CompareRow:
    field: str = strawberry.field(
        description="The field compared (operation, workload, protocol, environment, correctness, metric, "
        "implementation, value, status, trust, observedAt, source, cohort)."
    )
    values: list[str | None] = strawberry.field(
        description="Each run's value of the field, in the order of `runs` (digests for references); null where a "
        "run has none."
    )
    same: bool = strawberry.field(description="Whether every run has the same value.")
    material: bool = strawberry.field(description="A difference here makes the runs incomparable.")


@strawberry.type(description="A compared run's place in the cohort they share.")
class CompareEntry:
    run: Run = strawberry.field(description="The run.")
    rank: int | None = strawberry.field(description="Its rank in the shared cohort; null when not ranked.")
    tied_with_previous: bool = strawberry.field(
        description="Whether it shares its rank with the run presented before it in the cohort."
    )


@strawberry.type(description="Runs side by side, field by field; ranks only when they share an eligible cohort.")
class Compare:
    runs: list[Run] = strawberry.field(description="The runs found, in the order asked.")
    material: list[str] = strawberry.field(
        description="The material fields that differ, in this order: operation, workload, protocol, "
        "environment, correctness, metric. Empty when the runs are comparable."
    )
    rows: list[CompareRow] = strawberry.field(description="Field by field, material differences first.")
    same_cohort: bool = strawberry.field(
        description="Whether all (at least two) share one cohort: only then do ranks compare."
    )
    entries: list[CompareEntry] | None = strawberry.field(
        description="Ranks, when all share one cohort and are eligible."
    )
    missing: list[str] = strawberry.field(description="Ids that matched no run.")


def compare_runs(graph: Graph, ids: Sequence[str], info: Info) -> Compare:
    runs: list[n.Run] = []
    missing = []
    for ident in ids:
        node = find_manifest(graph, ("BenchmarkRun",), ident, ("Run",), "a run")
        if isinstance(node, n.Run):
            runs.append(node)
        else:
            missing.append(ident)
    facts = [graph.facts[r.digest] for r in runs]

    def correctness(run: n.Run) -> str | None:
        workload = graph.nodes.get(run.workload)
        return workload.correctness if isinstance(workload, n.Workload) else None

    columns: list[tuple[str, Callable[[int], str | None], bool]] = [
        ("operation", lambda i: facts[i].operation, True),
        ("workload", lambda i: runs[i].workload, True),
        ("protocol", lambda i: runs[i].protocol, True),
        ("environment", lambda i: runs[i].environment, True),
        ("correctness", lambda i: correctness(runs[i]), True),
        ("metric", lambda i: registry.cohorts.metric_key(runs[i].primary), True),
        ("implementation", lambda i: runs[i].implementation, False),
        ("value", lambda i: primary_display(runs[i].primary), False),
        ("status", lambda i: runs[i].status, False),
        ("trust", lambda i: _TRUST[facts[i].trust].name.lower(), False),
        ("observedAt", lambda i: runs[i].observed_at, False),
        ("source", lambda i: facts[i].source, False),
        ("cohort", lambda i: facts[i].cohort, False),
    ]
    rows = []
    for name, value_of, material in columns:
        values = [value_of(i) for i in range(len(runs))]
        rows.append(CompareRow(field=name, values=values, same=len(set(values)) <= 1, material=material))
    differing = [row.field for row in rows if row.material and not row.same]
    cohorts = {f.cohort for f in facts}
    same_cohort = len(runs) >= 2 and len(cohorts) == 1 and None not in cohorts
    entries = None
    if same_cohort and all(f.eligible for f in facts):
        entries = [
            CompareEntry(
                run=Run(_graph=graph, _node=r), rank=graph.rank(r.digest), tied_with_previous=graph.tied(r.digest)
            )
            for r, f in zip(runs, facts, strict=True)
        ]
    rows.sort(key=lambda row: (not (row.material and not row.same), not row.material))
    return Compare(
        runs=[Run(_graph=graph, _node=r) for r in runs],
        material=differing,
        rows=rows,
        same_cohort=same_cohort,
        entries=entries,
        missing=missing,
    )

"""A cohort's leaderboard as plain rows: the fused field `Cohort.leaderboard`, for a first-time leaderboard's
latency.

`Cohort.entries` is a connection of entries of runs of implementations: every level is an object whose
fields each run a resolver, ~160 of them for a page of 20. A first-time leaderboard spends most of its
time there, in the GraphQL executor rather than in the registry. `leaderboard` computes the same rows in
one pass (the same ranking-v1 order, ranks, ties, trust filter, value wording and implementation name as
`entries { node { rank tiedWithPrevious run { digest name trust primary { value display }
implementation { displayName } } } }`) and returns objects whose fields are plain attributes.
"""

from __future__ import annotations

import strawberry

from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Cohort, Graph
from kernelindex.registry.present import format_value
from kernelindex.schema.types.base import implementation_name
from kernelindex.schema.types.enums import Trust, enum_of_trust, trust_of_enum
from kernelindex.schema.types.pages import cursor_at, page_bounds

__all__ = ["LeaderboardRow", "leaderboard_rows"]


@strawberry.type(description="One row of a cohort's leaderboard, every field a plain value.")
class LeaderboardRow:
    rank: int = strawberry.field(description="Its rank (as `CohortEntry.rank`).")
    tied_with_previous: bool = strawberry.field(description="Whether it shares its rank with the row before.")
    digest: str = strawberry.field(description="The run's digest.")
    name: str = strawberry.field(description="The run's name.")
    trust: Trust = strawberry.field(description="The run's evidence level.")
    value: float | None = strawberry.field(description="The primary value (Run.primary.value).")
    display: str | None = strawberry.field(description="The primary value as a reader wants it: 144.6 µs.")
    unit: str | None = strawberry.field(
        description="The unit of `value` (`ns` for latencies, `s` for KernelBot scores); null without a value."
    )
    implementation: str | None = strawberry.field(description="Implementation.displayName of the run.")
    cursor: str = strawberry.field(
        description="This row's cursor in `entries` (with the same `minTrust`): `entries(after: cursor)` "
        "continues after it, from the same commit."
    )


def leaderboard_rows(graph: Graph, cohort: Cohort, first: int, min_trust: Trust | None) -> list[LeaderboardRow]:
    """The first `first` ranked runs of `cohort` (those with at least `min_trust`, ranks unchanged)."""
    size = page_bounds(first) or 0
    floor = trust_of_enum(min_trust) if min_trust is not None else None
    rows: list[LeaderboardRow] = []
    for entry in cohort.ranked(graph):
        if len(rows) == size:
            break
        facts = graph.facts[entry.id]
        if floor is not None and facts.trust < floor:
            continue
        run = graph.nodes[entry.id]
        assert isinstance(run, n.Run)
        primary = run.primary
        implementation = graph.nodes.get(run.implementation)
        rows.append(
            LeaderboardRow(
                cursor=cursor_at(graph.commit, len(rows)),
                rank=entry.rank,
                tied_with_previous=entry.tied_with_previous,
                digest=run.digest,
                name=run.name,
                trust=enum_of_trust(facts.trust),
                value=primary.value if primary else None,
                display=format_value(primary.value, primary.unit) if primary else None,
                unit=primary.unit if primary else None,
                implementation=(
                    implementation_name(graph, implementation) if isinstance(implementation, n.Implementation) else None
                ),
            )
        )
    return rows

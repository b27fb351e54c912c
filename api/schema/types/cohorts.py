"""Cohorts (comparison groups), their leaderboards, record events and the records ledger."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Annotated

import strawberry

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry import read
from kernelindex.registry.citations import cite_leaderboard, leaderboard_citation
from kernelindex.registry.graph import SOURCE_NATIVE, Graph
from kernelindex.registry.graph import Cohort as DomainCohort
from kernelindex.registry.present import workload_label
from kernelindex.schema.leaderboard import LeaderboardRow, leaderboard_rows
from kernelindex.schema.types.base import Info, fact, ordered_runs, typed
from kernelindex.schema.types.citing import Accessed, BaseUrl, Format, accessed_day, citation_urls
from kernelindex.schema.types.enums import (
    _DOMAIN_TRUST,
    CitationFormat,
    CohortProfile,
    EntryOrder,
    RecordCause,
    RunOrder,
    Trust,
)
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.kinds import Environment, Operation, Protocol, Workload, operation_of
from kernelindex.schema.types.pages import (
    DEFAULT_PAGE,
    After,
    Before,
    Connection,
    First,
    Last,
    Window,
    asks_count_only,
    counted,
    follows_cursor,
    paginate,
)
from kernelindex.schema.types.runs import Run, run_of
from kernelindex.schema.types.scalars import DateTime
from kernelindex.schema.types.states import cohort_state

__all__ = ["Cohort", "CohortEntry", "RecordEntry", "RecordEvent"]


@strawberry.type(
    description="One row of a leaderboard: a ranked run. It has no `id` (a normalized cache keeps it in its "
    "page); its run has one."
)
class CohortEntry:
    rank: int = strawberry.field(
        description="Its rank under ranking-v1: dense (1, 2, 2, 3...), the whole cohort's even when `minTrust` hides "
        "some entries."
    )
    tied_with_previous: bool = strawberry.field(description="Whether it shares its rank with the entry before it.")
    run: Run = strawberry.field(description="The ranked run.")


@strawberry.type(
    description="A change of record holder in a cohort. It has no `id` (a normalized cache keeps it in its "
    "list or its ledger entry)."
)
class RecordEvent:
    _graph: strawberry.Private[Graph]
    _event: strawberry.Private[registry.cohorts.RecordEvent]

    @strawberry.field(description="The cohort whose record changed hands; null if it is not in this snapshot.")
    def cohort(self) -> Cohort | None:
        cohort = self._graph.cohorts.get(self._event.cohort)
        return Cohort(_graph=self._graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="The run that took the record; null if it is not in this snapshot.")
    def run(self) -> Run | None:
        return run_of(self._graph, self._event.run)

    @strawberry.field(description="The run that held it before; null for the cohort's first record.")
    def previous_run(self) -> Run | None:
        return run_of(self._graph, self._event.previous_run) if self._event.previous_run else None

    @strawberry.field(description="Why the record changed hands.")
    def cause(self) -> RecordCause:
        return RecordCause(self._event.cause)

    @strawberry.field(description="The ranking policy the event was computed under (`ranking-v1`).")
    def policy_version(self) -> str:
        return self._event.policy_version

    @strawberry.field(
        description="When: the new holder's `observedAt` (NEW_RUN), or when the retraction was published (RETRACTION)."
    )
    def at(self) -> DateTime:
        return self._event.at

    @strawberry.field(
        description="The new holder's primary value, in its cohort's unit (the cohort's `metricKey` says which)."
    )
    def value(self) -> float:
        return self._event.value

    @strawberry.field(description="The previous holder's primary value; null for the cohort's first record.")
    def previous_value(self) -> float | None:
        return self._event.previous_value

    @strawberry.field(description="How much faster than the previous record, in percent.")
    def improvement_pct(self) -> float | None:
        previous = self._event.previous_value
        if not previous or previous <= 0 or self._event.value >= previous:
            return None
        return (previous - self._event.value) / previous * 100


@strawberry.type(
    description="A comparison group: same operation, workload, protocol, environment, correctness policy and "
    "metric. Runs rank inside a cohort, never across."
)
class Cohort(Node):
    _graph: strawberry.Private[Graph]
    _cohort: strawberry.Private[DomainCohort]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._cohort.key

    def _state(self, info: Info) -> Hashable:
        return cohort_state(self._graph, self._cohort)

    def _at(self, graph: Graph) -> Cohort | None:
        cohort = graph.cohorts.get(self._cohort.key)
        return Cohort(_graph=graph, _cohort=cohort) if cohort else None

    @strawberry.field(
        description="Its comparison key: `sha256:` and 64 hex digits, a digest of the operation, workload, protocol, "
        "environment, correctness policy and metric (KernelIndex's key; the implementation is never part "
        "of it). Stable across commits."
    )
    def key(self) -> str:
        return self._cohort.key

    @strawberry.field(
        description="How its runs compare: by value alone (SOURCE_NATIVE) or with confidence intervals (STRICT_EXACT)."
    )
    def profile(self) -> CohortProfile:
        return CohortProfile.SOURCE_NATIVE if self._cohort.profile == SOURCE_NATIVE else CohortProfile.STRICT_EXACT

    @strawberry.field(description="What its runs compute; null if the registry lacks it.")
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._cohort.operation)

    @strawberry.field(description="The input its runs measured; null if the registry lacks it.")
    def workload(self) -> Workload | None:
        node = self._graph.nodes.get(self._cohort.workload)
        return Workload(_graph=self._graph, _node=node) if isinstance(node, n.Workload) else None

    @strawberry.field(description="How its runs were measured; null if the registry lacks it.")
    def protocol(self) -> Protocol | None:
        node = self._graph.nodes.get(self._cohort.protocol)
        return Protocol(_graph=self._graph, _node=node) if isinstance(node, n.Protocol) else None

    @strawberry.field(description="Where its runs were measured; null if the registry lacks it.")
    def environment(self) -> Environment | None:
        node = self._graph.nodes.get(self._cohort.environment)
        return Environment(_graph=self._graph, _node=node) if isinstance(node, n.Environment) else None

    @strawberry.field(description="The digest of the correctness policy its runs were held to.")
    def correctness_key(self) -> str:
        return self._cohort.correctness_key

    @strawberry.field(
        description="What its runs rank by, `metric:statistic:unit` (`latency:mean:ns`, `score:geomean:s`), or "
        "`none` for runs without a primary value."
    )
    def metric_key(self) -> str:
        return self._cohort.metric_key

    @strawberry.field(description="How many runs it holds, eligible or not.")
    def size(self) -> int:
        return len(self._cohort.members)

    @strawberry.field(description="How many of its runs rank (are eligible): `entries { totalCount }`.")
    def ranked_count(self) -> int:
        return len(self._cohort.ranked(self._graph))

    @strawberry.field(description="Its #1: the first entry of `entries`; null when no run is eligible.")
    def leader(self) -> Run | None:
        leader = self._cohort.leader(self._graph)
        return run_of(self._graph, leader) if leader else None

    @strawberry.field(
        description="The leaderboard: eligible runs in ranking-v1 order. `minTrust` keeps runs with at least "
        "that evidence level; ranks stay those of the whole cohort."
    )
    @follows_cursor
    def entries(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        min_trust: Annotated[
            Trust | None,
            strawberry.argument(description="Keep entries at or above this evidence level; all by default."),
        ] = None,
        order: Annotated[
            EntryOrder, strawberry.argument(description="The order; RANK (best first) by default.")
        ] = EntryOrder.RANK,
    ) -> Connection[CohortEntry] | None:
        def make(entry: registry.cohorts.Ranked) -> CohortEntry:
            node = self._graph.nodes[entry.id]
            assert isinstance(node, n.Run)
            return CohortEntry(
                rank=entry.rank, tied_with_previous=entry.tied_with_previous, run=Run(_graph=self._graph, _node=node)
            )

        ranked: Sequence[registry.cohorts.Ranked] = self._cohort.ranked(self._graph)
        if min_trust is not None:
            floor = _DOMAIN_TRUST[min_trust]
            ranked = [entry for entry in ranked if self._graph.facts[entry.id].trust >= floor]
        return paginate(self._graph, _entries_in(self._graph, ranked, order), Window(first, after, last, before), make)

    @strawberry.field(
        description="The first page of `entries` as plain rows (rank, run, value, implementation): the same "
        "order and ranks, computed in one pass, so about twice as fast for a leaderboard asked for the first "
        "time. Page further with `entries`."
    )
    def leaderboard(
        self,
        first: Annotated[
            int, strawberry.argument(description="How many rows from the top: 0 to 100, 20 by default.")
        ] = DEFAULT_PAGE,
        min_trust: Annotated[
            Trust | None, strawberry.argument(description="Keep rows at or above this evidence level; all by default.")
        ] = None,
    ) -> list[LeaderboardRow] | None:
        return leaderboard_rows(self._graph, self._cohort, first, min_trust)

    @strawberry.field(description="Every run of the cohort, newest first, eligible or not.")
    @follows_cursor
    def runs(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        order: Annotated[RunOrder, strawberry.argument(description="The order; NEWEST_OBSERVED by default.")] = (
            RunOrder.NEWEST_OBSERVED
        ),
    ) -> Connection[Run] | None:
        window = Window(first, after, last, before)
        if asks_count_only(info):
            return counted(self._graph, self._cohort.members, window)
        digests = read.ordered_cohort_runs(self._graph, self._cohort.key, read.RunOrder[order.name])
        return paginate(self._graph, digests, window, lambda d: typed(self._graph, d, Run))

    @strawberry.field(
        description="Its record events, oldest first, all at once.",
        deprecation_reason="Use `events`, which pages (a cohort's history can be long).",
    )
    def history(self) -> list[RecordEvent]:
        return [RecordEvent(_graph=self._graph, _event=e) for e in self._cohort.events(self._graph)]

    @strawberry.field(
        description="Its record events (each time the record changed hands), oldest first, paged: what "
        "`history` answered at once."
    )
    @follows_cursor
    def events(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[RecordEvent] | None:
        return paginate(
            self._graph,
            self._cohort.events(self._graph),
            Window(first, after, last, before),
            lambda e: RecordEvent(_graph=self._graph, _event=e),
        )

    @strawberry.field(
        description="A display title: the operation's title (else its name), the workload's label and the GPU, "
        "joined by ` · ` (`Fused attention backward · suite of 16 cases · mean latency · NVIDIA B200`). Names "
        "missing from the registry are left out."
    )
    def title(self, info: Info) -> str:
        graph, cohort = self._graph, self._cohort
        operation = graph.nodes.get(cohort.operation)
        workload = graph.nodes.get(cohort.workload)
        environment = graph.nodes.get(cohort.environment)
        parts = [
            (operation.title or operation.name) if operation is not None else None,
            fact(info, workload, workload_label) if workload is not None else None,
            environment.product if isinstance(environment, n.Environment) else None,
        ]
        return " · ".join(p for p in parts if p) or cohort.key

    @strawberry.field(description="The event that made the current record holder.")
    def holder(self) -> RecordEvent | None:
        event = self._cohort.holder(self._graph)
        return RecordEvent(_graph=self._graph, _event=event) if event else None

    @strawberry.field(
        description="Its leaderboard pinned to this snapshot's commit: the page for a browser, its JSON for a "
        "client. Absolute under the configured base URL, else relative to the server's root."
    )
    def permalink(self, info: Info) -> str:
        return info.context.urls.url_path_for("cohort", at=self._graph.commit, key=self._cohort.key)

    @strawberry.field(
        description="How to cite its leaderboard as ranked at this snapshot's commit (its title, ranked runs, leader "
        "and comparison key), with a permalink pinned to that commit (absolute: under the configured base URL or "
        "`baseUrl`; without either, the citation says it has none). `accessed` adds an access date; the server "
        "never adds its own."
        " Null, with a BAD_USER_INPUT error, when `accessed` is not a date or `baseUrl` not an http(s) URL."
    )
    def citation(
        self,
        info: Info,
        format: Format = CitationFormat.TEXT,
        accessed: Accessed = None,
        base_url: BaseUrl = None,
    ) -> str | None:
        urls = citation_urls(info, base_url)
        graph = self._graph
        permalink = urls.url_path_for("cohort", at=graph.commit, key=self._cohort.key) if urls else None
        objects = info.context.objects
        facts = leaderboard_citation(graph, self._cohort.key, objects.get, permalink, accessed_day(info, accessed))
        assert facts is not None  # the cohort is the graph's
        return cite_leaderboard(facts, format.name)


@strawberry.type(description="One cohort in the records ledger: its current holder and since when.")
class RecordEntry(Node):
    _graph: strawberry.Private[Graph]
    _cohort: strawberry.Private[DomainCohort]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._cohort.key

    def _state(self, info: Info) -> Hashable:
        return cohort_state(self._graph, self._cohort)

    @strawberry.field(description="The cohort.")
    def cohort(self) -> Cohort:
        return Cohort(_graph=self._graph, _cohort=self._cohort)

    def _event(self) -> registry.cohorts.RecordEvent:
        event = self._cohort.holder(self._graph)
        assert event is not None, "the ledger lists cohorts with a record holder only"
        return event

    @strawberry.field(description="The run that holds the record: the best eligible run of the cohort.")
    def holder(self) -> Run:
        run = run_of(self._graph, self._event().run)
        assert run is not None
        return run

    @strawberry.field(description="When the holder took the record (its `event.at`).")
    def since(self) -> DateTime:
        return self._event().at

    @strawberry.field(description="The record event that made the current holder.")
    def event(self) -> RecordEvent:
        return RecordEvent(_graph=self._graph, _event=self._event())


def _entries_in(
    graph: Graph, ranked: Sequence[registry.cohorts.Ranked], order: EntryOrder
) -> Sequence[registry.cohorts.Ranked]:
    """A leaderboard's entries in `order` (ranks stay ranking-v1's)."""
    if order is EntryOrder.RANK:
        return ranked
    if order is EntryOrder.RANK_REVERSED:
        return ranked[::-1]
    if order is EntryOrder.NEWEST_OBSERVED:
        digests = ordered_runs(graph, [entry.id for entry in ranked], RunOrder.NEWEST_OBSERVED)
    else:
        digests = ordered_runs(graph, [entry.id for entry in ranked], RunOrder.NEWEST_PUBLISHED)
    by_id = {entry.id: entry for entry in ranked}
    return [by_id[d] for d in digests]

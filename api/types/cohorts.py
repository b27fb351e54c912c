"""Cohorts (comparison groups), their leaderboards, record events and the records ledger."""

from __future__ import annotations

from collections.abc import Sequence

import strawberry

import registry
from api.leaderboard import LeaderboardRow, leaderboard_rows
from api.types.base import Info, ordered_runs, typed
from api.types.citing import Accessed, BaseUrl, Format, accessed_day, citation_urls
from api.types.enums import _DOMAIN_TRUST, CitationFormat, CohortProfile, RecordCause, Trust
from api.types.identity import Node
from api.types.kinds import Environment, Operation, Protocol, Workload, operation_of
from api.types.pages import DEFAULT_PAGE, Connection, Window, follows_cursor, paginate
from api.types.runs import Run, run_of
from registry import nodes as n
from registry.citations import cite_leaderboard, leaderboard_citation
from registry.graph import SOURCE_NATIVE, Graph
from registry.graph import Cohort as DomainCohort

__all__ = ["Cohort", "CohortEntry", "RecordEntry", "RecordEvent"]


@strawberry.type
class CohortEntry:
    rank: int
    tied_with_previous: bool
    run: Run


@strawberry.type(description="A change of record holder in a cohort.")
class RecordEvent:
    _graph: strawberry.Private[Graph]
    _event: strawberry.Private[registry.cohorts.RecordEvent]

    @strawberry.field
    def cohort(self) -> Cohort | None:
        cohort = self._graph.cohorts.get(self._event.cohort)
        return Cohort(_graph=self._graph, _cohort=cohort) if cohort else None

    @strawberry.field
    def run(self) -> Run | None:
        return run_of(self._graph, self._event.run)

    @strawberry.field
    def previous_run(self) -> Run | None:
        return run_of(self._graph, self._event.previous_run) if self._event.previous_run else None

    @strawberry.field
    def cause(self) -> RecordCause:
        return RecordCause(self._event.cause)

    @strawberry.field
    def policy_version(self) -> str:
        return self._event.policy_version

    @strawberry.field
    def at(self) -> str:
        return self._event.at

    @strawberry.field
    def value(self) -> float:
        return self._event.value

    @strawberry.field
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

    def _at(self, graph: Graph) -> Cohort | None:
        cohort = graph.cohorts.get(self._cohort.key)
        return Cohort(_graph=graph, _cohort=cohort) if cohort else None

    @strawberry.field
    def key(self) -> str:
        return self._cohort.key

    @strawberry.field
    def profile(self) -> CohortProfile:
        return CohortProfile.SOURCE_NATIVE if self._cohort.profile == SOURCE_NATIVE else CohortProfile.STRICT_EXACT

    @strawberry.field
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._cohort.operation)

    @strawberry.field
    def workload(self) -> Workload | None:
        node = self._graph.nodes.get(self._cohort.workload)
        return Workload(_graph=self._graph, _node=node) if isinstance(node, n.Workload) else None

    @strawberry.field
    def protocol(self) -> Protocol | None:
        node = self._graph.nodes.get(self._cohort.protocol)
        return Protocol(_graph=self._graph, _node=node) if isinstance(node, n.Protocol) else None

    @strawberry.field
    def environment(self) -> Environment | None:
        node = self._graph.nodes.get(self._cohort.environment)
        return Environment(_graph=self._graph, _node=node) if isinstance(node, n.Environment) else None

    @strawberry.field
    def correctness_key(self) -> str:
        return self._cohort.correctness_key

    @strawberry.field(description="metric:statistic:unit, or none")
    def metric_key(self) -> str:
        return self._cohort.metric_key

    @strawberry.field(description="Runs in the cohort, eligible or not.")
    def size(self) -> int:
        return len(self._cohort.members)

    @strawberry.field(description="Runs with a rank.")
    def ranked_count(self) -> int:
        return len(self._cohort.ranked(self._graph))

    @strawberry.field
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
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
        min_trust: Trust | None = None,
    ) -> Connection[CohortEntry]:
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
        return paginate(self._graph, ranked, Window(first, after, last, before), make)

    @strawberry.field(
        description="The first page of `entries` as plain rows (rank, run, value, implementation): the same "
        "order and ranks, computed in one pass (api/leaderboard.py). Page further with `entries`."
    )
    def leaderboard(self, first: int = DEFAULT_PAGE, min_trust: Trust | None = None) -> list[LeaderboardRow]:
        return leaderboard_rows(self._graph, self._cohort, first, min_trust)

    @strawberry.field(description="Every run of the cohort, newest first, eligible or not.")
    @follows_cursor
    def runs(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> Connection[Run]:
        digests = ordered_runs(self._graph, set(self._cohort.members))
        return paginate(self._graph, digests, Window(first, after, last, before), lambda d: typed(self._graph, d, Run))

    @strawberry.field(description="Its record events, oldest first.")
    def history(self) -> list[RecordEvent]:
        return [RecordEvent(_graph=self._graph, _event=e) for e in self._cohort.events(self._graph)]

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
    )
    def citation(
        self,
        info: Info,
        format: Format = CitationFormat.TEXT,
        accessed: Accessed = None,
        base_url: BaseUrl = None,
    ) -> str:
        urls = citation_urls(info, base_url)
        graph = self._graph
        permalink = urls.url_path_for("cohort", at=graph.commit, key=self._cohort.key) if urls else None
        objects = info.context.objects
        facts = leaderboard_citation(graph, self._cohort.key, objects.get, permalink, accessed_day(info, accessed))
        assert facts is not None  # the cohort is the graph's
        return cite_leaderboard(facts, format.value)


@strawberry.type(description="One cohort in the records ledger: its current holder and since when.")
class RecordEntry(Node):
    _graph: strawberry.Private[Graph]
    _cohort: strawberry.Private[DomainCohort]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._cohort.key

    @strawberry.field
    def cohort(self) -> Cohort:
        return Cohort(_graph=self._graph, _cohort=self._cohort)

    @strawberry.field
    def holder(self) -> Run | None:
        event = self._cohort.holder(self._graph)
        return run_of(self._graph, event.run) if event else None

    @strawberry.field
    def since(self) -> str | None:
        event = self._cohort.holder(self._graph)
        return event.at if event else None

    @strawberry.field
    def event(self) -> RecordEvent | None:
        event = self._cohort.holder(self._graph)
        return RecordEvent(_graph=self._graph, _event=event) if event else None

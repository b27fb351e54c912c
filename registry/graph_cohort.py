"""A cohort of the graph: comparable runs (by their comparison key), and their ranking and records ledger,
computed on first use from the graph that asks (`Derived`: its nodes, facts and publication record)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Protocol

from kernelindex.registry.cohorts import Candidate, Ranked, RankInput, RecordEvent, rank_cohort, record_events
from kernelindex.registry.mainline import Mainline
from kernelindex.registry.nodes import Environment, Node, Run
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.run_facts import RunFacts

__all__ = ["SOURCE_NATIVE", "STRICT_EXACT", "Best", "Cohort", "Derived", "Summary", "gpu_keys"]

SOURCE_NATIVE = "source_native"
STRICT_EXACT = "strict_exact"

Best = tuple[float, int, str]
"""A cohort's record holder without its ledger: the least (value, observed_ns, id) of its eligible runs."""
Summary = tuple[bool, Best | None, bool]
"""What `Derivation.summary` finds of a cohort's members: a source-native one, the record holder, a retracted one."""


class Derived(Protocol):
    """What a cohort ranks its runs and replays its ledger from: a graph (`kernelindex.registry.graph.Graph`)."""

    @property
    def nodes(self) -> Mapping[str, Node]: ...

    @property
    def facts(self) -> Mapping[str, RunFacts]: ...

    @property
    def mainline(self) -> Mainline: ...

    @property
    def published_in(self) -> Mapping[str, int]: ...


class Cohort:
    """A comparison group: comparable runs, and (computed on first use, then kept) their ranking and
    their record events.

    A cohort object is shared by every graph in which none of its members' facts changed, so
    the graph asking is as good as any to compute from: all of them agree on these runs.
    """

    __slots__ = (
        "_best",
        "_events",
        "_holder_ns",
        "_places",
        "_ranked",
        "correctness_key",
        "environment",
        "gpu",
        "key",
        "members",
        "metric_key",
        "operation",
        "profile",
        "protocol",
        "workload",
    )

    def __init__(
        self,
        key: str,
        profile: str,
        operation: str,
        workload: str,
        protocol: str,
        environment: str,
        correctness_key: str,
        metric_key: str,
        gpu: tuple[str, ...],
        members: tuple[str, ...],
        holder_ns: int | None = -1,
        best: Best | None = None,
    ) -> None:
        self.key = key
        self.profile = profile
        self.operation = operation
        self.workload = workload
        self.protocol = protocol
        self.environment = environment
        self.correctness_key = correctness_key
        self.metric_key = metric_key
        self.gpu = gpu  # lower-cased product and architecture of its environment
        self.members = members  # every run in the cohort, eligible or not, by digest
        self._ranked: tuple[Ranked, ...] | None = None
        self._places: dict[str, Ranked] | None = None
        self._events: tuple[RecordEvent, ...] | None = None
        # When the current record holder took the record (ns; None: no record), known without the
        # ledger when no member is retracted (`Derivation.cohort`); -1: ask the ledger.
        self._holder_ns = holder_ns
        # The least (value, observed_ns, id) of the eligible members, whose observed_ns is that
        # time; meaningful only when `_holder_ns` is not -1 (a cohort that only gains runs then
        # finds its record holder from the newcomers alone: `Delta.recompute`).
        self._best = best

    @property
    def summarized(self) -> bool:
        """Whether the record holder is known without the ledger (`best`): not when a member is retracted, nor
        in a cohort read from the warm cache."""
        return self._holder_ns != -1

    @property
    def best(self) -> Best | None:
        """The least (value, observed_ns, id) of the eligible members when `summarized` (None: no record holder)."""
        return self._best

    def restore(self, ranked: list[Ranked], events: list[RecordEvent]) -> None:
        """Set what `ranked` and `events` compute (from a warm cache that saved them)."""
        self._ranked = tuple(ranked)
        self._events = tuple(events)

    def ranked(self, graph: Derived) -> tuple[Ranked, ...]:
        """The eligible runs with a value, in ranking-v1 presentation order."""
        if self._ranked is None:
            inputs = []
            for digest in self.members:
                run = graph.nodes[digest]
                facts = graph.facts[digest]
                if facts.eligible and isinstance(run, Run) and run.primary is not None:
                    primary = run.primary
                    inputs.append(
                        RankInput(digest, primary.value, primary.low, primary.high, facts.trust, run.observed_ns)
                    )
            self._ranked = tuple(rank_cohort(inputs, self.profile == SOURCE_NATIVE))
        return self._ranked

    def place(self, graph: Derived, run: str) -> Ranked | None:
        if self._places is None:
            self._places = {entry.id: entry for entry in self.ranked(graph)}
        return self._places.get(run)

    def leader(self, graph: Derived) -> str | None:
        ranked = self.ranked(graph)
        return ranked[0].id if ranked else None

    def events(self, graph: Derived) -> tuple[RecordEvent, ...]:
        """This cohort's records ledger, oldest first."""
        if self._events is None:
            candidates = []
            for digest in self.members:
                run = graph.nodes[digest]
                facts = graph.facts[digest]
                if not isinstance(run, Run) or run.primary is None:
                    continue
                value = run.primary.value
                if facts.eligible:
                    candidates.append(Candidate(digest, value, run.observed_at, run.observed_ns))
                elif facts.reasons == ("RETRACTED",) and facts.retraction is not None:
                    # It held its place in the ledger until the retraction was published.
                    withdrawn = graph.mainline.times[graph.published_in[facts.retraction]]
                    candidates.append(
                        Candidate(
                            digest, value, run.observed_at, run.observed_ns, utc_instant(withdrawn),
                            withdrawn * 1_000_000_000,
                        )
                    )  # fmt: skip
            self._events = tuple(record_events(self.key, candidates))
        return self._events

    def holder(self, graph: Derived) -> RecordEvent | None:
        """The event that made the current record holder."""
        events = self.events(graph)
        return events[-1] if events else None

    def holder_ns(self, graph: Derived) -> int | None:
        """When the current record holder took the record (None: the cohort has no record): what
        orders the records ledger, without replaying this cohort's ledger when it need not be."""
        if self._events is None and self._holder_ns != -1:
            return self._holder_ns
        holder = self.holder(graph)
        return None if holder is None else holder.at_ns


def gpu_keys(environment: Node | None) -> tuple[str, ...]:
    """How a GPU filter can name an environment: its product or its architecture, lower case."""
    if not isinstance(environment, Environment):
        return ()
    keys = [environment.product.lower()]
    if environment.architecture != "unknown":
        keys.append(environment.architecture.lower())
    return tuple(sys.intern(k) for k in keys)

"""What a graph derives from its nodes, for the cold builder (`kernelindex.registry.graph_build`) and the delta
applier (`kernelindex.registry.graph_apply`) alike: each run's facts (`Derivation.facts`: what it owes to the
nodes alone, then its standing under the publication record and the overlays that count), each cohort's identity
and record holder (`Derivation.cohort`), and the indexes a node belongs to (`node_index_keys`).

A `Derivation` remembers, for one build or one change, what a cohort's runs share (their comparison key,
operation and GPU keys); it is made for that graph and dropped with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kernelindex.registry.cohorts import Trust, comparison_key, eligibility_reasons, metric_key, trust_of
from kernelindex.registry.graph import Graph, Index
from kernelindex.registry.graph_cohort import SOURCE_NATIVE, STRICT_EXACT, Best, Cohort, Summary, gpu_keys
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.nodes import (
    Environment,
    Implementation,
    Node,
    Protocol,
    Run,
    ServingRun,
    Supersession,
    Verification,
    Workload,
)
from kernelindex.registry.run_facts import RunFacts
from kernelindex.registry.validate import operation_mismatch_digests

__all__ = ["Derivation", "node_index_keys"]

_new = tuple.__new__

# (status, has a primary metric, source available, raw evidence) -> (eligibility reasons, trust) of
# a run with every reference present, as if published with no overlay: a handful of combinations.
_STANDING: dict[tuple[str, bool, bool, bool], tuple[tuple[str, ...], Trust]] = {}


class Derivation:
    """Facts and cohorts derived from one graph's nodes (`graph.nodes`, read as they are when asked), with a memo
    of what a cohort's runs share."""

    __slots__ = ("graph", "memo", "nodes")

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.nodes = graph.nodes
        self.memo: dict[Any, Any] = {}  # cohort keys, GPU keys, what a cohort's runs share

    def earliest(self, overlays: Iterable[str]) -> list[str]:
        """Overlays in the order main published them (then by digest): when two retractions or two
        supersessions of one run count, the first published is the one that changed the run's standing,
        whatever order a set iterates in (kernelindex.registry.status picks the same one)."""
        graph = self.graph
        unpublished = len(graph.mainline.commits)
        return sorted(overlays, key=lambda d: (graph.published_in.get(d, unpublished), d))

    def facts(self, run: Run) -> RunFacts:
        """A run's facts except its rank (which needs its whole cohort)."""
        static = self.static_facts(run)
        assert static is not None
        return self.with_standing(run, static)

    def static_facts(self, run: Run, *, complete: bool = True) -> RunFacts | None:
        """What a run's facts owe to the nodes alone: its facts as if main had published it, by its
        own source, and no overlay counted for it (`with_standing` makes them true).

        `complete=False`: None when a node the run references is not taken yet (it may come later).
        """
        nodes, primary = self.nodes, run.primary
        # The common case, every referenced node present and of its kind, costs a few lookups: what
        # the workload, protocol and environment decide (the cohort key, operation, GPU keys) is
        # shared by a cohort's runs (3.6 a cohort at 10x) and made once per change by the long way.
        shared = self.memo.get(
            ("static", run.workload, run.protocol, run.environment, primary[:3] if primary else None)
        )
        implementation = nodes.get(run.implementation)
        if shared is not None and type(implementation) is Implementation:
            standing = _STANDING.get(
                (run.status, primary is not None, implementation.source_available, run.raw_evidence)
            )
            if standing is not None:
                key, operation, gpu = shared
                warnings: tuple[str, ...] = (primary.note,) if primary is not None and primary.note else ()
                mismatch = None if implementation.operation == operation else (
                    operation_mismatch_digests(implementation.operation, operation))  # fmt: skip
                if mismatch:
                    warnings = (
                        *warnings,
                        f"operation-mismatch: {mismatch} (an upstream data error, kept as published)",
                    )
                # `tuple.__new__`, not `RunFacts(...)`: the named tuple's `__new__` is a Python function
                # around the same call (one a run as the stream arrives: 95k at 10x).
                return _new(RunFacts, (key, standing[0], standing[1], warnings, run.source, None, None, operation, gpu))
        return self.static_facts_in_full(run, complete)

    def static_facts_in_full(self, run: Run, complete: bool) -> RunFacts | None:
        """`static_facts` the long way, for any run (and remembering what its cohort's runs share)."""
        nodes = self.nodes
        workload = nodes.get(run.workload)
        implementation = nodes.get(run.implementation)
        environment = nodes.get(run.environment)
        warnings = [run.primary.note] if run.primary is not None and run.primary.note else []
        if not (
            isinstance(workload, Workload)
            and isinstance(implementation, Implementation)
            and isinstance(environment, Environment)
            and isinstance(nodes.get(run.protocol), Protocol)
        ):
            if not complete:
                return None
            for role, digest, wanted in (
                ("implementation", run.implementation, Implementation),
                ("workload", run.workload, Workload),
                ("protocol", run.protocol, Protocol),
                ("environment", run.environment, Environment),
            ):
                if not isinstance(nodes.get(digest), wanted):
                    warnings.append(f"dangling-reference: the {role} {digest} is not in the registry")
        key = operation = None
        if isinstance(workload, Workload):
            operation = workload.operation
            metric = metric_key(run.primary)
            memo = ("key", run.workload, run.protocol, run.environment, metric)
            key = self.memo.get(memo)
            if key is None:
                key = comparison_key(
                    workload.operation, run.workload, run.protocol, run.environment, workload.correctness, metric
                )
                self.memo[memo] = key
            if isinstance(implementation, Implementation):
                mismatch = operation_mismatch_digests(implementation.operation, workload.operation)
                if mismatch:
                    warnings.append(f"operation-mismatch: {mismatch} (an upstream data error, kept as published)")
        # The standing is one of a handful (`_STANDING`), made the long way only for a new one or a
        # run that references no implementation or workload.
        known = (
            _STANDING.get((run.status, run.primary is not None, implementation.source_available, run.raw_evidence))
            if key is not None and isinstance(implementation, Implementation)
            else None
        )
        if known is not None:
            reasons, trust = known
        else:
            trust = trust_of(
                independent_verifications=0,
                source_available=isinstance(implementation, Implementation) and implementation.source_available,
                raw_evidence=run.raw_evidence,
            )
            reasons = eligibility_reasons(
                published=True,
                status=run.status,
                retracted=False,
                superseded=False,
                has_primary=run.primary is not None and key is not None,
            )
        gpu = self.gpu(run.environment, environment)
        if (
            isinstance(workload, Workload)
            and isinstance(environment, Environment)
            and isinstance(nodes.get(run.protocol), Protocol)
        ):
            primary = run.primary
            shared = ("static", run.workload, run.protocol, run.environment, primary[:3] if primary else None)
            self.memo[shared] = (key, operation, gpu)
            if isinstance(implementation, Implementation):
                standing = (run.status, primary is not None, implementation.source_available, run.raw_evidence)
                _STANDING.setdefault(standing, (reasons, trust))
        return RunFacts(
            key,
            reasons,
            trust,
            tuple(warnings) if warnings else (),
            run.source,
            None,
            None,
            operation,
            gpu,
        )

    def with_standing(self, run: Run, static: RunFacts) -> RunFacts:
        """`static` (`static_facts`) completed with the publication record and the overlays that count."""
        digest, graph = run.digest, self.graph
        published = digest in graph.published_in
        retractions = graph.overlays["retractions"].get(digest)
        supersessions = graph.overlays["supersessions"].get(digest)
        verifications = graph.overlays["verifications"].get(digest)
        if published and run.source is not None and not (retractions or supersessions or verifications):
            return static
        nodes = self.nodes
        retraction = superseded_by = None
        runners: set[str] = set()
        if retractions:
            retraction = next((d for d in self.earliest(retractions) if graph.honoured(nodes[d])), None)
        if supersessions:
            superseded_by = next(
                (
                    overlay.run
                    for d in self.earliest(supersessions)
                    if isinstance(overlay := nodes[d], Supersession)
                    and graph.honoured(overlay)
                    and isinstance(nodes.get(overlay.run), Run)
                ),
                None,
            )
        if verifications:
            runners = {
                overlay.runner
                for d in verifications
                if isinstance(overlay := nodes[d], Verification) and graph.honoured(overlay)
            }
        implementation = nodes.get(run.implementation)
        trust = trust_of(
            independent_verifications=len(runners),
            source_available=isinstance(implementation, Implementation) and implementation.source_available,
            raw_evidence=run.raw_evidence,
        )
        reasons = eligibility_reasons(
            published=published,
            status=run.status,
            retracted=retraction is not None,
            superseded=superseded_by is not None,
            has_primary=run.primary is not None and static.cohort is not None,
        )
        source = run.source
        if source is None and published:
            source = graph.mainline.sources[graph.published_in[digest]]
        return static._replace(
            reasons=reasons, trust=trust, source=source, retraction=retraction, superseded_by=superseded_by
        )

    def gpu(self, digest: str, environment: Node | None) -> tuple[str, ...]:
        memo = ("gpu", digest)
        found: tuple[str, ...] | None = self.memo.get(memo)
        if found is None:
            found = self.memo[memo] = gpu_keys(environment)
        return found

    def summary(self, members: Sequence[str], source_native: bool = False, best: Best | None = None) -> Summary:
        """Whether a member is source-native, the record holder (None: no record), and whether a
        member is retracted (then ask the ledger instead); `source_native` and `best` are those of
        other members already seen.

        The record holder without the ledger: with no retracted member, the ledger's last event is
        the first run, in (observedAt, id) order, with the lowest value: the least of
        (value, observed_ns, id). A retracted member can hand the record over: ask the ledger then."""
        nodes, facts = self.nodes, self.graph.facts
        source_native = source_native or any(nodes[d].source is not None for d in members)  # type: ignore[union-attr]
        for digest in members:
            run = nodes[digest]
            primary = run.primary  # type: ignore[union-attr]
            if primary is None:
                continue
            found = facts[digest]
            if not found.reasons:
                candidate = (primary.value, run.observed_ns, digest)  # type: ignore[union-attr]
                if best is None or candidate < best:
                    best = candidate
            elif found.retraction is not None and found.reasons == ("RETRACTED",):
                return source_native, None, True
        return source_native, best, False

    def cohort(self, key: str, members: list[str], summary: Summary | None = None) -> Cohort:
        """A cohort's identity and membership; its ranking and ledger are computed on first use.

        `summary`: (whether a member is source-native, the record holder's (value, observed_ns, id)),
        when the caller already knows them from the members and none is retracted (`ColdBuild.take` while
        streaming, a cohort that only gained runs)."""
        first = self.nodes[members[0]]
        assert isinstance(first, Run)
        workload = self.nodes[first.workload]
        assert isinstance(workload, Workload)
        nodes = self.nodes
        source_native, best, retracted = self.summary(members) if summary is None else summary
        holder_ns = -1 if retracted else None if best is None else best[1]
        return Cohort(
            key,
            SOURCE_NATIVE if source_native else STRICT_EXACT,
            workload.operation,
            first.workload,
            first.protocol,
            first.environment,
            workload.correctness,
            metric_key(first.primary),
            self.gpu(first.environment, nodes.get(first.environment)),
            tuple(members),
            holder_ns,
            best,
        )


def node_index_keys(graph: Graph, node: Node) -> list[tuple[Index, str]]:
    """The set-valued indexes a node belongs to, and under which key."""
    match node:
        case Run():
            # An index not built yet is left alone: it is built from the nodes when first read.
            run_keys = (("environment", node.environment), ("implementation", node.implementation),
                        ("workload", node.workload))  # fmt: skip
            return [(index, key) for name, key in run_keys if (index := graph.runs_by.built(name)) is not None]
        case Workload():
            return [(graph.children["workloads"], node.operation)]
        case Implementation():
            keys = [(graph.children["implementations"], node.operation)]
            if node.project:
                keys.append((graph.children["project_implementations"], node.project))
            return keys
        case ServingRun():
            # serving runs by model; their facts and cohorts are `kernelindex.registry.serving_graph`'s
            return [(graph.children["serving_runs"], node.model)]
    spec = KINDS.get(node.kind)
    if spec is not None and spec.lifecycle:
        # A lifecycle kind's overlay is named as its folder, keyed by the run its spec says it acts on.
        return [(graph.overlays[spec.folder], getattr(node, spec.acts_on))]
    return []

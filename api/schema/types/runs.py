"""Benchmark runs: what was measured, how it ranks, where it came from, how to cite it."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry.scalars import JSON

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry import read
from kernelindex.registry.graph import Graph
from kernelindex.registry.present import Citation as CitationFacts
from kernelindex.registry.present import cite, format_value, source_native_summary, workload_label
from kernelindex.schema.types.base import Info, Observed, as_json, build, document, fact, published_at
from kernelindex.schema.types.citing import Accessed, BaseUrl, Format, accessed_day, citation_urls
from kernelindex.schema.types.enums import _TRUST, ArtifactRole, CitationFormat, IneligibilityReason, RunStatus, Trust
from kernelindex.schema.types.kinds import Environment, Implementation, Operation, Protocol, Workload, operation_of
from kernelindex.schema.types.lifecycle import Attestation, Retraction, Supersession, Verification
from kernelindex.schema.types.manifest_types import manifest_type
from kernelindex.schema.types.measures import Artifact, Interval, Measurement, Metric, Primary, SourceNative
from kernelindex.schema.types.provenance import Provenance, Source, provenance_of, source_type
from kernelindex.schema.types.states import run_state

if TYPE_CHECKING:
    from kernelindex.schema.types.cohorts import Cohort

__all__ = ["Run", "primary_display", "run_of"]

CohortRef = Annotated["Cohort", strawberry.lazy("kernelindex.schema.types.cohorts")]


@manifest_type
@strawberry.type(description="A benchmark result: implementation I on workload W, protocol P, environment E.")
class Run(Observed[RunStatus]):
    _node: strawberry.Private[n.Run]
    statuses = RunStatus

    def _facts(self) -> registry.graph.RunFacts:
        return self._graph.facts[self._node.digest]

    def _state(self, info: Info) -> Hashable:
        slug = self._facts().source
        terms = info.context.snapshots.source_terms(self._graph.mainline, slug) if slug else {}
        return run_state(self._graph, self._node, sorted(terms.items()))

    @strawberry.field(
        description="The measurement it is ranked by (lower is better): the protocol's primary statistic of its "
        "latency, else its first measurement; null when it reports none (then it is ineligible with "
        "MISSING_PRIMARY_METRIC)."
    )
    def primary(self) -> Primary | None:
        primary = self._node.primary
        if primary is None:
            return None
        interval = (
            Interval(low=primary.low, high=primary.high)
            if primary.low is not None and primary.high is not None
            else None
        )
        return Primary(
            metric=primary.metric,
            statistic=primary.statistic,
            unit=primary.unit,
            value=primary.value,
            display=format_value(primary.value, primary.unit),
            interval=interval,
        )

    @strawberry.field(
        description="Everything it measured: each latency statistic (in ns) and each other measurement, as published."
    )
    def measurements(self, info: Info) -> list[Measurement]:
        spec = document(info, self._node)["spec"]
        found = []
        timing = spec.get("timing")
        if timing:
            samples = timing.get("samples")
            for statistic, value in timing["latencyNs"].items():
                if statistic != "confidence95":
                    found.append(
                        Measurement(
                            metric="latency",
                            statistic=statistic,
                            unit="ns",
                            value=float(value),
                            display=format_value(value, "ns"),
                            sample_count=samples,
                        )
                    )
        for m in spec.get("measurements") or ():
            found.append(
                Measurement(
                    metric=m["metric"],
                    statistic=m["statistic"],
                    unit=m["unit"],
                    value=float(m["value"]),
                    display=format_value(m["value"], m["unit"]),
                    sample_count=m.get("sampleCount"),
                )
            )
        return found

    @strawberry.field(
        description="What its upstream benchmark reported in its own terms; null for a run measured for this registry."
    )
    def source_native(self, info: Info) -> SourceNative | None:
        native = document(info, self._node)["spec"].get("sourceNative")
        if native is None:
            return None
        metrics = native.get("metrics") or {}
        return SourceNative(
            source=native["source"],
            benchmark=native.get("benchmark"),
            external_id=native.get("externalId"),
            metrics=[Metric(name=k, value=v) for k, v in metrics.items()],
            summary=source_native_summary(metrics),
        )

    @strawberry.field(description="The correctness verdict in words, as the run pages say it.")
    def correctness_note(self, info: Info) -> str:
        spec = document(info, self._node)["spec"]
        report = spec.get("correctness")
        verdict = f"Marked {self._node.status.replace('_', ' ')} by the source"
        if not report:
            return f"{verdict}; the correctness policy was not published."
        details = [f"compared with {report['comparator']}"]
        for key, label in (
            ("maximumAbsoluteError", "max abs error"),
            ("maximumRelativeError", "max rel error"),
            ("matchedRatio", "matched"),
        ):
            if key in report:
                details.append(f"{label} {report[key]}")
        return f"{verdict}; {', '.join(details)}."

    @strawberry.field(description="The run's correctness report, as published.")
    def correctness(self, info: Info) -> JSON | None:
        return as_json(document(info, self._node)["spec"].get("correctness"))

    @strawberry.field(
        description="Files of evidence published with it (raw samples, logs, the harness at a commit); empty when none."
    )
    def artifacts(self, info: Info) -> list[Artifact]:
        spec = document(info, self._node)["spec"]
        found = []
        timing, evidence = spec.get("timing") or {}, spec.get("evidence") or {}
        for role, item in (
            ("raw_samples", timing.get("rawSamples")),
            ("raw_samples", evidence.get("rawSamples")),
            ("logs", evidence.get("logs")),
        ):
            if item:
                found.append(Artifact(role=ArtifactRole(role), uri=item.get("uri"), digest=item.get("digest")))
        harness = evidence.get("harness")
        if harness:
            found.append(Artifact(role=ArtifactRole.harness, uri=harness["repository"], digest=harness["commit"]))
        return found

    @strawberry.field(description="Rank in its cohort under ranking-v1; null when not eligible.")
    def rank(self) -> int | None:
        return self._graph.rank(self._node.digest)

    @strawberry.field(
        description="Whether it shares its rank with the entry before it (ranking-v1: equal values, or overlapping "
        "confidence intervals in a strict cohort); false when not ranked."
    )
    def tied_with_previous(self) -> bool:
        return self._graph.tied(self._node.digest)

    @strawberry.field(description="Whether it ranks: true exactly when `ineligibilityReasons` is empty.")
    def eligible(self) -> bool:
        return self._facts().eligible

    @strawberry.field(description="UNPUBLISHED, STATUS_<STATUS>, RETRACTED, SUPERSEDED, MISSING_PRIMARY_METRIC.")
    def ineligibility_reasons(self) -> list[IneligibilityReason]:
        return [IneligibilityReason(reason) for reason in self._facts().reasons]

    @strawberry.field(description="Integrity warnings: data errors kept as published, dangling references...")
    def warnings(self) -> list[str]:
        return list(self._facts().warnings)

    @strawberry.field(description="Its comparison group; null when a manifest it names is missing from the registry.")
    def cohort(self) -> CohortRef | None:
        key = self._facts().cohort
        cohort = self._graph.cohorts.get(key) if key else None
        return build(CohortRef, _graph=self._graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="The cohort's #1, for 'Compare with #1'.")
    def leader(self) -> Run | None:
        key = self._facts().cohort
        cohort = self._graph.cohorts.get(key) if key else None
        leader = cohort.leader(self._graph) if cohort else None
        return run_of(self._graph, leader) if leader else None

    @strawberry.field(
        description="How well its result is evidenced (REPORTED < REPRODUCIBLE < VERIFIED < REPLICATED). "
        "`RunFilter.minTrust` keeps runs at or above a level; `RunFilter.trust` keeps exactly the levels "
        "listed."
    )
    def trust(self) -> Trust:
        return _TRUST[self._facts().trust]

    @strawberry.field(
        description="Whether the run carries raw evidence (`timing.rawSamples`, `evidence.rawSamples` or "
        "`evidence.logs`): with public source, what makes a run REPRODUCIBLE."
    )
    def has_raw_evidence(self) -> bool:
        return self._node.raw_evidence

    @strawberry.field(description="The operation its workload computes; null if the registry lacks it.")
    def operation(self) -> Operation | None:
        operation = self._facts().operation
        return operation_of(self._graph, operation) if operation else None

    @strawberry.field(description="The input it measured; null if the registry lacks it.")
    def workload(self) -> Workload | None:
        node = self._graph.nodes.get(self._node.workload)
        return Workload(_graph=self._graph, _node=node) if isinstance(node, n.Workload) else None

    @strawberry.field(description="The code it measured; null if the registry lacks it.")
    def implementation(self) -> Implementation | None:
        node = self._graph.nodes.get(self._node.implementation)
        return Implementation(_graph=self._graph, _node=node) if isinstance(node, n.Implementation) else None

    @strawberry.field(description="How it was measured; null if the registry lacks it.")
    def protocol(self) -> Protocol | None:
        node = self._graph.nodes.get(self._node.protocol)
        return Protocol(_graph=self._graph, _node=node) if isinstance(node, n.Protocol) else None

    @strawberry.field(description="Where it was measured (GPU and software); null if the registry lacks it.")
    def environment(self) -> Environment | None:
        node = self._graph.nodes.get(self._node.environment)
        return Environment(_graph=self._graph, _node=node) if isinstance(node, n.Environment) else None

    @strawberry.field(
        description="Notes on it by anyone (reproductions, failures to reproduce...), oldest published first; they "
        "never change trust."
    )
    def attestations(self) -> list[Attestation]:
        digests = sorted(read.overlays_on(self._graph, read.OverlayList.ATTESTATIONS, self._node.digest))
        nodes_ = [self._graph.nodes[d] for d in digests]
        nodes_.sort(
            key=lambda a: (self._graph.publication(a.digest) is None, self._graph.publication(a.digest) or 0, a.digest)
        )
        return [Attestation(_graph=self._graph, _node=a) for a in nodes_ if isinstance(a, n.Attestation)]

    @strawberry.field(
        description="Registry-controlled reruns of it, by digest; only honoured ones (signed by a maintainer) count "
        "for trust."
    )
    def verifications(self) -> list[Verification]:
        digests = sorted(read.overlays_on(self._graph, read.OverlayList.VERIFICATIONS, self._node.digest))
        return [
            Verification(_graph=self._graph, _node=v)
            for d in digests
            if isinstance(v := self._graph.nodes[d], n.Verification)
        ]

    @strawberry.field(description="The maintainer retraction that withdrew it; null when it is not retracted.")
    def retraction(self) -> Retraction | None:
        digest = self._facts().retraction
        node = self._graph.nodes.get(digest) if digest else None
        return Retraction(_graph=self._graph, _node=node) if isinstance(node, n.Retraction) else None

    @strawberry.field(description="The corrected run that replaces this one, if any.")
    def superseded_by(self) -> Run | None:
        digest = self._facts().superseded_by
        return run_of(self._graph, digest) if digest else None

    @strawberry.field(
        description="The signed Supersession that replaced this run (its reason, the correction, who signed it); "
        "null when no honoured supersession names it."
    )
    def supersession(self) -> Supersession | None:
        correction = self._facts().superseded_by
        if correction is None:
            return None
        graph = self._graph
        found = [
            node
            for digest in read.overlays_on(graph, read.OverlayList.SUPERSESSIONS, self._node.digest)
            if isinstance(node := graph.nodes.get(digest), n.Supersession)
            and node.run == correction
            and graph.honoured(node)
        ]
        # The earliest that counts is the one that replaced it; later ones repeat it.
        found.sort(key=lambda node: (graph.publication(node.digest) or 0, node.digest))
        return Supersession(_graph=graph, _node=found[0]) if found else None

    @strawberry.field(description="Who published it, when, from where, under which licence.")
    def provenance(self, info: Info) -> Provenance | None:
        return provenance_of(info.context, self._graph, self._node, self._facts().source)

    @strawberry.field(
        description="Where it comes from (its source's slug, name and terms); null when its publishing commit names "
        "no source."
    )
    def source(self, info: Info) -> Source | None:
        return source_type(info.context, self._graph, self._facts().source)

    @strawberry.field(description="The run dossier pinned to this snapshot's commit.")
    def permalink(self, info: Info) -> str:
        return info.context.urls.run(self._graph.commit, self._node.digest)

    @strawberry.field(
        description="Where to ask whether this result still stands: its status at the head of main for a reader "
        "of this snapshot's commit (retracted, superseded or verified since, with the signed reason). Unlike the "
        "permalink it changes when main does (cached a minute). Absolute under the configured base URL, else "
        "relative to the server's root."
    )
    def status_url(self, info: Info) -> str:
        return info.context.urls.run_status(self._node.digest, read_at=self._graph.commit)

    @strawberry.field(
        description="How to cite this run, pinned to this snapshot's commit, with its digest and its permalink "
        "(absolute: under the configured base URL or `baseUrl`; without either, the citation says it has none, "
        "never a root-relative link). `accessed` adds an access date; the server never adds its own, so an answer "
        "pinned to a published commit never changes. Null, with a BAD_USER_INPUT error, when `accessed` is not a "
        "date or `baseUrl` not an http(s) URL."
    )
    def citation(
        self,
        info: Info,
        format: Format = CitationFormat.TEXT,
        accessed: Accessed = None,
        base_url: BaseUrl = None,
    ) -> str | None:
        urls = citation_urls(info, base_url)
        permalink = urls.run(self._graph.commit, self._node.digest) if urls else None
        return cite(self._citation_facts(info, accessed_day(info, accessed), permalink), format.name)

    def _citation_facts(self, info: Info, accessed: str | None, permalink: str | None) -> CitationFacts:
        graph, run = self._graph, self._node
        implementation = graph.nodes.get(run.implementation)
        workload = graph.nodes.get(run.workload)
        slug = self._facts().source
        source_name = info.context.snapshots.source_terms(graph.mainline, slug).get("Source-Name") if slug else None
        primary = run.primary
        published = published_at(graph, run)
        return CitationFacts(
            implementation=(implementation.title or implementation.name) if implementation else run.implementation,
            workload=fact(info, workload, workload_label) if workload else run.workload,
            value=format_value(primary.value, primary.unit) if primary else "no primary value",
            statistic=primary.statistic if primary else "n/a",
            source=source_name or slug or "an unknown source",
            digest=run.digest,
            permalink=permalink,
            accessed=accessed,
            published=published[:10] if published else None,
            title=run.title or run.name,
        )

    @strawberry.field(description="The stored manifest JSON.")
    def manifest(self, info: Info) -> JSON:
        return as_json(document(info, self._node))

    @strawberry.field(description="The run with its protocol and environment, as the run pages show it.")
    def bundle(self, info: Info) -> JSON:
        bundle: dict[str, Any] = {"run": document(info, self._node)}
        for key, digest in (("protocol", self._node.protocol), ("environment", self._node.environment)):
            node = self._graph.nodes.get(digest)
            if node is not None:
                bundle[key] = document(info, node)
        return as_json(bundle)


def primary_display(primary: registry.cohorts.Primary | None) -> str | None:
    """A primary measurement as the pages say it (`144.6 µs`)."""
    return format_value(primary.value, primary.unit) if primary else None


def run_of(graph: Graph, digest: str | None) -> Run | None:
    """The run with this digest, if the graph has one."""
    node = graph.nodes.get(digest) if digest else None
    return Run(_graph=graph, _node=node) if isinstance(node, n.Run) else None

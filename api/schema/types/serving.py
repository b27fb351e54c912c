"""The GraphQL types of serving results (serving-v1): runs, their configuration, stack, workload and
model, and serving cohorts. A cohort's resolution is `kernelindex.schema.types.serving_resolution`'s, the root fields
`kernelindex.schema.types.serving_root`'s.

Serving results are a product of their own: they never appear in `runs`, `cohorts`, `records`
or `compare`, and kernel runs never appear here. The domain is `kernelindex.registry.serving` (the policy)
and `kernelindex.registry.serving_graph` (one graph's serving index); these types only present it.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry import serving as policy
from kernelindex.registry.graph import Graph
from kernelindex.registry.present import Citation as CitationFacts
from kernelindex.registry.present import cite, format_value
from kernelindex.registry.serving_graph import ConstraintRequest, ObjectiveRequest, ServingFacts, serving_index
from kernelindex.registry.serving_graph import ServingCohort as DomainCohort
from kernelindex.schema import types as t
from kernelindex.schema.types.base import Info, Named, Observed, document, published_at
from kernelindex.schema.types.citing import Accessed, BaseUrl, Format, accessed_day, citation_urls
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.manifest_types import manifest_type
from kernelindex.schema.types.serving_resolution import (
    OptimizationDirection,
    ServingConstraintInput,
    ServingObjectiveInput,
    ServingResolution,
    direction_of,
)
from kernelindex.schema.types.states import manifest_state

__all__ = [
    "MAX_CONSTRAINTS",
    "Model",
    "ServingCohort",
    "ServingConfiguration",
    "ServingIneligibilityReason",
    "ServingMetric",
    "ServingRun",
    "ServingRunStatus",
    "ServingStack",
    "ServingWorkload",
    "run_maker",
    "vocabulary",
]

MAX_CONSTRAINTS = 16


# Enums and leaves ---------------------------------------------------------------------------------


@strawberry.enum(description="A serving run's status as its source reported it.")
class ServingRunStatus(enum.Enum):
    VALID = strawberry.enum_value("valid", description="Its source accepted it: it can rank.")
    INVALID = strawberry.enum_value("invalid", description="Its source marked it invalid.")
    INCOMPLETE_EVIDENCE = strawberry.enum_value(
        "incomplete_evidence", description="Its source did not publish enough to judge it."
    )


@strawberry.enum(description="Why a serving run is not ranked, in this order when there are several.")
class ServingIneligibilityReason(enum.Enum):
    UNPUBLISHED = strawberry.enum_value(
        "UNPUBLISHED", description="Not on main yet (a pull request previewed with registry(at:))."
    )
    STATUS_INVALID = strawberry.enum_value("STATUS_INVALID", description="Its source marked it invalid.")
    STATUS_INCOMPLETE_EVIDENCE = strawberry.enum_value(
        "STATUS_INCOMPLETE_EVIDENCE", description="Its source did not publish enough to judge it."
    )
    MISSING_REFERENCE = strawberry.enum_value(
        "MISSING_REFERENCE", description="Its model, configuration or workload is not in the registry."
    )


@strawberry.type(description="A metric of serving-v1's vocabulary.")
class ServingMetric:
    metric: str = strawberry.field(
        description="The metric's name (ttft_ms, output_token_throughput_tps...): what constraints and objectives name."
    )
    unit: str = strawberry.field(description="e.g. tokens/s")
    manifest_unit: str = strawberry.field(description="How manifests spell the unit: tokens_s")
    direction: OptimizationDirection = strawberry.field(description="Which way is better.")


def vocabulary() -> list[ServingMetric]:
    return [
        ServingMetric(metric=name, unit=d.unit, manifest_unit=d.manifest_unit, direction=direction_of(name))  # type: ignore[arg-type]
        for name, d in policy.SERVING_METRICS.items()
    ]


def _display(metric: str, unit: str, value: float) -> str:
    definition = policy.SERVING_METRICS.get(metric)
    shown = definition.unit if definition and unit == definition.manifest_unit else unit
    return format_value(value, shown)


@strawberry.type(description="One measurement of a serving run.")
class ServingMeasurement:
    metric: str = strawberry.field(description="The metric (a vocabulary name, or the source's own).")
    statistic: str = strawberry.field(description="Its statistic (p99, mean, reported...).")
    unit: str = strawberry.field(description="The unit of `value`, as the manifest spells it (ms, tokens_s...).")
    value: float = strawberry.field(description="The value, in `unit`.")
    display: str = strawberry.field(description="e.g. 8840.42 tokens/s")
    direction: OptimizationDirection | None = strawberry.field(description="Null for a metric outside the vocabulary.")
    comparable: bool = strawberry.field(
        description="In the vocabulary and in the metric's unit: only such measurements are compared."
    )


def _measurement(metric: str, statistic: str, unit: str, value: float) -> ServingMeasurement:
    return ServingMeasurement(
        metric=metric,
        statistic=statistic,
        unit=unit,
        value=value,
        display=_display(metric, unit, value),
        direction=direction_of(metric),
        comparable=policy.comparable(policy.Measurement(metric, statistic, unit, value)),
    )


@strawberry.type(description="Where a serving run ran.")
class ServingTopology:
    accelerator_vendor: str | None = strawberry.field(description="The accelerators' vendor; null when not published.")
    accelerator_model: str = strawberry.field(description="The accelerator model (NVIDIA B200-SXM-180GB...).")
    accelerators_per_node: int = strawberry.field(description="Accelerators in each node.")
    node_count: int = strawberry.field(description="How many nodes.")
    interconnect: str | None = strawberry.field(description="How nodes are connected; null when not published.")
    total_accelerators: int = strawberry.field(description="accelerators per node x nodes.")
    key: str = strawberry.field(description="vendor/model/<per node>x<nodes>/interconnect, a cohort identity part")


@strawberry.type(description="The harness that measured a serving run.")
class ServingHarness:
    name: str = strawberry.field(description="The harness (mlperf-loadgen...).")
    version: str = strawberry.field(description="Its version.")


@strawberry.type(description="A bound a workload declares its harness enforced (a service-level objective).")
class ServingSlo:
    metric: str = strawberry.field(description="The metric bounded.")
    statistic: str = strawberry.field(description="Its statistic (p99...).")
    operator: str = strawberry.field(description="<=, <, >= or >.")
    value: float = strawberry.field(description="The bound, in `unit`.")
    unit: str = strawberry.field(description="The bound's unit.")


@strawberry.type(description="What the source itself reported, in its own terms (MLPerf: scenario, division...).")
class ServingSourceNative:
    source: str = strawberry.field(description="The source's slug (mlperf-inference).")
    benchmark: str = strawberry.field(description="The source's benchmark (llama2-70b...).")
    scenario: str = strawberry.field(description="MLPerf's scenario (Offline, Server, Interactive).")
    division: str = strawberry.field(description="MLPerf's division (closed, open).")
    category: str = strawberry.field(description="MLPerf's availability category (available, preview, rdi).")
    external_id: str = strawberry.field(description="The source's own id of the result.")
    metrics: list[t.Metric] = strawberry.field(description="The source's own metrics, in its order.")


# Manifest-backed kinds ----------------------------------------------------------------------------


@strawberry.type
class _Described(Named):
    """A manifest-backed type whose `manifest` is the Manifest type (a run's is its JSON, as for kernel runs)."""

    @strawberry.field(description="Its stored manifest.")
    def manifest(self) -> t.Manifest:
        return t.Manifest(_graph=self._graph, _node=self._node)


@manifest_type
@strawberry.type(description="A model revision (ModelRevision): its tokenizer is part of a serving cohort's identity.")
class Model(_Described):
    _node: strawberry.Private[n.Model]

    def _state(self, info: Info) -> Hashable:
        runs = tuple(serving_index(self._graph).filtered(model=self._node.digest))
        return (*manifest_state(self._graph, self._node), runs)

    @strawberry.field(description="spec.model")
    def model(self) -> str:
        return self._node.model

    @strawberry.field(description="spec.tokenizer.name")
    def tokenizer(self) -> str | None:
        return self._node.tokenizer

    @strawberry.field(description="Its serving runs, newest first.")
    @t.follows_cursor
    def serving_runs(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[ServingRun] | None:
        index = serving_index(self._graph)
        return t.paginate(
            self._graph,
            index.filtered(model=self._node.digest),
            t.Window(first, after, last, before),
            run_maker(self._graph),
        )

    @strawberry.field(
        description="The serving cohorts of this model (one per workload, protocol, topology, quality policy and "
        "metric set its runs were measured under), largest first, then by key."
    )
    @t.follows_cursor
    def serving_cohorts(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[ServingCohort] | None:
        index = serving_index(self._graph)
        keys = [k for k in index.ordered_cohorts() if index.cohorts[k].parts.model_digest == self._node.digest]
        return t.paginate(
            self._graph,
            keys,
            t.Window(first, after, last, before),
            lambda k: ServingCohort(_graph=self._graph, _cohort=index.cohorts[k]),
        )


@manifest_type
@strawberry.type(description="The serving software (ServingStackRevision) and who runs it.")
class ServingStack(_Described):
    _node: strawberry.Private[n.ServingStack]

    @strawberry.field(description="spec.project.name: for MLPerf, the submitter.")
    def project(self) -> str:
        return self._node.project

    @strawberry.field(description="spec.revision.version")
    def version(self) -> str | None:
        return self._node.version

    @strawberry.field(description="The API it serves (openai...); null when not published.")
    def api_protocol(self, info: Info) -> str | None:
        return cast(str | None, document(info, self._node)["spec"].get("apiProtocol"))

    @strawberry.field(description="The whole stack spec, as published.")
    def spec(self, info: Info) -> JSON:
        return cast(JSON, document(info, self._node)["spec"])


@manifest_type
@strawberry.type(
    description="How a stack was configured (ServingConfiguration): what competes inside a serving cohort."
)
class ServingConfiguration(_Described):
    _node: strawberry.Private[n.ServingConfiguration]

    @strawberry.field(description="The stack it configures; null if the registry lacks it.")
    def stack(self) -> ServingStack | None:
        node = self._graph.nodes.get(self._node.stack)
        return ServingStack(_graph=self._graph, _node=node) if isinstance(node, n.ServingStack) else None

    @strawberry.field(description="e.g. AMD · Supermicro AS-8125GS-TNMR2 (submitter · system), as upstream sums it up.")
    def summary(self, info: Info) -> str:
        return _configuration_summary(self._graph, self._node, document(info, self._node))

    @strawberry.field(description="The data type served (fp8, bf16...); null when not published.")
    def dtype(self, info: Info) -> str | None:
        return cast(str | None, document(info, self._node)["spec"].get("dtype"))

    @strawberry.field(description="Its quantization; null when not published.")
    def quantization(self, info: Info) -> str | None:
        return cast(str | None, document(info, self._node)["spec"].get("quantization"))

    @strawberry.field(description="The whole configuration spec, as published.")
    def spec(self, info: Info) -> JSON:
        return cast(JSON, document(info, self._node)["spec"])


def _configuration_summary(graph: Graph, node: n.ServingConfiguration, document: dict[str, Any]) -> str:
    stack = graph.nodes.get(node.stack)
    who = stack.project.split(" (", 1)[0] if isinstance(stack, n.ServingStack) else None
    system = (document["spec"].get("options") or {}).get("system")
    return " · ".join(p for p in (who, system) if p) or node.name


@manifest_type
@strawberry.type(description="The load a serving run was measured under (ServingWorkload), with its declared SLOs.")
class ServingWorkload(_Described):
    _node: strawberry.Private[n.ServingWorkload]

    @strawberry.field(description="Whether responses were streamed.")
    def streaming(self) -> bool:
        return self._node.streaming

    @strawberry.field(description="open_loop, closed_loop or offline")
    def load_generation(self) -> str:
        return self._node.load_generation

    @strawberry.field(description="Bounds its harness enforced: a DECLARED constraint outcome cites these.")
    def slo(self) -> list[ServingSlo]:
        return [ServingSlo(metric=m, statistic=s, operator=o, value=v, unit=u) for m, s, o, v, u in self._node.slo]

    @strawberry.field(description="The dataset requests came from; null when not published.")
    def dataset(self, info: Info) -> str | None:
        return cast(str | None, (document(info, self._node)["spec"].get("dataset") or {}).get("name"))

    @strawberry.field(description="The whole workload spec, as published.")
    def spec(self, info: Info) -> JSON:
        return cast(JSON, document(info, self._node)["spec"])


# Runs ---------------------------------------------------------------------------------------------


@manifest_type
@strawberry.type(
    description="An LLM-serving result: a model served by a configured stack on a topology, under a workload. "
    "It compares only inside its serving cohort (serving-v1), never with kernel runs."
)
class ServingRun(Observed[ServingRunStatus]):
    _node: strawberry.Private[n.ServingRun]
    statuses = ServingRunStatus

    def _facts(self) -> ServingFacts:
        return serving_index(self._graph).facts[self._node.digest]

    def _state(self, info: Info) -> Hashable:
        facts = self._facts()
        slug = self._source(info)
        terms = info.context.snapshots.source_terms(self._graph.mainline, slug) if slug else {}
        return (*manifest_state(self._graph, self._node), repr(facts), tuple(sorted(terms.items())))

    @strawberry.field(description="The model served; null if the registry lacks it.")
    def model(self) -> Model | None:
        node = self._graph.nodes.get(self._node.model)
        return Model(_graph=self._graph, _node=node) if isinstance(node, n.Model) else None

    @strawberry.field(description="How the stack was configured; null if the registry lacks it.")
    def configuration(self) -> ServingConfiguration | None:
        node = self._graph.nodes.get(self._node.configuration)
        return (
            ServingConfiguration(_graph=self._graph, _node=node) if isinstance(node, n.ServingConfiguration) else None
        )

    @strawberry.field(description="The stack's project: for MLPerf, the submitter.")
    def submitter(self) -> str | None:
        return self._facts().submitter

    @strawberry.field(description="The load it ran under; null if the registry lacks it.")
    def workload(self) -> ServingWorkload | None:
        node = self._graph.nodes.get(self._node.workload)
        return ServingWorkload(_graph=self._graph, _node=node) if isinstance(node, n.ServingWorkload) else None

    @strawberry.field(description="The accelerators and nodes it ran on.")
    def topology(self) -> ServingTopology:
        run = self._node
        return ServingTopology(
            accelerator_vendor=run.accelerator_vendor,
            accelerator_model=run.accelerator_model,
            accelerators_per_node=run.accelerators_per_node,
            node_count=run.node_count,
            interconnect=run.interconnect,
            total_accelerators=run.accelerators_per_node * run.node_count,
            key=policy.topology_key(
                run.accelerator_vendor,
                run.accelerator_model,
                run.accelerators_per_node,
                run.node_count,
                run.interconnect,
            ),
        )

    @strawberry.field(description="What measured it.")
    def harness(self) -> ServingHarness:
        return ServingHarness(name=self._node.harness, version=self._node.harness_version)

    @strawberry.field(description="How the model was placed on the accelerators; null when not published.")
    def placement(self) -> str | None:
        return self._node.placement

    @strawberry.field(description="e.g. mlperf_closed_99: the accuracy target results were held to.")
    def quality_policy(self) -> str:
        return self._node.quality_policy

    @strawberry.field(description="The source's scenario (MLPerf: offline, server, interactive).")
    def scenario(self) -> str | None:
        return self._node.scenario

    @strawberry.field(description="Its measurements, with units and which way is better.")
    def measurements(self) -> list[ServingMeasurement]:
        return [_measurement(*m) for m in self._node.measurements]

    @strawberry.field(description="What its source reported in its own terms; null when none.")
    def source_native(self, info: Info) -> ServingSourceNative | None:
        native = document(info, self._node)["spec"].get("sourceNative")
        if native is None:
            return None
        return ServingSourceNative(
            source=native["source"],
            benchmark=native["benchmark"],
            scenario=native["scenario"],
            division=native["division"],
            category=native["category"],
            external_id=native["externalId"],
            metrics=[t.Metric(name=k, value=v) for k, v in (native.get("metrics") or {}).items()],
        )

    @strawberry.field(description="Caveats its source published with it, as written.")
    def caveats(self, info: Info) -> list[str]:
        return list(document(info, self._node)["spec"].get("caveats") or ())

    @strawberry.field(description="Its serving cohort's key; null when its model or workload is missing.")
    def cohort_key(self) -> str | None:
        return self._facts().cohort

    @strawberry.field(description="harness/version/placement/streaming/load generation, a cohort identity part")
    def protocol_key(self) -> str | None:
        parts = self._facts().parts
        return parts.protocol_key if parts else None

    @strawberry.field(description="Sorted metric·statistic pairs, a cohort identity part")
    def metric_set_key(self) -> str:
        return policy.metric_set_key((m[0], m[1]) for m in self._node.measurements)

    @strawberry.field(description="Its serving cohort; null when its model or workload is missing.")
    def cohort(self) -> ServingCohort | None:
        key = self._facts().cohort
        cohort = serving_index(self._graph).cohorts.get(key) if key else None
        return ServingCohort(_graph=self._graph, _cohort=cohort) if cohort else None

    @strawberry.field(description="Serving runs carry no raw evidence and cannot be verified yet: REPORTED.")
    def trust(self) -> t.Trust:
        return t.Trust[self._facts().trust.name]

    @strawberry.field(description="Whether it ranks: true exactly when `ineligibilityReasons` is empty.")
    def eligible(self) -> bool:
        return self._facts().eligible

    @strawberry.field(description="UNPUBLISHED, STATUS_<STATUS>, MISSING_REFERENCE.")
    def ineligibility_reasons(self) -> list[ServingIneligibilityReason]:
        return [ServingIneligibilityReason(reason) for reason in self._facts().reasons]

    @strawberry.field(description="Dangling references, measurements outside the vocabulary or in another unit.")
    def warnings(self) -> list[str]:
        return list(self._facts().warnings)

    @strawberry.field(description="Where it comes from; null when its publishing commit names no source.")
    def source(self, info: Info) -> t.Source | None:
        return t.source_type(info.context, self._graph, self._source(info))

    def _source(self, info: Info) -> str | None:
        if self._node.source:
            return self._node.source
        provenance = t.provenance_of(info.context, self._graph, self._node, None)
        return provenance.source.slug if provenance and provenance.source else None

    @strawberry.field(description="Who published it, when, from where, under which licence.")
    def provenance(self, info: Info) -> t.Provenance | None:
        return t.provenance_of(info.context, self._graph, self._node, self._node.source)

    @strawberry.field(description="The run pinned to this snapshot's commit (JSON at the permalink).")
    def permalink(self, info: Info) -> str:
        return info.context.urls.run(self._graph.commit, self._node.digest)

    @strawberry.field(
        description="How to cite this serving run, pinned to this snapshot's commit, with its digest and its "
        "permalink (absolute: under the configured base URL or `baseUrl`; without either, the citation says it has "
        "none)."
        " Null, with a BAD_USER_INPUT error, when `accessed` is not a date or `baseUrl` not an http(s) URL."
    )
    def citation(
        self,
        info: Info,
        format: Format = t.CitationFormat.TEXT,
        accessed: Accessed = None,
        base_url: BaseUrl = None,
    ) -> str | None:
        urls = citation_urls(info, base_url)
        permalink = urls.run(self._graph.commit, self._node.digest) if urls else None
        return cite(self._citation_facts(info, accessed_day(info, accessed), permalink), format.name)

    def _citation_facts(self, info: Info, accessed: str | None, permalink: str | None) -> CitationFacts:
        graph, run = self._graph, self._node
        configuration = graph.nodes.get(run.configuration)
        workload = graph.nodes.get(run.workload)
        slug = self._source(info)
        source_name = info.context.snapshots.source_terms(graph.mainline, slug).get("Source-Name") if slug else None
        metric, statistic, unit, value = run.measurements[0]
        published = published_at(graph, run)
        return CitationFacts(
            implementation=_configuration_summary(graph, configuration, document(info, configuration))
            if isinstance(configuration, n.ServingConfiguration)
            else run.configuration,
            workload=(workload.title or workload.name) if workload else run.workload,
            value=_display(metric, unit, value),
            statistic=f"{statistic} {metric}",
            source=source_name or slug or "an unknown source",
            digest=run.digest,
            permalink=permalink,
            accessed=accessed,
            published=published[:10] if published else None,
            title=run.title or run.name,
        )

    @strawberry.field(description="The stored manifest JSON.")
    def manifest(self, info: Info) -> JSON:
        return cast(JSON, document(info, self._node))


def run_maker(graph: Graph) -> Any:
    def make(digest: str) -> ServingRun:
        node = graph.nodes[digest]
        assert isinstance(node, n.ServingRun)
        return ServingRun(_graph=graph, _node=node)

    return make


# Cohorts ---------------------------------------------------------------------------


@strawberry.type(description="A metric a serving cohort measures: an axis of its Pareto frontier when comparable.")
class ServingAxis:
    metric: str = strawberry.field(description="The metric.")
    statistic: str = strawberry.field(description="Its statistic.")
    direction: OptimizationDirection | None = strawberry.field(
        description="Which way is better; null for a metric outside the vocabulary."
    )


@strawberry.type(
    description="A serving comparison group: same model (and tokenizer), workload, protocol, topology, quality policy "
    "and metric set. Configurations and stacks compete inside it; it never mixes with kernel cohorts."
)
class ServingCohort(Node):
    _graph: strawberry.Private[Graph]
    _cohort: strawberry.Private[DomainCohort]

    def _identity(self) -> tuple[str, str]:
        return self._graph.commit, self._cohort.key

    def _state(self, info: Info) -> Hashable:
        index = serving_index(self._graph)
        members = sorted(self._cohort.members)
        return (self._cohort.key, tuple((d, repr(index.facts[d]), self._graph.publication(d)) for d in members))

    def _at(self, graph: Graph) -> ServingCohort | None:
        cohort = serving_index(graph).cohorts.get(self._cohort.key)
        return ServingCohort(_graph=graph, _cohort=cohort) if cohort else None

    @strawberry.field(
        description="Its key: `sha256:` and 64 hex digits, KernelIndex's digest of its seven identity parts. Stable "
        "across commits."
    )
    def key(self) -> str:
        return self._cohort.key

    @strawberry.field(description="The comparison policy (`serving-v1`).")
    def policy_version(self) -> str:
        return policy.POLICY_VERSION

    @strawberry.field(description="Serving runs in it, eligible or not.")
    def size(self) -> int:
        return len(self._cohort.members)

    @strawberry.field(description="The model its runs serve; null if the registry lacks it.")
    def model(self) -> Model | None:
        node = self._graph.nodes.get(self._cohort.parts.model_digest)
        return Model(_graph=self._graph, _node=node) if isinstance(node, n.Model) else None

    @strawberry.field(description="The tokenizer (an identity part); null when the model names none.")
    def tokenizer(self) -> str | None:
        return self._cohort.parts.tokenizer

    @strawberry.field(description="The load its runs ran under; null if the registry lacks it.")
    def workload(self) -> ServingWorkload | None:
        node = self._graph.nodes.get(self._cohort.parts.workload_digest)
        return ServingWorkload(_graph=self._graph, _node=node) if isinstance(node, n.ServingWorkload) else None

    @strawberry.field(description="harness/version/placement/streaming/load generation: an identity part.")
    def protocol_key(self) -> str:
        return self._cohort.parts.protocol_key

    @strawberry.field(description="vendor/accelerator/<per node>x<nodes>/interconnect: an identity part.")
    def topology_key(self) -> str:
        return self._cohort.parts.topology_key

    @strawberry.field(description="The accuracy target its runs were held to (mlperf_closed_99...): an identity part.")
    def quality_policy(self) -> str:
        return self._cohort.parts.quality_policy

    @strawberry.field(description="The metric·statistic pairs its runs measure: an identity part.")
    def metric_set_key(self) -> str:
        return self._cohort.parts.metric_set_key

    @strawberry.field(description="The metric·statistic pairs its runs measure.")
    def metrics(self) -> list[ServingAxis]:
        pairs = [p.partition("·") for p in self._cohort.parts.metric_set_key.split(",") if p]
        return [ServingAxis(metric=m, statistic=s, direction=direction_of(m)) for m, _, s in pairs]

    @strawberry.field(description="Its runs, newest first, eligible or not.")
    @t.follows_cursor
    def runs(
        self,
        info: Info,
        first: t.First = None,
        after: t.After = None,
        last: t.Last = None,
        before: t.Before = None,
    ) -> t.Connection[ServingRun] | None:
        digests = serving_index(self._graph).ordered(self._cohort.members)
        return t.paginate(self._graph, digests, t.Window(first, after, last, before), run_maker(self._graph))

    @strawberry.field(
        description="The feasible runs under every constraint, ranked by the objective; without an objective, "
        "the Pareto frontier over the cohort's metrics. Bad constraints are refused with UNKNOWN_METRIC, "
        "WRONG_UNIT or UNSUPPORTED_OPERATOR."
    )
    def resolve(
        self,
        constraints: Annotated[
            list[ServingConstraintInput] | None,
            strawberry.argument(description="At most 16 bounds every feasible run must meet; none by default."),
        ] = None,
        objective: Annotated[
            ServingObjectiveInput | None,
            strawberry.argument(description="What to rank the feasible runs by; without one, the Pareto frontier."),
        ] = None,
    ) -> ServingResolution | None:
        given = constraints or []
        if len(given) > MAX_CONSTRAINTS:
            raise registry.errors.InvalidConstraint(
                "constraints", f"at most {MAX_CONSTRAINTS} constraints (got {len(given)})"
            )
        requests = [ConstraintRequest(c.metric, c.operator, c.value, c.statistic, c.unit) for c in given]
        goal = (
            ObjectiveRequest(
                objective.metric, objective.statistic, objective.direction.name.lower() if objective.direction else None
            )
            if objective is not None
            else None
        )
        resolution = serving_index(self._graph).resolve(self._cohort, requests, goal)
        return ServingResolution(_graph=self._graph, _resolution=resolution)

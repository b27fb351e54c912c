"""One declaration per manifest kind: its folder, model, node fields, GraphQL type and noun, labels, and whether
it is a lifecycle kind and what it acts on.

Everything else that names kinds derives from `KINDS`: the node a manifest becomes and the fast decoder
(`kernelindex.registry.nodes`, `kernelindex.registry.decode`), the warm-start cache's class ids
(`kernelindex.registry.graphcache`), the lifecycle overlays (`kernelindex.registry.graph`), the GraphQL enum
`ManifestKind` and the types that take a manifest's id (`kernelindex.schema`), the pages' plural nouns. What cannot
be derived (a kind's typed node class, its GraphQL type) is checked against its spec when first used and by
tests/test_kind_specs.py. docs/design.md walks through adding a kind.

A spec holds strings only (the model, the node class, the readers of its fields are named, not imported), so
reading the specs loads neither pydantic nor the graph: a server that only reads never imports a model.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # pydantic's base, not `kinds.common.Strict`: the kinds package imports this module, and a model is only
    # ever validated through it.
    from pydantic import BaseModel

__all__ = ["KINDS", "KIND_BY_FOLDER", "KindInfo", "KindSpec", "NodeField", "Reference", "register"]


@dataclass(frozen=True, slots=True)
class Reference:
    """A field of a kind that names another manifest by digest, and the kinds it may name."""

    path: tuple[str, ...]
    targets: tuple[str, ...]

    def read(self, document: dict[str, Any]) -> str | None:
        value: Any = document
        for key in self.path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class NodeField:
    """One field a kind's node keeps after its digest, blob id, name and title.

    `path` is where it is read in the stored document, dotted from the root (`spec.status`); a part ending in
    `?` may be absent (or null), and then the field is `missing` (None unless given). `how` names what is done
    with the value found: a reader of `kernelindex.registry.nodes.READERS` (`text` keeps it as it is, `intern`
    keeps one copy of a repeating string...). `present` is true when any of `paths` is present in the document
    (with any value);
    `const` is `value`, whatever the document says.
    """

    name: str
    path: str = ""
    how: str = "text"
    paths: tuple[str, ...] = ()
    value: Any = None
    missing: Any = None


@dataclass(frozen=True, slots=True)
class KindSpec:
    """A manifest kind.

    `name` is the manifest's `kind`; `folder` its folder in git; `model_name` its pydantic model (`module.Class`, the
    module in `kernelindex.registry.kinds`, or a full dotted path); `references` the digests it names.
    `fields` are what its node keeps; `node` names the typed node class of `kernelindex.registry.nodes` that holds
    them (its fields must be digest, oid, name, title and `fields`, in order), or is empty for a kind whose node
    class is made from `fields`. `title` is the reader of `metadata.title`. `graphql` is its GraphQL type's name,
    `noun` how messages name one ("a run"), `summary` its `ManifestKind` value's description, `label` how pages
    count them ("runs"; the kind's name when empty). A lifecycle kind (`lifecycle`) acts on the run its node's
    `acts_on` field names, through the graph's overlay named as its folder; `signed`: it counts only in a commit a
    maintainer signed.
    """

    name: str
    model_name: str
    folder: str
    references: tuple[Reference, ...] = ()
    lifecycle: bool = False
    fields: tuple[NodeField, ...] = ()
    node: str = ""
    title: str = "text"
    graphql: str = "Manifest"
    noun: str = "a manifest"
    summary: str = ""
    label: str = ""
    acts_on: str = ""
    signed: bool = False
    field_names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "field_names", ("digest", "oid", "name", "title", *(f.name for f in self.fields)))
        if self.lifecycle and self.acts_on not in self.field_names[4:]:
            raise ValueError(f"lifecycle kind {self.name}: acts_on {self.acts_on!r} is not one of its node fields")

    @property
    def words(self) -> str:
        """How pages count manifests of this kind ("9,508 runs")."""
        return self.label or self.name

    @property
    def model(self) -> type[BaseModel]:
        """The kind's pydantic model, imported when first needed: a server that only reads the registry never
        validates a manifest until a new head arrives (a server's memory holds no models)."""
        model = _MODELS.get(self.model_name)
        if model is None:  # importlib's lookup of a loaded module still takes its lock: ~50 us a call
            module, _, name = self.model_name.rpartition(".")
            if "." not in module:
                module = f"kernelindex.registry.kinds.{module}"
            model = _MODELS[self.model_name] = getattr(importlib.import_module(module), name)
        return model


KindInfo = KindSpec
"""The older name of a kind's declaration."""

_MODELS: dict[str, type[BaseModel]] = {}


def _ref(*path: str, to: tuple[str, ...]) -> Reference:
    return Reference(tuple(path), to)


def _intern(name: str, path: str) -> NodeField:
    return NodeField(name, path, "intern")


def _text(name: str, path: str) -> NodeField:
    return NodeField(name, path)


def _const(name: str, value: Any) -> NodeField:
    return NodeField(name, how="const", value=value)


_WORKLOADS = ("WorkloadCase", "WorkloadSuite")
_RUN = ("BenchmarkRun",)
_RAW_EVIDENCE = ("spec.timing?.rawSamples", "spec.evidence?.rawSamples", "spec.evidence?.logs")
_WORKLOAD_FIELDS = (
    _intern("operation", "spec.operationSpecDigest"),
    NodeField("correctness", "spec.correctness", "correctness"),
)

_SPECS = (
    KindSpec(
        "OperationSpec", "kernel.OperationSpec", "operation-specs",
        fields=(_intern("family", "spec.family"),),
        node="Operation", graphql="Operation", noun="an operation", label="operations",
        summary="What is computed: inputs, outputs, semantics.",
    ),
    KindSpec(
        "WorkloadCase", "kernel.WorkloadCase", "workload-cases",
        (_ref("spec", "operationSpecDigest", to=("OperationSpec",)),),
        fields=(_const("suite", False), *_WORKLOAD_FIELDS, _const("cases", 1)),
        node="Workload", graphql="Workload", noun="a workload", label="workload cases",
        summary="One input a run measures.",
    ),
    KindSpec(
        "WorkloadSuite", "kernel.WorkloadSuite", "workload-suites",
        (_ref("spec", "operationSpecDigest", to=("OperationSpec",)),),
        fields=(_const("suite", True), *_WORKLOAD_FIELDS, NodeField("cases", "spec.cases", "count")),
        node="Workload", graphql="Workload", noun="a workload", label="workload suites",
        summary="Several inputs measured together.",
    ),
    KindSpec(
        "SoftwareProject", "kernel.SoftwareProject", "software-projects",
        fields=(_text("display_name", "spec.name"),),
        node="Project", graphql="Project", noun="a project", label="projects",
        summary="Who maintains implementations.",
    ),
    KindSpec(
        "ImplementationRevision", "kernel.ImplementationRevision", "implementation-revisions",
        (_ref("spec", "operation", "specDigest", to=("OperationSpec",)),),
        fields=(
            _intern("operation", "spec.operation.specDigest"),
            _intern("project", "metadata.labels?.project?"),
            NodeField("source_available", how="present", paths=("spec.projectRevision.repository", "spec.source")),
            _intern("language", "spec.callable.language"),
            NodeField("author", "metadata.authors?", "author"),
        ),
        node="Implementation", graphql="Implementation", noun="an implementation", label="implementations",
        summary="One revision of code that computes an operation.",
    ),
    KindSpec(
        "BenchmarkProtocol", "kernel.BenchmarkProtocol", "benchmark-protocols",
        node="Protocol", graphql="Protocol", noun="a protocol", label="protocols",
        summary="How runs are measured.",
    ),
    KindSpec(
        "ExecutionEnvironment", "kernel.ExecutionEnvironment", "execution-environments",
        fields=(
            _intern("vendor", "spec.hardware.vendor"),
            _intern("product", "spec.hardware.product"),
            _intern("architecture", "spec.hardware.architecture"),
        ),
        node="Environment", graphql="Environment", noun="an environment", label="environments",
        summary="Where runs are measured: hardware and software.",
    ),
    KindSpec(
        "BenchmarkRun", "kernel.BenchmarkRun", "benchmark-runs",
        (
            _ref("spec", "implementationDigest", to=("ImplementationRevision",)),
            _ref("spec", "workloadDigest", to=_WORKLOADS),
            _ref("spec", "protocolDigest", to=("BenchmarkProtocol",)),
            _ref("spec", "environmentDigest", to=("ExecutionEnvironment",)),
        ),
        fields=(
            _intern("status", "spec.status"),
            _text("observed_at", "spec.observedAt"),
            NodeField("observed_ns", "spec.observedAt", "instant"),
            _intern("implementation", "spec.implementationDigest"),
            _intern("workload", "spec.workloadDigest"),
            _intern("protocol", "spec.protocolDigest"),
            _intern("environment", "spec.environmentDigest"),
            _intern("source", "spec.sourceNative?.source"),
            NodeField("primary", "spec", "primary"),
            NodeField("raw_evidence", how="present", paths=_RAW_EVIDENCE),
        ),
        node="Run", graphql="Run", noun="a run", label="runs",
        summary="A kernel benchmark result.",
    ),
    KindSpec(
        "ModelRevision", "serving.ModelRevision", "model-revisions",
        fields=(_text("model", "spec.model"), _text("tokenizer", "spec.tokenizer?.name?")),
        node="Model", graphql="Model", noun="a model", label="models",
        summary="A model that serving runs serve.",
    ),
    KindSpec(
        "ServingStackRevision", "serving.ServingStackRevision", "serving-stack-revisions",
        fields=(_text("project", "spec.project.name"), _text("version", "spec.revision.version?")),
        node="ServingStack", graphql="ServingStack", noun="a serving stack", label="serving stacks",
        summary="Serving software.",
    ),
    KindSpec(
        "ServingConfiguration", "serving.ServingConfiguration", "serving-configurations",
        (_ref("spec", "stackDigest", to=("ServingStackRevision",)),),
        fields=(_intern("stack", "spec.stackDigest"),),
        node="ServingConfiguration", graphql="ServingConfiguration", noun="a serving configuration",
        label="serving configurations", summary="How a serving stack was configured.",
    ),
    KindSpec(
        "ServingWorkload", "serving.ServingWorkload", "serving-workloads",
        fields=(
            _text("streaming", "spec.streaming"),
            _intern("load_generation", "spec.loadGeneration"),
            NodeField("slo", "spec.slo?", "slo", missing=()),
        ),
        node="ServingWorkload", graphql="ServingWorkload", noun="a serving workload", label="serving workloads",
        summary="The load a serving run was measured under.",
    ),
    KindSpec(
        "ServingRun", "serving.ServingRun", "serving-runs",
        (
            _ref("spec", "modelDigest", to=("ModelRevision",)),
            _ref("spec", "configurationDigest", to=("ServingConfiguration",)),
            _ref("spec", "workloadDigest", to=("ServingWorkload",)),
        ),
        fields=(
            _intern("status", "spec.status"),
            _intern("observed_at", "spec.observedAt"),
            NodeField("observed_ns", "spec.observedAt", "instant"),
            _intern("model", "spec.modelDigest"),
            _intern("configuration", "spec.configurationDigest"),
            _intern("workload", "spec.workloadDigest"),
            _intern("harness", "spec.harness.name"),
            _intern("harness_version", "spec.harness.version"),
            _text("placement", "spec.placement?"),
            _intern("accelerator_vendor", "spec.topology.acceleratorVendor?"),
            _intern("accelerator_model", "spec.topology.acceleratorModel"),
            _text("accelerators_per_node", "spec.topology.acceleratorsPerNode"),
            _text("node_count", "spec.topology.nodeCount"),
            _text("interconnect", "spec.topology.interconnect?"),
            _intern("quality_policy", "spec.qualityPolicy"),
            NodeField("measurements", "spec.measurements", "measurements"),
            _intern("source", "spec.sourceNative?.source"),
            _intern("scenario", "spec.sourceNative?.scenario"),
        ),
        node="ServingRun", title="intern", graphql="ServingRun", noun="a serving run", label="serving runs",
        summary="An LLM-serving result.",
    ),
    KindSpec(
        "Attestation", "lifecycle.Attestation", "attestations",
        (_ref("spec", "runDigest", to=_RUN),),
        lifecycle=True, acts_on="run",
        fields=(_intern("run", "spec.runDigest"), _text("type", "spec.type")),
        node="Attestation", graphql="Attestation", noun="an attestation",
        summary="A note on a run by anyone.",
    ),
    KindSpec(
        "Retraction", "lifecycle.Retraction", "retractions",
        (_ref("spec", "runDigest", to=_RUN),),
        lifecycle=True, acts_on="run", signed=True,
        fields=(_intern("run", "spec.runDigest"), _text("reason", "spec.reason")),
        node="Retraction", graphql="Retraction", noun="a retraction",
        summary="A maintainer's withdrawal of a run.",
    ),
    KindSpec(
        "Supersession", "lifecycle.Supersession", "supersessions",
        (_ref("spec", "runDigest", to=_RUN), _ref("spec", "supersedesDigest", to=_RUN)),
        lifecycle=True, acts_on="supersedes", signed=True,
        fields=(
            _intern("run", "spec.runDigest"),
            _intern("supersedes", "spec.supersedesDigest"),
            _text("reason", "spec.reason"),
        ),
        node="Supersession", graphql="Supersession", noun="a supersession",
        summary="A corrected run replacing another.",
    ),
    KindSpec(
        "Verification", "lifecycle.Verification", "verifications",
        (_ref("spec", "runDigest", to=_RUN), _ref("spec", "rerunDigest", to=_RUN)),
        lifecycle=True, acts_on="run", signed=True,
        fields=(
            _intern("run", "spec.runDigest"),
            _intern("rerun", "spec.rerunDigest"),
            _text("runner", "spec.runner"),
        ),
        node="Verification", graphql="Verification", noun="a verification",
        summary="A registry-controlled rerun confirming a run.",
    ),
)  # fmt: skip

KINDS: dict[str, KindSpec] = {spec.name: spec for spec in _SPECS}
"""Every kind, by name, in the order the `ManifestKind` enum lists them."""
KIND_BY_FOLDER: dict[str, KindSpec] = {spec.folder: spec for spec in _SPECS}


def register(spec: KindSpec) -> None:
    """Add a kind to `KINDS` (a test's toy kind, or a plugin's). Do it before anything reads the tables
    derived from the specs: before the GraphQL schema and the git store are imported.

    Raises:
        ValueError: the kind's name, folder or GraphQL type is another kind's.
    """
    if spec.name in KINDS or spec.folder in KIND_BY_FOLDER:
        raise ValueError(f"kind {spec.name!r} (folder {spec.folder!r}) is already declared")
    if spec.graphql != "Manifest" and any(
        other.graphql == spec.graphql and other.node != spec.node for other in KINDS.values()
    ):
        raise ValueError(f"GraphQL type {spec.graphql!r} belongs to another kind's node")
    KINDS[spec.name] = spec
    KIND_BY_FOLDER[spec.folder] = spec

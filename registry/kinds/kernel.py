"""The eight kernel-benchmark kinds of KernelIndex v1alpha1, field for field with the upstream schemas,
plus the refinements those schemas cannot express (marked "refinement")."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import ConfigDict, Field, model_validator

from kernelindex.registry.kinds.common import (
    API_VERSION,
    DigestStr,
    Duration,
    GitCommit,
    Identifier,
    Link,
    Metadata,
    MetadataName,
    NonNegativeFloat,
    PositiveFloat,
    PositiveSafeInt,
    Ratio,
    SafeInt,
    SignedSafeInt,
    Slug,
    Str50,
    Str100,
    Str200,
    Str500,
    Str1000,
    Str2000,
    Strict,
    Timestamp,
    UriDigest,
)

__all__ = [
    "BenchmarkProtocol",
    "BenchmarkRun",
    "ExecutionEnvironment",
    "ImplementationRevision",
    "OperationSpec",
    "SoftwareProject",
    "WorkloadCase",
    "WorkloadSuite",
]

ApiVersion = Literal["kernelindex.dev/v1alpha1"]
assert API_VERSION == "kernelindex.dev/v1alpha1"


# OperationSpec --------------------------------------------------------------------------------------


class Axis(Strict):
    # The refinement below, said to JSON Schema too (upstream's schemas leave it to the validator).
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"role": {"const": role}}, "required": ["role"]},
                    "then": {"required": [needed]},
                }
                for role, needed in (("constant", "value"), ("derived", "expression"))
            ]
        }
    )

    role: Literal["variable", "constant", "derived"]
    type: Literal["integer"]
    value: SignedSafeInt | None = None
    minimum: SignedSafeInt | None = None
    maximum: SignedSafeInt | None = None
    expression: str | None = Field(default=None, max_length=200, pattern=r"^[a-z0-9_+\-*%/() ]+$")

    @model_validator(mode="after")
    def _role_needs_its_field(self) -> Self:  # refinement
        if self.role == "constant" and self.value is None:
            raise ValueError("a constant axis needs a value")
        if self.role == "derived" and self.expression is None:
            raise ValueError("a derived axis needs an expression")
        return self


class TensorArgument(Strict):
    shape: tuple[SafeInt | Identifier, ...] = Field(min_length=1)
    dtype: Identifier
    layout: Literal["row_major", "col_major", "contiguous", "strided"] | None = None


class ScalarArgument(Strict):
    dtype: Identifier


class Argument(Strict):
    model_config = ConfigDict(json_schema_extra={"oneOf": [{"required": ["tensor"]}, {"required": ["scalar"]}]})

    name: Identifier
    tensor: TensorArgument | None = None
    scalar: ScalarArgument | None = None

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> Self:  # refinement
        if (self.tensor is None) == (self.scalar is None):
            raise ValueError("an argument is exactly one of tensor or scalar")
        return self


class Semantics(Strict):
    expression: Str2000 | None = None
    mutation: Literal["none", "in_place", "destination"]
    determinism: Literal["deterministic", "nondeterministic", "unspecified"]


class ReferenceImplementation(Strict):
    language: Identifier
    artifact: UriDigest | None = None


class OperationSpecSpec(Strict):
    family: Slug
    axes: dict[Identifier, Axis]
    inputs: tuple[Argument, ...] = Field(min_length=1)
    outputs: tuple[Argument, ...] = Field(min_length=1)
    semantics: Semantics
    reference: ReferenceImplementation | None = None


class OperationSpec(Strict):
    api_version: ApiVersion
    kind: Literal["OperationSpec"]
    metadata: Metadata
    spec: OperationSpecSpec


# WorkloadCase / WorkloadSuite ------------------------------------------------------------------------


class TensorData(Strict):
    generator: Identifier
    seed: SafeInt | None = None
    parameters: dict[Identifier, float] | None = None
    artifact: UriDigest | None = None


class WorkloadTensor(Strict):
    shape: tuple[SafeInt, ...] = Field(min_length=1)
    dtype: Identifier
    strides: tuple[SignedSafeInt, ...] | None = None
    alignment_bytes: PositiveSafeInt | None = None
    data: TensorData | None = None


class WorkloadScalar(Strict):
    dtype: Identifier
    value: float


class CaseCorrectness(Strict):
    comparator: Identifier
    max_absolute_error: NonNegativeFloat | None = None
    max_relative_error: NonNegativeFloat | None = None
    required_matched_ratio: Ratio | None = None
    nan_policy: Literal["reject", "exact_match", "ignore"] | None = None
    infinity_policy: Literal["reject", "exact_match", "ignore"] | None = None


class WorkloadCaseSpec(Strict):
    operation_spec_digest: DigestStr
    axes: dict[Identifier, SignedSafeInt]
    tensors: dict[Identifier, WorkloadTensor]
    scalars: dict[Identifier, WorkloadScalar] | None = None
    correctness: CaseCorrectness


class WorkloadCase(Strict):
    api_version: ApiVersion
    kind: Literal["WorkloadCase"]
    metadata: Metadata
    spec: WorkloadCaseSpec


class SuiteCase(Strict):
    external_id: Str200
    axes: dict[Identifier, SignedSafeInt]


class SuiteCorrectness(Strict):
    comparator: Identifier
    description: Str500 | None = None


class Aggregation(Strict):
    metric: Identifier
    statistic: Identifier


class WorkloadSuiteSpec(Strict):
    operation_spec_digest: DigestStr
    cases: tuple[SuiteCase, ...] = Field(min_length=1)
    correctness: SuiteCorrectness
    aggregation: Aggregation


class WorkloadSuite(Strict):
    api_version: ApiVersion
    kind: Literal["WorkloadSuite"]
    metadata: Metadata
    spec: WorkloadSuiteSpec


# SoftwareProject ------------------------------------------------------------------------------------


class ProjectHost(Strict):
    kind: Literal["github", "huggingface", "gitlab", "other"]
    id: Str200


class Package(Strict):
    ecosystem: Identifier
    name: Str200


class SoftwareProjectSpec(Strict):
    name: Str200
    kind: Literal["library", "individual", "vendor"] | None = None
    repository: Link | None = None
    homepage: Link | None = None
    host: ProjectHost | None = None
    packages: tuple[Package, ...] | None = None


class SoftwareProject(Strict):
    api_version: ApiVersion
    kind: Literal["SoftwareProject"]
    metadata: Metadata
    spec: SoftwareProjectSpec


# ImplementationRevision -----------------------------------------------------------------------------


class ProjectRevision(Strict):
    repository: Link | None = None
    commit: GitCommit | None = None
    version: Str100 | None = None
    tree_digest: DigestStr | None = None


class OperationRef(Strict):
    spec_digest: DigestStr


class Callable(Strict):
    language: Identifier
    path: Str500 | None = None
    symbol: Str200 | None = None
    interface: Identifier | None = None


class Support(Strict):
    # Set-like: normalize.py de-duplicates and sorts these before hashing.
    hardware_architectures: tuple[Identifier, ...]
    products_tested: tuple[Str100, ...] | None = None
    axes: tuple[Str200, ...] | None = None
    dtypes: tuple[Identifier, ...]
    layouts: tuple[Str50, ...] | None = None


class SourceIdentity(Strict):
    content_digest: DigestStr
    file_name: Str200 | None = None
    size_bytes: PositiveSafeInt | None = None


class Install(Strict):
    kind: Literal["git", "pip", "package", "container", "source"]
    repository: Link | None = None
    commit: GitCommit | None = None
    package: Str200 | None = None
    version: Str100 | None = None
    command: Str1000 | None = None


class BuildVariant(Strict):
    name: MetadataName
    install: Install
    requirements: dict[Identifier, Str200] | None = None


class LicenseEvidence(Strict):
    path: Str500
    digest: DigestStr | None = None


class Licensing(Strict):
    declared: Str200 | None = None
    concluded: Str200 | None = None
    evidence: LicenseEvidence | None = None


class ImplementationRevisionSpec(Strict):
    project_revision: ProjectRevision
    operation: OperationRef
    callable: Callable
    support: Support
    source: SourceIdentity | None = None
    build_variants: tuple[BuildVariant, ...] | None = None
    licensing: Licensing


class ImplementationRevision(Strict):
    api_version: ApiVersion
    kind: Literal["ImplementationRevision"]
    metadata: Metadata
    spec: ImplementationRevisionSpec


# BenchmarkProtocol ----------------------------------------------------------------------------------


class Harness(Strict):
    name: Str200
    version: Str100 | None = None
    repository: Link | None = None
    commit: GitCommit | None = None


class Measurement(Strict):
    timer: Identifier
    synchronization: Identifier | None = None
    compile_included: bool | None = None
    setup_included: bool | None = None
    warmup_iterations: SafeInt | None = None
    warmup_duration: Duration | None = None
    measured_iterations: PositiveSafeInt | None = None
    samples: PositiveSafeInt | None = None
    input_regeneration: Identifier | None = None
    outlier_policy: Str500 | None = None
    primary_statistic: Identifier


class ProtocolCorrectness(Strict):
    reference: Str500
    comparator: Identifier


class DevicePolicy(Strict):
    clocks_locked: bool | None = None
    power_limit_watts: PositiveFloat | None = None
    persistence_mode: bool | None = None


class Comparability(Strict):
    family: Identifier
    notes: Str1000 | None = None


class BenchmarkProtocolSpec(Strict):
    harness: Harness
    measurement: Measurement
    correctness: ProtocolCorrectness | None = None
    device_policy: DevicePolicy | None = None
    comparability: Comparability | None = None


class BenchmarkProtocol(Strict):
    api_version: ApiVersion
    kind: Literal["BenchmarkProtocol"]
    metadata: Metadata
    spec: BenchmarkProtocolSpec


# ExecutionEnvironment -------------------------------------------------------------------------------


class Hardware(Strict):
    vendor: Identifier
    product: Str200
    architecture: Identifier
    form_factor: Str100 | None = None
    memory_bytes: PositiveSafeInt | None = None
    count: PositiveSafeInt | None = None
    interconnect: Str200 | None = None


class Framework(Strict):
    name: Identifier
    version: Str100


class Software(Strict):
    operating_system: Str200 | None = None
    kernel: Str200 | None = None
    driver: Str100 | None = None
    cuda_toolkit: Str100 | None = None
    compiler: Str200 | None = None
    framework: Framework | None = None
    libraries: dict[Identifier, Str100] | None = None


class Settings(Strict):
    clocks_locked: bool | None = None
    power_limit_watts: PositiveFloat | None = None
    persistence_mode: bool | None = None
    ecc_enabled: bool | None = None
    environment_variables: dict[Str200, Str500] | None = None


class ExecutionEnvironmentSpec(Strict):
    hardware: Hardware
    software: Software
    settings: Settings | None = None
    image_digest: DigestStr | None = None


class ExecutionEnvironment(Strict):
    api_version: ApiVersion
    kind: Literal["ExecutionEnvironment"]
    metadata: Metadata
    spec: ExecutionEnvironmentSpec


# BenchmarkRun ---------------------------------------------------------------------------------------

RunStatus = Literal[
    "passed",
    "incorrect_shape",
    "incorrect_dtype",
    "incorrect_numerical",
    "compile_error",
    "runtime_error",
    "timeout",
    "resource_exceeded",
    "invalid_reference",
    "policy_violation",
    "suspected_reward_hack",
    "incomplete_evidence",
    "revoked",
]


class RunCorrectness(Strict):
    comparator: Identifier
    maximum_absolute_error: NonNegativeFloat | None = None
    maximum_relative_error: NonNegativeFloat | None = None
    matched_ratio: Ratio | None = None


class LatencyNs(Strict):
    model_config = ConfigDict(json_schema_extra={"anyOf": [{"required": ["median"]}, {"required": ["mean"]}]})

    median: Duration | None = None
    mean: Duration | None = None
    p05: Duration | None = None
    p95: Duration | None = None
    minimum: Duration | None = None
    maximum: Duration | None = None
    mad: Duration | None = None
    confidence95: tuple[Duration, Duration] | None = None  # refinement: exactly [low, high]

    @model_validator(mode="after")
    def _central_value(self) -> Self:  # refinement
        if self.median is None and self.mean is None:
            raise ValueError("latencyNs needs a median or a mean")
        return self


class Timing(Strict):
    primary_statistic: Identifier
    samples: PositiveSafeInt | None = None
    latency_ns: LatencyNs
    raw_samples: UriDigest | None = None


class RunMeasurement(Strict):
    metric: Identifier
    unit: Identifier
    statistic: Identifier
    value: float
    sample_count: PositiveSafeInt | None = None


class RunSourceNative(Strict):
    source: Slug
    benchmark: Str200 | None = None
    external_id: Str500 | None = None
    metrics: dict[Identifier, float] | None = None


class HarnessRef(Strict):
    repository: Link
    commit: GitCommit


class Evidence(Strict):
    logs: UriDigest | None = None
    raw_samples: UriDigest | None = None
    harness: HarnessRef | None = None


class BenchmarkRunSpec(Strict):
    implementation_digest: DigestStr
    workload_digest: DigestStr
    protocol_digest: DigestStr
    environment_digest: DigestStr
    status: RunStatus
    correctness: RunCorrectness | None = None
    timing: Timing | None = None
    measurements: tuple[RunMeasurement, ...] | None = None
    source_native: RunSourceNative | None = None
    evidence: Evidence | None = None
    observed_at: Timestamp


class BenchmarkRun(Strict):
    api_version: ApiVersion
    kind: Literal["BenchmarkRun"]
    metadata: Metadata
    spec: BenchmarkRunSpec

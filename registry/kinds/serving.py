"""The five LLM-serving kinds of KernelIndex v1alpha1, field for field with the upstream schemas."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kernelindex.registry.kinds.common import (
    DigestStr,
    GitCommit,
    Identifier,
    Link,
    Metadata,
    PositiveFloat,
    PositiveSafeInt,
    Slug,
    Str100,
    Str120,
    Str200,
    Str500,
    Strict,
    Timestamp,
)
from kernelindex.registry.kinds.kernel import ApiVersion, RunMeasurement

__all__ = [
    "ModelRevision",
    "ServingConfiguration",
    "ServingRun",
    "ServingStackRevision",
    "ServingWorkload",
]


# ModelRevision --------------------------------------------------------------------------------------


class ModelRepository(Strict):
    host: Literal["huggingface", "github", "other"]
    id: Str200
    revision: Str100 | None = None


class Tokenizer(Strict):
    name: Str200 | None = None
    revision: Str100 | None = None
    digest: DigestStr | None = None


class ModelRevisionSpec(Strict):
    model: Str200
    repository: ModelRepository | None = None
    tokenizer: Tokenizer | None = None
    architecture: Str100 | None = None
    parameter_count: PositiveSafeInt | None = None
    context_length: PositiveSafeInt | None = None
    modality: Identifier | None = None
    license: Str200 | None = None


class ModelRevision(Strict):
    api_version: ApiVersion
    kind: Literal["ModelRevision"]
    metadata: Metadata
    spec: ModelRevisionSpec


# ServingStackRevision -------------------------------------------------------------------------------


class StackProject(Strict):
    name: Str200
    repository: Link | None = None


class StackRevision(Strict):
    version: Str120 | None = None
    commit: GitCommit | None = None
    container_digest: DigestStr | None = None


class ServingStackRevisionSpec(Strict):
    project: StackProject
    revision: StackRevision
    backends: tuple[Identifier, ...] | None = Field(default=None, max_length=8)
    api_protocol: Identifier | None = None
    license: Str200 | None = None


class ServingStackRevision(Strict):
    api_version: ApiVersion
    kind: Literal["ServingStackRevision"]
    metadata: Metadata
    spec: ServingStackRevisionSpec


# ServingConfiguration -------------------------------------------------------------------------------


class Parallelism(Strict):
    tensor: PositiveSafeInt | None = None
    pipeline: PositiveSafeInt | None = None
    data: PositiveSafeInt | None = None
    expert: PositiveSafeInt | None = None
    context: PositiveSafeInt | None = None


class KvCache(Strict):
    dtype: Identifier | None = None
    capacity_tokens: PositiveSafeInt | None = None


class Limits(Strict):
    max_sequence_length: PositiveSafeInt | None = None
    max_batch_size: PositiveSafeInt | None = None
    max_num_tokens: PositiveSafeInt | None = None


class Speculative(Strict):
    method: Identifier
    draft_model: Str200 | None = None


class ServingConfigurationSpec(Strict):
    stack_digest: DigestStr
    dtype: Identifier | None = None
    quantization: Identifier | None = None
    parallelism: Parallelism | None = None
    attention_backend: Identifier | None = None
    kv_cache: KvCache | None = None
    limits: Limits | None = None
    speculative: Speculative | None = None
    options: dict[Identifier, Str500] | None = None


class ServingConfiguration(Strict):
    api_version: ApiVersion
    kind: Literal["ServingConfiguration"]
    metadata: Metadata
    spec: ServingConfigurationSpec


# ServingWorkload ------------------------------------------------------------------------------------


class Dataset(Strict):
    name: Str200
    digest: DigestStr | None = None


class TokenDistribution(Strict):
    distribution: Identifier
    mean: PositiveFloat | None = None
    maximum: PositiveSafeInt | None = None
    artifact_digest: DigestStr | None = None


class Tokens(Strict):
    prompt: TokenDistribution | None = None
    output: TokenDistribution | None = None


class Slo(Strict):
    metric: Identifier
    statistic: Identifier
    operator: Literal["<=", "<"]
    value: PositiveFloat
    unit: Identifier


class Sampling(Strict):
    temperature: float | None = None
    seeded: bool | None = None


class ServingWorkloadSpec(Strict):
    dataset: Dataset | None = None
    tokens: Tokens | None = None
    streaming: bool
    load_generation: Literal["open_loop", "closed_loop", "offline"]
    arrival: Identifier | None = None
    request_rate_per_second: PositiveFloat | None = None
    slo: tuple[Slo, ...] | None = Field(default=None, max_length=8)
    sampling: Sampling | None = None
    duration_seconds: PositiveSafeInt | None = None
    request_count: PositiveSafeInt | None = None


class ServingWorkload(Strict):
    api_version: ApiVersion
    kind: Literal["ServingWorkload"]
    metadata: Metadata
    spec: ServingWorkloadSpec


# ServingRun -----------------------------------------------------------------------------------------


class Topology(Strict):
    accelerator_vendor: Identifier | None = None
    accelerator_model: Str200
    accelerators_per_node: PositiveSafeInt
    node_count: PositiveSafeInt
    interconnect: Str200 | None = None


class ServingHarness(Strict):
    name: Identifier
    version: Str100


class ServingSourceNative(Strict):
    source: Slug
    benchmark: Str200
    scenario: Identifier
    division: Identifier
    category: Identifier
    external_id: Str500
    metrics: dict[Identifier, float | Str500] | None = None


class ServingRunSpec(Strict):
    model_digest: DigestStr
    configuration_digest: DigestStr
    workload_digest: DigestStr
    topology: Topology
    harness: ServingHarness
    placement: Identifier | None = None
    quality_policy: Identifier
    status: Literal["valid", "invalid", "incomplete_evidence"]
    measurements: tuple[RunMeasurement, ...] = Field(min_length=1, max_length=64)
    source_native: ServingSourceNative | None = None
    caveats: tuple[Str500, ...] | None = Field(default=None, max_length=16)
    observed_at: Timestamp


class ServingRun(Strict):
    api_version: ApiVersion
    kind: Literal["ServingRun"]
    metadata: Metadata
    spec: ServingRunSpec

"""The registry's lifecycle kinds: facts about runs, content-addressed like runs.

Upstream keeps these in database columns; here they are manifests, so who said what and
when comes from git. Attestations are open to anyone and never change trust; the other
three count only when the commit that introduced them is signed by a maintainer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kernelindex.registry.kinds.common import DigestStr, Duration, Link, Metadata, MetadataName, Str500, Strict
from kernelindex.registry.kinds.kernel import ApiVersion

__all__ = ["Attestation", "Retraction", "Supersession", "Verification"]


class AttestationSpec(Strict):
    run_digest: DigestStr = Field(description="The digest of the BenchmarkRun this attestation is about.")
    type: Literal["reproduced", "could_not_reproduce", "environment_note", "regression_observed"]
    body: str = Field(min_length=1, max_length=2000, description="What was done and seen, in words.")
    evidence_url: Link | None = Field(default=None, description="Where the evidence (logs, a notebook) is.")
    observed_ns: Duration | None = Field(default=None, description="The latency the attester measured, if any.")
    environment_summary: Str500 | None = Field(default=None, description="The attester's hardware and software.")


class Attestation(Strict):
    api_version: ApiVersion
    kind: Literal["Attestation"]
    metadata: Metadata
    spec: AttestationSpec


class RetractionSpec(Strict):
    run_digest: DigestStr = Field(description="The digest of the BenchmarkRun retracted.")
    reason: str = Field(min_length=1, max_length=2000, description="Why, in words readers will see on the run.")


class Retraction(Strict):
    api_version: ApiVersion
    kind: Literal["Retraction"]
    metadata: Metadata
    spec: RetractionSpec


class SupersessionSpec(Strict):
    run_digest: DigestStr = Field(description="The digest of the corrected BenchmarkRun, which replaces...")
    supersedes_digest: DigestStr = Field(description="...the digest of the BenchmarkRun it corrects.")
    reason: str = Field(min_length=1, max_length=2000, description="What was wrong, in words.")


class Supersession(Strict):
    api_version: ApiVersion
    kind: Literal["Supersession"]
    metadata: Metadata
    spec: SupersessionSpec


class VerificationSpec(Strict):
    run_digest: DigestStr = Field(description="The digest of the BenchmarkRun verified.")
    rerun_digest: DigestStr = Field(
        description="The digest of the rerun: a BenchmarkRun in the same cohort, measured by the registry's runner."
    )
    runner: MetadataName = Field(description='Who reran it; two different runners make a run "replicated".')


class Verification(Strict):
    api_version: ApiVersion
    kind: Literal["Verification"]
    metadata: Metadata
    spec: VerificationSpec

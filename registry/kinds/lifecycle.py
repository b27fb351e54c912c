"""The registry's lifecycle kinds (DESIGN section 4): facts about runs, content-addressed like runs.

Upstream keeps these in database columns; here they are manifests, so who said what and
when comes from git. Attestations are open to anyone and never change trust; the other
three count only when the commit that introduced them is signed by a maintainer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from registry.kinds.common import DigestStr, Duration, Link, Metadata, MetadataName, Str500, Strict
from registry.kinds.kernel import ApiVersion

__all__ = ["Attestation", "Retraction", "Supersession", "Verification"]


class AttestationSpec(Strict):
    run_digest: DigestStr
    type: Literal["reproduced", "could_not_reproduce", "environment_note", "regression_observed"]
    body: str = Field(min_length=1, max_length=2000)
    evidence_url: Link | None = None
    observed_ns: Duration | None = None
    environment_summary: Str500 | None = None


class Attestation(Strict):
    api_version: ApiVersion
    kind: Literal["Attestation"]
    metadata: Metadata
    spec: AttestationSpec


class RetractionSpec(Strict):
    run_digest: DigestStr
    reason: str = Field(min_length=1, max_length=2000)


class Retraction(Strict):
    api_version: ApiVersion
    kind: Literal["Retraction"]
    metadata: Metadata
    spec: RetractionSpec


class SupersessionSpec(Strict):
    run_digest: DigestStr  # the corrected run, which replaces...
    supersedes_digest: DigestStr  # ...this one
    reason: str = Field(min_length=1, max_length=2000)


class Supersession(Strict):
    api_version: ApiVersion
    kind: Literal["Supersession"]
    metadata: Metadata
    spec: SupersessionSpec


class VerificationSpec(Strict):
    run_digest: DigestStr  # the run being verified
    rerun_digest: DigestStr  # a BenchmarkRun in the same cohort, measured by the registry's runner
    runner: MetadataName  # who reran it; two different runners make a run "replicated"


class Verification(Strict):
    api_version: ApiVersion
    kind: Literal["Verification"]
    metadata: Metadata
    spec: VerificationSpec

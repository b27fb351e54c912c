"""The enums of the kernel schema: evidence levels, run statuses, why a run is not ranked, record causes,
citation formats, manifest kinds (one value per kind's spec, `kernelindex.registry.kind_specs`) and the orders of
lists. Where a vocabulary comes from manifests
(kinds, attestation types), its values are spelled as manifests spell them, so answers read the same."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import strawberry

from kernelindex.registry.cohorts import Trust as DomainTrust
from kernelindex.registry.kinds import KINDS

__all__ = [
    "ArtifactRole",
    "AttestationType",
    "CitationFormat",
    "CohortProfile",
    "EntryOrder",
    "IneligibilityReason",
    "ManifestKind",
    "RecordCause",
    "RecordOrder",
    "RunOrder",
    "RunStatus",
    "Trust",
    "WorkloadKind",
    "enum_of_trust",
    "trust_of_enum",
]

_v = strawberry.enum_value


@strawberry.enum(
    description="How well a run's result is evidenced, weakest first (each level includes the ones below). "
    "Attestations (notes by anyone) never change it; only maintainer-signed verifications raise it past "
    "REPRODUCIBLE."
)
class Trust(enum.Enum):
    REPORTED = _v("reported", description="Only reported by its source: no public source code, or no raw evidence.")
    REPRODUCIBLE = _v(
        "reproducible",
        description="Public source code and raw evidence (samples or logs): anyone could rerun and check it.",
    )
    VERIFIED = _v("verified", description="Rerun once by the registry's runner (a signed verification).")
    REPLICATED = _v("replicated", description="Rerun by at least two independent runners (signed verifications).")


_TRUST = {
    DomainTrust.REPORTED: Trust.REPORTED,
    DomainTrust.REPRODUCIBLE: Trust.REPRODUCIBLE,
    DomainTrust.VERIFIED: Trust.VERIFIED,
    DomainTrust.REPLICATED: Trust.REPLICATED,
}
_DOMAIN_TRUST = {v: k for k, v in _TRUST.items()}


@strawberry.enum(description="How runs of a cohort are compared.")
class CohortProfile(enum.Enum):
    SOURCE_NATIVE = _v(
        "source_native",
        description="Some run was reported by an upstream benchmark in its own terms: runs rank by value alone.",
    )
    STRICT_EXACT = _v(
        "strict_exact",
        description="Every run was measured here under the same protocol: runs whose 95% confidence "
        "intervals overlap tie.",
    )


@strawberry.enum(description="Why a cohort's record changed hands.")
class RecordCause(enum.Enum):
    NEW_RUN = _v("new_run", description="A new eligible run beat the record.")
    RETRACTION = _v("retraction", description="The holder was retracted: the record went to the next best run.")


@strawberry.enum(description="A citation's format.")
class CitationFormat(enum.Enum):
    TEXT = _v("TEXT", description="One line of text, for a footnote or a README.")
    BIBTEX = _v("BIBTEX", description="A BibTeX `@misc` entry (the publisher is a corporate author, braced).")
    CSL_JSON = _v("CSL_JSON", description="CSL-JSON (Zotero, Pandoc's citeproc): one item, as a JSON text.")


@strawberry.enum(description="A kernel run's status as its source reported it; only PASSED runs can rank.")
class RunStatus(enum.Enum):
    PASSED = _v("passed", description="Ran and matched the reference within the workload's tolerance.")
    INCORRECT_SHAPE = _v("incorrect_shape", description="An output had the wrong shape.")
    INCORRECT_DTYPE = _v("incorrect_dtype", description="An output had the wrong data type.")
    INCORRECT_NUMERICAL = _v("incorrect_numerical", description="Outputs differed from the reference beyond tolerance.")
    COMPILE_ERROR = _v("compile_error", description="The implementation did not compile.")
    RUNTIME_ERROR = _v("runtime_error", description="The implementation failed while running.")
    TIMEOUT = _v("timeout", description="The run exceeded its time limit.")
    RESOURCE_EXCEEDED = _v("resource_exceeded", description="The run exceeded a memory or resource limit.")
    INVALID_REFERENCE = _v("invalid_reference", description="The reference it was checked against was invalid.")
    POLICY_VIOLATION = _v("policy_violation", description="The source found it broke the benchmark's rules.")
    SUSPECTED_REWARD_HACK = _v(
        "suspected_reward_hack", description="The source suspects it games the benchmark rather than computing."
    )
    INCOMPLETE_EVIDENCE = _v("incomplete_evidence", description="The source did not publish enough to judge it.")
    REVOKED = _v("revoked", description="The source withdrew it.")


def _status_reason(status: RunStatus) -> object:
    return _v("STATUS_" + status.name, description=f"Its status is {status.name}, not PASSED.")


@strawberry.enum(
    description="Why a run is not ranked, in this order when there are several (a run with none is eligible)."
)
class IneligibilityReason(enum.Enum):
    UNPUBLISHED = _v("UNPUBLISHED", description="Not on main yet (a pull request previewed with registry(at:)).")
    STATUS_INCORRECT_SHAPE = _status_reason(RunStatus.INCORRECT_SHAPE)
    STATUS_INCORRECT_DTYPE = _status_reason(RunStatus.INCORRECT_DTYPE)
    STATUS_INCORRECT_NUMERICAL = _status_reason(RunStatus.INCORRECT_NUMERICAL)
    STATUS_COMPILE_ERROR = _status_reason(RunStatus.COMPILE_ERROR)
    STATUS_RUNTIME_ERROR = _status_reason(RunStatus.RUNTIME_ERROR)
    STATUS_TIMEOUT = _status_reason(RunStatus.TIMEOUT)
    STATUS_RESOURCE_EXCEEDED = _status_reason(RunStatus.RESOURCE_EXCEEDED)
    STATUS_INVALID_REFERENCE = _status_reason(RunStatus.INVALID_REFERENCE)
    STATUS_POLICY_VIOLATION = _status_reason(RunStatus.POLICY_VIOLATION)
    STATUS_SUSPECTED_REWARD_HACK = _status_reason(RunStatus.SUSPECTED_REWARD_HACK)
    STATUS_INCOMPLETE_EVIDENCE = _status_reason(RunStatus.INCOMPLETE_EVIDENCE)
    STATUS_REVOKED = _status_reason(RunStatus.REVOKED)
    RETRACTED = _v("RETRACTED", description="A maintainer retracted it (`retraction` says why).")
    SUPERSEDED = _v("SUPERSEDED", description="A corrected run replaces it (`supersededBy`).")
    MISSING_PRIMARY_METRIC = _v(
        "MISSING_PRIMARY_METRIC", description="It reports no value its protocol ranks by (`primary` is null)."
    )


@strawberry.enum(description="A workload's kind: one case, or a suite of cases measured together.")
class WorkloadKind(enum.Enum):
    WorkloadCase = _v("WorkloadCase", description="One input shape and configuration (a WorkloadCase manifest).")
    WorkloadSuite = _v("WorkloadSuite", description="Several cases, measured as one (a WorkloadSuite manifest).")


def _manifest_kind() -> type[enum.Enum]:
    """`ManifestKind`, made from the kinds' specs: a value per kind, in their order, described by its `summary`."""
    members = {name: _v(name, description=spec.summary) for name, spec in KINDS.items()}
    made = enum.Enum("ManifestKind", members, module=__name__)  # type: ignore[misc]
    description = "A manifest's kind, spelled as manifests spell it (the manifest's `kind`)."
    return strawberry.enum(made, description=description)


if TYPE_CHECKING:

    class ManifestKind(enum.Enum):
        """A manifest's kind (a value per kind of `KINDS`, made when the module is imported)."""

else:
    ManifestKind = _manifest_kind()


@strawberry.enum(description="What an attestation says about a run, spelled as the manifest spells it.")
class AttestationType(enum.Enum):
    reproduced = _v("reproduced", description="Someone reran it and got a consistent value.")
    could_not_reproduce = _v("could_not_reproduce", description="Someone tried and could not reproduce it.")
    environment_note = _v("environment_note", description="A note about the environment it ran in.")
    regression_observed = _v("regression_observed", description="A later version measured slower.")


@strawberry.enum(description="What a file of evidence published with a run is, spelled as the run pages say it.")
class ArtifactRole(enum.Enum):
    raw_samples = _v("raw_samples", description="The raw timing samples the statistics were computed from.")
    logs = _v("logs", description="The benchmark's logs.")
    harness = _v("harness", description="The harness's repository (`uri`) at a commit (`digest`).")


@strawberry.enum(description="The order of a list of runs.")
class RunOrder(enum.Enum):
    NEWEST_OBSERVED = _v("newest_observed", description="Newest measurement (`observedAt`) first; the default.")
    OLDEST_OBSERVED = _v("oldest_observed", description="Oldest measurement first.")
    NEWEST_PUBLISHED = _v(
        "newest_published", description="Newest publication on main (`publishedAt`) first; unpublished runs last."
    )
    OLDEST_PUBLISHED = _v("oldest_published", description="Oldest publication first; unpublished runs last.")
    LOWEST_VALUE = _v(
        "lowest_value",
        description="Lowest primary value first (latencies compare across time units: 8 µs before 0.01 ms); runs "
        "of other units after, grouped by unit; runs without a primary value last.",
    )
    HIGHEST_VALUE = _v(
        "highest_value", description="Highest primary value first, grouped as LOWEST_VALUE; runs without one last."
    )


@strawberry.enum(description="The order of a cohort's leaderboard entries.")
class EntryOrder(enum.Enum):
    RANK = _v("rank", description="Best first, as ranking-v1 presents them (ties by trust, then recency); default.")
    RANK_REVERSED = _v("rank_reversed", description="Worst first: the reverse of RANK.")
    NEWEST_OBSERVED = _v("newest_observed", description="Newest measurement first.")
    NEWEST_PUBLISHED = _v("newest_published", description="Newest publication on main first.")


@strawberry.enum(description="The order of the records ledger.")
class RecordOrder(enum.Enum):
    NEWEST = _v("newest", description="The most recent change of holder (`since`) first; the default.")
    OLDEST = _v("oldest", description="The longest-standing record first.")
    NEWEST_PUBLISHED = _v(
        "newest_published", description="The holder published most recently on main first (what a feed shows)."
    )
    LARGEST_COHORT = _v("largest_cohort", description="Cohorts with the most runs first.")


def trust_of_enum(trust: Trust) -> DomainTrust:
    return _DOMAIN_TRUST[trust]


def enum_of_trust(trust: DomainTrust) -> Trust:
    return _TRUST[trust]

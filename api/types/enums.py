"""The enums of the kernel schema: evidence levels, run statuses, record causes, citation formats."""

from __future__ import annotations

import enum

import strawberry

from registry.cohorts import Trust as DomainTrust

__all__ = ["CitationFormat", "CohortProfile", "RecordCause", "RunStatus", "Trust", "trust_of_enum"]


@strawberry.enum(description="Evidence level of a run, weakest first: attestations never change it.")
class Trust(enum.Enum):
    REPORTED = "reported"
    REPRODUCIBLE = "reproducible"
    VERIFIED = "verified"
    REPLICATED = "replicated"


_TRUST = {
    DomainTrust.REPORTED: Trust.REPORTED,
    DomainTrust.REPRODUCIBLE: Trust.REPRODUCIBLE,
    DomainTrust.VERIFIED: Trust.VERIFIED,
    DomainTrust.REPLICATED: Trust.REPLICATED,
}
_DOMAIN_TRUST = {v: k for k, v in _TRUST.items()}


@strawberry.enum(description="How runs of a cohort compare (upstream's comparison profiles).")
class CohortProfile(enum.Enum):
    SOURCE_NATIVE = "source_native"
    STRICT_EXACT = "strict_exact"


@strawberry.enum
class RecordCause(enum.Enum):
    NEW_RUN = "new_run"
    RETRACTION = "retraction"


@strawberry.enum
class CitationFormat(enum.Enum):
    TEXT = "TEXT"
    BIBTEX = "BIBTEX"
    CSL_JSON = "CSL_JSON"


@strawberry.enum(description="A run's status as its source reported it.")
class RunStatus(enum.Enum):
    PASSED = "passed"
    INCORRECT_SHAPE = "incorrect_shape"
    INCORRECT_DTYPE = "incorrect_dtype"
    INCORRECT_NUMERICAL = "incorrect_numerical"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    RESOURCE_EXCEEDED = "resource_exceeded"
    INVALID_REFERENCE = "invalid_reference"
    POLICY_VIOLATION = "policy_violation"
    SUSPECTED_REWARD_HACK = "suspected_reward_hack"
    INCOMPLETE_EVIDENCE = "incomplete_evidence"
    REVOKED = "revoked"


def trust_of_enum(trust: Trust) -> DomainTrust:
    return _DOMAIN_TRUST[trust]


def enum_of_trust(trust: DomainTrust) -> Trust:
    return _TRUST[trust]

"""The API's enums a read command's options take, as choices (an unknown value is a usage error, exit 2, before
anything is asked). Each mirrors the GraphQL enum of the same name; a test holds them to the schema."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RecordOrder", "RunOrder", "RunStatus", "ServingRunStatus", "Trust"]


class Trust(StrEnum):
    """How far a run's result has been checked by someone other than its submitter."""

    REPORTED = "REPORTED"
    REPRODUCIBLE = "REPRODUCIBLE"
    VERIFIED = "VERIFIED"
    REPLICATED = "REPLICATED"


class RunStatus(StrEnum):
    """A kernel run's outcome."""

    PASSED = "PASSED"
    INCORRECT_SHAPE = "INCORRECT_SHAPE"
    INCORRECT_DTYPE = "INCORRECT_DTYPE"
    INCORRECT_NUMERICAL = "INCORRECT_NUMERICAL"
    COMPILE_ERROR = "COMPILE_ERROR"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    RESOURCE_EXCEEDED = "RESOURCE_EXCEEDED"
    INVALID_REFERENCE = "INVALID_REFERENCE"
    POLICY_VIOLATION = "POLICY_VIOLATION"
    SUSPECTED_REWARD_HACK = "SUSPECTED_REWARD_HACK"
    INCOMPLETE_EVIDENCE = "INCOMPLETE_EVIDENCE"
    REVOKED = "REVOKED"


class RunOrder(StrEnum):
    """The order of `runs`."""

    NEWEST_OBSERVED = "NEWEST_OBSERVED"
    OLDEST_OBSERVED = "OLDEST_OBSERVED"
    NEWEST_PUBLISHED = "NEWEST_PUBLISHED"
    OLDEST_PUBLISHED = "OLDEST_PUBLISHED"
    LOWEST_VALUE = "LOWEST_VALUE"
    HIGHEST_VALUE = "HIGHEST_VALUE"


class RecordOrder(StrEnum):
    """The order of `records`."""

    NEWEST = "NEWEST"
    OLDEST = "OLDEST"
    NEWEST_PUBLISHED = "NEWEST_PUBLISHED"
    LARGEST_COHORT = "LARGEST_COHORT"


class ServingRunStatus(StrEnum):
    """A serving run's outcome."""

    VALID = "VALID"
    INVALID = "INVALID"
    INCOMPLETE_EVIDENCE = "INCOMPLETE_EVIDENCE"

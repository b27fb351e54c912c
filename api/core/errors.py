"""Every GraphQL error gets an `extensions.code`; only unexpected faults are masked.

A client's mistake keeps its message and says which mistake it is: a document that does
not parse, one that does not validate, one over a limit, variables or arguments that do not
coerce, an operation that cannot be chosen. The registry's own expected errors carry their class
name in SCREAMING_SNAKE_CASE (`REVISION_NOT_FOUND`). Anything else is a fault of the server: its
message is replaced by "Unexpected error." (with `INTERNAL_SERVER_ERROR`) and it is logged. The codes
are listed, with their meaning, in `kernelindex.core.codes`.

Where an error comes from decides its code: the parser raises `GraphQLSyntaxError`; validation
errors are recorded as validation ends; execution errors without a path come from coercing the
variables or choosing the operation; those with a path from a resolver.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator

from graphql import GraphQLError, GraphQLSyntaxError
from strawberry.extensions import SchemaExtension

from kernelindex import registry
from kernelindex.core.codes import (
    BAD_USER_INPUT,
    INTERNAL,
    OPERATION_RESOLUTION_FAILURE,
    PARSE_FAILED,
    TOO_MANY_TOKENS,
    TOO_MANY_VALIDATION_ERRORS,
    VALIDATION_FAILED,
)

__all__ = [
    "UNEXPECTED",
    "BadUserInput",
    "ErrorCodes",
    "access_date",
    "code_of_class",
    "coded",
]

log = logging.getLogger("kernelindex")

UNEXPECTED = "Unexpected error."

# The fixed wording of the limits graphql-core and strawberry enforce (a test asserts each code).
_TOKENS = "tokens. Parsing aborted."
_VALIDATION_LIMITS = (
    ("Validation aborted.", TOO_MANY_VALIDATION_ERRORS),
    ("exceeds maximum operation depth of", "QUERY_TOO_DEEP"),
    ("aliases found. Allowed:", "TOO_MANY_ALIASES"),
)
# Execution errors without a path, by graphql-core's fixed openings.
_VARIABLE = "Variable '$"
_OPERATION = ("Unknown operation named", "Must provide an operation", "Must provide operation name")


class BadUserInput(registry.RegistryError, ValueError):
    """An argument value a resolver cannot use (the schema's types let it through)."""


def access_date(text: str) -> dt.date:
    """A citation's access date, `YYYY-MM-DD`.

    Raises:
        BadUserInput: anything else.
    """
    try:
        if len(text) != 10:
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise BadUserInput(f"accessed must be a date as YYYY-MM-DD (got {text[:40]!r})") from None


def code_of_class(error: BaseException) -> str:
    """`RevisionNotFound` -> `REVISION_NOT_FOUND`."""
    name = type(error).__name__
    return "".join("_" + c if c.isupper() and i else c for i, c in enumerate(name)).upper()


def coded(message: str, code: str, **extensions: object) -> GraphQLError:
    """A request error with its code (for rules and limits of our own)."""
    return GraphQLError(message, extensions={"code": code, **extensions})


def _classify(error: GraphQLError, *, validation: bool) -> tuple[str, bool]:
    """(code, mask) of one error; `validation` when it was reported by validation."""
    given = (error.extensions or {}).get("code")
    if isinstance(given, str):
        return given, False
    original = error.original_error
    if isinstance(original, registry.RegistryError):
        return code_of_class(original), False
    if isinstance(error, GraphQLSyntaxError):
        return (TOO_MANY_TOKENS if error.message.endswith(_TOKENS) else PARSE_FAILED), False
    if validation:
        for needle, code in _VALIDATION_LIMITS:
            if needle in error.message:
                return code, False
        return VALIDATION_FAILED, False
    if not error.path:
        if error.message.startswith(_VARIABLE):
            return BAD_USER_INPUT, False
        if error.message.startswith(_OPERATION):
            return OPERATION_RESOLUTION_FAILURE, False
        return INTERNAL, True
    # With a path: a resolver's. Arguments are coerced as the field executes ("Argument 'first' ...");
    # graphql-core raises those as GraphQLError. Every other failure there is ours.
    if isinstance(original, GraphQLError) and error.message.startswith("Argument '"):
        return BAD_USER_INPUT, False
    return INTERNAL, True


class ErrorCodes(SchemaExtension):
    """Give every error of a result its code, and mask the unexpected ones."""

    def __init__(self) -> None:
        self._validation: set[int] = set()

    def on_validate(self) -> Iterator[None]:
        yield
        self._validation = {id(error) for error in self.execution_context.pre_execution_errors or ()}

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is None or not result.errors:
            return
        result.errors = [self._processed(error) for error in result.errors]

    def _processed(self, error: GraphQLError) -> GraphQLError:
        code, mask = _classify(error, validation=id(error) in self._validation)
        if mask:
            log.error(
                "kernelindex: unexpected error at %s: %s", error.path, error.message, exc_info=error.original_error
            )
            return GraphQLError(
                UNEXPECTED,
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                extensions={"code": INTERNAL},
            )
        if (error.extensions or {}).get("code") != code:
            # Errors can be shared (the validation cache keeps them): a copy, never an edit.
            return GraphQLError(
                error.message,
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                original_error=error.original_error,
                extensions={**(error.extensions or {}), "code": code},
            )
        return error

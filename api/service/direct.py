"""A query met before, answered without strawberry's per-request pipeline when that pipeline would change nothing.

For every request strawberry makes an execution context and five extensions, and runs their parse,
validate, execute and operation hooks around graphql-core's executor: ~0.15-0.25 ms of a first-time
leaderboard's ~0.5 ms in process (thread CPU). For a document already parsed and validated without errors
(it is in `kernelindex.schema.root.DOCUMENTS`), a query operation, with variables that coerce, a compiled program
(`kernelindex.engine.compiled`) and an estimated cost within the limit, what those hooks do is settled: the parse and
validation caches answer the same document, the token and depth limits passed when it was parsed and
validated, the cost limit only reports `extensions.cost`, and the error codes have no error to code.
`execute_known` then builds the executor and runs the program itself, and returns what strawberry would.

Anything else (a new document, validation errors, another operation type, variables that do not coerce,
a cost over the limit or a search over its limits, a program that gives way) returns None, and the caller
runs the whole pipeline, which answers as it always did. Reads are pure, so running again is harmless.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any, TypeGuard

from graphql import OperationType, get_operation_ast
from strawberry.execution.is_awaitable import optimized_is_awaitable
from strawberry.types import ExecutionResult

from kernelindex.core.context import Context
from kernelindex.engine import compiled
from kernelindex.engine.cost import estimate
from kernelindex.engine.pipeline import charge
from kernelindex.registry.errors import SearchTooLarge
from kernelindex.schema.root import COST_MODEL, DOCUMENTS, LIMITS, schema

__all__ = ["execute_known"]

_PARSE_OPTIONS = repr(sorted({"max_tokens": LIMITS["max_tokens"]}.items()))
"""The parse options strawberry's token limit sets, as `kernelindex.engine.pipeline.DocumentCache` keys documents by
them."""


def _never(_value: Any) -> TypeGuard[AsyncIterable[Any]]:
    return False


_AWAITABLE: Callable[[Any], TypeGuard[Awaitable[Any]]] = optimized_is_awaitable  # type: ignore[assignment]


def execute_known(
    query: str, variables: dict[str, Any], context: Context, operation_name: str | None, root_value: Any
) -> ExecutionResult | None:
    """What `schema.execute_sync` answers, computed without its pipeline; None when the pipeline must run."""
    entry = DOCUMENTS.get((hashlib.sha256(query.encode()).digest(), _PARSE_OPTIONS), count_miss=False)
    if entry is None or entry.validated is None or entry.validated[1]:
        return None
    document = entry.document
    operation = get_operation_ast(document, operation_name)
    if operation is None or operation.operation is not OperationType.QUERY:
        return None
    core = schema._schema
    executor = compiled.CompiledExecutor.build(
        core,
        document,
        root_value,
        context,
        variables,
        operation_name,
        is_awaitable=_AWAITABLE,
        is_async_iterable=_never,
        operation_extensions=None,
    )
    if isinstance(executor, list):  # variables that do not coerce: the pipeline reports them
        return None
    run = compiled.program(executor)
    if run is None:
        return None
    try:
        cost = estimate(core, document, operation, executor.variable_values.coerced, COST_MODEL.at(context.head))
    except SearchTooLarge:
        return None
    limit = LIMITS["max_cost"]
    if context.cost_budget is not None and context.cost_budget < limit:  # a batch's remainder
        limit = context.cost_budget
    if cost > limit:
        return None
    refused = charge(context, cost, limit)
    if refused is not None:
        return ExecutionResult(data=None, errors=refused.errors, extensions=refused.extensions)
    try:
        data = run(executor, executor.root_value)
    except Exception:
        return None
    if executor.collected_errors.errors:
        return None
    compiled.COUNTS["compiled"] += 1
    return ExecutionResult(data=data, errors=None, extensions={"cost": {"requested": cost, "limit": limit}})

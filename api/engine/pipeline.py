"""What a GraphQL request passes through before it executes: a byte-bounded cache of parsed and
validated documents, and the cost limit: what keeps hostile documents from growing the server's memory
or its CPU time without bound.

Strawberry's `ParserCache`/`ValidationCache` count entries and key validation by the document
itself (hashing the whole tree, and keeping every tree alive): 700 distinct 64 KB queries grew a
server to 906 MB. Here one cache keeps, per query text, the document and its validation errors,
and weighs each entry by what its tree holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLSyntaxError,
    get_operation_ast,
    get_variable_values,
    parse,
)
from strawberry.extensions import SchemaExtension

from kernelindex.core.cache import ByteLRU
from kernelindex.core.codes import SEARCH_TOO_LARGE, THROTTLED
from kernelindex.core.errors import coded
from kernelindex.engine.cost import CostModel, estimate
from kernelindex.registry.errors import SearchTooLarge

__all__ = ["TOKEN_BYTES", "CostLimit", "DocumentCache", "ParsedDocument", "charge", "document_weight"]

TOKEN_BYTES = 640
"""What one token of a parsed document holds in memory: its token object and its share of the AST
nodes and locations (measured with tracemalloc on graphql-core 3.3: ~610 bytes per token for a
4,000-token document, ~440 for a typical query), besides the text itself."""


@dataclass(slots=True)
class ParsedDocument:
    document: DocumentNode
    weight: int
    # (the rules it was validated with, the errors): one attribute, so threads swap it whole.
    validated: tuple[tuple[type[ASTValidationRule], ...], list[GraphQLError]] | None = None


def document_weight(query: str, document: DocumentNode) -> int:
    """The bytes a parsed document keeps alive: its text and, per token, its share of the tree."""
    tokens = 0
    token = document.loc.start_token if document.loc else None
    while token is not None:
        tokens += 1
        token = token.next
    return len(query.encode()) + TOKEN_BYTES * tokens + 1024


class DocumentCache(SchemaExtension):
    """Parse and validate a query text once while its entry stays in `cache`."""

    def __init__(self, cache: ByteLRU[tuple[bytes, str], ParsedDocument]) -> None:
        self._cache = cache
        self._entry: ParsedDocument | None = None

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        query = context.query or ""
        key = (hashlib.sha256(query.encode()).digest(), repr(sorted(context.parse_options.items())))
        entry = self._cache.get(key)
        if entry is None:
            try:
                document = parse(query, **context.parse_options)
            except GraphQLSyntaxError:
                # Left to strawberry's own parse, which reports it as the request's error.
                yield
                return
            entry = ParsedDocument(document, document_weight(query, document))
            self._cache.put(key, entry)
        context.graphql_document = entry.document
        self._entry = entry
        yield

    def on_validate(self) -> Iterator[None]:
        from strawberry.schema.schema import validate_document  # a cycle at import time otherwise

        context = self.execution_context
        entry = self._entry
        if entry is not None and context.graphql_document is entry.document:
            rules = tuple(context.validation_rules)
            validated = entry.validated
            if validated is None or validated[0] != rules:
                validated = (rules, validate_document(context.schema._schema, entry.document, rules))
                entry.validated = validated
            context.pre_execution_errors = list(validated[1])
        yield


def charge(context: Any, cost: int, limit: int) -> ExecutionResult | None:
    """Charge an operation's estimated `cost` (at least 1) to the client's budget before it runs
    (`kernelindex.core.budgets`): None when it was paid (or nothing is metered), else the answer that refuses it,
    `THROTTLED`, with the budget in `extensions.cost.throttleStatus`. Both executors call this at the same point:
    after the cost limit, before the first resolver."""
    account = getattr(context, "account", None)
    if account is None or account.charge(max(cost, 1)):
        return None
    context.throttled = True
    seconds = account.status().retry_after
    report = {"requested": cost, "limit": limit, "throttleStatus": account.throttle_status()}
    message = (
        f"throttled: this query costs {cost:,} points and your budget holds "
        f"{report['throttleStatus']['currentlyAvailable']:,}; retry in {seconds} s, or ask for less"
    )
    return ExecutionResult(data=None, errors=[coded(message, THROTTLED)], extensions={"cost": report})


class CostLimit(SchemaExtension):
    """Refuse an operation whose estimated cost (`kernelindex.engine.cost`) is over `limit`, or that searches for a
    query
    over the search limits, before it runs; report the cost of every operation that validates in
    `extensions.cost` ({requested, limit})."""

    def __init__(self, limit: int, model: CostModel) -> None:
        self._limit = limit
        self._model = model
        self._cost: int | None = None
        self._throttled: dict[str, Any] | None = None  # the report of a throttled operation (`charge`)

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        operation = get_operation_ast(document, context.operation_name) if document else None
        if document is not None and operation is not None:
            schema = context.schema._schema
            variables = get_variable_values(schema, operation.variable_definitions or (), context.variables or {})
            # Variables that do not coerce are the execution's to report (BAD_USER_INPUT).
            if not isinstance(variables, list):
                try:
                    # Scans cost the items they touch, at the served head's sizes (kernelindex.engine.cost).
                    head = getattr(context.context, "head", None)
                    model = self._model.at(head) if head is not None else self._model
                    self._cost = estimate(schema, document, operation, variables.coerced, model)
                except SearchTooLarge as exc:
                    context.result = ExecutionResult(data=None, errors=[coded(str(exc), SEARCH_TOO_LARGE)])
                    yield
                    return
                # In a batch, the operations share one limit: this one gets what the earlier ones left.
                budget = getattr(context.context, "cost_budget", None)
                if budget is not None and budget < self._limit:
                    self._limit = budget
                if self._cost > self._limit:
                    context.result = ExecutionResult(
                        data=None,
                        errors=[
                            coded(
                                f"the query's estimated cost is {self._cost:,}, over the limit of {self._limit:,}: "
                                "ask for smaller pages (first:) or fewer fields",
                                "QUERY_TOO_COMPLEX",
                                cost=self._report(),
                            )
                        ],
                    )
                else:
                    refused = charge(context.context, self._cost, self._limit)
                    if refused is not None:
                        self._throttled = (refused.extensions or {}).get("cost")
                        context.result = refused
        yield

    def _report(self) -> dict[str, int | None]:
        return {"requested": self._cost, "limit": self._limit}

    def get_results(self) -> dict[str, Any]:
        if self._throttled is not None:
            return {"cost": self._throttled}
        return {"cost": self._report()} if self._cost is not None else {}

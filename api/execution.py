"""The GraphQL executor: graphql-core's, with scalar fields read without the per-field machinery.

A first-time answer spends most of its time in the executor, not in the registry: for every field
graphql-core builds a resolve-info record, reads the field's arguments, and strawberry converts them,
builds its own info and walks its extension chain before the resolver reads one attribute; then the
value is completed by type. A 20-row leaderboard has ~245 fields, ~180 of them scalars read from an
object the parent field already made. `Executor.execute_field` reads such a field straight: when the
field is one strawberry would resolve by attribute, or by a method of the object's class that takes
nothing but the object (no arguments, no info, no extensions, not asynchronous), and its type is a
scalar or enum (null allowed or not), it calls that and coerces the value as graphql-core does.

Anything else, and anything unusual on the way (a resolver that raises, a null for a non-null
field, a value the type refuses, any middleware), goes through graphql-core unchanged, which then
produces the error it always did: these reads are side-effect free, so reading again is harmless.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import GraphQLField, GraphQLObjectType, GraphQLScalarType, Undefined
from graphql.execution.collect_fields import FieldDetailsList
from graphql.pyutils import Path
from graphql.type import GraphQLEnumType, GraphQLNonNull
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.field import StrawberryField

__all__ = ["Executor"]

Read = Callable[[Any], Any]
_Plan = tuple[Read, GraphQLScalarType | GraphQLEnumType, bool] | None
"""How to read a field straight: its reader, its leaf type, whether it is non-null; None: not straight."""

_PLANS: dict[int, tuple[GraphQLField, _Plan]] = {}
"""Plans by field definition (kept beside it, so an id is never reused while its plan is)."""


def _plan(field: GraphQLField) -> _Plan:
    found = _PLANS.get(id(field))
    if found is not None and found[0] is field:
        return found[1]
    plan = _make_plan(field)
    _PLANS[id(field)] = (field, plan)
    return plan


def _make_plan(field: GraphQLField) -> _Plan:
    kind = field.type
    non_null = isinstance(kind, GraphQLNonNull)
    leaf = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if not isinstance(leaf, (GraphQLScalarType, GraphQLEnumType)) or field.args:
        return None
    definition = field.extensions.get("strawberry-definition")
    resolve = field.resolve
    if not isinstance(definition, StrawberryField) or resolve is None or definition.extensions:
        return None
    name = getattr(resolve, "__name__", "")
    resolver = definition.base_resolver
    if resolver is None:
        # strawberry's own resolver of a plain attribute (no exception handlers can apply to it).
        if name != "_get_basic_result" or definition.default_resolver is not getattr:
            return None
        attribute = definition.python_name
        return (lambda source: getattr(source, attribute)), leaf, non_null
    if (
        name != "_resolver"  # not `_async_resolver`
        or definition.is_async
        or resolver.arguments
        or resolver.self_parameter is None
        or resolver.info_parameter is not None
        or resolver.root_parameter is not None
        or resolver.parent_parameter is not None
        or len(resolver.signature.parameters) != 1
    ):
        return None
    method = resolver.wrapped_func
    if not callable(method):  # strawberry refuses to call it (UncallableResolverError): let it say so
        return None
    return method, leaf, non_null


class Executor(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's executor (as strawberry configures it), reading scalar fields straight when it can."""

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: FieldDetailsList,
        path: Path,
        position_context: Any,
    ) -> Any:
        node = field_details_list[0].node
        field = parent_type.fields.get(node.name.value)
        middleware = self.middleware_manager  # strawberry passes one per request, usually empty
        if field is not None and not node.arguments and (middleware is None or not middleware.middlewares):
            plan = _plan(field)
            if plan is not None:
                read, leaf, non_null = plan
                try:
                    value = read(source)
                    if value is None:
                        if not non_null:
                            return None
                    elif value is not Undefined and not isinstance(value, Exception):
                        coerced = leaf.coerce_output_value(value)
                        if coerced is not None and coerced is not Undefined:
                            return coerced
                except Exception:
                    pass
        return super().execute_field(parent_type, source, field_details_list, path, position_context)

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
from graphql.execution.executor import to_nodes
from graphql.pyutils import Path
from graphql.type import GraphQLEnumType, GraphQLNonNull
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.field import StrawberryField

__all__ = ["STRAWBERRY_CHECKS", "Executor", "attribute_reader", "plan_of"]

Read = Callable[[Any], Any]
_Plan = tuple[Read, GraphQLScalarType | GraphQLEnumType | GraphQLObjectType, bool, bool] | None
"""How to read a field straight: its reader, its named type, whether it is non-null, whether that type
is an object type whose instances need the type's own check (`is_type_of`, with a resolve info); None:
not straight."""

STRAWBERRY_CHECKS = "strawberry.schema.schema_converter"
"""Where strawberry's own `is_type_of` functions are made (they ignore the resolve info)."""
_PLANS: dict[int, tuple[GraphQLField, _Plan]] = {}
"""Plans by field definition (kept beside it, so an id is never reused while its plan is)."""


def plan_of(field: GraphQLField) -> _Plan:
    """How to read `field` straight (made once per field definition), or None."""
    found = _PLANS.get(id(field))
    if found is not None and found[0] is field:
        return found[1]
    plan = _make_plan(field)
    _PLANS[id(field)] = (field, plan)
    return plan


def attribute_reader(field: GraphQLField) -> Read | None:
    """The reader of a field strawberry resolves by an attribute of its object (its own resolver of a plain
    attribute, which no exception handler can apply to: no resolver of ours, no extensions, no arguments),
    whatever the field's type; None otherwise."""
    definition = field.extensions.get("strawberry-definition")
    if (
        not isinstance(definition, StrawberryField)
        or definition.base_resolver is not None
        or definition.extensions
        or field.args
        or getattr(field.resolve, "__name__", "") != "_get_basic_result"
        or definition.default_resolver is not getattr
    ):
        return None
    attribute = definition.python_name
    return lambda source: getattr(source, attribute)


def _make_plan(field: GraphQLField) -> _Plan:
    kind = field.type
    non_null = isinstance(kind, GraphQLNonNull)
    leaf = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if not isinstance(leaf, (GraphQLScalarType, GraphQLEnumType, GraphQLObjectType)) or field.args:
        return None
    check = leaf.is_type_of if isinstance(leaf, GraphQLObjectType) else None
    # strawberry's own check of an object type is an isinstance, which reads no resolve info
    checked = check is not None and getattr(check, "__module__", "") != STRAWBERRY_CHECKS
    definition = field.extensions.get("strawberry-definition")
    resolve = field.resolve
    if not isinstance(definition, StrawberryField) or resolve is None or definition.extensions:
        return None
    name = getattr(resolve, "__name__", "")
    resolver = definition.base_resolver
    if resolver is None:
        read = attribute_reader(field)
        return None if read is None else (read, leaf, non_null, checked)
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
    return method, leaf, non_null, checked


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
            plan = plan_of(field)
            if plan is not None:
                read, named, non_null, checked = plan
                try:
                    value = read(source)
                except Exception:
                    value = Undefined  # graphql-core reads it again and reports it
                if value is None:
                    if not non_null:
                        return None
                elif value is not Undefined and not isinstance(value, Exception) and not self.is_awaitable(value):
                    if not isinstance(named, GraphQLObjectType):
                        try:
                            coerced = named.coerce_output_value(value)
                        except Exception:
                            coerced = None  # graphql-core coerces it again and reports it
                        if coerced is not None and coerced is not Undefined:
                            return coerced
                    else:
                        return self._complete_object(
                            parent_type, field, named, checked, field_details_list, path, value, position_context
                        )
        return super().execute_field(parent_type, source, field_details_list, path, position_context)

    def _complete_object(
        self,
        parent_type: GraphQLObjectType,
        field: GraphQLField,
        named: GraphQLObjectType,
        checked: bool,
        field_details_list: FieldDetailsList,
        path: Path,
        value: Any,
        position_context: Any,
    ) -> Any:
        """What graphql-core does with an object value once read: its sub-selections executed, an error in
        them reported at this field (null here if the field allows it, else passed up)."""
        try:
            if checked:
                info = self.build_resolve_info(field, to_nodes(field_details_list), parent_type, path)
                completed = self.complete_object_value(named, field_details_list, info, path, value, position_context)
            else:
                completed = self.collect_and_execute_subfields(named, field_details_list, path, value, position_context)
        except Exception as raw_error:
            self.handle_field_error(raw_error, field.type, field_details_list, path)
            return None
        if not self.is_awaitable(completed):
            return completed

        async def await_completed() -> Any:
            try:
                return await completed
            except Exception as raw_error:
                self.handle_field_error(raw_error, field.type, field_details_list, path)
                return None

        return await_completed()

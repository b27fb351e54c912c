"""Compiled execution: a query's selection sets made once into plain functions that build its answer.

This module is the one place the engine leans on graphql-core's and strawberry's internals (field collection,
the execution context, strawberry's field definitions and resolver wrappers); the versions it was tested with
are pyproject.toml's window, and plain mode (`KERNELINDEX_PLAIN=1`, `kernelindex serve --plain`) never imports it.

graphql-core executes a document by walking it for every request: per field it looks the field up,
builds a resolve-info record, reads the arguments and completes the value by type (~7-10 µs per field
here; a 20-row leaderboard has ~245 fields). The same document asked with other variables walks the
same tree. `program(...)` walks it once per (query text, operation, value of every `@skip`/`@include`
condition) and returns a function of (executor, root value) that builds the `data` dict directly:
a field whose value is a plain attribute or an argument-less method of its object is read and
coerced in place; a resolver without field extensions whose arguments are scalars or enums (or lists
of them) is called as strawberry's wrapper calls it (the object, strawberry's `Info`, the arguments
graphql-core coerced under their Python names), without the wrapper; any other field calls its
resolver exactly as graphql-core does (the resolve info, the coerced arguments, strawberry's own
wrapper with its extensions). Each value is then completed as graphql-core completes it (a scalar
read straight, in the same call). Aliases, `__typename`, fragments and the conditions are settled when
collecting fields, by graphql-core's own collection.

Only an answer without errors is built here. Anything the program does not cover (an abstract type,
a resolver that is asynchronous, introspection, other directives) is known when compiling, and such a
document has no program; anything unusual while running (a resolver that raises, a null for a
non-null field, a value its type refuses, an object of the wrong type) raises `Fallback`, and the
caller executes the whole request again with graphql-core, which reports it as it always did. Reads
are pure, so executing again is harmless.
"""

from __future__ import annotations

import enum
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    GraphQLEnumType,
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    OperationType,
    Undefined,
    Visitor,
    visit,
)
from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet, collect_fields, collect_subfields
from graphql.execution.executor import CollectedErrors, to_nodes
from graphql.execution.values import get_argument_values
from graphql.language import DirectiveNode, VariableNode
from graphql.pyutils import Path, is_iterable
from graphql.type.scalars import serialize_boolean, serialize_string
from strawberry.relay.types import GlobalID
from strawberry.scalars import is_scalar
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.base import StrawberryList, StrawberryMaybe, StrawberryOptional
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
from strawberry.types.field import StrawberryField
from strawberry.types.lazy_type import LazyType

from kernelindex.core.cache import ByteLRU
from kernelindex.engine.pipeline import TOKEN_BYTES

__all__ = [
    "COUNTS",
    "MAX_FIELDS",
    "MAX_QUERY_BYTES",
    "PROGRAM_BYTES",
    "CompiledExecutor",
    "Executor",
    "Fallback",
    "Program",
    "program",
]

MAX_FIELDS = 1000
"""Documents with more selected fields than this are not compiled (their programs would be large)."""
MAX_QUERY_BYTES = 16 * 1024
"""Nor are longer query texts (the cache keys by the text)."""
PROGRAM_BYTES = 16 * 1024 * 1024
"""What the kept programs may hold together, the least recently used dropped first. A program keeps the
field nodes its resolvers are given, and with them the document's parsed tokens: it weighs what its
document weighs in the document cache (`kernelindex.engine.pipeline.document_weight`), plus ~0.5 KB per field."""
_KEPT = 4096
"""Per (query text, operation), which variables its conditions read: a few hundred bytes each."""

Program = Callable[[Any, Any], dict[str, Any]]
"""(executor, root value) -> the answer's data; raises `Fallback` (or anything) when graphql-core must answer."""
_Step = Callable[[Any, Any, Path | None], Any]
"""(executor, source object, the object's path or None) -> the field's completed value."""
_Complete = Callable[[Any, Any, Path | None], Any]
"""(executor, resolved value, the field's path or None) -> the completed value."""


COUNTS = {"compiled": 0, "fallback": 0}
"""Answers built by a program, and programs that gave way to graphql-core (approximate under threads:
for tests and profiles)."""


# graphql-core's executor, with scalar fields read straight -------------------------------------------
#
# The GraphQL executor: graphql-core's, with scalar fields read without the per-field machinery.
#
# A first-time answer spends most of its time in the executor, not in the registry: for every field
# graphql-core builds a resolve-info record, reads the field's arguments, and strawberry converts them,
# builds its own info and walks its extension chain before the resolver reads one attribute; then the
# value is completed by type. A 20-row leaderboard has ~245 fields, ~180 of them scalars read from an
# object the parent field already made. `Executor.execute_field` reads such a field straight: when the
# field is one strawberry would resolve by attribute, or by a method of the object's class that takes
# nothing but the object (no arguments, no info, no extensions, not asynchronous), and its type is a
# scalar or enum (null allowed or not), it calls that and coerces the value as graphql-core does.
#
# Anything else, and anything unusual on the way (a resolver that raises, a null for a non-null
# field, a value the type refuses, any middleware), goes through graphql-core unchanged, which then
# produces the error it always did: these reads are side-effect free, so reading again is harmless.
# It answers what a compiled program does not (`CompiledExecutor`).


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


class Fallback(Exception):
    """This request needs graphql-core's executor (an error to report, or a value to check its way)."""


class _NotCompilable(Exception):
    """The document uses something the program does not cover: graphql-core executes it every time."""


@dataclass(frozen=True, slots=True)
class _Direct:
    """A resolver called straight: the function, its arguments as (GraphQL name, Python name, whether its
    list is copied), whether the object goes first (`self`), the parameters that get the object by name
    (root, parent), the `info` parameter's name, and strawberry's `Info` class."""

    method: Callable[..., Any]
    arguments: tuple[tuple[str, str, bool], ...]
    with_self: bool
    source_names: tuple[str, ...]
    info_name: str | None
    info_class: Any


_UNSEEN: Any = object()
_CONDITIONS = frozenset({"skip", "include"})
_lock = threading.Lock()
_programs: ByteLRU[tuple[Any, str, str | None, tuple[Any, ...]], tuple[Program | None, int]] = ByteLRU(
    PROGRAM_BYTES, lambda kept: kept[1]
)
_conditions: OrderedDict[tuple[str, str | None], tuple[tuple[str, ...], int] | None] = OrderedDict()
"""Per (query text, operation): the variables `@skip`/`@include` read and what a program of it weighs, or
None if it is not compiled."""


def program(executor: Any) -> Program | None:
    """The compiled program of `executor`'s operation (made now if new), or None when graphql-core must
    execute it: not a query, middleware, an abortable execution, or a document the program does not cover."""
    operation = executor.operation
    document_loc = operation.loc
    if (
        operation.operation is not OperationType.QUERY
        or document_loc is None
        or (executor.middleware_manager is not None and executor.middleware_manager.middlewares)
        or executor.abort_signal is not None
    ):
        return None
    text = document_loc.source.body
    if len(text) > MAX_QUERY_BYTES:
        return None
    name = operation.name.value if operation.name else None
    with _lock:
        found = _conditions.get((text, name), _UNSEEN)
    if found is _UNSEEN:
        found = _condition_variables(executor)
        with _lock:
            _remember(_conditions, (text, name), found)
    if found is None:
        return None
    variables, weight = found
    coerced = executor.variable_values.coerced
    # The schema too: a program holds its field definitions (one schema serves, tests make others).
    key = (executor.schema, text, name, tuple(_hashable(coerced.get(v)) for v in variables))
    kept = _programs.get(key)
    if kept is not None:
        return kept[0]
    try:
        made: Program | None = _Compiler(executor).root()
    except _NotCompilable:
        made = None
    _programs.put(key, (made, weight))
    return made


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _KEPT:
        cache.popitem(last=False)


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (bool, type(None))) else repr(value)


def _condition_variables(executor: Any) -> tuple[tuple[str, ...], int] | None:
    """The variables the operation's (and its fragments') `@skip`/`@include` read, in a fixed order, and what
    a program of it weighs; None when the document has any other directive, too many fields, or would weigh
    more than a program may (it would never stay in the cache)."""
    names: dict[str, None] = {}
    refused = False
    fields = 0

    class Scan(Visitor):
        def enter_directive(self, node: DirectiveNode, *_: Any) -> None:
            nonlocal refused
            if node.name.value not in _CONDITIONS:
                refused = True
            for argument in node.arguments or ():
                if isinstance(argument.value, VariableNode):
                    names[argument.value.name.value] = None

        def enter_field(self, node: FieldNode, *_: Any) -> None:
            nonlocal fields
            fields += 1

    visit(executor.operation, Scan())
    for fragment in executor.fragment_definitions.values():
        visit(fragment, Scan())
    if refused or fields > MAX_FIELDS:
        return None
    token = executor.operation.loc.start_token
    while token.prev is not None:
        token = token.prev
    tokens = 0
    while token is not None:
        tokens += 1
        token = token.next
    text = executor.operation.loc.source.body
    weight = len(text.encode()) + TOKEN_BYTES * tokens + 1024 + 512 * fields
    if weight > PROGRAM_BYTES // 8:
        return None
    return tuple(names), weight


class _Compiler:
    """Collects fields as graphql-core does for this request's conditions, and makes the steps."""

    def __init__(self, executor: Any) -> None:
        self._executor = executor
        self._fields = 0
        self._resolvers = 0

    def root(self) -> Program:
        ex = self._executor
        root_type = ex.schema.get_root_type(OperationType.QUERY)
        if root_type is None:
            raise _NotCompilable
        collected = collect_fields(
            ex.schema, ex.fragments, ex.variable_values, root_type, ex.operation, ex.hide_suggestions
        )
        if collected.new_defer_usages or collected.forbidden_directive_instances:
            raise _NotCompilable
        steps = self._steps(root_type, collected.grouped_field_set)

        def run(executor: Any, root_value: Any) -> dict[str, Any]:
            return {key: step(executor, root_value, None) for key, step in steps}

        return run

    def _steps(self, parent: GraphQLObjectType, grouped: GroupedFieldSet) -> list[tuple[str, _Step]]:
        return [(key, self._step(parent, key, details)) for key, details in grouped.items()]

    def _step(self, parent: GraphQLObjectType, key: str, details: FieldDetailsList) -> _Step:
        self._fields += 1
        if self._fields > MAX_FIELDS:
            raise _NotCompilable
        first = details[0]
        if first.fragment_variable_values is not None or first.defer_usage is not None:
            raise _NotCompilable
        node = first.node
        name = node.name.value
        if name == "__typename":
            type_name = parent.name
            return lambda _executor, _source, _path: type_name
        if name.startswith("__"):  # introspection
            raise _NotCompilable
        field = parent.fields.get(name)
        if field is None:
            raise _NotCompilable
        resolvers = self._resolvers
        complete = self._complete(field.type, details)
        read = (plan_of(field) or (attribute_reader(field),))[0] if not node.arguments else None
        if read is not None:
            leaf = _leaf_step(read, field.type)
            if leaf is not None:
                return leaf
            # The field's path is made only when a resolver below it will read it (in its resolve info).
            return _read_step(read, complete, key, parent.name if self._resolvers > resolvers else None)
        self._resolvers += 1
        resolve = field.resolve
        definition = field.extensions.get("strawberry-definition")
        if resolve is None or not isinstance(definition, StrawberryField) or definition.is_async:
            raise _NotCompilable
        nodes = [d.node for d in details]
        has_arguments = bool(field.args or node.arguments)
        type_name = parent.name
        direct = self._direct(field, definition)
        if direct is not None:
            # The field's path is made only when its resolver or one below it reads it (in a resolve info).
            needs_path = direct.info_name is not None or self._resolvers > resolvers + 1
            constant = _constant_arguments(self._executor, field, node, direct) if direct.arguments else None
            return _direct_step(direct, field, nodes, parent, key, complete, needs_path, constant)

        def resolved(executor: Any, source: Any, path: Path | None) -> Any:
            here = Path(path, key, type_name)
            info = executor.build_resolve_info(field, nodes, parent, here)
            arguments = (
                get_argument_values(field, node, executor.variable_values, None, executor.hide_suggestions)
                if has_arguments
                else {}
            )
            return complete(executor, _settled(executor, resolve(source, info, **arguments)), here)

        return resolved

    def _direct(self, field: GraphQLField, definition: StrawberryField) -> _Direct | None:
        """How to call a field's resolver straight (`_Direct`), or None when strawberry's wrapper must: a
        synchronous method or function without field extensions, whose parameters are the object (`self`,
        root or parent), `info` and arguments that are each a scalar or an enum, or a list of them (their
        GraphQL values are their Python values). The wrapper otherwise converts each argument, builds an
        `Info`, chains no extensions and calls it: ~10-15 µs a field (py-spy of first-time dossiers)."""
        resolver = definition.base_resolver
        strawberry_schema = getattr(self._executor.schema, "_strawberry_schema", None)
        config = getattr(strawberry_schema, "config", None)
        if (
            resolver is None
            or strawberry_schema is None
            or config is None
            or definition.extensions
            or getattr(field.resolve, "__name__", "") != "_resolver"
            or not callable(resolver.wrapped_func)
        ):
            return None
        registry = strawberry_schema.schema_converter.scalar_registry
        arguments: list[tuple[str, str, bool]] = []
        for argument in resolver.arguments:
            copied = _plain_argument(argument.type, registry)
            if copied is None or argument.python_name is None:
                return None
            arguments.append((config.name_converter.from_argument(argument), argument.python_name, copied))
        if len(arguments) != len(definition.arguments) or len(field.args) != len(arguments):
            return None  # arguments the field has beside its resolver's own
        reserved = [
            resolver.self_parameter,
            resolver.info_parameter,
            resolver.root_parameter,
            resolver.parent_parameter,
        ]
        if len(resolver.signature.parameters) != len(arguments) + sum(p is not None for p in reserved):
            return None
        info = resolver.info_parameter
        return _Direct(
            method=resolver.wrapped_func,
            arguments=tuple(arguments),
            with_self=resolver.self_parameter is not None,
            source_names=tuple(p.name for p in (resolver.root_parameter, resolver.parent_parameter) if p is not None),
            info_name=info.name if info is not None else None,
            info_class=config.info_class,
        )

    def _complete(self, kind: GraphQLOutputType, details: FieldDetailsList, required: bool = False) -> _Complete:
        """The completion of a value of `kind`; `required` (a non-null type's): a null gives way to graphql-core."""
        if isinstance(kind, GraphQLNonNull):
            return self._complete(kind.of_type, details, required=True)
        if isinstance(kind, GraphQLList):
            item = self._complete(kind.of_type, details)

            def listed(executor: Any, value: Any, path: Path | None) -> Any:
                if value is None:
                    if required:
                        raise Fallback
                    return None
                if not is_iterable(value):  # graphql-core's own test (no strings, no mappings)
                    raise Fallback
                if path is None:
                    return [item(executor, each, None) for each in value]
                return [item(executor, each, Path(path, index, None)) for index, each in enumerate(value)]

            return listed
        if isinstance(kind, (GraphQLScalarType, GraphQLEnumType)):
            coerce = kind.coerce_output_value

            def leaf(_executor: Any, value: Any, _path: Path | None) -> Any:
                if value is None:
                    if required:
                        raise Fallback
                    return None
                if isinstance(value, Exception):
                    raise Fallback
                coerced = coerce(value)
                if coerced is None or coerced is Undefined:
                    raise Fallback
                return coerced

            return leaf
        if isinstance(kind, GraphQLObjectType):
            check: Callable[[Any, Any], Any] | None = kind.is_type_of  # strawberry's ignores the info
            if check is not None and getattr(check, "__module__", "") != STRAWBERRY_CHECKS:
                raise _NotCompilable  # a check that may read the resolve info
            ex = self._executor
            collected = collect_subfields(
                ex.schema, ex.fragments, ex.variable_values, ex.operation, kind, details, ex.hide_suggestions
            )
            if collected.new_defer_usages or collected.forbidden_directive_instances:
                raise _NotCompilable
            steps = self._steps(kind, collected.grouped_field_set)

            def obj(executor: Any, value: Any, path: Path | None) -> Any:
                if value is None:
                    if required:
                        raise Fallback
                    return None
                if isinstance(value, Exception) or (check is not None and not check(value, None)):
                    raise Fallback
                # A loop, not a comprehension: in Python 3.11 that is one call (and frame) less an object.
                data = {}
                for key, step in steps:
                    data[key] = step(executor, value, path)
                return data

            return obj
        raise _NotCompilable  # an interface or a union: its runtime type is resolved per value


def _leaf_step(read: Callable[[Any], Any], kind: GraphQLOutputType) -> _Step | None:
    """A scalar or enum field read straight, completed in the same call (`_complete`'s null check and leaf
    coercion, as they would run, without two calls a field: a 20-row leaderboard has ~160 such fields). A
    `str` for a String or a `bool` for a Boolean is its own coerced value (graphql-core's `serialize_string`
    and `serialize_boolean` return it unchanged). None for any other type."""
    non_null = isinstance(kind, GraphQLNonNull)
    named = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if not isinstance(named, (GraphQLScalarType, GraphQLEnumType)):
        return None
    coerce = named.coerce_output_value
    same: type | None = str if coerce is serialize_string else bool if coerce is serialize_boolean else None

    def step(_executor: Any, source: Any, _path: Path | None) -> Any:
        value = read(source)
        if type(value) is same:
            return value
        if value is None:
            if non_null:
                raise Fallback
            return None
        if isinstance(value, Exception):
            raise Fallback
        coerced = coerce(value)
        if coerced is None or coerced is Undefined:
            raise Fallback
        return coerced

    return step


def _read_step(read: Callable[[Any], Any], complete: _Complete, key: str, type_name: str | None) -> _Step:
    if type_name is None:

        def step(executor: Any, source: Any, _path: Path | None) -> Any:
            return complete(executor, read(source), None)

        return step

    def step_with_path(executor: Any, source: Any, path: Path | None) -> Any:
        return complete(executor, read(source), Path(path, key, type_name))

    return step_with_path


class CompiledExecutor(Executor):
    """The API's executor: a query's compiled program when it has one and it answers without errors,
    else graphql-core's executor (with scalar fields read straight, `Executor`)."""

    def execute_operation(self, serially: bool | None = None) -> Any:
        run = program(self) if serially is None else None
        if run is not None:
            try:
                data = run(self, self.root_value)
            except Exception:
                pass
            else:
                if not self.collected_errors.errors:
                    COUNTS["compiled"] += 1
                    return self.build_response(data)
            COUNTS["fallback"] += 1
            self.collected_errors = CollectedErrors()  # graphql-core starts again from nothing
        return super().execute_operation(serially)


def _direct_step(
    direct: _Direct,
    field: GraphQLField,
    nodes: list[FieldNode],
    parent: GraphQLObjectType,
    key: str,
    complete: _Complete,
    needs_path: bool,
    constant: dict[str, Any] | None,
) -> _Step:
    """Call a resolver as strawberry's wrapper would (`_Compiler._direct`): the object, the `Info` as
    strawberry makes it, the coerced arguments under their Python names (lists copied, as strawberry copies
    them: graphql-core gives every request that omits one the same default); `constant`, when given, those
    arguments as every request has them (`_constant_arguments`)."""
    definition = field.extensions["strawberry-definition"]
    type_name = parent.name
    method, info_name, info_class = direct.method, direct.info_name, direct.info_class
    node = nodes[0]
    arguments = direct.arguments
    with_self, source_names = direct.with_self, direct.source_names

    def step(executor: Any, source: Any, path: Path | None) -> Any:
        here = Path(path, key, type_name) if needs_path else None
        kwargs: dict[str, Any] = {}
        if arguments:
            given = (
                constant
                if constant is not None
                else get_argument_values(field, node, executor.variable_values, None, executor.hide_suggestions)
            )
            for name, python_name, copied in arguments:
                if name in given:
                    value = given[name]
                    kwargs[python_name] = list(value) if copied and value is not None else value
        for name in source_names:
            kwargs[name] = source
        if info_name is not None:
            raw = executor.build_resolve_info(field, nodes, parent, here)
            kwargs[info_name] = info_class(_raw_info=raw, _field=definition)
        value = method(source, **kwargs) if with_self else method(**kwargs)
        return complete(executor, _settled(executor, value), here)

    return step


def _constant_arguments(executor: Any, field: GraphQLField, node: FieldNode, direct: _Direct) -> dict[str, Any] | None:
    """A field's coerced arguments when every request has the same (literals and defaults, no variable), each
    a value nobody can change (lists are copied per call anyway); None otherwise (coerced per call, ~3 µs:
    a dossier's `citation` takes its three defaults)."""
    variables: list[VariableNode] = []

    class Scan(Visitor):
        def enter_variable(self, variable: VariableNode, *_: Any) -> None:
            variables.append(variable)

    for argument in node.arguments or ():
        visit(argument, Scan())
    if variables:
        return None
    try:
        given: dict[str, Any] = get_argument_values(
            field, node, executor.variable_values, None, executor.hide_suggestions
        )
    except Exception:  # a request meets it, and gives way to graphql-core
        return None
    copied = {name for name, _, copy in direct.arguments if copy}
    for name, value in given.items():
        if not (name in copied or value is None or isinstance(value, (str, int, float, enum.Enum))):
            return None
    return given


def _plain_argument(kind: Any, registry: Any) -> bool | None:
    """Whether an argument's GraphQL value is its Python value (False), or is after a copy of its list
    (True, a list of such values): a scalar other than a global id, or an enum (graphql-core coerces it to
    its member), optional or not; None for anything strawberry converts (input types, global ids, nested
    lists, `Maybe`)."""
    copied = False
    if isinstance(kind, StrawberryOptional) and not isinstance(kind, StrawberryMaybe):
        kind = kind.of_type
    if isinstance(kind, StrawberryList):
        copied, kind = True, kind.of_type
        if isinstance(kind, StrawberryOptional) and not isinstance(kind, StrawberryMaybe):
            kind = kind.of_type
    if isinstance(kind, LazyType) or kind is GlobalID:
        return None
    if isinstance(kind, StrawberryEnumDefinition) or has_enum_definition(kind) or is_scalar(kind, registry):
        return copied
    return None


def _settled(executor: Any, value: Any) -> Any:
    """A resolver's value, unless it is awaitable: programs are synchronous, so an awaitable (closed, never
    awaited, so nothing warns of a coroutine left behind) sends the request back to graphql-core."""
    if executor.is_awaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()
        raise Fallback
    return value

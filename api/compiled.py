"""Compiled execution: a query's selection sets made once into plain functions that build its answer.

graphql-core executes a document by walking it for every request: per field it looks the field up,
builds a resolve-info record, reads the arguments and completes the value by type (~7-10 µs per field
here; a 20-row leaderboard has ~245 fields). The same document asked with other variables walks the
same tree. `program(...)` walks it once per (query text, operation, value of every `@skip`/`@include`
condition) and returns a function of (executor, root value) that builds the `data` dict directly:
a field whose value is a plain attribute or an argument-less method of its object is read and
coerced in place; any other field calls its resolver exactly as graphql-core does (the resolve info,
the coerced arguments, strawberry's own wrapper with its extensions), then completes its value the
same way. Aliases, `__typename`, fragments and the conditions are settled when collecting fields,
by graphql-core's own collection.

Only an answer without errors is built here. Anything the program does not cover (an abstract type,
a resolver that is asynchronous, introspection, other directives) is known when compiling, and such a
document has no program; anything unusual while running (a resolver that raises, a null for a
non-null field, a value its type refuses, an object of the wrong type) raises `Fallback`, and the
caller executes the whole request again with graphql-core, which reports it as it always did. Reads
are pure, so executing again is harmless.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
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
from graphql.execution.executor import CollectedErrors
from graphql.execution.values import get_argument_values
from graphql.language import DirectiveNode, VariableNode
from graphql.pyutils import Path, is_iterable
from strawberry.types.field import StrawberryField

from api.cache import ByteLRU
from api.execution import STRAWBERRY_CHECKS, Executor, plan_of
from api.pipeline import TOKEN_BYTES

__all__ = [
    "COUNTS",
    "MAX_FIELDS",
    "MAX_QUERY_BYTES",
    "PROGRAM_BYTES",
    "CompiledExecutor",
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
document weighs in the document cache (`api.pipeline.document_weight`), plus ~0.5 KB per field."""
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


class Fallback(Exception):
    """This request needs graphql-core's executor (an error to report, or a value to check its way)."""


class _NotCompilable(Exception):
    """The document uses something the program does not cover: graphql-core executes it every time."""


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
        plan = plan_of(field) if not node.arguments else None
        if plan is not None:
            # The field's path is made only when a resolver below it will read it (in its resolve info).
            return _read_step(plan[0], complete, key, parent.name if self._resolvers > resolvers else None)
        self._resolvers += 1
        resolve = field.resolve
        definition = field.extensions.get("strawberry-definition")
        if resolve is None or not isinstance(definition, StrawberryField) or definition.is_async:
            raise _NotCompilable
        nodes = [d.node for d in details]
        has_arguments = bool(field.args or node.arguments)
        type_name = parent.name
        info_only = self._info_only(field, definition) if not has_arguments else None
        if info_only is not None:
            return _info_step(info_only, field, nodes, parent, key, complete)

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

    def _info_only(
        self, field: GraphQLField, definition: StrawberryField
    ) -> tuple[Callable[..., Any], str, Any] | None:
        """A method of the object's class that takes nothing but the object and strawberry's `Info` (no
        arguments, no extensions, synchronous): called straight with an `Info` as strawberry makes it (its
        wrapper otherwise converts no arguments and walks no extensions, ~10 µs a field); None otherwise."""
        resolver = definition.base_resolver
        strawberry_schema = getattr(self._executor.schema, "_strawberry_schema", None)
        info_class = getattr(getattr(strawberry_schema, "config", None), "info_class", None)
        if (
            resolver is None
            or info_class is None
            or definition.extensions
            or getattr(field.resolve, "__name__", "") != "_resolver"
            or resolver.arguments
            or resolver.self_parameter is None
            or resolver.info_parameter is None
            or resolver.root_parameter is not None
            or resolver.parent_parameter is not None
            or len(resolver.signature.parameters) != 2
            or not callable(resolver.wrapped_func)
        ):
            return None
        return resolver.wrapped_func, resolver.info_parameter.name, info_class

    def _complete(self, kind: GraphQLOutputType, details: FieldDetailsList) -> _Complete:
        if isinstance(kind, GraphQLNonNull):
            inner = self._complete(kind.of_type, details)

            def non_null(executor: Any, value: Any, path: Path | None) -> Any:
                if value is None:
                    raise Fallback
                return inner(executor, value, path)

            return non_null
        if isinstance(kind, GraphQLList):
            item = self._complete(kind.of_type, details)

            def listed(executor: Any, value: Any, path: Path | None) -> Any:
                if value is None:
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
                    return None
                if isinstance(value, Exception) or (check is not None and not check(value, None)):
                    raise Fallback
                return {key: step(executor, value, path) for key, step in steps}

            return obj
        raise _NotCompilable  # an interface or a union: its runtime type is resolved per value


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
    else graphql-core's executor (with scalar fields read straight, `api.execution`)."""

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


def _info_step(
    found: tuple[Callable[..., Any], str, Any],
    field: GraphQLField,
    nodes: list[FieldNode],
    parent: GraphQLObjectType,
    key: str,
    complete: _Complete,
) -> _Step:
    method, info_name, info_class = found
    definition = field.extensions["strawberry-definition"]
    type_name = parent.name

    def step(executor: Any, source: Any, path: Path | None) -> Any:
        here = Path(path, key, type_name)
        raw = executor.build_resolve_info(field, nodes, parent, here)
        value = method(source, **{info_name: info_class(_raw_info=raw, _field=definition)})
        return complete(executor, _settled(executor, value), here)

    return step


def _settled(executor: Any, value: Any) -> Any:
    """A resolver's value, unless it is awaitable: programs are synchronous, so an awaitable (closed, never
    awaited, so nothing warns of a coroutine left behind) sends the request back to graphql-core."""
    if executor.is_awaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()
        raise Fallback
    return value

"""The estimated cost of a GraphQL operation: how many fields it may resolve, before it runs.

Each field costs the number of times it can be resolved. A field inside a list is resolved once per
item: a connection's `edges` once per item of the page its field asks for (`first` or `last`, or the
argument's default; clamped to [0, max_page] because a larger page is refused anyway), a list
that takes `first` itself (`Cohort.leaderboard`) that many times, any other list of objects
`list_items` times (an estimate: measurements, attestations, history...). Leaf
lists (strings, enums) cost one. Introspection fields (`__schema`, `__type`) cost one: their size
is the schema's, fixed. Fragments count where they are spread; the branches of an abstract type
all count (an upper bound).

    { runs(first: 100) { totalCount edges { node { name } } } }
    runs 1 + totalCount 1 + edges 1 + node 100 + name 100 = 203

A search (`search(query:)`, `operations(search:)`) also costs its passes over the snapshot's search index
(`kernelindex.registry.search.search_cost`: 1 + its terms), each worth `search_pass` fields, once per time the field
resolves; a query over the search limits (512 characters, 32 terms) is refused before anything runs
(`SearchTooLarge`), whichever edge sent it.

A field that sorts, filters or scans a collection (`SCANS`) also costs the items it touches, however small the
page it answers: `runs(first: 1, filter: {minTrust: REPORTED})` judges every run of the commit (~9 ms for 9,508
runs, where a field costs ~4 us), so it costs a quarter of a field a run more, 2,377, not 4. The sizes are the
served head's (`CostModel.at`), the largest of any commit an operation may pin (main only grows), so the
estimate stays an upper bound. A field inside a list pays its scan once per time it resolves, each at the
largest the collection's parts hold (the operation with the most runs); a field whose sorted runs the graph
keeps (an operation's, an implementation's, a cohort's: `Scan.once`) pays at most every run of the commit in
all (a project page's 100 implementations with their runs: 9,508, not 16,800).

    { runs(first: 1, filter: {minTrust: REPORTED}) { edges { node { digest } } } }
    runs 1 + its scan 9,508 / 4 = 2,377 + edges 1 + node 1 + digest 1 = 2,381 (at 9,508 runs)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    NullValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    StringValueNode,
    Undefined,
    VariableNode,
    get_named_type,
)

from kernelindex.registry import read
from kernelindex.registry.search_query import search_cost

if TYPE_CHECKING:
    from kernelindex.registry.graph import Graph

__all__ = ["SCANS", "SEARCHES", "SEARCH_PASS", "CostModel", "Scan", "estimate", "sizes_of"]

SEARCH_PASS = 500
"""What one pass over a snapshot's search index costs, in fields: a pass looks at most once at each of the
9,508 runs of the embedded registry, about 3 ms at worst (bench/search.py: the broadest word, 5,922 runs
matched, 6.7 ms for its 2 passes), where a field costs about 4 us (runs(first: 100) with 12 fields, ~5 ms).
So a search at the term limit (33 passes, 16,500) fits under the cost limit with a page of its runs, and
two of them in one request do not."""
SEARCHES = {"search": "query", "operations": "search"}
"""The fields that search, and the argument holding their query."""


@dataclass(frozen=True, slots=True)
class Scan:
    """What a field touches beyond its page: every item of `collection` (a name `sizes_of` gives a size), worth
    `per_item` fields each; only when one of the arguments `when` is given (not null), or always when `when` is
    empty. A `once` scan sorts one part of the runs (an operation's, an implementation's, a cohort's) and the
    graph keeps what it sorted (`kernelindex.registry.read.ordered_runs_with`): however many times the field
    resolves in a query, it sorts each run at most once, so it costs at most every run of the commit."""

    collection: str
    when: tuple[str, ...] = ()
    per_item: float = 1.0
    once: bool = False


_NODE = 1 / 16
"""A pass over every manifest of the commit that only looks at each one's kind (`operations`, `projects`,
`implementations`): 21,763 nodes in ~1.5 ms, ~0.07 us each where a field costs ~4 us; charged at 1/16 of a field."""
_FILTERED = 1 / 4
"""Filtering every run: each judged (its node and facts read, ~0.8 us) and the kept ones picked from every run
in the order asked (~0.1 us), 8-10 ms for 9,508 runs at worst, where a field costs ~4 us. The orders are the
graph's, sorted once a graph for each (`kernelindex.registry.read`): an order alone costs its page only."""
_ROOT_SCANS: dict[str, tuple[Scan, ...]] = {
    "runs": (Scan("runs", ("filter",), per_item=_FILTERED),),
    "cohorts": (Scan("cohorts", ("filter", "order")),),
    "records": (Scan("records", ("filter", "order")),),
    "operations": (Scan("nodes", per_item=_NODE),),
    "projects": (Scan("nodes", per_item=_NODE),),
    # Filtered on what their manifests say: each implementation judged, its manifest read once.
    "implementations": (Scan("nodes", per_item=_NODE), Scan("implementations", ("filter",))),
    "published": (Scan("nodes", ("kind",), per_item=_NODE),),
    "servingRuns": (Scan("serving_runs", ("filter",)),),
    "servingCohorts": (Scan("serving_runs", ("filter",)),),
}
SCANS: dict[tuple[str, str], tuple[Scan, ...]] = {
    **{("Query", name): scans for name, scans in _ROOT_SCANS.items()},
    **{("Snapshot", name): scans for name, scans in _ROOT_SCANS.items()},
    ("Cohort", "runs"): (Scan("cohort_runs", once=True),),  # its members sorted, once a graph and order
    ("Cohort", "entries"): (Scan("cohort_runs", ("minTrust", "order")),),  # ranked again, each time
    ("Operation", "runs"): (Scan("operation_runs", once=True),),
    ("Implementation", "runs"): (Scan("implementation_runs", once=True),),
    # A citation's commit read as a graph (derived from the head's, or built) and its manifest hashed again.
    ("Query", "verifyCitation"): (Scan("nodes", per_item=_NODE),),
}
"""The fields that touch more than their page, by (type, field)."""


@dataclass(frozen=True, slots=True)
class CostModel:
    max_page: int
    list_items: int = 10
    default_page: int = 20  # a connection's page without `first` or `last`
    search_pass: int = SEARCH_PASS
    sizes: tuple[tuple[str, int], ...] = ()  # the collections `SCANS` names, by name (`at`); absent: 0

    def at(self, graph: Graph) -> CostModel:
        """This model with the sizes of `graph`'s collections (the served head's: the largest), made once per
        graph and model (every first-time answer asks for it)."""
        kept: dict[CostModel, CostModel] | None = graph.__dict__.get("_cost_models")
        if kept is None:
            kept = graph.__dict__["_cost_models"] = {}
        found = kept.get(self)
        if found is None:
            found = kept[self] = replace(self, sizes=sizes_of(graph))
        return found


def sizes_of(graph: Graph) -> tuple[tuple[str, int], ...]:
    """The sizes of the collections `SCANS` names, at `graph`: counted once per graph (a pass over its nodes,
    ~5 ms at 9,508 runs), then kept with it."""
    found: tuple[tuple[str, int], ...] | None = graph.__dict__.get("_cost_sizes")
    if found is None:
        kinds = [node.kind for node in graph.nodes.values()]
        found = (
            ("runs", len(graph.facts)),
            ("cohorts", len(graph.cohorts)),
            ("records", len(graph.records)),
            ("nodes", len(graph.nodes)),
            ("serving_runs", kinds.count("ServingRun")),
            ("implementations", kinds.count("ImplementationRevision")),
            ("cohort_runs", max((len(c.members) for c in graph.cohorts.values()), default=0)),
            ("operation_runs", read.largest_run_group(graph, read.RunIndex.OPERATION)),
            ("implementation_runs", read.largest_run_group(graph, read.RunIndex.IMPLEMENTATION)),
        )
        graph.__dict__["_cost_sizes"] = found
    return found


COUNT_FIELDS = frozenset({"totalCount", "__typename"})
"""What a connection may be asked for and still be answered by counting, without its page."""


def counts_only(node: FieldNode) -> bool:
    """Whether a connection field asks for nothing but its count (`runs { totalCount }`): no fragment, no other
    field. Such a field is answered without sorting or cutting a page (`kernelindex.schema.types.pages.counted`)
    and costs no `once` scan.

    >>> from graphql import parse
    >>> def field(text):
    ...     return parse(text).definitions[0].selection_set.selections[0]
    >>> counts_only(field("{ runs { totalCount __typename } }"))
    True
    >>> counts_only(field("{ runs { totalCount edges { cursor } } }"))
    False
    >>> counts_only(field("{ runs { ... on RunConnection { totalCount } } }")), counts_only(field("{ runs }"))
    (False, False)
    """
    selections = node.selection_set.selections if node.selection_set is not None else ()
    return bool(selections) and all(
        isinstance(selection, FieldNode) and selection.name.value in COUNT_FIELDS for selection in selections
    )


def estimate(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Mapping[str, Any],
    model: CostModel,
) -> int:
    """The cost of `operation` (a validated one) with its coerced `variables`.

    A document's cost depends on its text and on the variables it passes as page sizes or search queries
    only, so it is remembered by those (a first-time dossier or leaderboard asks the same document with
    another id: the walk, ~5% of its answer, is done once).

    Raises:
        SearchTooLarge: a search in it is over the search limits (never remembered: refused each time).
    """
    text = document.loc.source.body if document.loc is not None else None
    key: tuple[Any, ...] | None = None
    if text is not None:
        used = _COST_VARIABLES.get(text)
        if used is None:
            used = _cost_variables(document)
            _remember(_COST_VARIABLES, text, used)
        try:
            key = (text, id(schema), operation.loc.start if operation.loc else None, model)
            key += tuple(
                variables.get(name[1:]) is None if name.startswith("?") else _hashable(variables.get(name, _ABSENT))
                for name in used
            )
            found = _ESTIMATES.get(key)
        except TypeError:  # an unhashable value (a list as a page size): walked, not remembered
            key = found = None
        if found is not None:
            return found
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0
    walker = _Walker(schema, fragments, variables, model)
    cost = walker.selections(root, operation.selection_set, 1, None, frozenset())
    if key is not None:
        _remember(_ESTIMATES, key, cost)
    return cost


_REMEMBERED = 4096
"""Documents (and their cost-bearing variable values) whose cost is remembered; the oldest half is
forgotten when full."""
_COST_VARIABLES: dict[str, tuple[str, ...]] = {}
_ESTIMATES: dict[tuple[Any, ...], int] = {}
_ABSENT = object()
_COST_ARGUMENTS = frozenset({"first", "last", *SEARCHES.values()})
"""The arguments whose values the walk reads: page sizes and search queries."""
_SCAN_ARGUMENTS = frozenset(name for scans in SCANS.values() for scan in scans for name in scan.when)
"""The arguments whose presence (given or null) the walk reads: those that make a field scan."""


def _remember(store: dict[Any, Any], key: Any, value: Any) -> None:
    if len(store) >= _REMEMBERED:
        for old in list(store)[: _REMEMBERED // 2]:
            store.pop(old, None)
    store[key] = value


def _hashable(value: Any) -> Any:
    """`value` as part of a key: its type too, since `1` and `True` (or `1.0`) are equal keys."""
    hash(value)
    return (type(value), value)


def _cost_variables(document: DocumentNode) -> tuple[str, ...]:
    """The variables the document passes to a page-size or search argument, anywhere in it."""
    found: set[str] = set()

    def visit(selection_set: SelectionSetNode | None) -> None:
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                for argument in selection.arguments or ():
                    if not isinstance(argument.value, VariableNode):
                        continue
                    if argument.name.value in _COST_ARGUMENTS:
                        found.add(argument.value.name.value)
                    if argument.name.value in _SCAN_ARGUMENTS:  # only whether it is given counts: "?name"
                        found.add("?" + argument.value.name.value)
                visit(selection.selection_set)
            elif isinstance(selection, InlineFragmentNode):
                visit(selection.selection_set)

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode | FragmentDefinitionNode):
            visit(definition.selection_set)
    return tuple(sorted(found))


class _Walker:
    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: Mapping[str, Any],
        model: CostModel,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.model = model

    def selections(
        self,
        parent: GraphQLNamedType,
        selection_set: SelectionSetNode,
        count: int,
        page: int | None,
        spread: frozenset[str],
    ) -> int:
        """The cost of a selection set resolved `count` times, inside a field that asked for `page` items."""
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                total += self.field(parent, selection, count, page, spread)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = self.schema.get_type(condition.name.value) if condition else parent
                if target is not None:
                    total += self.selections(target, selection.selection_set, count, page, spread)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self.fragments.get(name)
                if fragment is None or name in spread:  # validation refuses both; never loop
                    continue
                target = self.schema.get_type(fragment.type_condition.name.value)
                if target is not None:
                    total += self.selections(target, fragment.selection_set, count, page, spread | {name})
        return total

    def field(
        self, parent: GraphQLNamedType, node: FieldNode, count: int, page: int | None, spread: frozenset[str]
    ) -> int:
        name = node.name.value
        if name.startswith("__") or not isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            return count
        definition = parent.fields.get(name)
        if definition is None:
            return count
        own = count + count * self.model.search_pass * self._passes(node, definition) + self._scan(parent, node, count)
        if node.selection_set is None:
            return own
        items = 1
        own_page = self._page(node, definition)
        if page is not None and own_page is not None and not _sized(node):
            # a connection that pages with its wrapper's arguments when it has none (`search(first:) { runs }`)
            own_page = page
        if _is_list(definition):
            # a list that takes `first` itself (Cohort.leaderboard) holds that many; an edges list, its
            # connection's page; any other, `list_items`
            items = own_page if own_page is not None else page if page is not None else self.model.list_items
        if own_page is None and not _is_list(definition):
            own_page = page  # a connection wrapped in an object (`search(first:) { runs { edges } }`)
        child = get_named_type(definition.type)
        return own + self.selections(child, node.selection_set, count * items, own_page, spread)

    def _scan(self, parent: GraphQLNamedType, node: FieldNode, count: int) -> int:
        """What the field touches beyond its page (`SCANS`) when it resolves `count` times; 0 for most fields.
        A connection asked for its count alone sorts nothing (`counts_only`): its `once` scans cost nothing."""
        total = 0
        scans = SCANS.get((parent.name, node.name.value), ())
        sizes = dict(self.model.sizes) if scans else {}
        for scan in scans:
            if scan.once and counts_only(node):
                continue
            if scan.when and not any(
                self._given(argument.value) for argument in node.arguments or () if argument.name.value in scan.when
            ):
                continue
            touched = count * math.ceil(sizes.get(scan.collection, 0) * scan.per_item)
            total += min(touched, sizes.get("runs", 0)) if scan.once else touched
        return total

    def _given(self, value: Any) -> bool:
        """Whether an argument's value is given (not null), a variable's included."""
        if isinstance(value, VariableNode):
            return self.variables.get(value.name.value) is not None
        return not isinstance(value, NullValueNode)

    def _passes(self, node: FieldNode, definition: GraphQLField) -> int:
        """The passes over the search index a searching field asks for (0 for any other field).

        Raises:
            SearchTooLarge: its query is over the search limits.
        """
        argument = SEARCHES.get(node.name.value)
        if argument is None or argument not in definition.args:
            return 0
        value: Any = None
        for given in node.arguments or ():
            if given.name.value != argument:
                continue
            if isinstance(given.value, StringValueNode):
                value = given.value.value
            elif isinstance(given.value, VariableNode):
                value = self.variables.get(given.value.name.value)
        if not isinstance(value, str) or (not value and argument == "search"):
            return 0  # no query: `operations` lists every operation without searching
        return search_cost(value)

    def _page(self, node: FieldNode, definition: GraphQLField) -> int | None:
        """The page size a connection field asks for (`first` or `last`; the default page without either)."""
        if "first" not in definition.args:
            return None
        sizes: list[Any] = []
        for name in ("first", "last"):
            argument = definition.args.get(name)
            if argument is None:
                continue
            value: Any = argument.default_value
            for given in node.arguments or ():
                if given.name.value != name:
                    continue
                if isinstance(given.value, IntValueNode):
                    value = int(given.value.value)
                elif isinstance(given.value, VariableNode):
                    value = self.variables.get(given.value.name.value, value)
                else:
                    value = None  # a literal null
            if value is not None and value is not Undefined:
                sizes.append(value)
        if not sizes:
            return min(self.model.default_page, self.model.max_page)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in sizes):
            return self.model.max_page
        return min(max(int(max(sizes)), 0), self.model.max_page)


def _sized(node: FieldNode) -> bool:
    """Whether the field's node gives `first` or `last` itself."""
    return any(argument.name.value in ("first", "last") for argument in node.arguments or ())


def _is_list(definition: GraphQLField) -> bool:
    kind = definition.type
    if isinstance(kind, GraphQLNonNull):
        kind = kind.of_type
    return isinstance(kind, GraphQLList)

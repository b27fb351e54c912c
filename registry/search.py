"""Search: the runs a query (`kernelindex.registry.search_query`) matches, from an index built once per snapshot.

Matching (ours): text is case-insensitive and tokenized on `_`, `-` and spaces, so "fused attention"
finds `fused_attention_*`; each term must match a run's operation or implementation (name or title),
as a run of whole words. A GPU word matches a product as a whole word ("b200" is NVIDIA B200, not
GB200) or an architecture. Results are ranked by relevance (per term: 3 for the operation's name, 2 for
its title, 1 for the implementation; summed), then eligible runs by rank, then newest, then digest.

What it costs: a term's score depends only on the run's operation and implementation, so the index
tokenizes each name and title once per snapshot, maps every word to the operations and
implementations holding it, and groups the runs by (operation, implementation) pair (4,291 pairs for
9,508 runs in the embedded registry). A query scores each term once per candidate pair, the most
selective term first, and drops a pair at its first missing term. Each facet value is a set of runs
(`kernelindex.registry.search_facets`), so filters are intersections. Large answers sort by every run's place in
the order of answers, computed once. The index lives as long as its snapshot's graph, and what it keeps
grows with the registry, never with the queries (the phrase cache is bounded).
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NamedTuple, TypeVar

from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.search_facets import FACETS, Facets
from kernelindex.registry.search_query import (
    DTYPE_ALIASES,
    MAX_QUERY_CHARS,
    MAX_TERMS,
    Facet,
    Intent,
    Issue,
    gpu_keys_matching,
    parse_query,
    search_cost,
    tokens,
)

__all__ = [
    "DTYPE_ALIASES",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "Facet",
    "Intent",
    "Issue",
    "gpu_keys_matching",
    "parse_query",
    "passes",
    "prepare",
    "search_cost",
    "search_runs",
    "search_scored",
    "tokens",
]

Document = Callable[[str], Mapping[str, Any]]
Pair = tuple[str, str]  # (operation digest, implementation digest): what a run's text score depends on
_K = TypeVar("_K")
_V = TypeVar("_V")

SMALL_ANSWER = 256
"""Answers up to this many runs sort by each run's (rank, newest, digest); larger ones by every run's
place in that order, computed once per snapshot (it ranks every cohort)."""
TERM_CACHE = 256
"""Phrases whose scores an index keeps (each holds at most every operation and implementation)."""
_FEW = 8
"""A word's implementations are kept as a tuple up to this many (a set of one takes 216 bytes, a 1-tuple 48),
as a frozenset beyond (asked for membership once per candidate pair)."""


def search_runs(graph: Graph, intent: Intent, document: Document) -> list[str]:
    """The runs an intent matches, most relevant first. `document(digest)` reads a stored manifest
    (for the facets the graph does not keep: dtypes, shapes, layouts, frameworks, CUDA, licences);
    it is called at most once per manifest per snapshot (and not at all for one already read)."""
    return _index_of(graph).search(intent, document).digests


def search_scored(graph: Graph, intent: Intent, document: Document) -> list[tuple[str, int]]:
    """The same runs in the same order, each with its relevance: the sum over the query's text terms
    of 3 (the operation's name holds it), 2 (its title does) or 1 (the implementation's name or title)."""
    answer = _index_of(graph).search(intent, document)
    return list(zip(answer.digests, answer.scores(), strict=True))


def passes(graph: Graph) -> int:
    """The passes over `graph`'s search index its searches have made so far: one per search (its runs) and
    one per term, the unit `search_cost` predicts. What a test counts to see that a query's work is bounded
    by its cost (and that a refused query did none)."""
    found = _INDEXES.get(graph)
    return 0 if found is None else found.passes


def prepare(graph: Graph, document: Document) -> None:
    """Build now what searching `graph` may need, rather than on the first search that needs it: the
    index, every run's place in the order of answers (which ranks every cohort), and every facet (which
    reads each manifest the runs name, once per blob). For a server preparing a new snapshot in the
    background, beside `Graph.prepare`."""
    index = _index_of(graph)
    index._positions()
    for kind in FACETS:
        index.facets.runs(kind, None, document)


# The per-snapshot index ------------------------------------------------------------------------------

_INDEXES: weakref.WeakKeyDictionary[Graph, _Index] = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def _index_of(graph: Graph) -> _Index:
    found = _INDEXES.get(graph)
    if found is None:
        with _INDEXES_LOCK:  # built once per snapshot, however many searches arrive together
            found = _INDEXES.get(graph)
            if found is None:
                found = _INDEXES[graph] = _Index(graph)
    return found


class _Answer(NamedTuple):
    """The runs of an answer in order, and what gives their scores: the scores themselves, or the sort
    keys they are encoded in (`-score * size + place`), or None when every score is 0."""

    digests: list[str]
    encoded: list[int] | None
    size: int  # 0: `encoded` holds the scores as they are

    def scores(self) -> list[int]:
        if self.encoded is None:
            return [0] * len(self.digests)
        if not self.size:
            return self.encoded
        return [-(key // self.size) for key in self.encoded]


class _Words(NamedTuple):
    name: tuple[str, ...]
    title: tuple[str, ...] | None  # None without a title


class _Term(NamedTuple):
    """One distinct text term of a query: how each operation and implementation scores on it."""

    operations: dict[str, int]  # operation -> 3 (name) or 2 (title)
    implementations: Collection[str]  # implementations whose name or title holds it (score 1); read only
    times: int  # how many times the query says it (each counts)


class _Index:
    """What searching one snapshot needs, computed from its graph once."""

    def __init__(self, graph: Graph) -> None:
        # Weakly: the index is the value of its graph's entry in a weak mapping, and must not keep it alive.
        self._graph = weakref.ref(graph)
        self.operation_words: dict[str, _Words] = {}
        self.implementation_words: dict[str, _Words] = {}
        self._terms: dict[tuple[str, ...], _Term] = {}  # phrase -> how it scores, at most TERM_CACHE
        self.facets = Facets(graph)
        self._orders: dict[str, tuple[int, int, str]] = {}  # run -> (rank, -observed, digest), until positions
        self._position: dict[str, int] = {}  # run -> its place in that order, for large answers
        self._in_order: list[str] | None = None
        self.passes = 0  # searches and terms looked up (`passes`)
        nodes = graph.nodes
        runs_by_pair: dict[Pair, list[str]] = {}
        pairs_by_operation: dict[str, list[Pair]] = {}
        pairs_by_implementation: dict[str, list[Pair]] = {}
        for digest, facts in graph.facts.items():
            run = nodes[digest]
            assert isinstance(run, n.Run)
            pair = (facts.operation or "", run.implementation)
            found = runs_by_pair.get(pair)
            if found is None:
                found = runs_by_pair[pair] = []
                pairs_by_operation.setdefault(pair[0], []).append(pair)
                pairs_by_implementation.setdefault(pair[1], []).append(pair)
            found.append(digest)
        # Tuples, not lists or sets, once built: most pairs have one run, most words one implementation, and
        # a set of one takes 216 bytes where a 1-tuple takes 48 (the 1x index: 5.2 MB with sets and lists).
        self.runs_by_pair: dict[Pair, tuple[str, ...]] = _tuples(runs_by_pair)
        self.pairs_by_operation: dict[str, tuple[Pair, ...]] = _tuples(pairs_by_operation)
        self.pairs_by_implementation: dict[str, tuple[Pair, ...]] = _tuples(pairs_by_implementation)
        operations_by_word: dict[str, list[str]] = {}
        operations_by_name_word: dict[str, list[str]] = {}
        implementations_by_word: dict[str, list[str]] = {}
        for operation in self.pairs_by_operation:
            words = self._words(operation, self.operation_words, operations_by_word)
            for word in dict.fromkeys(words.name) if words else ():
                operations_by_name_word.setdefault(word, []).append(operation)
        for implementation in self.pairs_by_implementation:
            self._words(implementation, self.implementation_words, implementations_by_word)
        self.operations_by_word: dict[str, tuple[str, ...]] = _tuples(operations_by_word)  # name or title
        self.operations_by_name_word: dict[str, tuple[str, ...]] = _tuples(operations_by_name_word)
        # Asked whether each candidate pair's implementation is among a word's (`_pairs`): a frozenset when many.
        self.implementations_by_word: dict[str, tuple[str, ...] | frozenset[str]] = {
            word: tuple(found) if len(found) <= _FEW else frozenset(found)
            for word, found in implementations_by_word.items()
        }

    @property
    def graph(self) -> Graph:
        graph = self._graph()
        assert graph is not None, "an index is only used through its live graph"
        return graph

    def _words(self, digest: str, words: dict[str, _Words], by_word: dict[str, list[str]]) -> _Words | None:
        node = self.graph.nodes.get(digest)
        if node is None:
            return None
        # Interned: the same few thousand words recur in tens of thousands of names and titles.
        name, title = tuple(map(sys.intern, tokens(node.name))), node.title
        found = words[digest] = _Words(name, tuple(map(sys.intern, tokens(title))) if title else None)
        for word in dict.fromkeys((*found.name, *(found.title or ()))):  # each word once per digest
            by_word.setdefault(word, []).append(digest)
        return found

    # Text --------------------------------------------------------------------------------------------

    def _term(self, needle: tuple[str, ...], times: int) -> _Term:
        self.passes += 1
        if len(needle) == 1:  # one word: the index answers without reading any name again
            word = needle[0]
            operations = dict.fromkeys(self.operations_by_word.get(word, ()), 2)
            operations.update(dict.fromkeys(self.operations_by_name_word.get(word, ()), 3))
            return _Term(operations, self.implementations_by_word.get(word, ()), times)
        found = self._terms.get(needle)
        if found is None:
            found = self._phrase(needle)
            if len(self._terms) >= TERM_CACHE:
                self._terms.clear()
            self._terms[needle] = found
        return found._replace(times=times)

    def _phrase(self, needle: tuple[str, ...]) -> _Term:
        """Several words (or none): the names holding every word, read again for the words' order."""
        operations: dict[str, int] = {}
        implementations: set[str] = set()
        if needle:
            for digest in _holding(self.operations_by_word, needle):
                words = self.operation_words[digest]
                if _contains(words.name, needle):
                    operations[digest] = 3
                elif words.title is not None and _contains(words.title, needle):
                    operations[digest] = 2
            for digest in _holding(self.implementations_by_word, needle):
                words = self.implementation_words[digest]
                if _contains(words.name, needle) or (words.title is not None and _contains(words.title, needle)):
                    implementations.add(digest)
        return _Term(operations, frozenset(implementations), 1)

    def _pairs(self, text: list[str], operation_terms: list[str]) -> dict[Pair, int] | None:
        """Each (operation, implementation) pair every term matches, with its summed score; None
        without terms (every pair, score 0)."""
        if not text and not operation_terms:
            return None
        # A term scores by its words alone: "Fused-Attention" and "fused attention" are one term, said twice.
        terms = [self._term(needle, times) for needle, times in Counter(tokens(term) for term in text).items()]
        # `op:` terms name the operation (its name or title), never the implementation; they only filter.
        named = [
            _Term(self._term(needle, 1).operations, frozenset(), 0)
            for needle in dict.fromkeys(tokens(term) for term in operation_terms)
        ]
        everything = terms + named
        if any(not term.operations and not term.implementations for term in everything):
            return {}  # a term that matches nothing matches no run
        if len(everything) == 1 and terms:  # one term: its scores are the answer (an operation's first)
            term = terms[0]
            alone = {pair: term.times for d in term.implementations for pair in self.pairs_by_implementation[d]}
            for d, score in term.operations.items():
                alone.update(dict.fromkeys(self.pairs_by_operation[d], score * term.times))
            return alone

        # The most selective term first (fewest operations and implementations, about as few pairs):
        # pairs drop out soonest. The order changes no score.
        everything.sort(key=lambda term: len(term.operations) + len(term.implementations))
        first = everything[0]
        pool = {pair for d in first.operations for pair in self.pairs_by_operation[d]}
        pool.update(pair for d in first.implementations for pair in self.pairs_by_implementation[d])
        scored: dict[Pair, int] = {}
        for pair in pool:
            operation, implementation = pair
            total = 0
            for term in everything:
                score = term.operations.get(operation, 0)
                if not score and implementation in term.implementations:
                    score = 1
                if not score:
                    break  # a pair stops at its first missing term
                total += score * term.times
            else:
                scored[pair] = total
        return scored

    # Runs --------------------------------------------------------------------------------------------

    def search(self, intent: Intent, document: Document) -> _Answer:
        self.passes += 1
        graph = self.graph
        pairs = self._pairs(intent.text, intent.operations)
        candidates: set[str] | None = None

        def narrow(found: Iterable[str]) -> None:
            nonlocal candidates
            candidates = set(found) if candidates is None else candidates.intersection(found)

        gpu_index = graph.runs_by["gpu"]
        if intent.gpu is not None:
            narrow(d for key in gpu_keys_matching(intent.gpu, gpu_index) for d in gpu_index[key])
        if intent.architecture is not None:
            narrow(gpu_index.get(intent.architecture, ()))
        allowed = self._allowed(intent, document)
        if allowed is not None:
            candidates = set(allowed) if candidates is None else candidates.intersection(allowed)
        groups: list[tuple[int, Collection[str]]]  # (score, runs), unfiltered by `candidates`
        if pairs is None:
            if candidates is None:
                _, in_order = self._positions()
                return _Answer(list(in_order), None, 0)  # every run, in its place
            groups, candidates = [(0, candidates)], None
        else:
            groups = [(score, self.runs_by_pair[pair]) for pair, score in pairs.items()]
        return self._sorted(groups, candidates)

    def _sorted(self, groups: list[tuple[int, Collection[str]]], kept: set[str] | None) -> _Answer:
        """Most relevant first; among equals, ranked runs by rank, then newest, then by digest."""
        if sum(len(runs) for _, runs in groups) <= SMALL_ANSWER:
            chosen = [(-score, d) for score, runs in groups for d in runs if kept is None or d in kept]
            if self._in_order is not None:  # every run's place is known: the same order, by integers
                position, in_order = self._position, self._in_order
                placed = sorted([(key, position[d]) for key, d in chosen])
                return _Answer([in_order[entry[1]] for entry in placed], [-entry[0] for entry in placed], 0)
            order = self._order
            found = sorted([(key, order(d)) for key, d in chosen])
            return _Answer([entry[1][2] for entry in found], [-entry[0] for entry in found], 0)
        # A large answer sorts integers: every run's place in that order, computed once per snapshot.
        position, in_order = self._positions()
        size = len(in_order)
        keys: list[int] = []
        for score, runs in groups:
            base = -score * size
            if kept is None:
                keys.extend([position[d] + base for d in runs])
            else:
                keys.extend([position[d] + base for d in runs if d in kept])
        keys.sort()
        return _Answer([in_order[key % size] for key in keys], keys, size)

    def _order(self, digest: str) -> tuple[int, int, str]:
        found = self._orders.get(digest)
        if found is None:
            graph = self.graph
            rank = graph.rank(digest)
            run = graph.nodes[digest]
            assert isinstance(run, n.Run)
            found = self._orders[digest] = (rank if rank is not None else 1 << 30, -run.observed_ns, digest)
        return found

    def _positions(self) -> tuple[dict[str, int], list[str]]:
        if self._in_order is None:
            # Every run's rank: the cohorts' rankings, which a server computes after it starts anyway.
            in_order = sorted(self.graph.facts, key=self._order)
            self._position = {digest: place for place, digest in enumerate(in_order)}
            self._in_order = in_order
            self._orders = {}  # what the places now say (a tuple and two ints a run: 1.2 MB at 1x)
        return self._position, self._in_order

    def _allowed(self, intent: Intent, document: Document) -> frozenset[str] | None:
        """The runs every filter of the intent but text and GPU admits; None when there is no filter."""
        wanted: list[tuple[str, Any]] = []
        if intent.family is not None:
            wanted.append(("family", intent.family))
        if intent.minimum_trust is not None:
            wanted.append(("trust", intent.minimum_trust))
        if intent.language is not None:
            wanted.append(("language", intent.language))
        if intent.require_source:
            wanted.append(("source", True))
        wanted.extend(("dtype", dtype) for dtype in intent.dtypes)
        if intent.shape is not None:
            wanted.append(("shape", intent.shape))
        wanted.extend(("axis", item) for item in intent.axes.items())
        if intent.layout is not None:
            wanted.append(("layout", intent.layout))
        if intent.framework is not None:
            wanted.append(("framework", intent.framework))
        if intent.cuda_major is not None:
            wanted.append(("cuda", intent.cuda_major))
        if intent.license is not None:
            wanted.append(("license", intent.license))
        if intent.require_installable:
            wanted.append(("installable", True))
        if not wanted:
            return None
        return self.facets.selected(wanted, document)


def _holding(by_word: Mapping[str, Collection[str]], needle: tuple[str, ...]) -> set[str]:
    """The digests whose words hold every word of `needle` (a superset of those holding the phrase)."""
    found = sorted((by_word.get(word, ()) for word in set(needle)), key=len)
    return set(found[0]).intersection(*found[1:]) if found[0] else set()


def _tuples(lists: dict[_K, list[_V]]) -> dict[_K, tuple[_V, ...]]:
    return {key: tuple(values) for key, values in lists.items()}


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether `needle` appears in `haystack` as consecutive words."""
    size = len(needle)
    return any(haystack[i : i + size] == needle for i in range(len(haystack) - size + 1))

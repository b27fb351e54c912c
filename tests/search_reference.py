"""The search before it had an index (registry/search.py as it was), kept as the reference its
replacement must agree with, run for run, in the same order: every term scored against every run,
names tokenized again for each query. Used only by tests/test_search_index.py."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.search_query import DTYPE_ALIASES, FRAMEWORK_ALIASES, Intent, gpu_keys_matching, tokens

__all__ = ["reference_search_runs"]


def _walk(value: Any, key: str) -> Iterable[Any]:
    """Every value under `key` anywhere in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            yield from _walk(v, key)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key)


def _term_score(term: str, run: n.Run, graph: Graph, words: Callable[[str], tuple[str, ...]], operation: str) -> int:
    """How well one text term matches a run: 3 operation name, 2 operation title, 1 implementation."""
    needle = tokens(term)
    if not needle:
        return 0

    def contains(haystack: tuple[str, ...]) -> bool:
        return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))

    op = graph.nodes.get(operation)
    if op is not None:
        if contains(words(op.name)):
            return 3
        if op.title and contains(words(op.title)):
            return 2
    implementation = graph.nodes.get(run.implementation)
    if implementation is not None and (
        contains(words(implementation.name)) or (implementation.title and contains(words(implementation.title)))
    ):
        return 1
    return 0


def reference_search_runs(
    graph: Graph, intent: Intent, document: Callable[[str], Mapping[str, Any]]
) -> list[tuple[str, int]]:
    """The runs an intent matches, most relevant first, each with its relevance score. `document(digest)` reads a stored manifest
    (for the facets the graph does not keep: dtypes, shapes, layouts, frameworks, CUDA, licences)."""
    candidates: set[str] | None = None

    def narrow(found: Iterable[str]) -> None:
        nonlocal candidates
        candidates = set(found) if candidates is None else candidates.intersection(found)

    gpu_index = graph.runs_by["gpu"]
    if intent.gpu is not None:
        narrow(d for key in gpu_keys_matching(intent.gpu, gpu_index) for d in gpu_index[key])
    if intent.architecture is not None:
        narrow(gpu_index.get(intent.architecture, ()))
    pool: Iterable[str] = candidates if candidates is not None else graph.facts.keys()
    memo: dict[tuple[str, str], Any] = {}

    def cached(kind: str, digest: str, compute: Callable[[], Any]) -> Any:
        key = (kind, digest)
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    word_memo: dict[str, tuple[str, ...]] = {}

    def words(text: str) -> tuple[str, ...]:
        found = word_memo.get(text)
        if found is None:
            found = word_memo[text] = tokens(text)
        return found

    def doc(digest: str) -> Mapping[str, Any]:
        found: Mapping[str, Any] = cached("doc", digest, lambda: document(digest) if digest in graph.nodes else {})
        return found

    scored: list[tuple[int, int, int, str]] = []
    for digest in pool:
        run = graph.nodes[digest]
        facts = graph.facts[digest]
        assert isinstance(run, n.Run)
        operation = facts.operation or ""
        op = graph.nodes.get(operation)
        implementation = graph.nodes.get(run.implementation)
        if intent.family is not None and not (isinstance(op, n.Operation) and op.family.lower() == intent.family):
            continue
        if intent.minimum_trust is not None and facts.trust < intent.minimum_trust:
            continue
        if intent.language is not None and not (
            isinstance(implementation, n.Implementation) and implementation.language.lower() == intent.language
        ):
            continue
        if intent.require_source and not (
            isinstance(implementation, n.Implementation) and implementation.source_available
        ):
            continue
        if any(_term_score(term, run, graph, words, operation) < 2 for term in intent.operations):
            continue  # op: names the operation (its name or title), not an implementation
        hits = [_term_score(term, run, graph, words, operation) for term in intent.text]
        if 0 in hits or not _document_facets_hold(intent, run, doc, cached):
            continue
        rank = graph.rank(digest)
        scored.append((-sum(hits), rank if rank is not None else 1 << 30, -run.observed_ns, digest))
    scored.sort()
    return [(entry[3], -entry[0]) for entry in scored]


def _document_facets_hold(
    intent: Intent,
    run: n.Run,
    doc: Callable[[str], Mapping[str, Any]],
    cached: Callable[[str, str, Callable[[], Any]], Any],
) -> bool:
    if intent.dtypes:
        have = cached("dtypes", run.digest, lambda: _dtypes(doc(run.workload), doc(run.implementation)))
        if not set(intent.dtypes) <= have:
            return False
    if intent.shape is not None:
        shapes = cached(
            "shapes", run.workload, lambda: {tuple(s) for s in _walk(doc(run.workload), "shape") if _ints(s)}
        )
        if intent.shape not in shapes:
            return False
    if intent.axes:
        axes = doc(run.workload).get("spec", {}).get("axes") or {}
        if any(axes.get(name) != value for name, value in intent.axes.items()):
            return False
    if intent.layout is not None:
        layouts = cached(
            "layouts",
            run.digest,
            lambda: (
                {str(v).lower() for v in _walk(doc(run.workload), "layout")}
                | {str(v).lower() for lst in _walk(doc(run.implementation), "layouts") for v in (lst or ())}
            ),
        )
        if intent.layout not in layouts:
            return False
    if intent.framework is not None or intent.cuda_major is not None:
        software = (doc(run.environment).get("spec") or {}).get("software") or {}
        if intent.framework is not None:
            name = str((software.get("framework") or {}).get("name") or "").lower()
            interface = str(((doc(run.implementation).get("spec") or {}).get("callable") or {}).get("interface") or "")
            if intent.framework not in {FRAMEWORK_ALIASES.get(name, name), FRAMEWORK_ALIASES.get(interface, interface)}:
                return False
        if intent.cuda_major is not None:
            major = re.match(r"\d+", str(software.get("cudaToolkit") or ""))
            if major is None or int(major.group()) != intent.cuda_major:
                return False
    if intent.license is not None or intent.require_installable:
        spec = doc(run.implementation).get("spec") or {}
        if intent.license is not None:
            licensing = spec.get("licensing") or {}
            declared = {str(licensing.get(k) or "").lower() for k in ("declared", "concluded")}
            if intent.license not in declared:
                return False
        if intent.require_installable and not any(v.get("install") for v in spec.get("buildVariants") or ()):
            return False
    return True


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _dtypes(workload: Mapping[str, Any], implementation: Mapping[str, Any]) -> set[str]:
    found = {DTYPE_ALIASES.get(str(v).lower(), str(v).lower()) for v in _walk(workload, "dtype")}
    for listed in _walk(implementation, "dtypes"):
        found.update(DTYPE_ALIASES.get(str(v).lower(), str(v).lower()) for v in listed or ())
    return found

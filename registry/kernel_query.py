"""When a search query reads as a kernel request, and which: the rule that decides whether the resolver's
answer (`kernelindex.registry.resolve`) is shown above a search's results.

A query reads as a kernel request when it names an operation and asks nothing the resolver cannot answer:

- **the operation**: the one `op:` term, else all the free text as one name (`fused add rmsnorm`), else the
  `family:` term; it must name an operation of the registry as the resolver names them (a name, a title,
  a family or a source's benchmark name: `rmsnorm` finds the operation titled RMSNorm). Free text that
  names no operation is a search for words, not a request.
- **the rest**, each at most once: a GPU (`gpu:`, a GPU word or an architecture), a dtype, a shape and
  axis bindings (`tokens=3000`). These are the facets the resolver matches.
- anything else (language, framework, layout, CUDA, trust, licence, source, installable, more than one
  operation, GPU term or dtype, or a part of the query that could not be read) narrows the list of runs in
  ways the resolver does not: such a query is a search only.

>>> from kernelindex.registry.search_query import parse_query
>>> request_terms(parse_query("rmsnorm b200 bf16 tokens=3000"))
('rmsnorm', 'b200', 'bf16', (('tokens', 3000),), None)
>>> request_terms(parse_query("rmsnorm triton")) is None, request_terms(parse_query("b200")) is None
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kernelindex.registry.errors import AmbiguousName
from kernelindex.registry.graph import Graph
from kernelindex.registry.names import match_operations
from kernelindex.registry.resolve import KernelRequest
from kernelindex.registry.search_query import Intent

__all__ = ["kernel_request", "request_terms"]

Terms = tuple[str, str | None, str | None, tuple[tuple[str, int], ...], tuple[int, ...] | None]


def request_terms(intent: Intent) -> Terms | None:
    """(operation, gpu, dtype, axes, shape) as the query states them, or None when its parts are not only
    those of a kernel request (the rule above, before the operation is looked up)."""
    if intent.issues or intent.layout or intent.framework or intent.language or intent.cuda_major is not None:
        return None
    if intent.minimum_trust is not None or intent.license or intent.require_source or intent.require_installable:
        return None
    if len(intent.dtypes) > 1 or sum(f.field in ("gpu", "arch") for f in intent.facets) > 1:
        return None
    named = [
        *intent.operations,
        *([" ".join(intent.text)] if intent.text else []),
        *([intent.family] if intent.family else []),
    ]
    if len(named) != 1:
        return None
    gpu = intent.gpu or intent.architecture
    dtype = intent.dtypes[0] if intent.dtypes else None
    return named[0], gpu, dtype, tuple(sorted(intent.axes.items())), intent.shape


def kernel_request(graph: Graph, intent: Intent, document: Callable[[str], Mapping[str, Any]]) -> KernelRequest | None:
    """The kernel request a search query reads as, in `graph`; None when it does not read as one.
    `document(oid)` reads a stored manifest (for the sources' benchmark names)."""
    terms = request_terms(intent)
    if terms is None:
        return None
    operation, gpu, dtype, axes, shape = terms
    try:
        if not match_operations(graph, operation, document):
            return None
    except AmbiguousName:
        return KernelRequest(operation, gpu, dtype, axes, shape)  # the resolver says why it is ambiguous
    return KernelRequest(operation, gpu, dtype, axes, shape)

"""GPUs: hardware products as environments name them, with their cohorts and leaders by operation
(`kernelindex.registry.catalog` groups environments by product and tallies what was measured on each)."""

from __future__ import annotations

import strawberry

from kernelindex.registry import catalog
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.base import Info, typed
from kernelindex.schema.types.cohorts import Cohort
from kernelindex.schema.types.kinds import Environment, Operation, operation_of
from kernelindex.schema.types.pages import After, Before, Connection, First, Last, Window, follows_cursor, paginate

__all__ = ["Gpu", "GpuOperation", "find_gpu", "gpu_list"]


@strawberry.type(
    description='A GPU product the registry has environments for ("NVIDIA B200"), whatever the software stack '
    "its runs used: every environment whose product is spelled the same, ignoring case and punctuation."
)
class Gpu:
    _graph: strawberry.Private[Graph]
    _tally: strawberry.Private[catalog.GpuTally]

    def _at(self, graph: Graph) -> Gpu | None:
        found = catalog.find_gpu(graph, self._tally.slug)
        return Gpu(_graph=graph, _tally=found) if found else None

    @strawberry.field(
        description="Its id in URLs and in `gpu(id:)`: the product in lower case, each run of other characters "
        'than letters and digits one "-" ("nvidia-b200").'
    )
    def slug(self) -> str:
        return self._tally.slug

    @strawberry.field(description='The hardware vendor as environments spell it ("nvidia", "amd").')
    def vendor(self) -> str:
        return self._tally.vendor

    @strawberry.field(description='The product as environments spell it ("NVIDIA B200").')
    def product(self) -> str:
        return self._tally.product

    @strawberry.field(
        description='The architecture it is known by ("sm_100", "gfx942"), or "unknown" when no environment '
        "says. See `architectures` for all of them."
    )
    def architecture(self) -> str:
        return self._tally.architectures[0] if self._tally.architectures else "unknown"

    @strawberry.field(description="Every architecture its environments name, sorted; empty when none says.")
    def architectures(self) -> list[str]:
        return list(self._tally.architectures)

    @strawberry.field(description="Kernel runs measured on it (in any of its environments).")
    def run_count(self) -> int:
        return self._tally.runs

    @strawberry.field(description="Cohorts (comparison groups) measured on it.")
    def cohort_count(self) -> int:
        return len(self._tally.cohorts)

    @strawberry.field(description="Operations with at least one cohort on it.")
    def operation_count(self) -> int:
        return len(self._tally.operations)

    @strawberry.field(description="The environments (hardware and software stacks) of this product, by digest.")
    def environments(self) -> list[Environment]:
        return [typed(self._graph, digest, Environment) for digest in self._tally.environments]

    @strawberry.field(description="Its cohorts, largest first, then by key.")
    @follows_cursor
    def cohorts(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Cohort] | None:
        graph = self._graph
        return paginate(
            graph,
            self._tally.cohorts,
            Window(first, after, last, before),
            lambda k: Cohort(_graph=graph, _cohort=graph.cohorts[k]),
        )

    @strawberry.field(
        description="The operations measured on it, most cohorts first (then by operation digest), each with "
        "its cohorts on this GPU and their leaders."
    )
    @follows_cursor
    def operations(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[GpuOperation] | None:
        graph, tally = self._graph, self._tally
        return paginate(
            graph,
            tally.operations,
            Window(first, after, last, before),
            lambda o: GpuOperation(_graph=graph, _gpu=tally, _operation=o),
        )


@strawberry.type(description="One operation as measured on one GPU: its cohorts there, each with its #1.")
class GpuOperation:
    _graph: strawberry.Private[Graph]
    _gpu: strawberry.Private[catalog.GpuTally]
    _operation: strawberry.Private[str]

    def _at(self, graph: Graph) -> GpuOperation | None:
        found = catalog.find_gpu(graph, self._gpu.slug)
        if found is None or self._operation not in found.operations:
            return None
        return GpuOperation(_graph=graph, _gpu=found, _operation=self._operation)

    def _keys(self) -> list[str]:
        return [k for k in self._gpu.cohorts if self._graph.cohorts[k].operation == self._operation]

    @strawberry.field(description="The operation; null only if its manifest is missing from this commit.")
    def operation(self) -> Operation | None:
        return operation_of(self._graph, self._operation)

    @strawberry.field(description="How many of the operation's cohorts are on this GPU.")
    def cohort_count(self) -> int:
        return len(self._keys())

    @strawberry.field(description="The operation's cohorts on this GPU, largest first, then by key.")
    @follows_cursor
    def cohorts(
        self,
        info: Info,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[Cohort] | None:
        graph = self._graph
        return paginate(
            graph,
            self._keys(),
            Window(first, after, last, before),
            lambda k: Cohort(_graph=graph, _cohort=graph.cohorts[k]),
        )


def gpu_list(graph: Graph) -> list[Gpu]:
    """Every GPU of the graph, most kernel runs first, then by product."""
    found = sorted(catalog.gpus(graph), key=lambda g: (-g.runs, g.product))
    return [Gpu(_graph=graph, _tally=tally) for tally in found]


def find_gpu(graph: Graph, text: str) -> Gpu | None:
    """The GPU a slug or a product names, any case."""
    tally = catalog.find_gpu(graph, text)
    return Gpu(_graph=graph, _tally=tally) if tally else None

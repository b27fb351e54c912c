"""The read side's root fields of a snapshot: what changed commit by commit (`changes`), the kernel resolver
(`resolveKernel`), whether a result still stands (`runStanding`) and the dataset (`catalogExport`).
`Snapshot` extends `ReadRoot`."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kernelindex import registry
from kernelindex.core.errors import BadUserInput
from kernelindex.registry.graph import Graph
from kernelindex.registry.resolve import KernelRequest
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.changes import CommitChanges, changes_connection
from kernelindex.schema.types.exports import CatalogExport, catalog_export
from kernelindex.schema.types.pages import After, Before, Connection, First, Last, Window, follows_cursor, page_bounds
from kernelindex.schema.types.resolution import MAX_AXES, MAX_SHAPE, AxisValueInput, KernelResolution, resolution_of
from kernelindex.schema.types.standing import RunStanding, standing_of

__all__ = ["MAX_NAME", "ReadRoot"]

MAX_NAME = 200
"""Characters of a name a request may give (an operation, a GPU, a dtype, an axis)."""


def _bounded(name: str, value: str | None) -> str | None:
    if value is not None and len(value) > MAX_NAME:
        raise BadUserInput(f"{name}: at most {MAX_NAME} characters (got {len(value)})")
    return value


@strawberry.type
class ReadRoot:
    """The read side's fields of a snapshot (not itself in the schema)."""

    _graph: strawberry.Private[Graph | None] = None

    def _read_graph(self, info: Info) -> Graph:
        return self._graph if self._graph is not None else info.context.graph(None)

    @strawberry.field(
        description="What each commit of main published, retracted, superseded and verified, and which records "
        "moved because of it: one entry per commit of main's first-parent history up to this snapshot's commit, "
        "newest first. `since` lists only the commits after it (what a poller has not seen yet). Empty for a "
        "snapshot off main."
    )
    @follows_cursor
    def changes(
        self,
        info: Info,
        since: Annotated[
            str | None,
            strawberry.argument(
                description="A commit of main's first-parent history (full id, unique prefix, branch or tag) at or "
                "before this snapshot's commit: only the commits after it are listed. Null: the whole history. "
                "Anything else is REVISION_NOT_FOUND."
            ),
        ] = None,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
    ) -> Connection[CommitChanges]:
        page_bounds(first)
        return changes_connection(
            info, self._read_graph(info), _bounded("since", since), Window(first, after, last, before)
        )

    @strawberry.field(
        description="The kernel resolver: for an operation (name, title, family or a source's benchmark name, any "
        "case: 'rmsnorm' finds RMSNorm), and optionally a GPU, a dtype and a case (axis bindings and/or a tensor "
        "shape), the cohorts that measured exactly that, each with its leader, best verified and best "
        "deployable run and why; else the nearest measured cases with each difference explained; else the "
        "problems, with the nearest names the registry knows. Never an error for what a request says."
    )
    def resolve_kernel(
        self,
        info: Info,
        operation: Annotated[
            str,
            strawberry.argument(
                description="The operation: its name, title ('RMSNorm'), family ('attention'), digest or a "
                "source's benchmark name ('amd-fp8-mm'); case, `-`, `_` and spaces do not matter."
            ),
        ],
        gpu: Annotated[
            str | None,
            strawberry.argument(
                description="A GPU product ('NVIDIA B200', 'b200': a whole word) or architecture ('sm_100'); "
                "null: any GPU."
            ),
        ] = None,
        dtype: Annotated[
            str | None,
            strawberry.argument(description="A dtype, with aliases ('bf16', 'bfloat16', 'half'); null: any dtype."),
        ] = None,
        axes: Annotated[
            list[AxisValueInput] | None,
            strawberry.argument(
                description=f'Axis bindings of the case (`[{{name: "tokens", value: 3000}}]`), at most {MAX_AXES}; '
                "null or empty: any case."
            ),
        ] = None,
        shape: Annotated[
            list[int] | None,
            strawberry.argument(
                description=f"A tensor shape of the case (`[2048, 4096]`), at most {MAX_SHAPE} dimensions; null: any."
            ),
        ] = None,
    ) -> KernelResolution:
        bindings = axes or []
        if len(bindings) > MAX_AXES:
            raise BadUserInput(f"axes: at most {MAX_AXES} bindings (got {len(bindings)})")
        if shape is not None and not 1 <= len(shape) <= MAX_SHAPE:
            raise BadUserInput(f"shape: 1 to {MAX_SHAPE} dimensions (got {len(shape)})")
        if shape is not None and any(d < 0 for d in shape):
            raise BadUserInput("shape: dimensions are 0 or more")
        names = [binding.name for binding in bindings]
        if len(set(names)) != len(names):
            raise BadUserInput("axes: each axis at most once")
        for binding in bindings:
            _bounded("axes.name", binding.name)
        request = KernelRequest(
            _bounded("operation", operation) or "",
            _bounded("gpu", gpu),
            _bounded("dtype", dtype),
            tuple(sorted((binding.name, binding.value) for binding in bindings)),
            tuple(shape) if shape is not None else None,
        )
        return resolution_of(self._read_graph(info), request, info.context.objects.get)

    @strawberry.field(
        description="Whether a result still stands: the run's standing at this snapshot (ask the head of main) "
        "for a reader who saw it at `readAt`: retracted or superseded (with the signed reason, the commit and "
        "who signed it), verified, or current, and which of those facts came after `readAt`. A pinned page "
        "never changes; this is where it points."
    )
    def run_standing(
        self,
        info: Info,
        run: Annotated[str, strawberry.argument(description="The run's digest (`sha256:<64 hex>`).")],
        read_at: Annotated[
            str | None,
            strawberry.argument(
                description="The commit the reader saw the run at (full id, unique prefix, branch or tag): the "
                "facts published after it are `later`. Null: every fact counts as later."
            ),
        ] = None,
    ) -> RunStanding:
        try:
            digest = registry.parse_digest(run)
        except ValueError:
            raise BadUserInput(f"run: expected sha256:<64 lowercase hex digits>, not {run[:80]!r}") from None
        seen = info.context.snapshots.store().resolve(read_at) if read_at is not None else None
        return standing_of(info, self._read_graph(info), digest, seen)

    @strawberry.field(
        description="The dataset: the catalog export of this snapshot's commit, what it holds, its digest and how "
        "to cite it. Null for a snapshot off main (exports pin commits of main)."
    )
    def catalog_export(self, info: Info) -> CatalogExport | None:
        return catalog_export(self._read_graph(info))

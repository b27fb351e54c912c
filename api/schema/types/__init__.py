"""The GraphQL output types of kernel results, one module per concept; names match the SDL.

Each type wraps a node of one snapshot's graph. Resolvers are thin: lookups in the graph's indexes
(no N+1: every relation is a dict lookup) and, for fields the graph does not keep, the stored
manifest read by blob id. `kernelindex.schema.types` re-exports every public name, so `from api import types as t`
keeps working wherever the types live. Modules that name each other's types import the higher one's
lazily (`kernelindex.schema.types.base.build`): no module imports another that imports it back.
"""

from __future__ import annotations

from kernelindex.schema.types.base import Info, Named, Observed, build, document, ordered_runs, published_at, typed
from kernelindex.schema.types.cohorts import Cohort, CohortEntry, RecordEntry, RecordEvent
from kernelindex.schema.types.compare import Compare, CompareEntry, CompareRow, compare_runs
from kernelindex.schema.types.enums import (
    CitationFormat,
    CohortProfile,
    EntryOrder,
    IneligibilityReason,
    ManifestKind,
    RecordCause,
    RecordOrder,
    RunOrder,
    RunStatus,
    Trust,
    WorkloadKind,
    trust_of_enum,
)
from kernelindex.schema.types.kinds import Environment, Implementation, Operation, Project, Protocol, Workload
from kernelindex.schema.types.lifecycle import Attestation, Retraction, Supersession, Verification
from kernelindex.schema.types.manifests import KindCount, Manifest
from kernelindex.schema.types.measures import Artifact, Interval, Measurement, Metric, Primary, SourceNative
from kernelindex.schema.types.nodes import node_type
from kernelindex.schema.types.pages import (
    DEFAULT_PAGE,
    MAX_PAGE,
    After,
    Before,
    Connection,
    CursorError,
    Edge,
    First,
    Last,
    PageInfo,
    PageSizeError,
    Window,
    cursor_commit,
    follows_cursor,
    head_graph,
    page_bounds,
    paginate,
)
from kernelindex.schema.types.provenance import (
    Commit,
    Person,
    Provenance,
    Signature,
    Source,
    Trailer,
    commit_type,
    provenance_of,
    source_type,
)
from kernelindex.schema.types.runs import Run

__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "After",
    "Artifact",
    "Attestation",
    "Before",
    "CitationFormat",
    "Cohort",
    "CohortEntry",
    "CohortProfile",
    "Commit",
    "Compare",
    "CompareEntry",
    "CompareRow",
    "Connection",
    "CursorError",
    "Edge",
    "EntryOrder",
    "Environment",
    "First",
    "Implementation",
    "IneligibilityReason",
    "Info",
    "Interval",
    "KindCount",
    "Last",
    "Manifest",
    "ManifestKind",
    "Measurement",
    "Metric",
    "Named",
    "Observed",
    "Operation",
    "PageInfo",
    "PageSizeError",
    "Person",
    "Primary",
    "Project",
    "Protocol",
    "Provenance",
    "RecordCause",
    "RecordEntry",
    "RecordEvent",
    "RecordOrder",
    "Retraction",
    "Run",
    "RunOrder",
    "RunStatus",
    "Signature",
    "Source",
    "SourceNative",
    "Supersession",
    "Trailer",
    "Trust",
    "Verification",
    "Window",
    "Workload",
    "WorkloadKind",
    "build",
    "commit_type",
    "compare_runs",
    "cursor_commit",
    "document",
    "follows_cursor",
    "head_graph",
    "node_type",
    "ordered_runs",
    "page_bounds",
    "paginate",
    "provenance_of",
    "published_at",
    "source_type",
    "trust_of_enum",
    "typed",
]

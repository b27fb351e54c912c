"""What the registry holds, tallied for its index pages: GPUs (environments grouped by product), project
standings, and sources with what they published. Each tally is computed once per graph and kept as long
as the graph lives; all are pure reads of the graph.

**A GPU** is a hardware product as environments name it (`spec.hardware.product`: "NVIDIA B200"),
whatever its software stack: KernelIndex's GPU pages group so. Its slug is the product in lower case with
every run of other characters than letters and digits made one `-` ("nvidia-b200"), which is also how
two spellings of one product ("NVIDIA B200", "nvidia b200") become one GPU.

**A project's standing** (KernelIndex's standings surface, counted inside each cohort, never across):

- *cohorts led*: cohorts whose #1 under ranking-v1 at this commit (`Cohort.leader`) is a run of one of
  the project's implementations;
- *records held*: cohorts whose current record (the records ledger's holder: the first run to reach
  the cohort's best value) is one of the project's runs. It differs from *led* when runs tie at the
  top: ranking-v1 presents a tie by trust, then newest first, while the record stays with whoever set it;
- *cohorts entered*: cohorts holding at least one of the project's runs;
- and its runs and implementations.

A run belongs to the project its implementation's `metadata.labels.project` names (the first such
project by digest when several manifests share the name, as the API's `Implementation.project` does).

**A source** is a `Source:` trailer of main's commits (or a run's `sourceNative.source`): its manifests
are those its commits first published, its latest commit the newest such commit up to this graph's.

>>> gpu_slug("NVIDIA GeForce RTX 4090"), gpu_slug("AMD Instinct MI300X"), gpu_slug("  --  ")
('nvidia-geforce-rtx-4090', 'amd-instinct-mi300x', '')
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Environment, Implementation, Project, Run, ServingRun

__all__ = [
    "GpuTally",
    "SourceTally",
    "Standing",
    "find_gpu",
    "gpu_slug",
    "gpus",
    "project_digest",
    "source_tally",
    "sources",
    "standings",
]

_NOT_WORD = re.compile(r"[^a-z0-9]+")


def gpu_slug(product: str) -> str:
    """A product's slug: lower case, each run of other characters than a-z and 0-9 one `-`, none at the ends."""
    return _NOT_WORD.sub("-", product.lower()).strip("-")


@dataclass(frozen=True, slots=True)
class GpuTally:
    """One GPU: its slug, product and vendor as environments spell them, its architectures (none when every
    environment says `unknown`), its environments, and the runs and cohorts measured on them."""

    slug: str
    product: str
    vendor: str
    architectures: tuple[str, ...]
    environments: tuple[str, ...]
    runs: int
    cohorts: tuple[str, ...]  # largest first, then key
    operations: tuple[str, ...]  # the operations of those cohorts, most cohorts first, then digest


@dataclass(frozen=True, slots=True)
class Standing:
    """One project's standing at a commit (the module docstring defines each count)."""

    project: str  # the SoftwareProject's digest
    led: int
    records: int
    entered: int
    runs: int
    implementations: int


@dataclass(frozen=True, slots=True)
class SourceTally:
    """One source: the manifests its commits first published, its kernel and serving runs, its commits on
    main up to this graph's, and the newest of them (None when none published anything yet)."""

    slug: str
    manifests: int
    runs: int
    serving_runs: int
    commits: int
    latest_commit: str | None


T = TypeVar("T")
_CACHES: dict[str, weakref.WeakKeyDictionary[Graph, object]] = {}
_LOCK = threading.Lock()


def _kept(name: str, graph: Graph, make: Callable[[Graph], T]) -> T:
    """`make(graph)`, computed once per graph and tally name (two threads may both compute it: the same)."""
    with _LOCK:
        cache = _CACHES.setdefault(name, weakref.WeakKeyDictionary())
        found = cache.get(graph)
    if found is None:
        found = make(graph)
        with _LOCK:
            found = cache.setdefault(graph, found)
    return found  # type: ignore[return-value]


# GPUs -----------------------------------------------------------------------------------------------


def gpus(graph: Graph) -> tuple[GpuTally, ...]:
    """Every GPU of the graph's environments, by vendor then product (case-insensitive)."""
    return _kept("gpus", graph, _gpus)


def find_gpu(graph: Graph, text: str) -> GpuTally | None:
    """The GPU `text` names: its slug, or its product in any case and spacing ("nvidia b200")."""
    wanted = gpu_slug(text)
    return next((gpu for gpu in gpus(graph) if gpu.slug == wanted), None) if wanted else None


def _gpus(graph: Graph) -> tuple[GpuTally, ...]:
    grouped: dict[str, list[Environment]] = {}
    for node in graph.nodes.values():
        if type(node) is Environment:
            slug = gpu_slug(node.product)
            if slug:
                grouped.setdefault(slug, []).append(node)
    cohorts_by_environment: dict[str, list[str]] = {}
    for key, cohort in graph.cohorts.items():
        cohorts_by_environment.setdefault(cohort.environment, []).append(key)
    runs_by = graph.runs_by["environment"]
    found = []
    for slug, environments in grouped.items():
        environments.sort(key=lambda e: e.digest)
        digests = tuple(e.digest for e in environments)
        cohorts = sorted(
            (k for d in digests for k in cohorts_by_environment.get(d, ())),
            key=lambda k: (-len(graph.cohorts[k].members), k),
        )
        per_operation: dict[str, int] = {}
        for key in cohorts:
            operation = graph.cohorts[key].operation
            per_operation[operation] = per_operation.get(operation, 0) + 1
        found.append(
            GpuTally(
                slug=slug,
                product=min(e.product for e in environments),
                vendor=min(e.vendor for e in environments),
                architectures=tuple(sorted({e.architecture for e in environments} - {"unknown"})),
                environments=digests,
                runs=sum(len(runs_by.get(d, ())) for d in digests),
                cohorts=tuple(cohorts),
                operations=tuple(sorted(per_operation, key=lambda o: (-per_operation[o], o))),
            )
        )
    return tuple(sorted(found, key=lambda g: (g.vendor.lower(), g.product.lower(), g.slug)))


# Project standings ----------------------------------------------------------------------------------


def project_digest(graph: Graph, implementation: str) -> str | None:
    """The project an implementation (by digest) belongs to: the first SoftwareProject by digest its
    `metadata.labels.project` names; None when it names none the graph has."""
    node = graph.nodes.get(implementation)
    if not isinstance(node, Implementation) or not node.project:
        return None
    found = sorted(d for d in graph.named(node.project) if type(graph.nodes[d]) is Project)
    return found[0] if found else None


def standings(graph: Graph) -> dict[str, Standing]:
    """Every project's standing, by the project's digest (a project without runs stands at zero)."""
    return _kept("standings", graph, _standings)


def _standings(graph: Graph) -> dict[str, Standing]:
    project_of: dict[str, str | None] = {}

    def owner(run: str | None) -> str | None:
        node = graph.nodes.get(run) if run is not None else None
        if not isinstance(node, Run):
            return None
        if node.implementation not in project_of:
            project_of[node.implementation] = project_digest(graph, node.implementation)
        return project_of[node.implementation]

    led: dict[str, int] = {}
    records: dict[str, int] = {}
    entered: dict[str, int] = {}
    for cohort in graph.cohorts.values():
        leader = owner(cohort.leader(graph))
        if leader is not None:
            led[leader] = led.get(leader, 0) + 1
        holder = cohort.holder(graph)
        kept = owner(holder.run) if holder is not None else None
        if kept is not None:
            records[kept] = records.get(kept, 0) + 1
        for project in {owner(member) for member in cohort.members} - {None}:
            assert project is not None
            entered[project] = entered.get(project, 0) + 1
    runs_by = graph.runs_by["implementation"]
    found = {}
    for digest, node in graph.nodes.items():
        if type(node) is not Project:
            continue
        implementations = [
            d
            for d in graph.children["project_implementations"].get(node.name, ())
            if project_digest(graph, d) == digest
        ]
        found[digest] = Standing(
            project=digest,
            led=led.get(digest, 0),
            records=records.get(digest, 0),
            entered=entered.get(digest, 0),
            runs=sum(len(runs_by.get(d, ())) for d in implementations),
            implementations=len(implementations),
        )
    return found


# Sources --------------------------------------------------------------------------------------------


def sources(graph: Graph) -> tuple[SourceTally, ...]:
    """Every source of the graph's commits and runs, by slug."""
    return _kept("sources", graph, _sources)


def source_tally(graph: Graph, slug: str) -> SourceTally | None:
    """One source's tally, None when the graph knows no such source."""
    return next((s for s in sources(graph) if s.slug == slug), None)


def _sources(graph: Graph) -> tuple[SourceTally, ...]:
    mainline = graph.mainline
    last = graph.position if graph.position is not None else len(mainline.commits) - 1
    commits: dict[str, list[int]] = {}
    for position, slug in enumerate(mainline.sources[: last + 1]):
        if slug:
            commits.setdefault(slug, []).append(position)
    manifests: dict[str, int] = {}
    serving: dict[str, int] = {}
    for digest, node in graph.nodes.items():
        where = graph.published_in.get(digest)
        published_by = mainline.sources[where] if where is not None and where <= last else None
        if published_by:
            manifests[published_by] = manifests.get(published_by, 0) + 1
        if type(node) is ServingRun:
            slug = node.source or published_by
            if slug:
                serving[slug] = serving.get(slug, 0) + 1
    runs_by = graph.runs_by["source"]
    slugs = {*commits, *(s for s in runs_by if s), *serving}
    return tuple(
        SourceTally(
            slug=slug,
            manifests=manifests.get(slug, 0),
            runs=len(runs_by.get(slug, ())),
            serving_runs=serving.get(slug, 0),
            commits=len(commits.get(slug, ())),
            latest_commit=mainline.commits[commits[slug][-1]] if slug in commits else None,
        )
        for slug in sorted(slugs)
    )

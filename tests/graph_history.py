"""A small registry's history without git, for the graph's parts tested alone: each commit's manifests added and
removed as nodes, main's first-parent history, the publication record and the commits whose overlays count.

The history exercises what a change can do to a graph: new cohorts and runs joining old ones, a source-native run
taking a record, a failed run, an honoured retraction and an unhonoured one, a verification, a supersession, an
attestation, a run removed, a manifest replaced by one of its digest, and a workload every run of a cohort refers to
removed (its runs left dangling)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from helpers import (
    basic_scenario,
    make_attestation,
    make_environment,
    make_implementation,
    make_operation,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    make_workload,
    to_manifest,
)

from kernelindex.registry.graph import Graph, Mainline
from kernelindex.registry.graph_build import build
from kernelindex.registry.nodes import Node, extract

__all__ = ["Commit", "History", "history", "node_of"]

T0 = 1_700_000_000


def node_of(document: dict[str, Any]) -> Node:
    """The node of a document as a store would hold it (validated and normalized)."""
    manifest = to_manifest(document)
    return extract(manifest.kind, manifest.digest, "0" * 40, orjson.loads(manifest.stored_bytes()))


@dataclass(frozen=True)
class Commit:
    commit: str
    time: int
    added: tuple[Node, ...]
    removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class History:
    commits: tuple[Commit, ...]
    mainline: Mainline
    published_in: dict[str, int]  # digest -> position of the commit that first published it
    honoured: frozenset[str]  # the commits whose overlays count

    def nodes_at(self, position: int) -> list[Node]:
        """Every node at a commit, in the order they came (a node added again takes its old place)."""
        found: dict[str, Node] = {}
        for commit in self.commits[: position + 1]:
            for digest in commit.removed:
                found.pop(digest, None)
            for node in commit.added:
                found[node.digest] = node
        return list(found.values())

    def built(self, position: int, nodes: Iterable[Node] | None = None) -> Graph:
        """The cold build of a commit."""
        commit = self.commits[position]
        found = self.nodes_at(position) if nodes is None else nodes
        return build(commit.commit, commit.time, self.mainline, position, found, self.honoured, self.published_in)


def history() -> History:
    s = basic_scenario()
    op2 = make_operation("softmax-2", family="softmax")
    workload2 = make_workload(op2, tokens=128)
    impl2 = make_implementation(op2, "soft-a")
    env2 = make_environment("h100", product="NVIDIA H100", architecture="sm_90")

    def soft(value: int, day: int, **extra: Any) -> dict[str, Any]:
        return make_run(impl2, workload2, s.protocol, env2, value, f"2026-08-{day:02d}T00:00:00Z", **extra)

    faster = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 7000, "2026-08-07T00:00:00Z")
    corrected = make_run(s.implementations[0], s.workload, s.protocol, s.environment, 8000, "2026-08-09T00:00:00Z")
    rerun = make_run(s.implementations[0], s.workload, s.protocol, s.environment, 7950, "2026-08-10T00:00:00Z")
    retitled_env2 = {**env2, "metadata": {**env2["metadata"], "title": "H100, retitled"}}  # its digest, retitled
    batches: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = [
        (s.docs, []),
        ([op2, workload2, impl2, env2, soft(500, 5)], []),
        ([soft(400, 6), faster, soft(400, 8, status="timeout")], []),
        ([make_retraction(s.runs[1]), soft(300, 9, source_native=True), make_attestation(s.runs[0])], []),
        ([corrected, make_supersession(corrected, s.runs[0]), rerun, make_verification(s.runs[2], rerun)], []),
        ([make_retraction(faster), soft(200, 10)], [s.runs[2]]),  # this retraction's commit is not honoured
        ([retitled_env2], [workload2]),  # the softmax cohort's runs lose their workload
        ([workload2, soft(100, 11)], []),  # and get it back
    ]
    commits = []
    published: dict[str, int] = {}
    for position, (added, removed) in enumerate(batches):
        nodes = tuple(node_of(doc) for doc in added)
        commit = f"{position:040x}"
        commits.append(Commit(commit, T0 + position * 3600, nodes, tuple(node_of(d).digest for d in removed)))
        for node in nodes:
            published.setdefault(node.digest, position)
    mainline = Mainline.of([c.commit for c in commits], [c.time for c in commits], ["test"] * len(commits))
    honoured = frozenset(c.commit for c in commits[:5])
    return History(tuple(commits), mainline, published, honoured)

"""A small registry for the index pages, built by hand so that every count it is tested for is written
out here: two projects with runs and one without, three GPUs (two environments of one product), a tie at
the top of one cohort, a run of an implementation that names no project, and a second source.

Cohorts (operation, workload, environment; one protocol):

    C1  op-a t1024 B200-a   x1 100 (day 1), y1 120 (day 2)      #1 x1, record x1
    C2  op-a t2048 B200-a   x1 200 (day 1), y1 180 (day 2)      #1 y1, record y1
    C3  op-a t1024 B200-b   y1 90 (day 3)                       #1 y1, record y1
    C4  op-a t1024 H100     x1 300 (day 1), orphan 310 (day 2)  #1 x1, record x1
    C5  op-a t4096 H100     x1 500 (day 1), y1 500 (day 5)      #1 y1 (a tie shows newest first), record x1
    C6  op-c t1024 H100     x2 50 (day 1); second commit: x2 40 (day 6, source "second-source")
                                                                #1 x2, record x2

Standings: proj-x leads C1, C4, C6 (3) and holds C1, C4, C5, C6 (4), entered 5, runs 6 (x1: 4, x2: 2),
implementations 2; proj-y leads C2, C3, C5 (3) and holds C2, C3 (2), entered 4, runs 4, implementations 1;
proj-idle stands at zero everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helpers import (
    commit_manifests,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_project,
    make_protocol,
    make_run,
    make_workload,
)

from kernelindex import registry

Doc = dict[str, Any]
FIRST = 1_700_000_000
SECOND = FIRST + 86_400


def _day(n: int) -> str:
    return f"2026-08-0{n}T12:00:00Z"


def _in_project(implementation: Doc, project: str) -> Doc:
    implementation["metadata"]["labels"] = {"project": project}
    return implementation


@dataclass(frozen=True)
class Catalog:
    first: str  # the first commit (source "test")
    second: str  # the second (source "second-source"): main's head
    digests: dict[str, str]  # short name -> digest


def build_catalog(store: registry.GitStore) -> Catalog:
    op_a, op_b = make_operation("op-a"), make_operation("op-b", hidden=2048)
    op_c = make_operation("op-c", family="gemm")
    t1024, t2048, t4096 = (make_workload(op_a, tokens=t, name=f"op-a-t{t}") for t in (1024, 2048, 4096))
    c1024 = make_workload(op_c, tokens=1024, name="op-c-t1024")
    projects = [make_project(name) for name in ("proj-x", "proj-y", "proj-idle")]
    x1 = _in_project(make_implementation(op_a, "impl-x1"), "proj-x")
    x2 = _in_project(make_implementation(op_c, "impl-x2"), "proj-x")
    y1 = _in_project(make_implementation(op_a, "impl-y1"), "proj-y")
    orphan = make_implementation(op_a, "impl-orphan")
    protocol = make_protocol()
    b200_a = make_environment("env-b200-a")
    b200_b = make_environment("env-b200-b", product="NVIDIA B200", architecture="sm_100a")
    b200_c = make_environment("env-b200-c", product="nvidia  b200", architecture="sm_100")  # no runs
    h100 = make_environment("env-h100", product="NVIDIA H100", architecture="sm_90")
    gb200 = make_environment("env-gb200", product="NVIDIA GB200", architecture="unknown")  # no runs

    def run(impl: Doc, workload: Doc, env: Doc, ns: int, day: int, name: str) -> Doc:
        return make_run(impl, workload, protocol, env, ns, _day(day), name=name)

    runs = [
        run(x1, t1024, b200_a, 100, 1, "c1-x1"),
        run(y1, t1024, b200_a, 120, 2, "c1-y1"),
        run(x1, t2048, b200_a, 200, 1, "c2-x1"),
        run(y1, t2048, b200_a, 180, 2, "c2-y1"),
        run(y1, t1024, b200_b, 90, 3, "c3-y1"),
        run(x1, t1024, h100, 300, 1, "c4-x1"),
        run(orphan, t1024, h100, 310, 2, "c4-orphan"),
        run(x1, t4096, h100, 500, 1, "c5-x1"),
        run(y1, t4096, h100, 500, 5, "c5-y1"),
        run(x2, c1024, h100, 50, 1, "c6-x2"),
    ]
    docs = [
        op_a, op_b, op_c, t1024, t2048, t4096, c1024, *projects, x1, x2, y1, orphan, protocol,
        b200_a, b200_b, b200_c, h100, gb200, *runs,
    ]  # fmt: skip
    first = commit_manifests(store, docs, FIRST)
    later = run(x2, c1024, h100, 40, 6, "c6-x2-later")
    second = commit_manifests(store, [later], SECOND, source="second-source")
    named = {doc["metadata"]["name"]: digest_of(doc) for doc in [*docs, later]}
    return Catalog(first, second, named)

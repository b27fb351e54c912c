"""A small governed registry whose history holds every lifecycle fact, for the read-side tests.

Four commits on main, each at a fixed instant after every run's observation (so retractions compete
in the records ledger as they would in life):

- C0, signed by alice, whose policy it introduces: the basic scenario (runs a1 8.12 µs, a2 7.9 µs,
  b1 9 µs, observed 1, 2 and 3 August 2026).
- C1, unsigned: run c1 (7 µs, 4 August) and a retraction of a1 that cannot count (nobody signed it).
- C2, signed by alice: a retraction of c1 ("clock drift").
- C3, signed by alice: run d1 (7.95 µs, 6 August) superseding b1 ("wrong protocol"), run e1 (7.91 µs,
  7 August) and a verification of a2 by the rerun e1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helpers import (
    basic_scenario,
    commit_meta,
    digest_of,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    to_manifest,
)
from signing import Key

from kernelindex import registry
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer

__all__ = ["START", "Governed", "build_governed"]

START = 1_790_000_000
"""C0's instant (2026-09-21T14:13:20Z); C1, C2, C3 follow 100 s apart."""


@dataclass(frozen=True)
class Governed:
    commits: tuple[str, str, str, str]
    runs: dict[str, str]  # a1, a2, b1, c1, d1, e1 -> digest
    overlays: dict[str, str]  # unsigned_retraction, retraction, supersession, verification -> digest
    base: tuple[dict[str, Any], ...]  # C0's manifests (the basic scenario)


def build_governed(store: registry.GitStore, alice: Key) -> Governed:
    scenario = basic_scenario()
    a, b = scenario.implementations
    w, p, e = scenario.workload, scenario.protocol, scenario.environment
    c1 = make_run(b, w, p, e, 7000, "2026-08-04T12:00:00Z", name="run-c1")
    d1 = make_run(a, w, p, e, 7950, "2026-08-06T12:00:00Z", name="run-d1")
    e1 = make_run(a, w, p, e, 7910, "2026-08-07T12:00:00Z", name="run-e1")
    a1, a2, b1 = scenario.runs
    unsigned = make_retraction(a1, "nobody signed this")
    retraction = make_retraction(c1, "clock drift")
    supersession = make_supersession(d1, b1, "wrong protocol")
    verification = make_verification(a2, e1, "registry-runner")
    sign = ssh_signer(alice.private)

    def add(docs: list[dict[str, Any]], when: int, signed: bool, **extra: Any) -> str:
        result = store.add(
            [to_manifest(d) for d in docs], commit_meta(when, source="governed"), sign=sign if signed else None, **extra
        )
        assert result.commit is not None
        return result.commit

    c0 = add(scenario.docs, START, True, extra_files={POLICY_PATH: alice.allowed_signer})
    c1_commit = add([c1, unsigned], START + 100, False)
    c2 = add([retraction], START + 200, True)
    c3 = add([d1, e1, supersession, verification], START + 300, True)
    runs = {
        name: digest_of(doc) for name, doc in (("a1", a1), ("a2", a2), ("b1", b1), ("c1", c1), ("d1", d1), ("e1", e1))
    }
    overlays = {
        "unsigned_retraction": digest_of(unsigned),
        "retraction": digest_of(retraction),
        "supersession": digest_of(supersession),
        "verification": digest_of(verification),
    }
    return Governed((c0, c1_commit, c2, c3), runs, overlays, tuple(scenario.docs))

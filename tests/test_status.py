"""`kernelindex.registry.status`: a run's standing at the head for a reader who saw it at an older commit, on the
governed registry (tests/governed.py), whose facts and their commits are written out by hand."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest
from governed import START, Governed, build_governed
from helpers import EMBEDDED_REPO, basic_scenario, commit_meta, digest_of, make_retraction, make_run, to_manifest
from signing import Key, commit_raw, stored

from kernelindex import registry
from kernelindex.registry.cohorts import Trust
from kernelindex.registry.signatures import ssh_signer
from kernelindex.registry.snapshots import Snapshots
from kernelindex.registry.status import CURRENT, MISSING, RETRACTED, SUPERSEDED, UNPUBLISHED, run_status


@pytest.fixture
def governed(store: registry.GitStore, keys: dict[str, Key]) -> Governed:
    return build_governed(store, keys["alice"])


@pytest.fixture
def snapshots(store: registry.GitStore, governed: Governed) -> Snapshots:
    loaded = Snapshots(store.path)
    loaded.load()
    return loaded


def _signer(snapshots: Snapshots) -> Callable[[str], str | None]:
    return lambda commit: snapshots.signature(commit).signer


def test_a_retraction_signed_after_the_pinned_commit(snapshots: Snapshots, governed: Governed) -> None:
    _, c1, c2, c3 = governed.commits
    status = run_status(snapshots.head, governed.runs["c1"], read_at=c1, signer=_signer(snapshots))
    assert status.state == RETRACTED and not status.eligible and status.reasons == ("RETRACTED",)
    assert status.head == c3
    retraction = status.retraction
    assert retraction is not None
    assert (retraction.kind, retraction.overlay, retraction.reason) == (
        "Retraction",
        governed.overlays["retraction"],
        "clock drift",
    )
    assert (retraction.commit, retraction.position, retraction.committed_at) == (c2, 2, START + 200)
    assert retraction.signed_by == "alice@example.com"
    assert status.later == (retraction,) and status.changed
    # A reader who saw it at C2 or later saw the retraction already.
    assert not run_status(snapshots.head, governed.runs["c1"], read_at=c2).changed
    assert run_status(snapshots.head, governed.runs["c1"], read_at=c3).later == ()


def test_a_supersession_names_the_successor(snapshots: Snapshots, governed: Governed) -> None:
    status = run_status(snapshots.head, governed.runs["b1"], read_at=governed.commits[0])
    assert status.state == SUPERSEDED and status.reasons == ("SUPERSEDED",)
    supersession = status.supersession
    assert supersession is not None
    assert (supersession.successor, supersession.reason, supersession.commit) == (
        governed.runs["d1"],
        "wrong protocol",
        governed.commits[3],
    )
    assert supersession.signed_by is None  # no signer given: the caller could not tell
    assert status.later == (supersession,)


def test_a_verification_raises_trust_and_keeps_the_run_current(snapshots: Snapshots, governed: Governed) -> None:
    status = run_status(snapshots.head, governed.runs["a2"], read_at=governed.commits[0])
    assert status.state == CURRENT and status.eligible and status.trust == Trust.VERIFIED
    (verification,) = status.verifications
    assert (verification.runner, verification.overlay, verification.commit) == (
        "registry-runner",
        governed.overlays["verification"],
        governed.commits[3],
    )
    assert status.later == (verification,)


def test_an_unsigned_retraction_is_listed_apart_and_changes_nothing(snapshots: Snapshots, governed: Governed) -> None:
    status = run_status(snapshots.head, governed.runs["a1"], read_at=governed.commits[0])
    assert status.state == CURRENT and status.eligible and status.retraction is None
    assert status.ignored == (governed.overlays["unsigned_retraction"],) and not status.changed


def test_without_a_reading_commit_every_fact_is_later(snapshots: Snapshots, governed: Governed) -> None:
    for read_at in (None, "not-a-commit", "0" * 40):
        status = run_status(snapshots.head, governed.runs["c1"], read_at=read_at)
        assert status.changed and status.later[0].overlay == governed.overlays["retraction"]


def test_a_run_the_head_does_not_hold_or_has_not_published(
    store: registry.GitStore, snapshots: Snapshots, governed: Governed
) -> None:
    missing = run_status(snapshots.head, "sha256:" + "0" * 64)
    assert missing.state == MISSING and not missing.eligible and missing.later == ()
    scenario = basic_scenario()
    run = make_run(scenario.implementations[0], scenario.workload, scenario.protocol, scenario.environment, 1)
    path, data = stored(run)
    commit_raw(store, governed.commits[3], {path: data}, ref="refs/heads/preview")
    preview = snapshots.at("preview")
    status = run_status(preview, digest_of(run))
    assert status.state == UNPUBLISHED and status.reasons[0] == "UNPUBLISHED"


@pytest.mark.slow
def test_the_seed_run_still_stands() -> None:
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    seed = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"  # seed 000 (README)
    status = run_status(snapshots.head, seed, read_at="e775d39b6768675ff8eb086da76420493425c1a4")
    assert status.state == CURRENT and status.eligible and not status.changed and status.trust == Trust.REPORTED


def test_two_counted_retractions_show_the_first_published_in_every_process(
    store: registry.GitStore, governed: Governed, keys: dict[str, Key]
) -> None:
    """A second signed retraction of c1 (C4) repeats the first (C2): the graph and the status both name
    C2's, whatever order a set of digests iterates in (it changes with the process's hash seed)."""
    again = make_retraction(governed.runs["c1"], "the same drift, seen again")
    store.add([to_manifest(again)], commit_meta(START + 400, source="governed"), sign=ssh_signer(keys["alice"].private))
    script = (
        "import sys; from pathlib import Path; from kernelindex.registry.snapshots import Snapshots; "
        "s = Snapshots(Path(sys.argv[1])); s.load(); "
        "print(s.head.facts[sys.argv[2]].retraction)"
    )
    seen = set()
    for seed in range(8):
        done = subprocess.run(
            [sys.executable, "-c", script, str(store.path), governed.runs["c1"]],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        )
        seen.add(done.stdout.strip())
    assert seen == {governed.overlays["retraction"]}
    loaded = Snapshots(store.path)
    loaded.load()
    status = run_status(loaded.head, governed.runs["c1"])
    assert status.retraction is not None and status.retraction.overlay == governed.overlays["retraction"]

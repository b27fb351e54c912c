"""Measurements that need a fresh interpreter: `python -m bench.probe <what> <repo>` prints JSON.

- `cold`: manifests at main's head to a ready graph (publication record included).
- `floor`: `git cat-file --batch` of every blob at head, and `orjson.loads` of each.
- `integrity`: the full integrity check of main's head, as a registry's first start runs it.
- `integrity_remembered`: the same once an earlier check's fan-out trees are remembered.
- `history`: the append-only check of main's whole first-parent history (a first start's other check).
- `incremental`: a server's snapshots at head, prepared as a server prepares them after its start, then a
  commit adding 100 manifests to main and the refresh that serves it (validation included); main is put
  back afterwards.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

__all__ = ["main"]


def cold(repo: Path) -> dict[str, float]:
    """What a server does at a cold start: the publication record and the graph of main's head.

    As on any start but a registry's first, the head's integrity is already recorded (a first
    start also runs the full check: `integrity` measures it)."""
    from bench.synth import STATE
    from kernelindex.registry.integrity import IntegrityRecord, record_path
    from kernelindex.registry.snapshots import Snapshots
    from kernelindex.registry.store import GitStore

    store = GitStore(repo)
    head = store.head()
    assert head is not None
    # As every start and refresh records it: the commit and its fan-out trees (without them, the load
    # would list the trees and write the record again, ~3 ms that a restart does not spend).
    IntegrityRecord(record_path(repo, STATE)).write(head, store.fan_out_trees(head))
    store.release()
    started = time.perf_counter()
    snapshots = Snapshots(repo, cache_root=STATE)
    snapshots.load()
    done = time.perf_counter()
    return {"seconds": done - started, "nodes": len(snapshots.head.nodes)}


def integrity(repo: Path) -> dict[str, float]:
    """The full integrity check of main's head (each blob's hash, JSON, kind, RFC 8785 digest), as a
    registry's first start runs it: nothing remembered."""
    from kernelindex.registry.integrity import verify_commit
    from kernelindex.registry.store import GitStore

    store = GitStore(repo)
    head = store.head()
    assert head is not None
    started = time.perf_counter()
    check = verify_commit(store, head)
    done = time.perf_counter()
    assert not check.problems, check.problems[:3]
    return {"seconds": done - started, "read": check.read}


def integrity_remembered(repo: Path) -> dict[str, float]:
    """The same check when the fan-out trees verified before are remembered: what a start costs on
    a main rewritten to the same content, whose record names a commit main no longer has."""
    from kernelindex.registry.integrity import verify_commit
    from kernelindex.registry.store import GitStore

    store = GitStore(repo)
    head = store.head()
    assert head is not None
    known = verify_commit(store, head).trees
    started = time.perf_counter()
    check = verify_commit(store, head, known)
    done = time.perf_counter()
    assert not check.problems, check.problems[:3]
    return {"seconds": done - started, "read": check.read}


def history(repo: Path) -> dict[str, float]:
    """The append-only check of main's whole first-parent history, as a registry's first start runs it."""
    from kernelindex.registry.append_only import first_violation
    from kernelindex.registry.store import GitStore

    store = GitStore(repo)
    head = store.head()
    assert head is not None
    started = time.perf_counter()
    violation = first_violation(store, None, head)
    done = time.perf_counter()
    assert violation is None, violation
    return {"seconds": done - started}


def floor(repo: Path) -> dict[str, float]:
    from kernelindex.registry.store import GitStore

    store = GitStore(repo)
    head = store.head()
    assert head is not None
    oids = "".join(entry.oid + "\n" for entry in store.entries(head)).encode()
    started = time.perf_counter()
    process = subprocess.Popen(
        ["git", "--git-dir", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdin = process.stdin

    def feed() -> None:  # in a thread: cat-file answers while we still ask, and pipes are small
        stdin.write(oids)
        stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    out = process.stdout
    count = 0
    while header := out.readline():
        size = int(header.rsplit(b" ", 1)[1])
        orjson.loads(out.read(size))
        out.read(1)
        count += 1
    writer.join()
    process.wait()
    return {"seconds": time.perf_counter() - started, "blobs": count}


def incremental(repo: Path) -> dict[str, float]:
    """Serve head, add a commit of 100 manifests (new runs in existing cohorts, new implementations
    with them), refresh; report the refresh time. main is restored afterwards."""
    from bench.synth import STATE, write_commit
    from kernelindex import registry
    from kernelindex.registry.nodes import Run
    from kernelindex.registry.snapshots import Snapshots
    from kernelindex.registry.store import MAIN, GitStore

    store = GitStore(repo)
    original = store.head()
    assert original is not None
    snapshots = Snapshots(repo, cache_root=STATE)
    snapshots.load()
    graph = snapshots.head
    # What every server does in the background right after a start (kernelindex.service.server): rank every cohort and
    # build
    # the `runs_by` indexes, which a graph then keeps up to date. The refresh measured is a running server's,
    # not one racing its start (that first refresh builds what it needs: 0.12-0.13 s at 10x rather than ~0.08).
    graph.prepare()
    rng = random.Random(11)
    runs = [node for node in graph.nodes.values() if isinstance(node, Run) and node.primary is not None]
    files: dict[str, bytes] = {}
    for index, run in enumerate(rng.sample(runs, 50)):
        run_doc = orjson.loads(store.read_blob(run.oid))
        impl_doc = orjson.loads(store.read_blob(graph.nodes[run.implementation].oid))
        impl_doc["metadata"]["name"] = f"bench-incremental-impl-{index}"
        impl_doc["spec"]["projectRevision"]["version"] = f"bench-{index}"
        implementation = registry.manifest_from_document(impl_doc, "bench")
        run_doc["metadata"]["name"] = f"bench-incremental-run-{index}"
        run_doc["spec"]["implementationDigest"] = implementation.digest
        run_doc["spec"]["observedAt"] = "2026-11-01T00:00:00Z"
        new_run = registry.manifest_from_document(run_doc, "bench")
        files[implementation.path] = implementation.stored_bytes()
        files[new_run.path] = new_run.stored_bytes()
    packs = repo / "objects" / "pack"
    before = set(packs.iterdir())
    try:
        write_commit(repo, original, files, subject="Bench: 100 manifests", when=1_800_000_000)
        started = time.perf_counter()
        status = snapshots.refresh()
        seconds = time.perf_counter() - started
        if status.serving != store.head() or status.reason is not None:
            raise RuntimeError(f"the new head was not served: {status}")
        return {"seconds": seconds, "files": len(files)}
    finally:
        subprocess.run(["git", "--git-dir", str(repo), "update-ref", MAIN, original], check=True)
        # The commit's pack (git fast-import writes one) is unreachable now: left behind, every later run's
        # object lookups would search one more pack (28 after an hour of runs).
        for left in set(packs.iterdir()) - before:
            left.unlink()


def main() -> None:
    what, repo = sys.argv[1], Path(sys.argv[2])
    probes = {
        "cold": cold,
        "floor": floor,
        "incremental": incremental,
        "integrity": integrity,
        "integrity_remembered": integrity_remembered,
        "history": history,
    }
    result = probes[what](repo)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

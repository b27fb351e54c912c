"""Writers in other processes: concurrent adds never lose an update, and a writer killed with SIGKILL
at any moment leaves main at the old or the new commit and the repository sound."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import TEST_TIME, commit_manifests, make_operation, to_manifest

from kernelindex import registry

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent

# A writer: adds `rounds` batches of `size` new operations, one commit each.
WRITER = """
import sys
sys.path.insert(0, {tests!r})
from helpers import commit_meta, make_operation, to_manifest
from kernelindex import registry

repo, prefix, rounds, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = registry.GitStore(repo)
for round_ in range(rounds):
    batch = [to_manifest(make_operation(f"{{prefix}}-{{round_}}-{{i}}")) for i in range(size)]
    result = store.add(batch, commit_meta(subject=f"{{prefix}} round {{round_}}", source=prefix))
    assert result.commit is not None
"""

# A writer that says when it starts writing, so that it can be killed while it writes.
BIG_ADD = """
import sys
sys.path.insert(0, {tests!r})
from helpers import commit_meta, make_operation, to_manifest
from kernelindex import registry

repo, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = registry.GitStore(repo)
batch = [to_manifest(make_operation(f"{{prefix}}-{{i}}")) for i in range(count)]
print("ready", flush=True)
result = store.add(batch, commit_meta(subject=f"{{prefix}}: {{count}} operations"))
print("done", result.commit, flush=True)
"""


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code.format(tests=str(TESTS)), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a kill takes its git children too
    )


def _names(store: registry.GitStore, commit: str) -> set[str]:
    import json

    entries = list(store.entries(commit))
    return {json.loads(data)["metadata"]["name"] for data in store.read_blobs([e.oid for e in entries])}


def _fsck(store: registry.GitStore) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "fsck", "--strict", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(("rounds", "size"), [(25, 1), (3, 150)], ids=["many-small", "large-packs"])
def test_two_writers_both_land(store: registry.GitStore, rounds: int, size: int) -> None:
    base = commit_manifests(store, [make_operation("base")])
    writers = [_python(WRITER, str(store.path), prefix, str(rounds), str(size)) for prefix in ("left", "right")]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    head = store.head()
    assert head is not None
    expected = {"base"} | {f"{p}-{r}-{i}" for p in ("left", "right") for r in range(rounds) for i in range(size)}
    assert _names(store, head) == expected  # no lost update
    chain = store.first_parents(head)
    assert len(chain) == 1 + 2 * rounds  # one commit per add, all on main's first-parent line
    assert chain[-1] == base
    for commit in chain:
        assert len(store.commit_info(commit).parents) <= 1  # linear: no merges, nothing rewritten
    sources = [store.commit_info(c).trailer("Source") or "" for c in chain[:-1]]
    assert sorted(sources) == sorted(["left"] * rounds + ["right"] * rounds)
    assert _fsck(store).returncode == 0


def test_a_writer_and_a_bulk_writer_both_land(store: registry.GitStore) -> None:
    commit_manifests(store, [make_operation("base")])
    small = _python(WRITER, str(store.path), "small", "20", "1")
    bulk = _python(WRITER, str(store.path), "bulk", "2", "400")
    for writer in (small, bulk):
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    head = store.head()
    assert head is not None
    assert len(_names(store, head)) == 1 + 20 + 800
    assert len(store.first_parents(head)) == 1 + 20 + 2


def _kill_while_writing(store: registry.GitStore, prefix: str, count: int, delay: float) -> tuple[str, bool, float]:
    """Start a big add and kill its process group `delay` seconds after it starts writing (unless it
    is done by then); return what it printed, whether it was killed, and the seconds it wrote for."""
    writer = _python(BIG_ADD, str(store.path), prefix, str(count))
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    started = time.monotonic()
    try:
        writer.wait(timeout=delay)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(writer.pid, signal.SIGKILL)
        killed = True
    out, _ = writer.communicate(timeout=60)
    return out, killed, time.monotonic() - started


def test_sigkill_at_random_moments_leaves_old_or_new_and_never_blocks_the_next_writer(
    store: registry.GitStore,
) -> None:
    """52 writers killed at random moments (the lock, the pack, `git update-ref`, after): main is
    always the old or the new commit, whole; the next add succeeds with no hand cleanup (the writer
    lock dies with its holder, and the git locks it left are cleared); `git fsck` stays clean."""
    from probes import TALLY

    count = 200
    commit_manifests(store, [make_operation("base")], TEST_TIME)
    out, _, duration = _kill_while_writing(store, "calibration", count, 120.0)
    assert out.startswith("done ")
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    outcomes = []
    trials = 52
    for attempt in range(trials):
        old = store.head()
        assert old is not None
        old_count = sum(1 for _ in store.entries(old))
        prefix = f"killed{attempt}"
        delay = rng.uniform(0.0, duration * 1.3)
        _, killed, _ = _kill_while_writing(store, prefix, count, delay)
        context = f"seed {seed}, attempt {attempt}, delay {delay:.3f} s of ~{duration:.2f} s"
        leftovers = sorted(p.name for p in store.git_dir.rglob("*.lock") if p.name != "kernelindex-writer.lock")
        new = store.head()
        assert new is not None
        if new == old:
            outcomes.append("old" + ("+locks" if leftovers else ""))
        else:
            # the one new commit, whole: parent is the old head, tree is old plus the whole batch
            assert store.commit_info(new).parents == (old,), context
            assert sum(1 for _ in store.entries(new)) == old_count + count, context
            outcomes.append(("new" if killed else "finished") + ("+locks" if leftovers else ""))
        # the registry takes the next write, with nobody cleaning up by hand
        after = commit_manifests(store, [make_operation(f"after-{attempt}")], TEST_TIME + attempt + 1)
        assert store.commit_info(after).parents == (new,), context
        TALLY["SIGKILL during add: next add succeeds"][0] += 1
        TALLY["SIGKILL during add: next add succeeds"][1] += 1
    fsck = _fsck(store)
    assert fsck.returncode == 0, f"seed {seed}: {fsck.stdout}{fsck.stderr}"
    head = store.head()
    assert head is not None
    print(f"SIGKILL outcomes (seed {seed}, {trials} trials): " + ", ".join(
        f"{name} {outcomes.count(name)}" for name in sorted(set(outcomes))))  # fmt: skip


def test_a_killed_writer_leaves_no_half_commit_reachable(store: registry.GitStore) -> None:
    """Whatever a killed fast-import wrote is unreachable from main: the next write starts clean."""
    commit_manifests(store, [make_operation("base")])
    _kill_while_writing(store, "half", 4000, 0.05)
    head = store.head()
    assert head is not None
    names = _names(store, head)
    assert names == {"base"} or len(names) == 4001
    added = store.add([to_manifest(make_operation(f"half-{i}")) for i in range(4000)], _meta())
    assert set(_names(store, store.head() or "")) == {"base"} | {f"half-{i}" for i in range(4000)}
    assert added.commit is not None or len(names) == 4001


def _meta() -> registry.CommitMeta:
    from helpers import commit_meta

    return commit_meta(TEST_TIME + 100)

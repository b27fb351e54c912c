"""`kernelindex.registry.changes`: what each commit of main changed, against a governed registry whose lists are
written out by hand (tests/governed.py) and against the embedded registry's six commits, counted from
the corpus export's own columns, the seed files and the Liger CSV's documented counts."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson
import pygit2
import pytest
import zstandard
from governed import START, Governed, build_governed
from helpers import EMBEDDED_REPO, EXPORT, basic_scenario, digest_of, make_run, to_manifest
from signing import Key, commit_raw, stored

from kernelindex import registry
from kernelindex.registry.changes import ChangesPage, CommitChanges, added_digests, changes, commit_changes
from kernelindex.registry.cohorts import RecordEvent
from kernelindex.registry.snapshots import Snapshots


@pytest.fixture
def governed(store: registry.GitStore, keys: dict[str, Key]) -> Governed:
    return build_governed(store, keys["alice"])


@pytest.fixture
def snapshots(store: registry.GitStore, governed: Governed) -> Snapshots:
    loaded = Snapshots(store.path)
    loaded.load()
    return loaded


def _page(snapshots: Snapshots, **kwargs: Any) -> ChangesPage:
    return changes(snapshots.store(), snapshots.head, **kwargs)


def _event(event: RecordEvent, runs: dict[str, str]) -> tuple[str, str | None, str]:
    names = {digest: name for name, digest in runs.items()}
    return names[event.run], names.get(event.previous_run or ""), event.cause


# The governed registry, by hand -----------------------------------------------------------------------


def test_each_commit_lists_what_it_published_by_kind(snapshots: Snapshots, governed: Governed) -> None:
    page = _page(snapshots)
    assert [e.commit for e in page.entries] == list(reversed(governed.commits))
    assert [e.position for e in page.entries] == [3, 2, 1, 0]
    assert [e.committed_at for e in page.entries] == [START + 300, START + 200, START + 100, START]
    assert [e.source for e in page.entries] == ["governed"] * 4
    published = [{group.kind: group.count for group in e.published} for e in page.entries]
    assert published == [
        {"BenchmarkRun": 2, "Supersession": 1, "Verification": 1},
        {"Retraction": 1},
        {"BenchmarkRun": 1, "Retraction": 1},
        {
            "BenchmarkProtocol": 1,
            "BenchmarkRun": 3,
            "ExecutionEnvironment": 1,
            "ImplementationRevision": 2,
            "OperationSpec": 1,
            "WorkloadCase": 1,
        },
    ]
    runs = governed.runs
    c3, _, c1, c0 = page.entries
    # Digests within a kind come by name: run-a1, run-a2, run-b1; run-d1, run-e1.
    assert next(g.digests for g in c0.published if g.kind == "BenchmarkRun") == (runs["a1"], runs["a2"], runs["b1"])
    assert next(g.digests for g in c3.published if g.kind == "BenchmarkRun") == (runs["d1"], runs["e1"])
    assert c0.total == 9 and c0.count("BenchmarkRun") == 3 and c0.count("Retraction") == 0
    assert c1.published[1].digests == (governed.overlays["unsigned_retraction"],)


def test_lifecycle_facts_count_only_when_signed(snapshots: Snapshots, governed: Governed) -> None:
    c3, c2, c1, c0 = _page(snapshots).entries
    runs, overlays = governed.runs, governed.overlays
    assert [(r.run, r.retraction, r.reason) for r in c2.retracted] == [
        (runs["c1"], overlays["retraction"], "clock drift")
    ]
    assert [(s.run, s.by, s.supersession, s.reason) for s in c3.superseded] == [
        (runs["b1"], runs["d1"], overlays["supersession"], "wrong protocol")
    ]
    assert [(v.run, v.rerun, v.runner, v.verification) for v in c3.verified] == [
        (runs["a2"], runs["e1"], "registry-runner", overlays["verification"])
    ]
    # C1's retraction of a1 was published, and counts for nothing: nobody signed C1.
    assert c1.retracted == () and c1.ignored == (overlays["unsigned_retraction"],)
    assert c0.ignored == c2.ignored == c3.ignored == ()
    assert not (c0.retracted or c1.superseded or c2.verified)
    assert snapshots.head.facts[runs["a1"]].eligible  # and indeed a1 still ranks


def test_records_that_moved_are_the_events_each_commit_caused(snapshots: Snapshots, governed: Governed) -> None:
    c3, c2, c1, c0 = _page(snapshots).entries
    runs = governed.runs
    assert [_event(e, runs) for e in c0.moved] == [("a1", None, "new_run"), ("a2", "a1", "new_run")]
    assert [_event(e, runs) for e in c1.moved] == [("c1", "a2", "new_run")]
    # c1 held the record until C2 retracted it; the best run still standing then, a2, took it back.
    assert [_event(e, runs) for e in c2.moved] == [("a2", "c1", "retraction")]
    assert c2.moved[0].at_ns == (START + 200) * 1_000_000_000
    assert c3.moved == ()  # d1 (7.95 µs) and e1 (7.91 µs) never beat a2 (7.9 µs)


@pytest.mark.parametrize(
    ("first", "after", "positions", "has_next"),
    [
        (0, None, [], True),
        (1, None, [3], True),
        (3, None, [3, 2, 1], True),
        (4, None, [3, 2, 1, 0], False),
        (5, None, [3, 2, 1, 0], False),
        (2, 3, [2, 1], True),
        (2, 2, [1, 0], False),
        (1, 1, [0], False),
        (5, 0, [], False),
    ],
)
def test_pages_by_position(
    snapshots: Snapshots, first: int, after: int | None, positions: list[int], has_next: bool
) -> None:
    page = _page(snapshots, first=first, after=after)
    assert [e.position for e in page.entries] == positions
    assert page.has_next is has_next and page.total == 4


def test_walking_the_cursor_visits_every_commit_once(snapshots: Snapshots, governed: Governed) -> None:
    seen: list[str] = []
    after = None
    while True:
        page = _page(snapshots, first=1, after=after)
        seen.extend(e.commit for e in page.entries)
        if not page.has_next:
            break
        after = page.entries[-1].position
    assert seen == list(reversed(governed.commits))


def test_since_lists_only_later_commits(snapshots: Snapshots, governed: Governed) -> None:
    c0, c1, c2, c3 = governed.commits
    assert [e.commit for e in _page(snapshots, since=c1).entries] == [c3, c2]
    assert _page(snapshots, since=c1).total == 2 and not _page(snapshots, since=c1).has_next
    assert [e.commit for e in _page(snapshots, since=c0, first=1).entries] == [c3]
    assert _page(snapshots, since=c0, first=1).has_next
    nothing = _page(snapshots, since=c3)
    assert nothing.entries == () and nothing.total == 0 and not nothing.has_next


def test_a_pinned_graph_sees_its_own_past_only(snapshots: Snapshots, governed: Governed) -> None:
    pinned = snapshots.at(governed.commits[1])
    page = changes(snapshots.store(), pinned)
    assert [e.commit for e in page.entries] == [governed.commits[1], governed.commits[0]]
    with pytest.raises(registry.RevisionNotFound, match="first-parent history up to"):
        changes(snapshots.store(), pinned, since=governed.commits[2])  # later than the pinned commit


def test_since_must_be_on_mains_first_parent_history(
    store: registry.GitStore, snapshots: Snapshots, governed: Governed
) -> None:
    path, data = stored(_side_run())
    side = commit_raw(store, governed.commits[3], {path: data}, ref="refs/heads/side")
    for bad in (side, "0" * 40, governed.commits[0][:12]):
        with pytest.raises(registry.RevisionNotFound, match="not a commit of main's first-parent history"):
            _page(snapshots, since=bad)
    with pytest.raises(ValueError, match="first must be 0 or more"):
        _page(snapshots, first=-1)


def test_a_graph_off_main_has_no_changes(store: registry.GitStore, snapshots: Snapshots, governed: Governed) -> None:
    path, data = stored(_side_run())
    commit_raw(store, governed.commits[3], {path: data}, ref="refs/heads/preview")
    page = changes(snapshots.store(), snapshots.at("preview"))
    assert page.entries == () and page.total == 0 and not page.has_next


def _side_run() -> dict[str, Any]:
    scenario = basic_scenario()
    a, w, p, e = scenario.implementations[0], scenario.workload, scenario.protocol, scenario.environment
    return make_run(a, w, p, e, 6000, "2026-08-09T00:00:00Z", name="side")


def test_a_manifest_published_again_is_not_listed_again(store: registry.GitStore) -> None:
    """A commit that deletes a manifest and one that adds it back (not allowed on main, but history
    may hold it): the second lists nothing, since the publication record keeps its first commit."""
    scenario = basic_scenario()
    first = store.add([to_manifest(d) for d in scenario.docs], _meta(0)).commit
    assert first is not None
    path, data = stored(scenario.runs[2])
    removed = commit_raw(store, first, {path: None}, when=START + 10, message="Remove\n\nSource: test\n")
    again = commit_raw(store, removed, {path: data}, when=START + 20, message="Again\n\nSource: test\n")
    assert store._compare_and_swap(registry.store.MAIN, first, again)
    loaded = Snapshots(store.path, validate=False)
    loaded.load()
    readded = commit_changes(loaded.store(), loaded.head, 2)
    assert readded.commit == again and readded.published == ()
    assert added_digests(loaded.store(), again, removed) == [("BenchmarkRun", digest_of(scenario.runs[2]))]


def _meta(offset: int) -> registry.CommitMeta:
    from helpers import commit_meta

    return commit_meta(START + offset)


def test_added_digests_skips_what_is_not_a_manifest(store: registry.GitStore) -> None:
    scenario = basic_scenario()
    base = store.add([to_manifest(d) for d in scenario.docs], _meta(0)).commit
    assert base is not None
    path, data = stored(scenario.runs[0])
    hexdigest = path.split("/")[2][:64]
    odd = commit_raw(
        store,
        base,
        {
            "benchmark-runs/zz/" + "ab" * 32 + ".json": data,  # not under its own fan-out
            "benchmark-runs/ab/README.md": b"hello\n",
            "notes/ab/" + "ab" * 32 + ".json": data,  # not a kind folder
            "benchmark-runs/ab/link.json": (b"../x", pygit2.enums.FileMode.LINK),
        },
    )
    assert added_digests(store, odd, base) == []
    assert ("BenchmarkRun", "sha256:" + hexdigest) in added_digests(store, base, None)


# The embedded registry ------------------------------------------------------------------------------

EMBEDDED_COMMITS = [  # main's first-parent history, oldest first (tests/test_embedded.py, README)
    ("e221f83b8f40a1d7da19952d1903c2f867d8508a", "sol-execbench"),
    ("76f117d1946d1399b03414c782be3436514e859e", "gpumode-kernelbot"),
    ("934bd73f7a7b16a354e5c082f00efd948b4347df", "flashinfer-bench"),
    ("314f4d24fd889fc1048942a520881d7750ef542c", "mlperf-inference"),
    ("e775d39b6768675ff8eb086da76420493425c1a4", "sol-execbench"),  # the seed records
    ("667fb1b393371afe7b1663540a73b8bc9ee41f9b", "liger-kernel-bench"),
]
# data/corpus (data/SOURCES.md and data/corpus/README.md): the export's distinct manifests by kind (the four corpus commits together).
CORPUS_KINDS = {
    "BenchmarkRun": 7857, "WorkloadCase": 5371, "ImplementationRevision": 4250, "ServingRun": 722,
    "SoftwareProject": 615, "OperationSpec": 449, "WorkloadSuite": 256, "ServingConfiguration": 130,
    "ServingStackRevision": 71, "ServingWorkload": 17, "ExecutionEnvironment": 15, "BenchmarkProtocol": 6,
    "ModelRevision": 6,
}  # fmt: skip
# data/seeds/manifests: the runs of pages 000 and 003 and the two implementations the corpus lacks
# (page 004's run is in the corpus already).
SEED_KINDS = {"BenchmarkRun": 2, "ImplementationRevision": 2}
# data/sources/liger/README.md: 1,649 speed rows, one run each, and what they bind (tests/test_embedded.py).
LIGER_KINDS = {
    "BenchmarkProtocol": 3, "BenchmarkRun": 1649, "ExecutionEnvironment": 6, "ImplementationRevision": 63,
    "OperationSpec": 31, "SoftwareProject": 5, "WorkloadCase": 237,
}  # fmt: skip


def _export_rows() -> Iterator[tuple[str, dict[str, Any]]]:
    with EXPORT.open("rb") as raw:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw)):
            record = orjson.loads(line)
            yield record["table"], record["row"]


def _export_counts_by_source() -> tuple[Counter[str], Counter[str], Counter[str]]:
    """From the export's own columns: kernel runs and serving runs per source (`sourceId`), and record
    events per source of the run that made them (upstream's ledger)."""
    slugs: dict[str, str] = {}
    run_source: dict[str, str] = {}
    runs: Counter[str] = Counter()
    serving: Counter[str] = Counter()
    events: Counter[str] = Counter()
    for table, row in _export_rows():
        if table == "sources":
            slugs[row["id"]] = row["slug"]
        elif table == "benchmark_runs":
            run_source[row["id"]] = slugs[row["sourceId"]]
            runs[slugs[row["sourceId"]]] += 1
        elif table == "serving_runs":
            serving[slugs[row["sourceId"]]] += 1
        elif table == "record_events":
            events[run_source[row["runId"]]] += 1
    return runs, serving, events


@pytest.fixture(scope="module")
def embedded_snapshots() -> Snapshots:
    loaded = Snapshots(EMBEDDED_REPO)
    loaded.load()
    return loaded


@pytest.mark.slow
def test_the_embedded_registrys_six_commits_by_hand(embedded_snapshots: Snapshots) -> None:
    page = changes(embedded_snapshots.store(), embedded_snapshots.head, first=6)
    assert not page.has_next and page.total == 6
    entries = list(reversed(page.entries))
    assert [(e.commit, e.source) for e in entries] == EMBEDDED_COMMITS
    runs, serving, events = _export_counts_by_source()
    assert runs == {"sol-execbench": 705, "gpumode-kernelbot": 5215, "flashinfer-bench": 1937}
    corpus = entries[:4]
    for entry, (_, slug) in zip(corpus, EMBEDDED_COMMITS, strict=False):
        assert entry.count("BenchmarkRun") == runs[slug]
        assert entry.count("ServingRun") == serving[slug]
        # The ledger's events are upstream's: each corpus commit caused those of its own runs.
        assert len(entry.moved) == events[slug]
    together: Counter[str] = Counter()
    for entry in corpus:
        together.update({group.kind: group.count for group in entry.published})
    assert together == CORPUS_KINDS
    seeds, liger = entries[4], entries[5]
    assert {g.kind: g.count for g in seeds.published} == SEED_KINDS
    assert {g.kind: g.count for g in liger.published} == LIGER_KINDS
    # Seed 000 held its cohort's record from 7 June until the 144,537 ns run of 30 June (README's
    # history of cohort 92bc0be5b5ce9f52); seed 003 is alone in its cohort: two new records.
    assert [e.cause for e in seeds.moved] == ["new_run", "new_run"]
    for entry in entries:
        published_runs = {d for g in entry.published if g.kind == "BenchmarkRun" for d in g.digests}
        assert {e.run for e in entry.moved} <= published_runs
        assert not (entry.retracted or entry.superseded or entry.verified or entry.ignored)
    assert sum(e.total for e in entries) == len(embedded_snapshots.head.nodes)


@pytest.mark.slow
def test_each_page_of_the_embedded_history_equals_the_whole(embedded_snapshots: Snapshots) -> None:
    store, head = embedded_snapshots.store(), embedded_snapshots.head
    whole = changes(store, head, first=6).entries
    walked: list[CommitChanges] = []
    after = None
    for _ in range(6):
        page = changes(store, head, first=1, after=after)
        walked.extend(page.entries)
        after = page.entries[-1].position
    assert walked == list(whole) and not page.has_next
    assert changes(store, head, since=EMBEDDED_COMMITS[3][0]).entries == whole[:2]

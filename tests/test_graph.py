"""The graph on real data (upstream's keys and ledger reproduce) and on small registries (incremental
updates give exactly what a build from scratch gives)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from helpers import (
    EMBEDDED_REPO,
    TEST_DATA,
    basic_scenario,
    commit_manifests,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_run,
    make_workload,
)

from kernelindex import registry
from kernelindex.registry import graph_apply
from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Implementation, Run, extract
from kernelindex.registry.snapshots import Publication, build_graph, move_graph, publication_of

SEED_000 = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"
SEED_003 = "sha256:1b9cb94ec711c4943cd8d77ddf9b04a920e60cd3bd877668d920c3d46bfdcd6d"
SEED_004 = "sha256:fa2cdd25d5d22ec080b8e6fcabbd2acc51a3c2ab3bcff1cfc9a5be97cdd4e0dc"


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    raw = (TEST_DATA / "upstream" / "expectations.json.zst").read_bytes()
    return json.loads(zstandard.ZstdDecompressor().stream_reader(raw).read())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def head() -> tuple[registry.GitStore, Publication, Graph]:
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    publication = publication_of(store, head)
    return store, publication, build_graph(store, head, publication)[0]


def _seed_position(store: registry.GitStore, publication: Publication) -> int:
    """The seed records' commit on main (later imports, such as Liger's, come after it)."""
    found = [i for i, c in enumerate(publication.mainline.commits) if "seed" in store.commit_info(c).subject.lower()]
    assert len(found) == 1
    return found[0]


@pytest.fixture(scope="module")
def seeded(head: tuple[registry.GitStore, Publication, Graph]) -> Graph:
    """The graph of the seed records' commit."""
    store, publication, graph = head
    return move_graph(store, graph, publication.mainline.commits[_seed_position(store, publication)], publication)


@pytest.fixture(scope="module")
def before_seeds(head: tuple[registry.GitStore, Publication, Graph]) -> Graph:
    store, publication, graph = head
    parent = publication.mainline.commits[_seed_position(store, publication) - 1]
    return move_graph(store, graph, parent, publication)


def test_every_corpus_run_has_upstreams_comparison_key(
    head: tuple[registry.GitStore, Publication, Graph], expected: dict[str, Any]
) -> None:
    graph = head[2]
    keys = expected["comparisonKeys"]
    assert len(keys) == 7857
    wrong = {run: (graph.facts[run].cohort, key) for run, key in keys.items() if graph.facts[run].cohort != key}
    assert not wrong, f"{len(wrong)} runs differ, e.g. {list(wrong.items())[:3]}"


def _events(graph: Graph) -> set[tuple[str, str, str | None, str, str]]:
    return {(e.cohort, e.run, e.previous_run, e.cause, e.at) for c in graph.cohorts.values() for e in c.events(graph)}


def test_the_corpus_alone_has_upstreams_2948_record_events(before_seeds: Graph, expected: dict[str, Any]) -> None:
    upstream = {tuple(e) for e in expected["recordEvents"]}
    assert len(upstream) == 2948
    assert _events(before_seeds) == upstream


def test_the_seeds_add_two_new_firsts_and_a_history(seeded: Graph, before_seeds: Graph) -> None:
    graph = seeded
    added = _events(graph) - _events(before_seeds)
    removed = _events(before_seeds) - _events(graph)
    assert len(_events(graph)) == 2950
    assert {(e[1], e[3]) for e in added} == {(SEED_000, "new_run"), (SEED_003, "new_run")} | {
        (e[1], "new_run") for e in added if e[1] not in (SEED_000, SEED_003)
    }
    cohort = graph.cohorts[graph.facts[SEED_000].cohort or ""]
    assert cohort.key.startswith("sha256:92bc0be5")
    history = [
        (graph.nodes[e.run].name, graph.nodes[e.previous_run].name if e.previous_run else None)
        for e in cohort.events(graph)
    ]
    assert history == [("sol-submission-6709", None), ("sol-submission-16043", "sol-submission-6709")]
    # Before the seeds, 16043 held that cohort's record alone: the seed run took the first place in time.
    assert {e[1] for e in removed} == {cohort.events(graph)[1].run}


@pytest.mark.parametrize(
    ("run", "key_prefix", "rank", "leader_value"),
    [
        (SEED_000, "sha256:92bc0be5b5ce9f52", 2, 144537.0),
        (SEED_004, "sha256:caec9f00e44cade9", 1, None),
        (SEED_003, "sha256:664cd4589a4c0d47", 1, None),
    ],
)
def test_seed_records(
    head: tuple[registry.GitStore, Publication, Graph], run: str, key_prefix: str, rank: int, leader_value: float | None
) -> None:
    graph = head[2]
    facts = graph.facts[run]
    assert facts.cohort is not None and facts.cohort.startswith(key_prefix)
    assert graph.rank(run) == rank
    assert facts.eligible and not facts.warnings
    leader = graph.nodes[graph.cohorts[facts.cohort].leader(graph) or ""]
    assert isinstance(leader, Run) and leader.primary is not None
    assert leader.primary.value == (leader_value if leader_value is not None else graph.nodes[run].primary.value)  # type: ignore[union-attr]


def test_seed_publication_dates(head: tuple[registry.GitStore, Publication, Graph]) -> None:
    graph = head[2]
    assert registry.provenance.utc_instant(graph.published_at(graph.nodes[SEED_000]) or 0) == "2026-08-24T00:00:00Z"
    assert registry.provenance.utc_instant(graph.published_at(graph.nodes[SEED_004]) or 0).startswith("2026-08-15")


def test_the_43_operation_mismatches_keep_their_ranking_and_carry_a_warning(
    head: tuple[registry.GitStore, Publication, Graph],
) -> None:
    graph = head[2]
    flagged = [d for d, f in graph.facts.items() if any(w.startswith("operation-mismatch") for w in f.warnings)]
    assert len(flagged) == 43
    # Their cohort keys are upstream's (checked above); the eligible ones rank like any other run.
    eligible = [d for d in flagged if graph.facts[d].eligible]
    assert len(eligible) == 9
    assert all(graph.rank(d) is not None for d in eligible)
    assert all(
        graph.facts[d].reasons == ("STATUS_RUNTIME_ERROR", "MISSING_PRIMARY_METRIC")
        for d in flagged
        if d not in eligible
    )


def test_no_pinned_commit_shares_state_with_the_head(
    head: tuple[registry.GitStore, Publication, Graph], before_seeds: Graph
) -> None:
    graph = head[2]
    assert SEED_000 in graph.nodes and SEED_000 not in before_seeds.nodes
    assert graph.rank(SEED_000) == 2  # moving to the older commit did not touch the head graph
    # The seeds' 4 manifests, then the Liger import's 1,994 (tests/test_embedded.py counts them by kind).
    assert len(graph.nodes) - len(before_seeds.nodes) == 4 + 1_994


@pytest.mark.parametrize(
    ("authors", "credited"),
    [
        ([{"name": "Ada Lovelace", "github": "ada"}], "Ada Lovelace"),
        ([{"github": "ada"}], "ada"),
        ([{}, {"name": "Bo"}], "Bo"),
        ([], None),
        (None, None),
    ],
)
def test_an_implementation_credits_its_first_named_author(authors: Any, credited: str | None) -> None:
    document = make_implementation(make_operation("rmsnorm-h4096"))
    if authors is not None:
        document["metadata"]["authors"] = authors
    node = extract("ImplementationRevision", digest_of(document), "0" * 40, document)
    assert isinstance(node, Implementation) and node.author == credited


# Small registries: incremental == from scratch --------------------------------------------------


def _signature(graph: Graph) -> dict[str, Any]:
    """Everything derived, in comparable form."""
    return {
        "nodes": dict(graph.nodes),
        "facts": dict(graph.facts),
        "places": {d: graph.place(d) for d in graph.facts},
        "cohorts": {k: (c.profile, c.members, c.ranked(graph), c.events(graph)) for k, c in graph.cohorts.items()},
        "names": {k: set(graph.named(k)) for k in graph.names},
        "runs_by": {k: {kk: set(vv) for kk, vv in v.items()} for k, v in graph.runs_by.items()},
        "cohorts_by": {k: {kk: set(vv) for kk, vv in v.items()} for k, v in graph.cohorts_by.items()},
        "records": graph.records,
    }


@pytest.fixture(params=["copied", "layered"])
def layering(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Derived graphs copy small collections and layer big ones over their parent's: "layered"
    makes every collection count as big, so that small registries take the big-registry path."""
    if request.param == "layered":
        monkeypatch.setattr(registry.members, "LAYER_FROM", 1)
        monkeypatch.setattr(graph_apply, "LAYER_FROM", 1)
    return str(request.param)


def test_incremental_updates_equal_full_builds(store: registry.GitStore, layering: str) -> None:
    scenario = basic_scenario()
    commits = [commit_manifests(store, scenario.docs)]
    op2 = make_operation("softmax-2", family="softmax")
    workload2 = make_workload(op2, tokens=128)
    impl2 = make_implementation(op2, "soft-a")
    env2 = make_environment("h100", product="NVIDIA H100", architecture="sm_90")
    batches = [
        [
            op2,
            workload2,
            impl2,
            env2,
            make_run(impl2, workload2, scenario.protocol, env2, 500, "2026-08-05T00:00:00Z", name="soft-1"),
        ],
        [
            make_run(impl2, workload2, scenario.protocol, env2, 400, "2026-08-06T00:00:00Z", name="soft-2"),
            make_run(
                scenario.implementations[1],
                scenario.workload,
                scenario.protocol,
                scenario.environment,
                7000,
                "2026-08-07T00:00:00Z",
                name="run-b2",
            ),
        ],
        [
            make_run(
                impl2, workload2, scenario.protocol, env2, 400, "2026-08-08T00:00:00Z", status="timeout", name="soft-3"
            )
        ],
        # Cohorts that only gain runs take their summary from the newcomers: a source-native run
        # joins a strict cohort and takes its record, then a strict one takes it back.
        [
            make_run(
                impl2,
                workload2,
                scenario.protocol,
                env2,
                300,
                "2026-08-09T00:00:00Z",
                source_native=True,
                name="soft-4",
            )
        ],
        [make_run(impl2, workload2, scenario.protocol, env2, 200, "2026-08-10T00:00:00Z", name="soft-5")],
    ]
    for when, batch in enumerate(batches, start=1):
        commits.append(commit_manifests(store, batch, when=1_700_000_000 + when * 3600))
    head = commits[-1]
    publication = publication_of(store, head)
    incremental = build_graph(store, commits[0], publication)[0]
    for commit in commits[1:]:
        incremental = move_graph(store, incremental, commit, publication)
        assert _signature(incremental) == _signature(build_graph(store, commit, publication)[0])
    # ...and backwards: an old commit from the head.
    full_head = build_graph(store, head, publication)[0]
    for commit in commits[:-1]:
        assert _signature(move_graph(store, full_head, commit, publication)) == _signature(
            build_graph(store, commit, publication)[0]
        )


def _fan_out_of(store: registry.GitStore, commit: str) -> dict[str, list[str]]:
    """The digests in each fan-out folder of a commit, in the order of its files (git's)."""
    found: dict[str, list[str]] = {}
    for entry in store.entries(commit):
        found.setdefault(entry.path.rpartition("/")[0], []).append(entry.digest)
    return found


def test_the_fan_out_index_follows_each_change(store: registry.GitStore, layering: str) -> None:
    """A refresh's tree diff bisects the served graph's folders (`Graph.fan_out`): after any change,
    forwards (additions) or backwards (removals), they list what the commit's folders hold, in order."""
    scenario = basic_scenario()
    commits = [commit_manifests(store, scenario.docs)]
    op2 = make_operation("softmax-2", family="softmax")
    workload2 = make_workload(op2, tokens=128)
    impl2 = make_implementation(op2, "soft-a")
    env2 = make_environment("h100", product="NVIDIA H100", architecture="sm_90")
    batches = [
        [op2, workload2, impl2, env2],
        [make_run(impl2, workload2, scenario.protocol, env2, 500 - n, f"2026-08-0{n}T00:00:00Z") for n in range(1, 8)],
    ]
    for when, batch in enumerate(batches, start=1):
        commits.append(commit_manifests(store, batch, when=1_700_000_000 + when * 3600))
    publication = publication_of(store, commits[-1])
    graph = build_graph(store, commits[0], publication)[0]
    assert graph.fan_out("benchmark-runs/00") is None  # not indexed until asked (or prepared)
    graph.index_fan_out()
    for commit in [*commits[1:], commits[0], commits[-1]]:
        graph = move_graph(store, graph, commit, publication)
        expected = _fan_out_of(store, commit)
        for folder in expected.keys() | {f"benchmark-runs/{n:02x}" for n in range(256)}:
            assert list(graph.fan_out(folder) or ()) == expected.get(folder, []), folder


def test_a_newer_faster_run_takes_the_record_and_rank(store: registry.GitStore, layering: str) -> None:
    scenario = basic_scenario()
    first = commit_manifests(store, scenario.docs)
    faster = make_run(
        scenario.implementations[1],
        scenario.workload,
        scenario.protocol,
        scenario.environment,
        5000,
        "2026-09-01T00:00:00Z",
        name="run-b-fast",
    )
    second = commit_manifests(store, [faster], when=1_700_003_600)
    publication = publication_of(store, second)
    old = build_graph(store, first, publication)[0]
    new = move_graph(store, old, second, publication)
    key = new.facts[digest_of(faster)].cohort
    assert key is not None
    assert new.rank(digest_of(faster)) == 1
    holder = new.cohorts[key].holder(new)
    assert holder is not None and holder.run == digest_of(faster)
    assert old.cohorts[key].leader(old) == digest_of(scenario.runs[1])  # the old graph is untouched
    assert [new.rank(digest_of(r)) for r in scenario.runs] == [3, 2, 4]


@pytest.mark.parametrize("read_before", [(), ("workload", "gpu"), ("environment", "implementation", "workload",
                                                                      "operation", "source", "gpu")])  # fmt: skip
def test_run_indexes_read_before_a_change_or_after_equal_a_full_build(
    store: registry.GitStore, read_before: tuple[str, ...]
) -> None:
    """A cold build leaves `runs_by` to be built on first read: a change to a graph whose indexes are
    built (kept up to date) or not (built from the changed graph) gives a full build's indexes."""
    scenario = basic_scenario()
    first = commit_manifests(store, scenario.docs)
    op2 = make_operation("softmax-2", family="softmax")
    workload2 = make_workload(op2, tokens=128)
    impl2 = make_implementation(op2, "soft-a")
    env2 = make_environment("h100", product="NVIDIA H100", architecture="sm_90")
    run = make_run(impl2, workload2, scenario.protocol, env2, 500, "2026-08-05T00:00:00Z", name="soft-1")
    second = commit_manifests(store, [op2, workload2, impl2, env2, run], when=1_700_003_600)
    publication = publication_of(store, second)
    old = build_graph(store, first, publication)[0]
    assert all(old.runs_by.built(name) is None for name in old.runs_by)
    for name in read_before:
        assert old.runs_by[name]
    new = move_graph(store, old, second, publication)
    full = build_graph(store, second, publication)[0]
    assert _signature(new)["runs_by"] == _signature(full)["runs_by"]
    assert set(new.runs_by["gpu"]["sm_90"]) == {digest_of(run)}  # members: a 1-tuple or a set
    assert _signature(old)["runs_by"] == _signature(build_graph(store, first, publication)[0])["runs_by"]


def test_runs_on_a_branch_are_unpublished(store: registry.GitStore, tmp_path: Path) -> None:
    scenario = basic_scenario()
    main = commit_manifests(store, scenario.docs)
    extra = make_run(
        scenario.implementations[0],
        scenario.workload,
        scenario.protocol,
        scenario.environment,
        100,
        "2026-09-01T00:00:00Z",
        name="pr-run",
    )
    import pygit2

    repo = pygit2.Repository(str(store.git_dir))
    manifest = registry.load_manifest(json.dumps(extra).encode(), "pr-run.json")
    blob = repo.create_blob(manifest.stored_bytes())
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(main).peel(pygit2.Tree))
    index.add(pygit2.IndexEntry(manifest.path, blob, pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    signature = pygit2.Signature("PR", "pr@example.com", 1_700_100_000, 0)
    branch_commit = str(
        repo.create_commit("refs/heads/pr", signature, signature, "Add a run\n", tree, [pygit2.Oid(hex=main)])
    )
    publication = publication_of(store, main)
    graph = move_graph(store, build_graph(store, main, publication)[0], branch_commit, publication)
    facts = graph.facts[manifest.digest]
    assert facts.reasons == ("UNPUBLISHED",)
    assert graph.rank(manifest.digest) is None
    assert graph.position is None


def test_the_records_order_is_known_without_replaying_any_ledger() -> None:
    """`records` orders cohorts by when their holder took the record, read off each cohort's
    members at build time; replaying every ledger (the definition) must give the same order."""
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    graph = build_graph(store, head)[0]
    order = graph.records  # first: before any ledger was replayed
    assert all(c._events is None for c in graph.cohorts.values())
    held = [(c.holder(graph), key) for key, c in graph.cohorts.items()]
    expected = sorted(((-event.at_ns, key) for event, key in held if event is not None))
    assert order == tuple(key for _, key in expected)
    assert len(order) > 1000


def test_preparing_pauses_every_sixteen_cohorts(head: tuple[registry.GitStore, Publication, Graph]) -> None:
    """A server's background preparation hands over between slices of 4096 manifests of the fan-out
    index, then of 16 cohorts (the pause waits while requests run); every ranking, every `runs_by`
    index and the fan-out index are made once it ends."""
    store, publication, _ = head
    commit = store.head()
    assert commit is not None
    graph = build_graph(store, commit, publication)[0]
    pauses: list[int] = []
    graph.prepare(lambda: pauses.append(sum(1 for c in graph.cohorts.values() if c._ranked is not None)))
    ranking, indexing = len(graph.cohorts) // 16, len(graph.nodes) // 4096
    assert len(pauses) == ranking + indexing and len(graph.cohorts) % 16 != 0 and indexing > 0
    assert pauses[:indexing] == [0] * indexing  # the index first: nothing ranked yet
    assert pauses[indexing : indexing + 3] == [16, 32, 48]  # each pause after a whole slice, none before it
    assert graph.fan_out("benchmark-runs/00")
    assert all(cohort._ranked is not None for cohort in graph.cohorts.values())
    assert all(graph.runs_by.built(name) is not None for name in graph.runs_by)


def test_a_prepared_graph_keeps_members_as_tuples_and_a_change_copies_them(store: registry.GitStore) -> None:
    """A built graph's indexes hold a single member as a 1-tuple (48 bytes where a set takes 216), and once
    prepared every member as tuples (the boundary at LAYER_FROM is tests/test_members.py's); a later commit
    adding a member makes the derived graph its own set, and leaves its parent's tuple as it was."""
    scenario = basic_scenario()
    first = commit_manifests(store, scenario.docs)
    publication = publication_of(store, first)
    graph = build_graph(store, first, publication)[0]
    groups = (graph.runs_by, graph.cohorts_by, graph.children)
    members = [m for group in groups for index in group.values() for m in index.values()]
    assert any(type(m) is set for m in members) and all(type(m) is tuple for m in members if len(m) == 1)
    graph.prepare()
    members = [m for group in groups for index in group.values() for m in index.values()]
    assert any(len(m) > 1 for m in members) and all(type(m) is tuple for m in members)
    environment = make_environment("h100", product="NVIDIA H100", architecture="sm_90")
    run = make_run(
        scenario.implementations[0], scenario.workload, scenario.protocol, environment, 900, "2026-08-05T00:00:00Z"
    )
    second = commit_manifests(store, [environment, run], when=1_700_003_600)
    moved = move_graph(store, graph, second, publication_of(store, second))
    env_digest = registry.manifest_from_document(environment, "e.json").digest
    assert len(moved.runs_by["environment"][env_digest]) == 1
    implementation = registry.manifest_from_document(scenario.implementations[0], "i.json").digest
    before = graph.runs_by["implementation"][implementation]
    after = moved.runs_by["implementation"][implementation]
    assert type(after) is set and set(after) == {*before, registry.manifest_from_document(run, "r.json").digest}
    assert graph.runs_by["implementation"][implementation] is before

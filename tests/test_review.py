"""The pull-request check at the edges of its rules: the stored form, byte for byte, and the file-count
limit at exactly 10,000 and 10,001 files (docs/contributing.md: "more than 10,000 files" is refused)."""

from __future__ import annotations

import json
from typing import Any

import pygit2
import pytest
from helpers import (
    TEST_TIME,
    basic_scenario,
    commit_manifests,
    commit_meta,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_retraction,
    make_run,
    to_manifest,
)
from signing import T0, Key, commit_raw, merge_into_main, stored

from kernelindex import registry
from kernelindex.registry.errors import Problem
from kernelindex.registry.review import MAX_FILES, check_range
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer
from kernelindex.registry.snapshots import Snapshots
from kernelindex.registry.store import MAIN

NOT_STORED_REASON = (  # docs/contributing.md's stored form, and the command that writes it
    "not in the stored form (sorted keys, 2-space indent, normalized values, trailing newline); "
    "write it with `kernelindex add`"
)


def _faster_run() -> dict[str, Any]:
    scenario = basic_scenario()
    run = make_run(
        scenario.implementations[1],
        scenario.workload,
        scenario.protocol,
        scenario.environment,
        "6.5 us",  # normalized to 6500 before hashing: the stored file says 6500
        "2026-09-01T00:00:00Z",
        name="pr-run",
    )
    run["metadata"]["title"] = "kernel-b · 6.5 µs"  # the stored form keeps UTF-8, never \\u escapes
    return run


def _respellings(document: dict[str, Any], good: bytes) -> dict[str, bytes]:
    """The same manifest (same value, same digest, same path) in bytes that are not the stored form."""
    value = json.loads(good)
    unsorted = {key: value[key] for key in sorted(value, reverse=True)}
    return {
        "compact": json.dumps(value, sort_keys=True, ensure_ascii=False).encode() + b"\n",
        "keys not sorted": json.dumps(unsorted, indent=2, ensure_ascii=False).encode() + b"\n",
        "no trailing newline": good.rstrip(b"\n"),
        "two trailing newlines": good + b"\n",
        "4-space indent": json.dumps(value, sort_keys=True, indent=4, ensure_ascii=False).encode() + b"\n",
        "ASCII escapes": json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True).encode() + b"\n",
        "CRLF line ends": good.replace(b"\n", b"\r\n"),
        "duration not normalized": json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False).encode() + b"\n",
    }


def test_the_stored_form_is_required_byte_for_byte(basic_store: registry.GitStore) -> None:
    """Each respelling is a valid manifest at its own digest path; only its bytes are wrong."""
    base = basic_store.head()
    assert base is not None
    document = _faster_run()
    path, good = stored(document)
    assert b"\\u" not in good and "µ".encode() in good and b'"median": 6500' in good  # the stored form, by hand
    accepted = commit_raw(basic_store, base, {path: good})
    assert check_range(basic_store, base, accepted).ok
    for label, data in _respellings(document, good).items():
        assert data != good, label
        assert registry.load_manifest(data, path, "json").path == path, label  # same digest, same place
        head = commit_raw(basic_store, base, {path: data})
        report = check_range(basic_store, base, head)
        assert report.problems == (Problem(path, "", NOT_STORED_REASON),), label
        assert report.added == (), label


def _bulk_commit(store: registry.GitStore, base: str, count: int) -> str:
    """A commit adding `count` files (outside the layout, so each is also refused on its own), built
    with one index write: the size of a real oversized pull request at the cost of a few tree objects."""
    repo = pygit2.Repository(str(store.git_dir))
    blob = repo.create_blob(b"bulk\n")
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(base).peel(pygit2.Tree))
    for number in range(count):
        index.add(pygit2.IndexEntry(f"bulk/{number // 1000:02d}/{number:05d}.txt", blob, pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", 1_700_003_600, 0)
    message = "Bulk\n\nSource: community\n"
    return str(repo.create_commit(None, person, person, message, index.write_tree(repo), [pygit2.Oid(hex=base)]))


@pytest.mark.parametrize(("count", "refused"), [(10_000, False), (10_001, True)])
def test_the_file_count_limit_sits_at_10000(basic_store: registry.GitStore, count: int, refused: bool) -> None:
    assert MAX_FILES == 10_000  # docs/contributing.md, "more than 10,000 files"
    base = basic_store.head()
    assert base is not None
    head = _bulk_commit(basic_store, base, count)
    report = check_range(basic_store, base, head)
    limit = [p for p in report.problems if "changed files" in p.reason]
    layout = [p for p in report.problems if "outside the layout" in p.reason]
    if refused:
        assert limit == [Problem(head, "", "10,001 changed files; at most 10,000 in one change")]
    else:
        assert limit == []
    assert len(layout) == 10_000  # past the limit the first 10,000 are still checked, one problem each
    assert layout[0] == Problem(
        "bulk/00/00000.txt", "", "outside the layout: manifests live at <kind-folder>/<hh>/<sha256-hex>.json"
    )
    assert len(report.problems) == len(limit) + len(layout)


def test_a_lower_limit_is_applied_at_its_exact_value(basic_store: registry.GitStore) -> None:
    """`max_files` is the limit itself: at it passes, one past is refused (and says its number)."""
    scenario = basic_scenario()
    base = basic_store.head()
    assert base is not None
    runs = [
        make_run(
            scenario.implementations[0],
            scenario.workload,
            scenario.protocol,
            scenario.environment,
            7000 + i,
            name=f"r{i}",
        )
        for i in range(3)
    ]
    head = commit_raw(basic_store, base, dict(stored(r) for r in runs))
    assert check_range(basic_store, base, head, max_files=3).ok
    over = check_range(basic_store, base, head, max_files=2)
    assert [p.reason for p in over.problems] == ["3 changed files; at most 2 in one change"]
    assert len(over.added) == 2  # the first two files are still checked, and pass
    assert {m.digest for m in over.added} < {digest_of(r) for r in runs}


def test_a_whole_history_is_checked_from_its_root(store: registry.GitStore) -> None:
    """base None: every file of head is an addition (the check of a new registry)."""
    head = commit_manifests(store, basic_scenario().docs)
    report = check_range(store, None, head)
    assert report.ok and report.commits == 1
    assert sorted(m.digest for m in report.added) == sorted(digest_of(d) for d in basic_scenario().docs)


# The maintainers' acts, problem by problem ----------------------------------------------------------


def _governed(store: registry.GitStore, alice: Key) -> str:
    """The basic scenario with a policy listing alice, in a commit under the registered source `test`."""
    result = store.add(
        [to_manifest(d) for d in basic_scenario().docs],
        commit_meta(T0, subject="Initial policy and data", source="test"),
        extra_files={POLICY_PATH: alice.allowed_signer},
    )
    assert result.commit is not None
    return result.commit


def _run(name: str, latency: int) -> dict[str, Any]:
    scenario = basic_scenario()
    return make_run(
        scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, latency, name=name
    )


def test_each_unsigned_act_is_one_exact_problem(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """A plain commit first (nothing to sign), then an unsigned retraction, then an unsigned commit that
    claims the registered source `test`: two problems, each saying where, which commit and why."""
    base = _governed(store, keys["alice"])
    plain = commit_raw(store, base, dict([stored(_run("plain", 7000))]))
    retraction_path, retraction = stored(make_retraction(basic_scenario().runs[1], "unsigned"))
    overlay = commit_raw(store, plain, {retraction_path: retraction}, when=T0 + 3700)
    claim = commit_raw(store, overlay, dict([stored(_run("claimed", 7100))]), when=T0 + 3800,
                       message="Import\n\nSource: test\n")  # fmt: skip
    assert check_range(store, base, claim).problems == (
        Problem(
            retraction_path,
            "",
            "an overlay needs a commit signed by a maintainer listed in the policy/maintainers in force; "
            f"commit {overlay[:12]}: unsigned",
        ),
        Problem(
            f"commit {claim[:12]}",
            "Source",
            "claims the registered source 'test', whose data only maintainers publish; the commit is not signed "
            "by one (unsigned). A contribution says `Source: community`",
        ),
    )


def test_community_is_never_a_registered_source(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    first = commit_raw(store, base, dict([stored(_run("first", 7000))]), ref="refs/heads/first")
    merged = merge_into_main(store, first)  # main now publishes under `Source: community` too
    second = commit_raw(store, merged, dict([stored(_run("second", 7100))]), when=T0 + 9000)
    assert check_range(store, merged, second).ok


def test_overlays_already_on_main_do_not_taint_later_commits(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    signed = store.add(
        [to_manifest(make_retraction(basic_scenario().runs[1], "signed"))],
        commit_meta(T0 + 100, subject="Retract", source="community"),
        sign=ssh_signer(keys["alice"].private),
    ).commit
    assert signed is not None and check_range(store, base, signed).ok
    later = commit_raw(store, signed, dict([stored(_run("later", 7000))]), when=T0 + 9000)
    assert check_range(store, signed, later).ok
    assert check_range(store, None, later).ok  # the whole history: the signed retraction counts from the root


def test_a_key_added_in_a_change_cannot_sign_its_overlays(store: registry.GitStore, keys: dict[str, Key]) -> None:
    alice, mallory = keys["alice"], keys["mallory"]
    base = _governed(store, alice)
    added = commit_raw(store, base, {POLICY_PATH: alice.allowed_signer + mallory.allowed_signer}, signer=alice)
    retraction_path, retraction = stored(make_retraction(basic_scenario().runs[1], "mallory says so"))
    overlay = commit_raw(store, added, {retraction_path: retraction}, signer=mallory, when=T0 + 3700)
    assert check_range(store, base, overlay).problems == (
        Problem(
            retraction_path,
            "",
            "an overlay needs a commit signed by a maintainer listed in the policy/maintainers in force; "
            f"commit {overlay[:12]}: signed by a key that policy/maintainers does not list",
        ),
    )


def test_a_whole_history_reports_each_refused_policy_change_in_order(
    store: registry.GitStore, keys: dict[str, Key]
) -> None:
    alice = keys["alice"]
    root = _governed(store, alice)
    first = commit_raw(store, root, {POLICY_PATH: alice.allowed_signer + b"# one\n"})
    second = commit_raw(store, first, {POLICY_PATH: alice.allowed_signer + b"# two\n"}, when=T0 + 3700)
    third = commit_raw(store, second, dict([stored(_run("third", 7000))]), when=T0 + 3800)
    unsigned = "policy/maintainers is changed by commits no maintainer of the policy in force signed"
    assert check_range(store, None, third).problems == (
        Problem(POLICY_PATH, "", f"commit {first[:12]}: {unsigned}: {first[:12]} (unsigned)"),
        Problem(POLICY_PATH, "", f"commit {second[:12]}: {unsigned}: {second[:12]} (unsigned)"),
    )
    assert check_range(store, root, first).problems == (
        Problem(POLICY_PATH, "", f"{unsigned}: {first[:12]} (unsigned)"),
    )


def test_without_signatures_the_policy_file_must_still_parse(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """A local registry (signatures off) and the server's check of a new head: a policy that cannot
    be read is refused, a readable one passes."""
    base = _governed(store, keys["alice"])
    broken = commit_raw(store, base, {POLICY_PATH: b"alice@example.com nonsense\n"})
    assert check_range(store, base, broken, signatures=False).problems == (
        Problem(
            POLICY_PATH, "", "policy/maintainers:1: not an allowed-signers line (principals [options] keytype key)"
        ),
    )
    fine = commit_raw(store, base, {POLICY_PATH: keys["alice"].allowed_signer + keys["bob"].allowed_signer})
    assert check_range(store, base, fine, signatures=False).ok


def test_a_reference_to_a_manifest_of_another_kind_does_not_resolve(basic_store: registry.GitStore) -> None:
    scenario = basic_scenario()
    base = basic_store.head()
    assert base is not None
    wrong = make_run(scenario.workload, scenario.workload, scenario.protocol, scenario.environment, 7000, name="wrong")
    path, data = stored(wrong)
    head = commit_raw(basic_store, base, {path: data})
    problems = check_range(basic_store, base, head).problems
    assert (
        Problem(
            path,
            "$.spec.implementationDigest",
            f"{digest_of(scenario.workload)} does not resolve to an ImplementationRevision",
        )
        in problems
    ), problems


def test_a_server_resolves_references_from_its_graph_as_the_pull_request_check_does(
    basic_store: registry.GitStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server checks a new head's references against the graph it serves: a missing manifest, one
    of another kind, and a run whose implementation and workload are for two operations are refused
    in the pull request check's words, and no document a reference names is read (the operations of
    a run's implementation and workload are their nodes')."""
    scenario = basic_scenario()
    other = make_operation("layernorm-h4096")
    elsewhere = make_implementation(other, "kernel-for-layernorm")
    base = commit_manifests(basic_store, [other, elsewhere], TEST_TIME + 5)
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    assert snapshots.status.serving == base
    nowhere = make_environment("nowhere", product="NVIDIA Nowhere", architecture="sm_0")
    runs = [
        make_run(scenario.implementations[0], scenario.workload, scenario.environment, nowhere, 7000, name="bad-refs"),
        make_run(scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, 7100),
        make_run(elsewhere, scenario.workload, scenario.protocol, scenario.environment, 7200, name="two-ops"),
    ]
    head = commit_raw(basic_store, base, dict(map(stored, runs)), ref=MAIN)
    expected = [p for p in check_range(basic_store, base, head).problems if p.path.startswith("$.spec.")]
    mismatch = (
        f"implementation is for operation {digest_of(other)} but workload is for operation "
        f"{digest_of(scenario.operation)}; a run measures one operation"
    )
    assert {(p.path, p.reason) for p in expected} == {
        ("$.spec.protocolDigest", f"{digest_of(scenario.environment)} does not resolve to a BenchmarkProtocol"),
        ("$.spec.environmentDigest", f"{digest_of(nowhere)} does not resolve to an ExecutionEnvironment"),
        ("$.spec.workloadDigest", mismatch),
    }
    read: list[str] = []
    served = snapshots.store()
    original = served.read_blob

    def read_blob(oid: str) -> bytes:
        read.append(oid)
        return original(oid)

    monkeypatch.setattr(served, "read_blob", read_blob)
    status = snapshots.refresh()
    assert status.serving == base and status.reason is not None
    assert status.reason.startswith(f"main {head[:12]} fails validation: ")
    assert all(str(problem) in status.reason for problem in expected), status.reason
    nodes = snapshots.head.nodes
    named = (scenario.workload, *scenario.implementations, elsewhere, scenario.protocol, scenario.environment)
    assert not {nodes[digest_of(d)].oid for d in named} & set(read)


def test_a_signed_act_does_not_vouch_for_the_next(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """alice signs one retraction; the next commit retracts another run unsigned: it is still reported."""
    alice = keys["alice"]
    base = _governed(store, alice)
    first_path, first = stored(make_retraction(basic_scenario().runs[0], "signed"))
    second_path, second = stored(make_retraction(basic_scenario().runs[1], "unsigned"))
    signed = commit_raw(store, base, {first_path: first}, signer=alice)
    unsigned = commit_raw(store, signed, {second_path: second}, when=T0 + 3700)
    assert [p.source for p in check_range(store, base, unsigned).problems] == [second_path]


def test_a_whole_history_judges_each_commit_by_the_policy_before_it(
    store: registry.GitStore, keys: dict[str, Key]
) -> None:
    """Under a pinned root (alice), alice's signed initial commit keeps her, she adds carol, and carol
    then signs a retraction: carol is a maintainer by then, so the whole history passes."""
    alice, carol = keys["alice"], keys["carol"]
    root = store.add(
        [to_manifest(d) for d in basic_scenario().docs],
        commit_meta(T0, subject="Initial policy and data", source="test"),
        extra_files={POLICY_PATH: alice.allowed_signer},
        sign=ssh_signer(alice.private),
    ).commit
    assert root is not None
    added = commit_raw(store, root, {POLICY_PATH: alice.allowed_signer + carol.allowed_signer}, signer=alice)
    retraction_path, retraction = stored(make_retraction(basic_scenario().runs[1], "carol says so"))
    overlay = commit_raw(store, added, {retraction_path: retraction}, signer=carol, when=T0 + 3700)
    assert check_range(store, None, overlay, trust_root=alice.allowed_signer).ok

"""The trust root and the maintainers policy chain, attacked the way a hostile contributor would:
real git repositories, real ssh-keygen signatures, the PR check, and a real server deciding what
it honours. Each attack is tallied in the fault and abuse table (tests/probes.py)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from helpers import basic_scenario, commit_manifests, digest_of, make_retraction, make_run, to_manifest
from probes import probe_all
from server import serve
from signing import T0, Key, commit_raw, merge_into_main, stored
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app as cli
from kernelindex.registry.review import RangeReport, check_range
from kernelindex.registry.signatures import POLICY_PATH

FASTEST = basic_scenario().runs[1]  # run-a2, 7.9 µs: the cohort's record holder
RETRACT_FASTEST = stored(make_retraction(FASTEST, "a forged retraction"))


def _head(store: registry.GitStore) -> str:
    head = store.head()
    assert head is not None
    return head


def _ungoverned(store: registry.GitStore) -> str:
    """The embedded default's situation: data, and no policy/maintainers at all."""
    return commit_manifests(store, basic_scenario().docs, T0)


def _governed(store: registry.GitStore, *maintainers: Key) -> str:
    """A registry whose initial commit (the root) lists `maintainers`."""
    policy = b"".join(key.allowed_signer for key in maintainers)
    result = store.add(
        [to_manifest(d) for d in basic_scenario().docs],
        registry.CommitMeta(
            registry.Person("Operator", "op@example.com", T0, 0),
            registry.Person("Operator", "op@example.com", T0, 0),
            "Initial policy and data",
            trailers=(("Source", "test"),),
        ),
        extra_files={POLICY_PATH: policy},
    )
    assert result.commit is not None
    return result.commit


def _fastest_retracted(repo: Path, trust_root: Path | None = None) -> bool:
    with serve(repo, trust_root=trust_root) as api:
        run = api.graphql('{ run(id: "run-a2") { ineligibilityReasons } }').json()["data"]["run"]
    return "RETRACTED" in run["ineligibilityReasons"]


def _policy_problem(report: RangeReport, fragment: str) -> bool:
    return not report.ok and any(p.source == POLICY_PATH and fragment in p.reason for p in report.problems)


def test_a_pull_request_cannot_create_the_first_policy(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """The takeover: on a registry without maintainers, mallory's PR lists her own key and retracts
    the record, every commit signed by her. The check refuses it; merged anyway, nothing is honoured."""
    base = _ungoverned(store)
    mallory = keys["mallory"]
    policy = commit_raw(store, base, {POLICY_PATH: mallory.allowed_signer}, signer=mallory)
    pr = commit_raw(store, policy, dict([RETRACT_FASTEST]), signer=mallory, ref="refs/heads/takeover")
    report = check_range(store, base, pr)
    text = CliRunner().invoke(cli, ["validate", "--base", "main", "--head", "takeover", "--repo", str(store.path)])
    assert _policy_problem(report, "the first one comes from the operator")
    assert any(p.source == RETRACT_FASTEST[0] and "signed by a maintainer" in p.reason for p in report.problems)
    assert text.exit_code == 1 and "All checks passed" not in text.output
    merge_into_main(store, pr, signer=mallory)  # a careless merge, signed by mallory herself
    assert not _fastest_retracted(store.path)
    assert not registry.TrustChain(store).verify(_head(store)).verified


def test_the_operator_pins_the_root_and_its_keys_introduce_the_policy(
    store: registry.GitStore, keys: dict[str, Key], tmp_path: Path
) -> None:
    base = _ungoverned(store)
    root = tmp_path / "root_signers"
    root.write_bytes(keys["alice"].allowed_signer)
    policy = keys["alice"].allowed_signer + keys["bob"].allowed_signer
    by_alice = commit_raw(store, base, {POLICY_PATH: policy}, signer=keys["alice"], ref="refs/heads/by-alice")
    by_mallory = commit_raw(store, base, {POLICY_PATH: policy}, signer=keys["mallory"], ref="refs/heads/by-mallory")
    assert check_range(store, base, by_alice, trust_root=root.read_bytes()).ok
    assert _policy_problem(check_range(store, base, by_mallory, trust_root=root.read_bytes()), "signed")
    assert not check_range(store, base, by_alice).ok  # no root pinned: no policy can start
    cli_check = CliRunner().invoke(
        cli,
        ["validate", "--base", "main", "--head", "by-alice", "--repo", str(store.path), "--trust-root", str(root)],
    )
    assert cli_check.exit_code == 0, cli_check.output
    merged = merge_into_main(store, by_alice, signer=keys["alice"])
    retraction = commit_raw(store, merged, dict([RETRACT_FASTEST]), signer=keys["bob"], when=T0 + 9000)
    assert store._compare_and_swap(registry.store.MAIN, merged, retraction)  # bob, now a maintainer, publishes
    assert _fastest_retracted(store.path, trust_root=root)
    assert not _fastest_retracted(store.path)  # the same history, served without the operator's root


def test_a_maintainer_rotates_the_policy_and_a_stranger_cannot(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    alice, bob, mallory = keys["alice"], keys["bob"], keys["mallory"]
    adds_bob = commit_raw(store, base, {POLICY_PATH: alice.allowed_signer + bob.allowed_signer}, signer=alice)
    adds_mallory = commit_raw(store, base, {POLICY_PATH: alice.allowed_signer + mallory.allowed_signer}, signer=mallory)
    unsigned = commit_raw(store, base, {POLICY_PATH: alice.allowed_signer + mallory.allowed_signer})
    assert check_range(store, base, adds_bob).ok  # a listed maintainer can change the policy
    failed = probe_all(
        "PR: trust root and policy",
        [
            ("stranger adds herself", lambda: _policy_problem(check_range(store, base, adds_mallory), "signed")),
            ("unsigned policy edit", lambda: _policy_problem(check_range(store, base, unsigned), "signed")),
        ],
    )
    assert failed == []
    # Merged anyway (a direct push), mallory's key still counts for nothing.
    merged = merge_into_main(store, adds_mallory, signer=mallory)
    retraction = commit_raw(store, merged, dict([RETRACT_FASTEST]), signer=mallory, when=T0 + 9000)
    assert store._compare_and_swap(registry.store.MAIN, merged, retraction)
    chain = registry.TrustChain(store)
    change = chain.change(merged)
    assert change is not None and not change.accepted
    assert chain.policy_after(retraction) == chain.policy_after(base)  # alice alone, as before
    assert not _fastest_retracted(store.path)


def test_removing_a_maintainer_takes_two_of_them(store: registry.GitStore, keys: dict[str, Key]) -> None:
    alice, bob, carol = keys["alice"], keys["bob"], keys["carol"]
    base = _governed(store, alice, bob, carol)
    without_bob = alice.allowed_signer + carol.allowed_signer
    alone = commit_raw(store, base, {POLICY_PATH: without_bob}, signer=alice)
    cosigned = commit_raw(store, alone, {}, signer=carol, message="Co-sign: remove bob\n\nSource: community\n")
    by_a_stranger = commit_raw(store, alone, {}, signer=keys["mallory"], message="Co-sign\n\nSource: community\n")
    by_the_same = commit_raw(store, alone, {}, signer=alice, message="Co-sign again\n\nSource: community\n")
    report = check_range(store, base, alone)
    assert _policy_problem(report, "needs the signatures of 2 distinct maintainer(s)")
    assert _policy_problem(check_range(store, base, by_a_stranger), "has 1 (alice@example.com)")
    assert _policy_problem(check_range(store, base, by_the_same), "has 1 (alice@example.com)")
    assert check_range(store, base, cosigned).ok
    adds_only = commit_raw(store, base, {POLICY_PATH: without_bob + bob.allowed_signer + b"# bob\n"}, signer=bob)
    assert check_range(store, base, adds_only).ok  # reordering and comments remove nobody


def test_a_sole_maintainer_rotates_her_own_key(store: registry.GitStore, keys: dict[str, Key], tmp_path: Path) -> None:
    from signing import make_key

    alice = keys["alice"]
    base = _governed(store, alice)
    new_key = make_key(tmp_path, "alice@example.com")
    rotated = commit_raw(store, base, {POLICY_PATH: new_key.allowed_signer}, signer=alice, ref="refs/heads/rotate")
    assert check_range(store, base, rotated).ok
    assert not check_range(
        store, base, commit_raw(store, base, {POLICY_PATH: new_key.allowed_signer}, signer=new_key)
    ).ok
    merge_into_main(store, rotated, signer=alice)
    after = commit_raw(store, _head(store), dict([RETRACT_FASTEST]), signer=new_key, when=T0 + 9000)
    assert registry.TrustChain(store).verify(after).verified
    old_key_after = commit_raw(store, _head(store), dict([RETRACT_FASTEST]), signer=alice, when=T0 + 9001)
    assert not registry.TrustChain(store).verify(old_key_after).verified


def test_policies_that_would_lock_or_break_the_registry_are_refused(
    store: registry.GitStore, keys: dict[str, Key]
) -> None:
    alice = keys["alice"]
    base = _governed(store, alice)

    def refused(files: dict[str, bytes | None], why: str) -> bool:
        return _policy_problem(check_range(store, base, commit_raw(store, base, files, signer=alice)), why)

    cases: dict[str, tuple[dict[str, bytes | None], str]] = {
        "deleted": ({POLICY_PATH: None}, "is deleted"),
        "empty": ({POLICY_PATH: b"# nobody\n"}, "lists no maintainer"),
        "garbage": ({POLICY_PATH: alice.allowed_signer + b"not a key line\n"}, "policy/maintainers:2:"),
        "binary": ({POLICY_PATH: b"\xff\xfe"}, "not UTF-8"),
    }
    failed = probe_all(
        "PR: trust root and policy",
        [(name, functools.partial(refused, files, why)) for name, (files, why) in cases.items()],
    )
    assert failed == []


def test_claims_of_a_registered_source_need_a_maintainer(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])  # main publishes under `Source: test`
    run = _run(8800, name="claimed-run")
    files = dict([stored(run)])
    forged = commit_raw(store, base, files, message="Import\n\nSource: test\nLicense: MIT\n")
    honest = commit_raw(store, base, files, message="My run\n\nSource: community\n")
    official = commit_raw(store, base, files, message="Import\n\nSource: test\n", signer=keys["alice"])
    unknown = commit_raw(store, base, files, message="Import\n\nSource: a-new-source\n")
    report = check_range(store, base, forged)
    failed = probe_all(
        "PR: forged provenance",
        [
            (
                "unsigned Source: test",
                lambda: any(p.path == "Source" and "registered source 'test'" in p.reason for p in report.problems),
            ),
            (
                "mallory-signed Source: test",
                lambda: (
                    not check_range(
                        store,
                        base,
                        commit_raw(store, base, files, message="Import\n\nSource: test\n", signer=keys["mallory"]),
                    ).ok
                ),
            ),
        ],
    )
    assert failed == []
    assert [check_range(store, base, c).ok for c in (honest, official, unknown)] == [True, True, True]


def _run(latency_ns: int, *, name: str) -> dict[str, Any]:
    """A new run of implementation b in the basic scenario's cohort."""
    scenario = basic_scenario()
    i, w, p, e = scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment
    return make_run(i, w, p, e, latency_ns, name=name)


def test_names_cannot_be_squatted(store: registry.GitStore, tmp_path: Path) -> None:
    base = commit_manifests(store, basic_scenario().docs, T0)
    taken = _run(8700, name="run-a1")  # the name of a published run
    digest_like = _run(8701, name="0123456789ab")
    prefix_of_real = _run(8702, name=digest_of(FASTEST)[7:19])
    twins = [_run(8703 + i, name="twin") for i in range(2)]
    fine = _run(8710, name="0123456789a")  # 11 hex digits: too short to be an id

    def refused_by_pr(*docs: dict[str, Any]) -> bool:
        pr = commit_raw(store, base, dict(stored(d) for d in docs))
        report = check_range(store, base, pr)
        return not report.ok and all(p.path == "$.metadata.name" for p in report.problems)

    def refused_by_add(*docs: dict[str, Any]) -> bool:
        try:
            commit_manifests(store, docs, T0 + 60)
        except registry.RejectedChange as exc:
            return all(p.path == "$.metadata.name" for p in exc.problems) and store.head() == base
        return False

    cases = [taken, digest_like, prefix_of_real]
    failed = probe_all(
        "PR and add: name squatting",
        [(f"pr {d['metadata']['name']}", functools.partial(refused_by_pr, d)) for d in cases]
        + [(f"add {d['metadata']['name']}", functools.partial(refused_by_add, d)) for d in cases]
        + [("pr twins", lambda: refused_by_pr(*twins)), ("add twins", lambda: refused_by_add(*twins))],
    )
    assert failed == []
    assert check_range(store, base, commit_raw(store, base, dict([stored(fine)]))).ok
    path = tmp_path / "squat.json"
    path.write_text(json.dumps(taken))
    added = CliRunner().invoke(cli, ["add", str(path), "--repo", str(store.path)])
    assert added.exit_code == 1 and "$.metadata.name: 'run-a1' already names the BenchmarkRun" in added.output


def test_show_and_cite_take_a_kind(basic_store: registry.GitStore) -> None:
    """A run and its implementation may share a name (SOL names both after the submission)."""
    shared = _run(8720, name="kernel-b")  # kernel-b is also an implementation's name
    commit_manifests(basic_store, [shared], T0 + 60)
    runner = CliRunner()
    ambiguous = runner.invoke(cli, ["show", "kernel-b", "--repo", str(basic_store.path)])
    as_run = runner.invoke(
        cli, ["show", "kernel-b", "--kind", "benchmarkrun", "--repo", str(basic_store.path), "--json"]
    )
    as_impl = runner.invoke(
        cli, ["show", "kernel-b", "--kind", "ImplementationRevision", "--repo", str(basic_store.path), "--json"]
    )
    bad = runner.invoke(cli, ["show", "kernel-b", "--kind", "Nope", "--repo", str(basic_store.path)])
    cited = runner.invoke(cli, ["cite", "kernel-b", "--repo", str(basic_store.path), "--kind", "BenchmarkRun"])
    assert ambiguous.exit_code == 1 and "ambiguous" in ambiguous.output
    assert json.loads(as_run.output)["digest"] == digest_of(shared)
    assert json.loads(as_impl.output)["kind"] == "ImplementationRevision"
    assert bad.exit_code == 2 and "expected one of" in bad.output
    assert cited.exit_code == 0 and digest_of(shared)[:15] in cited.output


def test_a_copied_signature_does_not_vouch_for_another_commit(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """Replay: alice's real signature, lifted from her commit, attached to one that adds a retraction."""
    import pygit2

    base = _governed(store, keys["alice"])
    genuine = commit_raw(store, base, {}, signer=keys["alice"], message="Harmless\n\nSource: community\n")
    signature = registry.GitStore(store.path).commit_info(genuine).signature
    assert signature is not None
    repo = pygit2.Repository(str(store.git_dir))
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(base).peel(pygit2.Tree))
    path, data = RETRACT_FASTEST
    index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", T0 + 3600, 0)
    text = str(repo.create_commit_string(person, person, "Harmless\n\nSource: community\n", index.write_tree(repo),
                                         [pygit2.Oid(hex=base)]))  # fmt: skip
    replayed = str(repo.create_commit_with_signature(text, signature.decode()))
    verdict = registry.TrustChain(store).verify(replayed)
    assert verdict.signed and not verdict.verified and "does not verify" in (verdict.reason or "")
    assert not check_range(store, base, replayed).ok


def test_kernelindex_init_writes_the_trust_root_as_the_initial_commit(tmp_path: Path, keys: dict[str, Key]) -> None:
    signers = tmp_path / "root_signers"
    signers.write_bytes(keys["alice"].allowed_signer)
    repo = tmp_path / "manifests.git"
    runner = CliRunner()
    author = ["--author", "Operator <op@example.com>"]
    created = runner.invoke(cli, ["init", "--repo", str(repo), "--maintainers", str(signers), *author])
    again = runner.invoke(cli, ["init", "--repo", str(repo), "--maintainers", str(signers), *author])
    (tmp_path / "empty").write_bytes(b"# nobody yet\n")
    empty = runner.invoke(
        cli, ["init", "--repo", str(tmp_path / "other.git"), "--maintainers", str(tmp_path / "empty")]
    )
    assert created.exit_code == 0, created.output
    store = registry.GitStore(repo)
    head = _head(store)
    policy = registry.TrustChain(store).policy_after(head)
    assert store.commit_info(head).parents == () and policy is not None
    assert policy.principals == {"alice@example.com"}
    assert again.exit_code == 1 and "already has commits" in again.output
    assert empty.exit_code == 1 and "lists no maintainer" in empty.output
    assert not (tmp_path / "other.git").exists()

"""The trust chain at its edges, each verdict compared whole (commit, accepted, reason, signers):
allowed-signers lines of every shape, signatures that are missing or not SSH, a key added inside a
change co-signing it, and policies restored by merging an old commit (the reasons are docs/trust.md's
rules, worded as the CLI shows them)."""

from __future__ import annotations

import pygit2
import pytest
from helpers import basic_scenario, commit_manifests, to_manifest
from signing import T0, Key, commit_raw, merge_into_main

from kernelindex import registry
from kernelindex.registry.provenance import SignatureCheck
from kernelindex.registry.review import check_range
from kernelindex.registry.signatures import POLICY_PATH
from kernelindex.registry.trust import Policy, PolicyChange, TrustChain, parse_policy

ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEd0zE3jmPM1Q1V0LnpmkrbQxJjqJNJ3rQhRcIW4n4PF"


# parse_policy ---------------------------------------------------------------------------------------


def test_every_line_shape_of_an_allowed_signers_file() -> None:
    text = (
        "# maintainers of the registry\n"
        "\n"
        f"alice@example.com {ED}\n"  # no options
        f'bob@example.com,bo@example.com namespaces="git",valid-after="20260101" {ED} bob\'s laptop\n'
        "carol@example.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7\n"  # a key type of letters and dashes
        "dave@example.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY=\n"
        "erin@example.com cert-authority sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t\n"
        "  # an indented comment\n"
    ).encode()
    policy = parse_policy(text)
    assert policy == Policy(
        text,
        frozenset(
            {
                ("alice@example.com", ED),
                ("bob@example.com", ED),
                ("bo@example.com", ED),
                ("carol@example.com", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7"),
                ("dave@example.com", "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY="),
                ("erin@example.com", "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t"),
            }
        ),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"", "policy/maintainers: lists no maintainer (an empty policy would lock the registry)"),
        (b"# nobody\n\n", "policy/maintainers: lists no maintainer (an empty policy would lock the registry)"),
        (b"alice@example.com rsa AAAA\n", "policy/maintainers:1: not an allowed-signers line"),
        (f"# one\n\nalice@example.com {ED.split()[0]}\n".encode(), "policy/maintainers:3: not an allowed-signers line"),
        (b"alice@example.com \xff\n", "policy/maintainers: not UTF-8 text (invalid start byte at byte 18)"),
    ],
)
def test_unreadable_policies_say_where(text: bytes, message: str) -> None:
    with pytest.raises(registry.RegistryError) as caught:
        parse_policy(text)
    assert str(caught.value).startswith(message)


def test_a_bad_pinned_root_is_named_as_such(store: registry.GitStore) -> None:
    message = "the configured trust root:1: not an allowed-signers line (principals [options] keytype key)"
    with pytest.raises(registry.RegistryError) as checked:
        TrustChain.check_root(b"not a policy\n")
    with pytest.raises(registry.RegistryError) as built:
        TrustChain(store, b"not a policy\n")
    assert str(checked.value) == str(built.value) == message
    TrustChain.check_root(None)  # no pinned root is not an error


# verify ---------------------------------------------------------------------------------------------


def _governed(store: registry.GitStore, *maintainers: Key) -> str:
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


def test_verify_says_why_a_commit_does_not_count(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = _governed(store, keys["alice"])
    unsigned = commit_raw(store, base, {}, message="Unsigned\n")
    repo = pygit2.Repository(str(store.git_dir))
    person = pygit2.Signature("Contributor", "c@example.com", T0 + 10, 0)
    text = str(repo.create_commit_string(person, person, "PGP\n", repo[base].peel(pygit2.Tree).id, [base]))
    pgp = "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n-----END PGP SIGNATURE-----"
    gpg_signed = str(repo.create_commit_with_signature(text, pgp))
    chain = TrustChain(store)
    assert chain.verify(unsigned) == SignatureCheck(signed=False, verified=False, reason="unsigned")
    assert chain.verify(gpg_signed) == SignatureCheck(
        signed=True, verified=False, reason="not an SSH signature (only SSH signatures count)"
    )
    assert chain.honour([unsigned, gpg_signed]) == frozenset()


def test_verify_without_any_policy(store: registry.GitStore, keys: dict[str, Key]) -> None:
    base = commit_manifests(store, basic_scenario().docs)
    signed = commit_raw(store, base, {}, signer=keys["alice"])
    assert TrustChain(store).verify(signed) == SignatureCheck(
        signed=False, verified=False, reason="no policy/maintainers is in force"
    )


# judge: whole verdicts --------------------------------------------------------------------------------


def _change(store: registry.GitStore, base: str, head: str) -> PolicyChange:
    chain = TrustChain(store)
    return chain.judge(chain.policy_after(base), base, head)


def test_a_key_added_inside_a_change_cannot_co_sign_it(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """alice adds mallory and, in the same pull request, mallory co-signs removing bob: only the
    maintainers in force at the base count, so the removal has one signature of the two it needs."""
    alice, bob, mallory = keys["alice"], keys["bob"], keys["mallory"]
    base = _governed(store, alice, bob)
    added = commit_raw(store, base, {POLICY_PATH: alice.allowed_signer + bob.allowed_signer + mallory.allowed_signer},
                       signer=alice)  # fmt: skip
    removed = commit_raw(store, added, {POLICY_PATH: alice.allowed_signer + mallory.allowed_signer}, signer=mallory)
    assert _change(store, base, removed) == PolicyChange(
        removed,
        False,
        "policy/maintainers is changed by commits no maintainer of the policy in force signed: "
        f"{removed[:12]} (signed by a key that policy/maintainers does not list)",
        frozenset({"alice@example.com"}),
    )
    cosign = commit_raw(store, added, {POLICY_PATH: alice.allowed_signer + mallory.allowed_signer}, signer=alice)
    quiet = commit_raw(store, cosign, {}, signer=mallory, message="Co-sign\n")
    assert _change(store, base, quiet) == PolicyChange(
        quiet,
        False,
        "the change removes or replaces a maintainer's key: it needs the signatures of 2 distinct maintainer(s) "
        "of the policy in force, and has 1 (alice@example.com)",
        frozenset({"alice@example.com"}),
    )


def test_accepted_and_refused_verdicts_whole(store: registry.GitStore, keys: dict[str, Key]) -> None:
    alice, bob, carol = keys["alice"], keys["bob"], keys["carol"]
    base = _governed(store, alice, bob)
    both = alice.allowed_signer + bob.allowed_signer
    add = commit_raw(store, base, {POLICY_PATH: both + carol.allowed_signer}, signer=alice)
    assert _change(store, base, add) == PolicyChange(
        add, True, "signed by alice@example.com", frozenset({"alice@example.com"})
    )
    cosigned = commit_raw(store, add, {}, signer=bob, message="Co-sign\n")
    assert _change(store, base, cosigned) == PolicyChange(
        cosigned,
        True,
        "signed by alice@example.com, bob@example.com",
        frozenset({"alice@example.com", "bob@example.com"}),
    )
    first = commit_raw(store, base, {POLICY_PATH: both + b"# x\n"}, message="Unsigned 1\n")
    second = commit_raw(store, first, {POLICY_PATH: both + b"# y\n"}, message="Unsigned 2\n")
    assert _change(store, base, second) == PolicyChange(
        second,
        False,
        "policy/maintainers is changed by commits no maintainer of the policy in force signed: "
        f"{first[:12]} (unsigned), {second[:12]} (unsigned)",
        frozenset(),
    )
    deleted = commit_raw(store, base, {POLICY_PATH: None}, signer=alice)
    assert _change(store, base, deleted) == PolicyChange(
        deleted, False, "policy/maintainers is deleted: the registry would have no maintainers"
    )
    broken = commit_raw(store, base, {POLICY_PATH: b"alice@example.com nonsense\n"}, signer=alice)
    assert _change(store, base, broken) == PolicyChange(
        broken, False, "policy/maintainers:1: not an allowed-signers line (principals [options] keytype key)"
    )
    chain = TrustChain(store)
    assert chain.judge(None, base, add) == PolicyChange(
        add,
        False,
        "there is no maintainers policy in force: the first one comes from the operator (the registry's initial "
        "commit, or the trust root pinned in the server's configuration), never from a change",
    )


def test_merging_an_old_commit_cannot_restore_an_old_policy(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """bob was removed with both signatures; a merge of the root commit brings his key back in a commit
    that edits nothing itself (its policy is one parent's): with no signature it is still refused."""
    alice, bob = keys["alice"], keys["bob"]
    root = _governed(store, alice, bob)
    removal = commit_raw(store, root, {POLICY_PATH: alice.allowed_signer}, signer=alice, ref="refs/heads/remove-bob")
    cosign = commit_raw(store, removal, {}, signer=bob, message="Co-sign: remove bob\n")
    merged = merge_into_main(store, cosign, signer=alice)
    assert TrustChain(store).policy_after(merged) == parse_policy(alice.allowed_signer)
    restore = commit_raw(store, [merged, root], {}, base_tree=root, message="Merge an old commit\n")
    assert _change(store, merged, restore) == PolicyChange(
        restore,
        False,
        "the change adds maintainers: it needs the signatures of 1 distinct maintainer(s) of the policy in force, "
        "and has 0 (none)",
    )
    assert not check_range(store, merged, restore).ok


# policy_after along a history, asked in any order ----------------------------------------------------------


def test_the_chain_answers_the_same_whatever_is_asked_first(store: registry.GitStore, keys: dict[str, Key]) -> None:
    alice, carol = keys["alice"], keys["carol"]
    root = _governed(store, alice)
    commits = [root]
    for number in range(4):
        files = {POLICY_PATH: alice.allowed_signer + carol.allowed_signer} if number == 1 else {}
        commits.append(commit_raw(store, commits[-1], files, signer=alice, when=T0 + 100 * (number + 1),
                                  message=f"Step {number}\n"))  # fmt: skip
    expected = [{"alice@example.com"}] * 2 + [{"alice@example.com", "carol@example.com"}] * 3
    orders = [list(range(5)), list(range(4, -1, -1)), [0, 4, 2, 3, 1], [1, 3, 0, 4, 2]]
    for order in orders:
        chain = TrustChain(store)
        for index in order:
            policy = chain.policy_after(commits[index])
            assert policy is not None and set(policy.principals) == expected[index], (order, index)
    chain = TrustChain(store)
    assert [chain.change(c) is not None for c in commits] == [False, False, True, False, False]
    assert check_range(store, None, commits[-1]).ok  # a whole governed history: one change, and it is signed


def test_a_pinned_root_judges_the_policy_of_the_initial_commit(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """With a root pinned by the operator, the repository's initial commit is a change like any other:
    an unsigned one that lists mallory edits the policy without a maintainer, and counts for nothing."""
    alice, mallory = keys["alice"], keys["mallory"]
    initial = _governed(store, mallory)
    chain = TrustChain(store, alice.allowed_signer)
    assert chain.policy_after(initial) == parse_policy(alice.allowed_signer)
    assert chain.change(initial) == PolicyChange(
        initial,
        False,
        "policy/maintainers is changed by commits no maintainer of the policy in force signed: "
        f"{initial[:12]} (unsigned)",
    )

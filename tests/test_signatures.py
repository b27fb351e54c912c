"""Signatures at their edges: `ssh-keygen -Y verify` decides, a signature lifted from one commit vouches
for no other (on every act a maintainer's signature authorizes), and each refusal says why.

Real keys and real ssh-keygen throughout (tests/signing.py); the expected outcomes are the trust
model's rules (docs/trust.md), never read back from the code under test."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from helpers import (
    basic_scenario,
    digest_of,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    to_manifest,
)
from signing import T0, Key, commit_raw, stored

from kernelindex import registry
from kernelindex.registry.review import check_range
from kernelindex.registry.signatures import POLICY_PATH, check_signature, ssh_signer
from kernelindex.registry.snapshots import build_graph

SCENARIO = basic_scenario()
TARGET = SCENARIO.runs[1]  # run-a2, the cohort's record holder (7.9 µs)
RERUN = make_run(
    SCENARIO.implementations[0], SCENARIO.workload, SCENARIO.protocol, SCENARIO.environment, 7950, name="rerun"
)
CLAIMED = make_run(
    SCENARIO.implementations[1], SCENARIO.workload, SCENARIO.protocol, SCENARIO.environment, 7000, name="claimed"
)
CORRECTION = make_run(
    SCENARIO.implementations[0], SCENARIO.workload, SCENARIO.protocol, SCENARIO.environment, 7990, name="correction"
)


def _signature_of(store: registry.GitStore, commit: str) -> bytes:
    signature = registry.GitStore(store.path).commit_info(commit).signature
    assert signature is not None
    return signature


def _with_signature(store: registry.GitStore, parent: str, files: dict[str, bytes], message: str, sig: bytes) -> str:
    """A commit of `files` on `parent` carrying `sig`, a signature made for some other commit."""
    repo = pygit2.Repository(str(store.git_dir))
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(parent).peel(pygit2.Tree))
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Contributor", "c@example.com", T0 + 3600, 0)
    text = str(repo.create_commit_string(person, person, message, index.write_tree(repo), [pygit2.Oid(hex=parent)]))
    return str(repo.create_commit_with_signature(text, sig.decode()))


def _governed(store: registry.GitStore, alice: Key) -> str:
    """Initial commit (the root): policy listing alice, the basic scenario, a rerun and a correction."""
    result = store.add(
        [to_manifest(d) for d in [*SCENARIO.docs, RERUN, CORRECTION]],
        registry.CommitMeta(
            registry.Person("Operator", "op@example.com", T0, 0),
            registry.Person("Operator", "op@example.com", T0, 0),
            "Initial policy and data",
            trailers=(("Source", "upstream-lab"),),  # from now on a registered source
        ),
        extra_files={POLICY_PATH: alice.allowed_signer},
    )
    assert result.commit is not None
    return result.commit


def _push(store: registry.GitStore, commit: str) -> None:
    """A direct push to main (what a careless maintainer's merge amounts to)."""
    assert store._compare_and_swap(registry.store.MAIN, store.head(), commit)


def _run_facts(store: registry.GitStore, run: dict[str, object]) -> registry.graph.RunFacts:
    head = store.head()
    assert head is not None
    chain = registry.TrustChain(store)
    graph = build_graph(store, head, honour=chain.honour)[0]
    return graph.facts[digest_of(run)]


ACTS: dict[str, tuple[Callable[[Key, Key], dict[str, bytes]], str, Callable[[registry.GitStore], bool]]] = {
    # act -> (files it adds, the commit message, whether it took effect once on main)
    "retraction": (
        lambda alice, mallory: dict([stored(make_retraction(TARGET, "forged"))]),
        "Retract\n\nSource: community\n",
        lambda store: _run_facts(store, TARGET).reasons == ("RETRACTED",),
    ),
    "supersession": (
        lambda alice, mallory: dict([stored(make_supersession(CORRECTION, TARGET))]),
        "Supersede\n\nSource: community\n",
        lambda store: _run_facts(store, TARGET).superseded_by == digest_of(CORRECTION),
    ),
    "verification": (
        lambda alice, mallory: dict([stored(make_verification(TARGET, RERUN, runner="runner-a"))]),
        "Verify\n\nSource: community\n",
        lambda store: _run_facts(store, TARGET).trust == registry.cohorts.Trust.VERIFIED,
    ),
    "policy change": (
        lambda alice, mallory: {POLICY_PATH: alice.allowed_signer + mallory.allowed_signer},
        "Add a maintainer\n\nSource: community\n",
        lambda store: "mallory@example.com" in _principals_in_force(store),
    ),
    "registered source": (
        lambda alice, mallory: dict([stored(CLAIMED)]),
        "Import\n\nSource: upstream-lab\n",
        lambda store: False,  # a claim has no effect to observe on main; the PR check is the guard
    ),
}


def _principals_in_force(store: registry.GitStore) -> frozenset[str]:
    head = store.head()
    assert head is not None
    policy = registry.TrustChain(store).policy_after(head)
    assert policy is not None
    return policy.principals


@pytest.mark.parametrize("act", list(ACTS))
def test_a_replayed_signature_authorizes_nothing(
    store: registry.GitStore, keys: dict[str, Key], act: str, tmp_path: Path
) -> None:
    """alice's genuine signature, lifted from her harmless commit onto one that performs `act`: the PR
    check refuses it, and pushed to main anyway it is not honoured. The same act signed by alice
    herself passes and takes effect (so the refusal is the signature's, not the act's)."""
    alice, mallory = keys["alice"], keys["mallory"]
    files_of, message, took_effect = ACTS[act]
    files = files_of(alice, mallory)
    base = _governed(store, alice)
    harmless = commit_raw(store, base, {}, signer=alice, message="Harmless\n\nSource: community\n")
    assert registry.TrustChain(store).verify(harmless).verified  # the signature is genuine where it belongs
    replayed = _with_signature(store, base, files, message, _signature_of(store, harmless))

    verdict = registry.TrustChain(store).verify(replayed)
    assert verdict.signed and not verdict.verified
    assert verdict.signer == alice.principal  # her key is listed: only the payload check can refuse it
    assert (verdict.reason or "").startswith("the signature does not verify")
    report = check_range(store, base, replayed)
    source = {"policy change": POLICY_PATH, "registered source": f"commit {replayed[:12]}"}.get(act, next(iter(files)))
    assert not report.ok and any(p.source == source for p in report.problems), report.problems
    _push(store, replayed)
    assert not took_effect(store)

    control = registry.GitStore.init(tmp_path / "control.git")
    control_base = _governed(control, alice)
    genuine = commit_raw(control, control_base, files, signer=alice, message=message)
    assert check_range(control, control_base, genuine).ok
    _push(control, genuine)
    assert took_effect(control) or act == "registered source"


@pytest.fixture
def signed(keys: dict[str, Key]) -> tuple[bytes, bytes]:
    """A payload and alice's signature of it, made by `ssh-keygen -Y sign -n git`."""
    payload = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nsigned payload\n"
    return payload, ssh_signer(keys["alice"].private)(payload)


def test_check_signature_accepts_exactly_the_signed_bytes(keys: dict[str, Key], signed: tuple[bytes, bytes]) -> None:
    payload, signature = signed
    policy = keys["bob"].allowed_signer + keys["alice"].allowed_signer
    good = check_signature(payload, signature, policy)
    assert (good.signed, good.verified, good.signer, good.reason) == (True, True, "alice@example.com", "")
    for changed in (payload + b"\n", payload[:-1], payload.replace(b"signed", b"Signed"), b""):
        bad = check_signature(changed, signature, policy)
        assert (bad.signed, bad.verified, bad.signer) == (True, False, "alice@example.com"), changed
        assert (bad.reason or "").startswith("the signature does not verify: "), bad.reason


def test_check_signature_refuses_an_unlisted_key_or_another_namespace(
    keys: dict[str, Key], signed: tuple[bytes, bytes], tmp_path: Path
) -> None:
    payload, signature = signed
    unlisted = check_signature(payload, signature, keys["bob"].allowed_signer)
    assert (unlisted.verified, unlisted.signer) == (False, None)
    assert unlisted.reason == "signed by a key that policy/maintainers does not list"
    # A signature for another namespace (`file`, as `ssh-keygen -Y sign -n file` makes) is not a git signature.
    message = tmp_path / "payload"
    message.write_bytes(payload)
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-n", "file", "-f", str(keys["alice"].private), str(message)], check=True
    )
    other = check_signature(payload, (tmp_path / "payload.sig").read_bytes(), keys["alice"].allowed_signer)
    assert not other.verified and other.signed


def test_check_signature_without_ssh_keygen_says_so(
    keys: dict[str, Key], signed: tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    payload, signature = signed
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no ssh-keygen on it
    verdict = check_signature(payload, signature, keys["alice"].allowed_signer)
    assert (verdict.signed, verdict.verified, verdict.reason) == (True, False, "ssh-keygen is not installed")
    with pytest.raises(registry.RegistryError) as caught:
        ssh_signer(keys["alice"].private)
    assert str(caught.value) == "cannot sign: ssh-keygen is not installed"


def test_ssh_signer_refuses_a_missing_or_unusable_key(keys: dict[str, Key], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-key"
    with pytest.raises(registry.RegistryError) as caught:
        ssh_signer(missing)
    assert str(caught.value) == f"cannot sign: no key at {missing}"
    garbage = tmp_path / "garbage"
    garbage.write_text("not a key\n")
    sign = ssh_signer(garbage)
    with pytest.raises(registry.RegistryError, match=f"cannot sign with {garbage}: "):
        sign(b"payload")
    signature = ssh_signer(keys["carol"].private)(b"payload")
    assert signature.startswith(b"-----BEGIN SSH SIGNATURE-----\n")
    assert signature.rstrip().endswith(b"-----END SSH SIGNATURE-----")


def test_a_key_listed_for_another_namespace_is_not_a_maintainer(
    keys: dict[str, Key], signed: tuple[bytes, bytes]
) -> None:
    """alice listed only for `file` signatures signs nothing for the registry (`-Y verify -n git` refuses;
    `find-principals` still names her, so the refusal is the verification's)."""
    payload, signature = signed
    file_only = keys["alice"].allowed_signer.replace(b'namespaces="git"', b'namespaces="file"')
    verdict = check_signature(payload, signature, file_only)
    assert (verdict.signed, verdict.verified, verdict.signer) == (True, False, "alice@example.com")
    assert (verdict.reason or "").startswith("the signature does not verify: ")


# A stand-in ssh-keygen (first on PATH) for what the real one does rarely: hang, say nothing, or
# answer in bytes that are not UTF-8. `exec` keeps the killed process the one holding the pipes.
FAKE = {
    "hangs": "exec sleep 30",
    "finds alice, then hangs": 'if [ "$2" = find-principals ]; then echo alice@example.com; exit 0; fi; exec sleep 30',
    "finds nobody, exit 0": "exit 0",
    "finds alice, refuses with two lines": (
        'if [ "$2" = find-principals ]; then printf "alice@example.com \\377\\n"; exit 0; fi; '
        'printf "first line\\nlast line \\377\\n" >&2; exit 255'
    ),
    "finds alice, refuses silently": 'if [ "$2" = find-principals ]; then echo alice@example.com; exit 0; fi; exit 1',
    "signs nothing": "echo not a signature; exit 0",
    "fails silently": "exit 1",
    "fails in bytes": 'printf "bad key \\377\\n" >&2; exit 1',
}


def _fake_keygen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str) -> None:
    folder = tmp_path / "fake-bin"
    folder.mkdir(exist_ok=True)
    fake = folder / "ssh-keygen"
    fake.write_text(f"#!/bin/sh\n{FAKE[behaviour]}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.parametrize(
    ("behaviour", "signer", "reason"),
    [
        ("hangs", None, "ssh-keygen timed out"),
        ("finds alice, then hangs", "alice@example.com", "ssh-keygen timed out"),
        ("finds nobody, exit 0", None, "signed by a key that policy/maintainers does not list"),
        ("finds alice, refuses with two lines", "alice@example.com", "the signature does not verify: last line \ufffd"),
        ("finds alice, refuses silently", "alice@example.com", "the signature does not verify: rejected by ssh-keygen"),
    ],
)
def test_check_signature_when_ssh_keygen_misbehaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str, signer: str | None, reason: str
) -> None:
    _fake_keygen(tmp_path, monkeypatch, behaviour)
    verdict = check_signature(b"payload", b"-----BEGIN SSH SIGNATURE-----\n", b"", timeout=0.5)
    assert (verdict.signed, verdict.verified, verdict.signer, verdict.reason) == (True, False, signer, reason)


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        ("hangs", "cannot sign: ssh-keygen timed out (a passphrase prompt?)"),
        ("signs nothing", "cannot sign with {key}: no signature produced"),
        ("fails silently", "cannot sign with {key}: no signature produced"),
        ("fails in bytes", "cannot sign with {key}: bad key \ufffd"),
    ],
)
def test_ssh_signer_when_ssh_keygen_misbehaves(
    keys: dict[str, Key], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str, message: str
) -> None:
    _fake_keygen(tmp_path, monkeypatch, behaviour)
    sign = ssh_signer(keys["alice"].private, timeout=0.5)
    with pytest.raises(registry.RegistryError) as caught:
        sign(b"payload")
    assert str(caught.value) == message.format(key=keys["alice"].private)

"""The trust root and the chain of maintainers policies along main's first-parent history.

Who may sign for the registry is `policy/maintainers` (OpenSSH allowed-signers). Which policy is
in force is decided as TUF and Sigstore rotate their roots:

- **The root** comes from the operator, never from a pull request: a policy file pinned in the
  server's configuration (`KERNELINDEX_TRUST_ROOT`, `--trust-root`), or else the policy in the
  registry's initial commit (the commit with no parent, which only whoever creates the
  repository makes; a pull request always descends from main).
- **Every later change** to `policy/maintainers`, one first-parent commit of main at a time,
  counts only when the commits it brings in are signed by maintainers of the policy in force
  before it: one maintainer to add keys, two distinct ones to remove or replace any (when the
  policy in force lists two or more principals), and never to an empty or unreadable policy.
  A change that does not qualify is ignored: the policy in force stays what it was.
- A commit's signature counts (for overlays) when it verifies against the policy in force
  before that commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kernelindex.registry.errors import RegistryError
from kernelindex.registry.provenance import SignatureCheck
from kernelindex.registry.signatures import POLICY_PATH, check_signature
from kernelindex.registry.store import GitStore

__all__ = ["REMOVAL_THRESHOLD", "Policy", "PolicyChange", "TrustChain", "parse_policy"]

REMOVAL_THRESHOLD = 2
"""Distinct maintainers who must sign a change that removes or replaces a key (when that many exist)."""

_OPTION = re.compile(r'[a-z-]+(?:="[^"]*")?(?:,[a-z-]+(?:="[^"]*")?)*')  # `opt[="value"]`, comma-separated


@dataclass(frozen=True, slots=True)
class Policy:
    """One allowed-signers file: its bytes and its (principal, key) entries."""

    text: bytes
    entries: frozenset[tuple[str, str]]

    @property
    def principals(self) -> frozenset[str]:
        return frozenset(principal for principal, _ in self.entries)


def parse_policy(data: bytes, source: str = POLICY_PATH) -> Policy:
    """Read an allowed-signers file: `principals [options] keytype key`, one per line, `#` comments.

    Raises:
        RegistryError: a line is not an allowed-signer entry (with its line number), or no line is.
    """
    entries: set[tuple[str, str]] = set()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RegistryError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        principals, rest = fields[0], fields[1:]
        while rest and _OPTION.fullmatch(rest[0]) and not rest[0].startswith(("ssh-", "ecdsa-", "sk-")):
            rest = rest[1:]
        if len(rest) < 2 or not rest[0].startswith(("ssh-", "ecdsa-", "sk-")):
            raise RegistryError(f"{source}:{number}: not an allowed-signers line (principals [options] keytype key)")
        key = f"{rest[0]} {rest[1]}"
        entries.update((principal, key) for principal in principals.split(","))
    if not entries:
        raise RegistryError(f"{source}: lists no maintainer (an empty policy would lock the registry)")
    return Policy(data, frozenset(entries))


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """The verdict on one change of the policy file."""

    commit: str
    accepted: bool
    reason: str
    signers: frozenset[str] = frozenset()


class TrustChain:
    """The policy in force at each commit of a registry, from its trust root. Not thread-safe
    (it holds a `GitStore`); results are memoized per commit, since a commit never changes."""

    def __init__(self, store: GitStore, root: bytes | None = None) -> None:
        """`root`: the operator's pinned allowed-signers file, or None to take the initial commit's.

        Raises:
            RegistryError: the pinned root is not a readable, non-empty policy.
        """
        self._store = store
        self._root = parse_policy(root, "the configured trust root") if root is not None else None
        self._after: dict[str, Policy | None] = {}
        self._changes: dict[str, PolicyChange] = {}
        self._signatures: dict[tuple[str, bytes], SignatureCheck] = {}

    @staticmethod
    def check_root(root: bytes | None) -> None:
        """Refuse a pinned root that is not a readable, non-empty policy.

        Raises:
            RegistryError: what is wrong with it.
        """
        if root is not None:
            parse_policy(root, "the configured trust root")

    @property
    def pinned_root(self) -> Policy | None:
        return self._root

    def policy_before(self, commit: str) -> Policy | None:
        """The policy in force for judging `commit`: after its first parent, or the root."""
        info = self._store.commit_info(commit)
        if info.parents:
            return self.policy_after(info.parents[0])
        if self._root is not None:
            return self._root
        return self._file_policy(commit)  # the initial commit is the root

    def policy_after(self, commit: str) -> Policy | None:
        """The policy in force once `commit` is on main (None: nobody can sign)."""
        found = self._after.get(commit, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        chain = self._store.first_parents(commit)[::-1]  # oldest first
        start = 0
        for index in range(len(chain) - 1, -1, -1):
            if chain[index] in self._after:
                start = index + 1
                break
        for index in range(start, len(chain)):
            current = chain[index]
            parent = chain[index - 1] if index else None
            before = self._after[parent] if parent is not None else self._root
            if parent is None and self._root is None:
                self._after[current] = self._file_policy(current)
                continue
            if self.policy_blob(current) == (self.policy_blob(parent) if parent else None):
                self._after[current] = before
                continue
            change = self.judge(before, parent, current)
            self._changes[current] = change
            self._after[current] = self._file_policy(current) if change.accepted else before
        return self._after[commit]

    def change(self, commit: str) -> PolicyChange | None:
        """The verdict on the policy change `commit` makes on main's history, if it makes one."""
        self.policy_after(commit)
        return self._changes.get(commit)

    def judge(self, before: Policy | None, base: str | None, head: str) -> PolicyChange:
        """Whether moving from `base` to `head` may change the policy file as it does, with
        `before` the policy in force at `base`."""
        if before is None:
            return PolicyChange(
                head,
                False,
                "there is no maintainers policy in force: the first one comes from the operator (the registry's "
                "initial commit, or the trust root pinned in the server's configuration), never from a change",
            )
        blob = self.policy_blob(head)
        if blob is None:
            return PolicyChange(head, False, f"{POLICY_PATH} is deleted: the registry would have no maintainers")
        try:
            after = parse_policy(self._store.read_blob(blob))
        except RegistryError as exc:
            return PolicyChange(head, False, str(exc))
        commits = self._store.commits_between(base, head)
        signers: set[str] = set()
        unsigned_edits: list[str] = []
        for commit in commits:
            verdict = self.verify(commit, before)
            if verdict.verified and verdict.signer:
                signers.add(verdict.signer)
            elif self._touches_policy(commit):
                unsigned_edits.append(f"{commit[:12]} ({verdict.reason or 'unsigned'})")
        if unsigned_edits:
            return PolicyChange(
                head,
                False,
                f"{POLICY_PATH} is changed by commits no maintainer of the policy in force signed: "
                + ", ".join(unsigned_edits),
                frozenset(signers),
            )
        removed = before.entries - after.entries
        needed = min(REMOVAL_THRESHOLD, len(before.principals)) if removed else 1
        if len(signers) < needed:
            what = "removes or replaces a maintainer's key" if removed else "adds maintainers"
            return PolicyChange(
                head,
                False,
                f"the change {what}: it needs the signatures of {needed} distinct maintainer(s) of the policy in "
                f"force, and has {len(signers)} ({', '.join(sorted(signers)) or 'none'})",
                frozenset(signers),
            )
        return PolicyChange(head, True, f"signed by {', '.join(sorted(signers))}", frozenset(signers))

    def verify(self, commit: str, policy: Policy | None = None) -> SignatureCheck:
        """Whether `commit` is signed by a maintainer of `policy` (default: the policy in force before it)."""
        policy = self.policy_before(commit) if policy is None else policy
        if policy is None:
            return SignatureCheck(signed=False, verified=False, reason=f"no {POLICY_PATH} is in force")
        key = (commit, policy.text)
        found = self._signatures.get(key)
        if found is None:
            info = self._store.commit_info(commit)
            if info.signature is None or info.signed_payload is None:
                found = SignatureCheck(signed=False, verified=False, reason="unsigned")
            elif b"-----BEGIN SSH SIGNATURE-----" not in info.signature:
                found = SignatureCheck(
                    signed=True, verified=False, reason="not an SSH signature (only SSH signatures count)"
                )
            else:
                found = check_signature(info.signed_payload, info.signature, policy.text)
            self._signatures[key] = found
        return found

    def honour(self, commits: Iterable[str]) -> frozenset[str]:
        """Those of `commits` (each the commit of main that published overlays) a maintainer signed."""
        return frozenset(commit for commit in commits if self.verify(commit).verified)

    def policy_blob(self, commit: str) -> str | None:
        """The blob id of the policy file at `commit`, or None."""
        found = self._store.find_path(commit, POLICY_PATH)
        return found[0] if found is not None and found[1] == 0o100644 else None

    def _file_policy(self, commit: str) -> Policy | None:
        blob = self.policy_blob(commit)
        if blob is None:
            return None
        try:
            return parse_policy(self._store.read_blob(blob))
        except RegistryError:
            return None

    def _touches_policy(self, commit: str) -> bool:
        """Whether `commit` itself edits the policy: differs from its parent's, or for a merge, from
        every parent's (a merge that only brings in a signed change edits nothing)."""
        info = self._store.commit_info(commit)
        mine = self.policy_blob(commit)
        if not info.parents:
            return mine is not None
        return all(mine != self.policy_blob(parent) for parent in info.parents)


_MISSING = object()

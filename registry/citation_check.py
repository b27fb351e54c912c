"""Checking a citation against a copy of the registry, offline: what `kernelindex verify`, the `verifyCitation`
field and the verify page answer.

A citation names a manifest by its digest and pins it to a commit (a permalink `/at/{commit}/runs/{digest}`,
or the same inside a BibTeX or CSL-JSON entry, or a digest and a commit written side by side). It holds when
the commit is in the history of main, the manifest stored at that commit has the cited digest (computed again
from its stored bytes, never read from an index), and the commit that published it verifies where it is
signed. Whether the result still stands is a separate answer: a retraction, supersession or verification
published since, each with its commit.

>>> claim = parse_citation("https://example.org/at/" + "a" * 40 + "/runs/sha256:" + "b" * 64)
>>> claim.commit == "a" * 40 and claim.digest == "sha256:" + "b" * 64
True
>>> parse_citation("no digest here")
Traceback (most recent call last):
...
kernelindex.registry.citation_check.NotACitation: no manifest digest (sha256: and 64 hex digits) in the citation
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from kernelindex.registry.canonical import manifest_digest
from kernelindex.registry.errors import RegistryError, RevisionNotFound
from kernelindex.registry.status import RETRACTED, SUPERSEDED, Lifecycle, run_status

if TYPE_CHECKING:
    from kernelindex.registry.graph import Graph
    from kernelindex.registry.snapshots import Snapshots

__all__ = [
    "HOLDS",
    "INVALID",
    "NO_LONGER_STANDS",
    "CitationCheck",
    "Claim",
    "NotACitation",
    "check_citation",
    "parse_citation",
]

HOLDS, NO_LONGER_STANDS, INVALID = "holds", "no-longer-stands", "invalid"
"""A check's verdict: the citation is true and the result stands; it is true but the result was retracted or
superseded since; it is not true (the commit is not on main, the manifest at it has another digest or none, or
its signature does not verify)."""

_PINNED = re.compile(r"/at/([0-9a-f]{7,40})/[a-z-]+/(sha256:[0-9a-f]{64})")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_COMMIT = re.compile(r"(?<![0-9a-f:])[0-9a-f]{40}(?![0-9a-f])")
_MAX_CITATION = 64 * 1024
"""A citation is a line or an entry: longer text is not looked into."""


class NotACitation(RegistryError, ValueError):
    """The text names no manifest digest, or more than one, or its commit is missing or ambiguous."""


@dataclass(frozen=True, slots=True)
class Claim:
    """What a citation says: a manifest's digest, at a commit (as written: a full id or an abbreviation)."""

    digest: str
    commit: str


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """The answer about one citation: the verdict, each check with what it found, and the lifecycle facts."""

    verdict: str  # HOLDS | NO_LONGER_STANDS | INVALID
    claim: Claim
    commit: str | None  # the cited commit, resolved (None: not found)
    kind: str | None  # the manifest's kind at that commit (None: not there)
    publishing_commit: str | None  # the commit of main that first published it
    checks: tuple[tuple[str, bool, str], ...]  # (what, passed, detail), in the order made
    state: str | None  # the run's state at the head (current, retracted, superseded...); None for other kinds
    facts: tuple[Lifecycle, ...]  # retraction, supersession, verifications that count, oldest first
    head: str  # the commit of main the check read

    @property
    def valid(self) -> bool:
        return self.verdict != INVALID


def parse_citation(text: str) -> Claim:
    """The digest and commit a citation names: from a pinned permalink anywhere in the text (a URL, a BibTeX or
    CSL-JSON entry), else a digest and a full commit id written anywhere in it.

    Raises:
        NotACitation: no digest, several different ones, or no commit.
    """
    text = text[:_MAX_CITATION]
    pinned = {(digest, commit) for commit, digest in _PINNED.findall(text)}
    if len(pinned) == 1:
        digest, commit = next(iter(pinned))
        return Claim(digest, commit)
    if len(pinned) > 1:
        raise NotACitation(f"the citation pins {len(pinned)} different manifests or commits: cite one at a time")
    digests = set(_DIGEST.findall(text))
    if not digests:
        raise NotACitation("no manifest digest (sha256: and 64 hex digits) in the citation")
    if len(digests) > 1:
        raise NotACitation(f"the citation names {len(digests)} different digests: cite one at a time")
    commits = set(_COMMIT.findall(_DIGEST.sub(" ", text)))
    if len(commits) != 1:
        found = "no commit" if not commits else f"{len(commits)} commits"
        raise NotACitation(f"{found} beside the digest: give the commit it was cited at (40 hex digits)")
    return Claim(digests.pop(), commits.pop())


def check_citation(snapshots: Snapshots, claim: Claim, head: Graph | None = None) -> CitationCheck:
    """Check `claim` against the registry `snapshots` serves (loaded), as of `head`: a commit of main's graph, the
    served head when None (what history holds the cited commit, what has happened to the result since).

    Raises:
        kernelindex.registry.RegistryError: the registry cannot be read.
    """
    head = snapshots.head if head is None else head
    store = snapshots.store()
    checks: list[tuple[str, bool, str]] = []

    def refused(what: str, detail: str, commit: str | None = None, kind: str | None = None) -> CitationCheck:
        checks.append((what, False, detail))
        return CitationCheck(INVALID, claim, commit, kind, None, tuple(checks), None, (), head.commit)

    try:
        commit = store.resolve(claim.commit)
    except RevisionNotFound:
        return refused("commit", f"no commit {claim.commit} in this registry")
    if commit != head.commit and not store.is_ancestor(commit, head.commit):
        main = snapshots.status.main if head is snapshots.head else None
        if main is not None and main != head.commit and store.is_ancestor(commit, main):
            detail = f"{commit} is on main past {head.commit[:12]}, the last commit served: {snapshots.status.reason}"
            return refused("commit", detail, commit)
        return refused("commit", f"{commit} is not in the history of main ({head.commit[:12]})", commit)
    checks.append(("commit", True, f"{commit} is in the history of main ({head.commit[:12]})"))
    node = snapshots.at(commit).nodes.get(claim.digest)
    if node is None:
        return refused("manifest", f"no manifest {claim.digest} at {commit[:12]}", commit)
    stored = store.read_blob(node.oid)
    recomputed = manifest_digest(orjson.loads(stored))
    if recomputed != claim.digest:
        detail = f"the {node.kind} stored at {commit[:12]} hashes to {recomputed}, not {claim.digest}"
        return refused("digest", detail, commit, node.kind)
    checks.append(("digest", True, f"the {node.kind} stored at {commit[:12]} hashes to {claim.digest}"))
    position = head.publication(claim.digest)
    published = head.mainline.commits[position] if position is not None else None
    if published is None:
        return refused("published", f"{claim.digest} was never published on main", commit, node.kind)
    signature = snapshots.signature(published)
    if signature.signed and not signature.verified:
        detail = f"{published[:12]}, which published it, is signed and its signature does not verify: "
        return refused("signature", detail + signature.reason, commit, node.kind)
    checks.append(
        (
            "signature",
            True,
            f"{published[:12]}, which published it, is signed by {signature.signer}"
            if signature.signed
            else f"{published[:12]}, which published it, is not signed (a contribution, not a maintainer's fact)",
        )
    )
    state: str | None = None
    facts: tuple[Lifecycle, ...] = ()
    verdict = HOLDS
    if node.kind == "BenchmarkRun":
        status = run_status(head, claim.digest, read_at=commit, signer=lambda c: snapshots.signature(c).signer)
        state = status.state
        counted = (status.retraction, status.supersession, *status.verifications)
        facts = tuple(sorted((f for f in counted if f is not None), key=lambda f: f.position))
        if state in (RETRACTED, SUPERSEDED):
            verdict = NO_LONGER_STANDS
    return CitationCheck(verdict, claim, commit, node.kind, published, tuple(checks), state, facts, head.commit)

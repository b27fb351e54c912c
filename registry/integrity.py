"""Integrity of what a server is about to serve: every manifest readable, intact and at its digest.

The pull-request check judges changes; this judges a commit as it is, for the cases no change
check sees: a cold start on a head nobody checked (a direct push that edited a manifest in
place), an object whose bytes no longer match its id (a tampered or bit-rotted loose object,
which `git cat-file` hands over unverified), a pack that no longer inflates.

For each manifest at `<kind-folder>/<hh>/<hex>.json`: the blob's bytes hash to its object id,
they parse as a JSON object of the folder's kind, and the RFC 8785 digest of its
`{apiVersion, kind, spec}` is `<hex>`. A full check costs one read of every blob plus one
canonicalization each; it runs once per registry and is recorded (`IntegrityRecord`), after which
only what changed since the recorded commit is checked.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from registry.canonical import manifest_digest
from registry.errors import Problem, RegistryError
from registry.store import Entry, GitStore

__all__ = ["IntegrityRecord", "check_commit", "check_entries", "record_path"]

_FORMAT = b"kernelindex-integrity-1"
_MAX_SHOWN = 5


def _problems(items: Iterable[tuple[str, str, str, bytes]]) -> Iterator[Problem]:
    """(kind, digest, blob id, bytes) -> what is wrong with each."""
    sha1 = hashlib.sha1
    loads = orjson.loads
    for kind, digest, oid, data in items:
        path = Entry(kind, digest[7:], oid).path
        if sha1(b"blob %d\0" % len(data) + data).hexdigest() != oid:
            yield Problem(path, "", f"the bytes of blob {oid[:12]} do not hash to its id (tampered or corrupt object)")
            continue
        try:
            document = loads(data)
        except orjson.JSONDecodeError as exc:
            yield Problem(path, "", f"not JSON: {exc}")
            continue
        if not isinstance(document, dict) or document.get("kind") != kind or "spec" not in document:
            found = document.get("kind") if isinstance(document, dict) else type(document).__name__
            yield Problem(path, "$.kind", f"a {kind} folder holds {found!r}")
            continue
        try:
            actual = manifest_digest(document)
        except (ValueError, KeyError, TypeError) as exc:
            yield Problem(path, "", f"cannot compute its digest: {exc}")
            continue
        if actual != digest:
            yield Problem(path, "", f"its content has digest {actual}: the file was edited in place or misplaced")


def check_commit(store: GitStore, commit: str) -> list[Problem]:
    """Every integrity problem of every manifest at `commit` (empty: all sound).

    Raises:
        StoreCorrupt: git cannot read the trees or a listed blob at all.
    """
    return list(_problems(store.manifests_with_bytes(commit)))


def check_entries(store: GitStore, entries: list[Entry]) -> list[Problem]:
    """The same check for some manifests only (those a change added).

    Raises:
        StoreCorrupt: a blob cannot be read.
    """
    blobs = store.read_blobs([e.oid for e in entries])
    return list(_problems((e.kind, e.digest, e.oid, data) for e, data in zip(entries, blobs, strict=True)))


def summary(problems: list[Problem]) -> str:
    """One line for /healthz and logs."""
    shown = "; ".join(str(p) for p in problems[:_MAX_SHOWN])
    more = f" (and {len(problems) - _MAX_SHOWN} more)" if len(problems) > _MAX_SHOWN else ""
    return f"{len(problems)} manifest(s) fail the integrity check: {shown}{more}"


def record_path(repo_path: Path) -> Path:
    """Where the last fully checked commit is recorded: beside the repository, like the warm cache."""
    return repo_path.with_name(repo_path.name + ".integrity")


@dataclass(frozen=True, slots=True)
class IntegrityRecord:
    """The last commit whose every manifest passed the check, kept across restarts."""

    path: Path

    def read(self) -> str | None:
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        fields = data.split()
        if len(fields) != 2 or fields[0] != _FORMAT or len(fields[1]) != 40:
            return None
        return fields[1].decode("ascii", errors="replace")

    def write(self, commit: str) -> bool:
        """Record `commit` atomically; False when the directory is not writable (then every start checks)."""
        try:
            fd, temporary = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_FORMAT + b" " + commit.encode() + b"\n")
            os.replace(temporary, self.path)
        except OSError:
            Path(temporary).unlink(missing_ok=True)
            return False
        return True


class IntegrityFailure(RegistryError):
    """A commit fails the integrity check (with the problems found)."""

    def __init__(self, commit: str, problems: list[Problem]) -> None:
        self.commit = commit
        self.problems = problems
        super().__init__(f"commit {commit[:12]}: {summary(problems)}")

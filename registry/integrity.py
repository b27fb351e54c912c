"""Integrity of what a server is about to serve: every manifest readable, intact and at its digest.

The pull-request check judges changes; this judges a commit as it is, for the cases no change
check sees: a cold start on a head nobody checked (a direct push that edited a manifest in
place), an object whose bytes no longer match its id (a tampered or bit-rotted loose object,
which `git cat-file` hands over unverified), a pack that no longer inflates.

For each manifest at `<kind-folder>/<hh>/<hex>.json`: the blob's bytes hash to its object id,
they parse as a JSON object of the folder's kind, and the RFC 8785 digest of its
`{apiVersion, kind, spec}` is `<hex>`. A full check costs one read of every blob plus one
canonicalization each; it runs once per registry and is recorded (`IntegrityRecord`).

What was verified is remembered as fan-out trees (`<kind-folder>/<hh>` -> tree id): a git tree's
id is the SHA-1 of its entries, each a (file name = digest, blob id = SHA-1 of the bytes) pair, so
one remembered id vouches for exactly those (digest, blob) pairs and nothing else. A later check
skips every fan-out tree it remembers, and in a changed one reads only the entries the remembered
version lacks: each manifest is canonicalized once per registry, whatever commit is checked next.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from kernelindex.registry.cache_dir import cache_dir, make_folder
from kernelindex.registry.canonical import manifest_digest
from kernelindex.registry.errors import Problem, RegistryError, StoreCorrupt
from kernelindex.registry.kinds import KIND_BY_FOLDER
from kernelindex.registry.present import with_article
from kernelindex.registry.store import Entry, GitStore

__all__ = ["IntegrityCheck", "IntegrityRecord", "check_commit", "check_entries", "record_path", "verify_commit"]

_FORMAT = b"kernelindex-integrity-2"
_MAX_SHOWN = 5
_ID = re.compile(rb"[0-9a-f]{40}")
_FAN = re.compile(rb"[a-z-]+/[0-9a-f]{2}")
_NOT_BLOBS = (b"40000", b"160000")  # subtrees and submodules: no content to check


def _problems(items: Iterable[tuple[str, str, str, bytes]]) -> Iterator[Problem]:
    """(kind, digest, blob id, bytes) -> what is wrong with each."""
    sha1 = hashlib.sha1
    loads = orjson.loads
    for kind, digest, oid, data in items:
        hashed = sha1(b"blob %d\0" % len(data))
        hashed.update(data)
        if hashed.hexdigest() != oid:
            yield Problem(
                _path(kind, digest, oid),
                "",
                f"the bytes of blob {oid[:12]} do not hash to its id (tampered or corrupt object)",
            )
            continue
        try:
            document = loads(data)
        except orjson.JSONDecodeError as exc:
            yield Problem(_path(kind, digest, oid), "", f"not JSON: {exc}")
            continue
        if not isinstance(document, dict) or document.get("kind") != kind or "spec" not in document:
            found = document.get("kind") if isinstance(document, dict) else type(document).__name__
            yield Problem(_path(kind, digest, oid), "$.kind", f"{with_article(kind)} folder holds {found!r}")
            continue
        try:
            actual = manifest_digest(document)
        except (ValueError, KeyError, TypeError) as exc:
            yield Problem(_path(kind, digest, oid), "", f"cannot compute its digest: {exc}")
            continue
        if actual != digest:
            yield Problem(
                _path(kind, digest, oid),
                "",
                f"its content has digest {actual}: the file was edited in place or misplaced",
            )


def _path(kind: str, digest: str, oid: str) -> str:
    return Entry(kind, digest[7:], oid).path


@dataclass(frozen=True, slots=True)
class IntegrityCheck:
    """What one check found: the problems, the fan-out trees now known sound, how many manifests it read."""

    problems: list[Problem]
    trees: dict[str, str] = field(repr=False)  # `<kind-folder>/<hh>` -> tree id, every manifest in it sound
    read: int = 0


def verify_commit(
    store: GitStore,
    commit: str,
    known: Mapping[str, str] | None = None,
    proven: Collection[tuple[str, str]] = (),
) -> IntegrityCheck:
    """Check every manifest at `commit` that `known` (fan-out trees verified before) does not vouch
    for, and `proven` ((path, blob id) pairs another check just read through libgit2) does not either.

    Raises:
        StoreCorrupt: git cannot read the trees or a listed blob at all.
    """
    trees = store.fan_out_trees(commit)
    if not known and not proven:
        counted = _Counted(store.manifests_with_bytes(commit))  # one pipeline through git: the fastest full read
        problems = list(_problems(counted))
        read = counted.count
    else:
        entries = _unvouched(store, trees, known or {}, proven)
        problems = check_entries(store, entries)
        read = len(entries)
    bad = {problem.source.rpartition("/")[0] for problem in problems}
    return IntegrityCheck(problems, {key: tree for key, tree in trees.items() if key not in bad}, read)


def _unvouched(
    store: GitStore, trees: Mapping[str, str], known: Mapping[str, str], proven: Collection[tuple[str, str]]
) -> list[Entry]:
    """The manifests of `trees` no remembered tree or proven pair vouches for."""
    entries = []
    for key, tree in trees.items():
        before = known.get(key)
        if before == tree:
            continue
        items = store.tree_items(tree)
        if before is not None:
            with contextlib.suppress(StoreCorrupt):  # a remembered tree git no longer has (gc'd): read all
                items = items - store.tree_items(before)
        folder, _, fan = key.partition("/")
        kind = KIND_BY_FOLDER[folder].name
        for item in items:
            space = item.index(b" ")
            name = item[space + 1 : -21]
            # The same manifests the full read takes (`GitStore.manifests_with_bytes`): any blob named
            # `<hh><62 more>.json` in the fan-out folder `<hh>`.
            if item[:space] in _NOT_BLOBS or len(name) != 69 or not name.endswith(b".json") or name[:2] != fan.encode():
                continue
            oid = item[-20:].hex()
            hexdigest = name[:64].decode()
            if proven and (f"{key}/{hexdigest}.json", oid) in proven:
                continue
            entries.append(Entry(kind, hexdigest, oid))
    return entries


class _Counted:
    """An iterator that counts what passed through it."""

    def __init__(self, items: Iterator[tuple[str, str, str, bytes]]) -> None:
        self._items = items
        self.count = 0

    def __iter__(self) -> Iterator[tuple[str, str, str, bytes]]:
        for item in self._items:
            self.count += 1
            yield item


def check_commit(store: GitStore, commit: str) -> list[Problem]:
    """Every integrity problem of every manifest at `commit` (empty: all sound).

    Raises:
        StoreCorrupt: git cannot read the trees or a listed blob at all.
    """
    return verify_commit(store, commit).problems


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


def record_path(repo_path: Path, root: Path | None = None) -> Path:
    """Where the last fully checked commit of the registry at `repo_path` is recorded: `integrity` in its cache
    folder (`cache_dir`), with the warm-start cache."""
    return cache_dir(repo_path, root) / "integrity"


@dataclass(frozen=True, slots=True)
class IntegrityRecord:
    """The last commit whose every manifest passed the check and whose first-parent history on main
    never modified or deleted a published file, with the fan-out trees verified; kept across restarts.

    The file is trusted as far as the warm cache and the code are: it must be writable only by the
    server. Whoever can write it can vouch for a commit or a tree, and so skip the check of content
    they also managed to put in the repository, which is no more than writing the record of a
    verified commit always allowed. What the file cannot do: vouch for any (digest, blob) pair
    other than the entries of a tree it names, since tree ids are hashes of those entries, or make
    a sound manifest fail (a remembered tree is only ever a reason to skip). A file that does not
    parse, or whose checksum line does not match (truncated, bit-rotted), counts as absent.
    """

    path: Path

    def load(self) -> tuple[str | None, dict[str, str]]:
        """(the verified commit, the verified fan-out trees); (None, {}) when absent or unreadable."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None, {}
        body, _, last = data.rstrip(b"\n").rpartition(b"\n")
        if last != b"sha256 " + hashlib.sha256(body + b"\n").hexdigest().encode():
            return None, {}
        lines = body.split(b"\n")
        if len(lines) < 2 or lines[0] != _FORMAT:
            return None, {}
        commit = lines[1].removeprefix(b"commit ")
        if not _ID.fullmatch(commit):
            return None, {}
        trees: dict[str, str] = {}
        for line in lines[2:]:
            fields = line.split(b" ")
            if len(fields) != 3 or fields[0] != b"tree" or not (_FAN.fullmatch(fields[1]) and _ID.fullmatch(fields[2])):
                return None, {}
            trees[fields[1].decode()] = fields[2].decode()
        return commit.decode(), trees

    def read(self) -> str | None:
        return self.load()[0]

    def write(self, commit: str, trees: Mapping[str, str] | None = None) -> bool:
        """Record `commit` (and the fan-out trees verified with it) atomically, the folder made if missing; False
        when it cannot be made or written (then every start checks again)."""
        # One str joined and encoded once: a bytes line formatted per tree was ~0.9 ms of every refresh at 10x.
        listed = "".join([f"tree {key} {tree}\n" for key, tree in sorted((trees or {}).items())])
        body = _FORMAT + b"\ncommit " + commit.encode() + b"\n" + listed.encode()
        data = body + b"sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n"
        try:
            make_folder(self.path.parent)
            fd, temporary = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
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

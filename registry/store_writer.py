"""ObjectWriter: one commit's objects written into a manifests repository, without moving any ref.

Two ways. A handful of files go in as loose objects through libgit2 (pygit2), and a signed commit always does
(its signature covers the commit's text, which libgit2 hands over before writing it). From `GitStore`'s threshold
on, one pack for the whole batch goes through `git fast-import`, to a private ref that is deleted once the commit's
id is known. The caller moves the branch afterwards by compare-and-swap (`store_refs`): objects are written before
any ref moves, so a crash at any moment leaves the branch at the old commit or the new one.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from kernelindex.registry.git_binding import pygit2
from kernelindex.registry.provenance import CommitMeta, Person
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_lock import HOST, WriterLock
from kernelindex.registry.store_objects import ObjectReader, tree_lookup
from kernelindex.registry.store_revisions import Revisions

__all__ = ["INCOMING", "ObjectWriter"]

INCOMING = "refs/kernelindex/incoming/"
"""Where `git fast-import` leaves each bulk write's commit until its id is read (one private ref per write)."""

_FILE = pygit2.enums.FileMode.BLOB
_TREE = pygit2.enums.FileMode.TREE


class ObjectWriter:
    """Commits of one repository, written with their blobs and trees; refs are left where they are."""

    def __init__(
        self, repo: pygit2.Repository, git: GitCommand, objects: ObjectReader, revisions: Revisions, lock: WriterLock
    ) -> None:
        self._repo = repo
        self._git = git
        self._objects = objects
        self._revisions = revisions
        self._lock = lock

    def write_loose(
        self,
        parent: str | None,
        files: Mapping[str, bytes],
        meta: CommitMeta,
        sign: Callable[[bytes], bytes] | None = None,
    ) -> str:
        repo = self._repo
        blobs = {path: repo.create_blob(data) for path, data in files.items()}
        root = self._objects.commit(parent).tree if parent else None
        tree_id = _build_tree(repo, root, _nest(blobs))
        parents: list[str | pygit2.Oid] = [pygit2.Oid(hex=parent)] if parent else []
        author, committer = _signature(meta.author), _signature(meta.committer)
        if sign is None:
            return str(repo.create_commit(None, author, committer, meta.message, tree_id, parents))
        # pygit2's stubs say Oid; libgit2 returns the commit's text, which is what gets signed.
        content = str(repo.create_commit_string(author, committer, meta.message, tree_id, parents))
        signature = sign(content.encode())
        return str(repo.create_commit_with_signature(content, signature.decode()))

    def write_packed(self, parent: str | None, files: Mapping[str, bytes], meta: CommitMeta) -> str:
        """One pack for the whole batch (blobs, trees, commit) through `git fast-import`.

        fast-import writes the commit to a private ref, `refs/kernelindex/incoming/<host>-<pid>-<12 hex
        digits>` (which writer left it, should it die before deleting it); main only moves afterwards, by CAS.
        `--depth=0` stores whole objects: reading deltified blobs back is ~12x slower.
        """
        self.forget_abandoned_writes()
        ref = f"{INCOMING}{HOST}-{os.getpid()}-{secrets.token_hex(6)}"
        chunks: list[bytes] = []
        for mark, data in enumerate(files.values(), start=1):
            chunks.append(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)))
            chunks.append(data)
            chunks.append(b"\n")
        message = meta.message.encode()
        chunks.append(f"commit {ref}\n".encode())
        chunks.append(b"author " + _ident(meta.author) + b"\n")
        chunks.append(b"committer " + _ident(meta.committer) + b"\n")
        chunks.append(b"data %d\n" % len(message) + message + b"\n")
        if parent:
            chunks.append(f"from {parent}\n".encode())
        for mark, path in enumerate(files, start=1):
            chunks.append(f"M 100644 :{mark} {path}\n".encode())
        chunks.append(b"\ndone\n")
        try:
            self._git.run("fast-import", "--quiet", "--done", "--depth=0", "--force", stdin=b"".join(chunks))
            return self._revisions.resolve(ref)
        finally:
            self._git.run("update-ref", "-d", ref, check=False)

    def forget_abandoned_writes(self) -> None:
        """Delete the private refs of writers that died mid-write (SIGKILL between fast-import and
        cleanup), so that what they wrote becomes garbage git can collect. Called holding the
        writer lock: no live writer has a private ref then."""
        assert self._lock.held, "only under the writer lock"
        for name in [n for n in self._repo.references if n.startswith(INCOMING)]:
            self._git.run("update-ref", "-d", name, check=False)


def _nest(blobs: Mapping[str, Any]) -> dict[str, Any]:
    """{"a/b/c.json": oid} -> {"a": {"b": {"c.json": oid}}}"""
    root: dict[str, Any] = {}
    for path, oid in blobs.items():
        *dirs, name = path.split("/")
        node = root
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = oid
    return root


def _build_tree(repo: pygit2.Repository, base: Any, changes: dict[str, Any]) -> Any:
    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for name, change in changes.items():
        if isinstance(change, dict):
            existing = tree_lookup(base, name)
            subtree = repo[existing.id] if existing is not None and existing.filemode == _TREE else None
            builder.insert(name, _build_tree(repo, subtree, change), _TREE)
        else:
            builder.insert(name, change, _FILE)
    return builder.write()


def _signature(person: Person) -> pygit2.Signature:
    return pygit2.Signature(person.name, person.email, person.time, person.offset)


def _ident(person: Person) -> bytes:
    sign = "+" if person.offset >= 0 else "-"
    hours, minutes = divmod(abs(person.offset), 60)
    return f"{person.name} <{person.email}> {person.time} {sign}{hours:02d}{minutes:02d}".encode()

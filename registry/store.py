"""GitStore: manifests in a bare git repository. Reads at any revision, one checked commit per write.

Layout: `<kind-folder>/<hh>/<hex>.json`, the stored bytes of `canonical.stored_json`.
A write validates the whole batch against the current head, writes the objects (a pack
through `git fast-import` for bulk work, loose objects for a handful), writes one commit
and moves `refs/heads/main` by compare-and-swap with `git update-ref <new> <old>`,
retrying from the new head when another writer got there first. Objects are written
before the ref moves, so a crash at any moment leaves main at the old or the new commit.

This module is the only one that uses pygit2 (`kernelindex.registry.git_binding` loads it). A `GitStore` must
not be shared between threads (libgit2 repositories are not thread-safe): open one per thread.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import pwd
import re
import secrets
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.canonical import canonical_json
from kernelindex.registry.cat_file import CatFile, answers, start_batch, widen_pipe
from kernelindex.registry.embedded import git_command, is_embedded
from kernelindex.registry.errors import (
    Problem,
    RegistryError,
    RejectedChange,
    RevisionNotFound,
    StoreBusy,
    StoreCorrupt,
    StoreNotFound,
    StoreNotOwned,
)
from kernelindex.registry.git_binding import init_repository, open_repository, pygit2
from kernelindex.registry.kinds import KIND_BY_FOLDER, KINDS
from kernelindex.registry.manifest import Manifest, manifest_path
from kernelindex.registry.provenance import CommitInfo, CommitMeta, Person, parse_trailers
from kernelindex.registry.validate import check_additions, operation_found

__all__ = [
    "MAIN",
    "AddResult",
    "Entry",
    "FanOutMoves",
    "GitStore",
    "TreeChange",
]

MAIN = "refs/heads/main"
_INCOMING = "refs/kernelindex/incoming/"
_HOST = socket.gethostname().replace("/", "_").replace(" ", "_") or "host"
_TREE_MODE = 0o040000
_FILE_MODE = 0o100644
_FILE = pygit2.enums.FileMode.BLOB
_TREE = pygit2.enums.FileMode.TREE
_ZERO = "0" * 40
_ZERO_BYTES = b"0" * 40
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree
_BATCH_THRESHOLD = 2048  # from this many blobs on, read them through one `git cat-file --batch`
_PACK_THRESHOLD = 64  # from this many new blobs on, one pack beats loose objects
_ATTEMPTS = 20
_LOCK_TRIES = 20  # with git's own 100 ms lock timeout: about 3 s before a held lock is reported
_WRITER_LOCK = "kernelindex-writer.lock"
_WRITER_WAIT_SECONDS = 120.0  # a bulk import holds the lock for seconds; past this, report who holds it
_STALE_GIT_LOCKS = ("HEAD.lock", "packed-refs.lock", "index.lock", "config.lock")
_STALE_LOCK_SECONDS = 2.0  # git's own commands hold a ref lock for milliseconds
_SLASH = ord("/")
_PULL_HEAD = re.compile(r"refs/pull/[0-9]+/head")  # a forge's pull request (registry/mirror.py fetches them)
_NOT_OWNED = re.compile(r"repository path '(?P<path>.+)' is not owned by current user")  # libgit2's owner check
# A manifest file in `git log -z --name-only` output: `<kind-folder>/<fan>/<64 characters>.json`, each
# path after a NUL (and the first after a newline), as the publication replay reads fan-out trees.
# The pattern opens with that NUL (the text searched starts at the one after the commit id): a literal
# first character lets the regex engine jump from path to path rather than try every position.
_KIND_FOLDERS = "|".join(map(re.escape, sorted(KIND_BY_FOLDER)))
_ADDED_NAME = re.compile(rf"\0\n?(?:{_KIND_FOLDERS})/[^/\0]+/([^/\0]{{64}})\.json(?=\0|\n|$)")
# The same with any 64 characters for the name: the engine steps over them rather than testing each
# against the class (73 -> 40 ms for 215k names at 10x). Where its names hold no "/" nor NUL it found
# what `_ADDED_NAME` finds: from any position the two match alike but when the 64 characters hold one
# (the folder and fan parts are the same, and fix where the name starts), so the scans stay in step.
_ADDED_NAME_SPAN = re.compile(rf"\0\n?(?:{_KIND_FOLDERS})/[^/\0]+/(.{{64}})\.json(?=\0|\n|$)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Entry:
    """A manifest file in a tree, named by where it lives."""

    kind: str
    hexdigest: str
    oid: str

    @property
    def digest(self) -> str:
        return "sha256:" + self.hexdigest

    @property
    def path(self) -> str:
        return f"{KINDS[self.kind].folder}/{self.hexdigest[:2]}/{self.hexdigest}.json"


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One path that differs between two trees. `old`/`new` are blob ids (None when absent);
    `mode` is the new entry's file mode (or the old one's for a deletion)."""

    path: str
    old: str | None
    new: str | None
    mode: int
    old_mode: int | None = None

    @property
    def status(self) -> str:
        if self.old is None:
            return "added"
        if self.new is None:
            return "deleted"
        if self.old == self.new:
            return "mode-changed"
        return "modified"


@dataclass(slots=True)
class FanOutMoves:
    """What a diff saw of the fan-out trees (`<kind-folder>/<hh>`), for `GitStore.diff(moves=)`.

    `moved`: each fan-out tree that changed, by key, and its new id. `complete`: whether that is the
    whole difference between the two commits' `GitStore.fan_out_trees`; False as soon as a manifest
    folder or a fan-out tree came, went or changed type, or a file changed outside the fan-out trees
    of a manifest folder (then only `fan_out_trees` knows the new map)."""

    moved: dict[str, str] = field(default_factory=dict)
    complete: bool = True


@dataclass(frozen=True, slots=True)
class AddResult:
    """What a write did: the new commit (None when everything was already there)."""

    commit: str | None
    added: tuple[Manifest, ...]
    unchanged: tuple[Manifest, ...]


class GitStore:
    """A manifests repository on disk."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Open an existing repository (bare or with a work tree).

        Raises:
            StoreNotFound: there is no git repository at `path`.
        """
        self._path = Path(path)
        self._writer_depth = 0
        self._names: dict[tuple[str, str], dict[str, str]] = {}
        try:
            # The embedded registry is the package's own data, whoever installed it (`kernelindex.registry.embedded`).
            self._repo = open_repository(str(self._path), vouched=is_embedded(self._path))
        except pygit2.GitError as exc:
            refused = _NOT_OWNED.search(str(exc))
            if refused is not None:
                raise StoreNotOwned(refused["path"], _owner_of(Path(refused["path"])), _user()) from exc
            raise StoreNotFound(str(self._path)) from exc
        except KeyError as exc:
            raise StoreNotFound(str(self._path)) from exc
        self._command = git_command(self.git_dir)  # how each git subprocess starts against this repository

    @classmethod
    def init(cls, path: str | os.PathLike[str]) -> GitStore:
        """Create an empty bare repository whose HEAD is `main` (or open the one already there)."""
        target = Path(path)
        if not (target / "HEAD").exists() and not (target / ".git").exists():
            init_repository(str(target))
        return cls(target)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def git_dir(self) -> Path:
        return Path(self._repo.path)

    # Revisions ------------------------------------------------------------------------------------

    def head(self, ref: str = MAIN) -> str | None:
        """The commit main (or another branch, `refs/heads/...`) points at; None when it has none."""
        try:
            found = self._repo.references.get(ref)
        except pygit2.GitError as exc:  # pragma: no cover - a broken ref file
            raise StoreCorrupt(ref, str(exc)) from exc
        return None if found is None else str(found.target)

    def current_branch(self) -> str | None:
        """The branch HEAD names (`refs/heads/...`), in a bare repository or a work tree."""
        try:
            target = self._repo.references["HEAD"].target
        except (KeyError, pygit2.GitError):
            return None
        return target if isinstance(target, str) and target.startswith("refs/heads/") else None

    @property
    def work_tree(self) -> Path | None:
        """The checkout of a non-bare repository, or None."""
        return None if self._repo.is_bare or self._repo.workdir is None else Path(self._repo.workdir)

    def commits_between(self, base: str | None, head: str) -> list[str]:
        """Commits reachable from `head` but not from `base`, oldest first (as `git rev-list base..head`)."""
        walker = self._repo.walk(
            pygit2.Oid(hex=head), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
        )
        if base is not None:
            walker.hide(pygit2.Oid(hex=base))
        return [str(commit.id) for commit in walker]

    def resolve(self, rev: str) -> str:
        """The full id of the commit a full or abbreviated id, branch or tag names.

        Raises:
            RevisionNotFound: no such commit, or `rev` names something that is not a commit.
        """
        if not rev or len(rev) > 256 or rev.startswith("-") or any(c in rev for c in "\0\n :^~?*["):
            raise RevisionNotFound(rev, "not a commit id, branch or tag name")
        candidates = (
            [rev] if rev.startswith("refs/") else [rev, f"refs/heads/{rev}", f"refs/tags/{rev}", f"refs/remotes/{rev}"]
        )
        for name in candidates:
            ref = self._lookup_ref(name)
            if ref is not None:
                return self._peel_commit(ref, rev)
        if all(c in "0123456789abcdef" for c in rev) and 4 <= len(rev) <= 40:
            try:
                obj = self._repo.get(rev) if len(rev) == 40 else self._repo.revparse_single(rev)
            except (KeyError, ValueError, pygit2.GitError) as exc:
                reason = "ambiguous abbreviated commit id" if "ambiguous" in str(exc) else "no such commit"
                raise RevisionNotFound(rev, reason) from None
            if obj is not None:
                return self._peel_commit(obj.id, rev)
        raise RevisionNotFound(rev)

    def _lookup_ref(self, name: str) -> Any:
        try:
            ref = self._repo.references.get(name)
            # Resolving can fail too: HEAD of an empty registry names a main that does not exist yet.
            return None if ref is None else ref.resolve().target
        except (pygit2.GitError, pygit2.InvalidSpecError, ValueError, KeyError):
            return None

    def _peel_commit(self, oid: Any, rev: str) -> str:
        obj = self._repo.get(oid)
        while isinstance(obj, pygit2.Tag):
            obj = self._repo.get(obj.target)
        if not isinstance(obj, pygit2.Commit):
            raise RevisionNotFound(rev, "names something that is not a commit")
        return str(obj.id)

    def branches(self) -> dict[str, str]:
        """Every branch and tag of the repository, and every pull request's head a mirror fetched
        (`refs/pull/<n>/head`), with the commit it reaches: `refs/...` -> id."""
        found = {}
        for name in self._repo.references:
            if name.startswith(("refs/heads/", "refs/tags/")) or _PULL_HEAD.fullmatch(name):
                try:
                    found[name] = self._peel_commit(self._repo.references[name].resolve().target, name)
                except (RevisionNotFound, pygit2.GitError, KeyError):  # a dangling symbolic ref
                    continue
        return found

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when `ancestor` is `descendant` or reachable from it."""
        if ancestor == descendant:
            return True
        try:
            return bool(self._repo.descendant_of(pygit2.Oid(hex=descendant), pygit2.Oid(hex=ancestor)))
        except (KeyError, ValueError, pygit2.GitError):
            return False  # one of them is not a commit of this repository

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of two commits (as `git merge-base`), or None when they share none."""
        try:
            found = self._repo.merge_base(pygit2.Oid(hex=one), pygit2.Oid(hex=other))
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return None if found is None else str(found)

    def first_parents(self, commit: str, *, stop: str | None = None) -> list[str]:
        """`commit`, its first parent, that one's first parent... oldest last; stops after `stop`."""
        chain = []
        current: str | None = commit
        while current is not None:
            chain.append(current)
            if current == stop:
                break
            obj = self._commit(current)
            current = str(obj.parent_ids[0]) if obj.parent_ids else None
        return chain

    def added_manifest_names(self, commit: str, *, stop: str | None = None) -> dict[str, list[str]]:
        """commit id -> the names (`<64 hex>` of `<kind-folder>/<fan>/<64 hex>.json`) of the manifest
        files each commit of `commit`'s first-parent history added to its first parent's tree, for
        the commits after `stop` (all of them without it; the root's files count as added). Commits
        that added none may be missing.

        One `git log` computes every diff in C, skipping equal subtrees: a cold build's publication
        record costs one pass of Python over the names, not a read of each changed fan-out tree.

        Raises:
            StoreCorrupt: git could not walk the history.
        """
        span = commit if stop is None else f"{stop}..{commit}"
        result = self._git_to_file(
            "-c",
            "log.showRoot=true",
            "log",
            "-z",
            "--first-parent",
            "--diff-merges=first-parent",
            "--no-renames",
            "--diff-filter=A",
            "--no-show-signature",
            "--no-color",
            "--format=%x01%H",
            "--name-only",
            span,
            "--",
            check=False,
        )
        if result.returncode != 0:
            raise StoreCorrupt(commit, f"git log failed: {result.stderr.decode(errors='replace').strip()}")
        text = result.stdout.decode("utf-8", errors="surrogateescape")
        found: dict[str, list[str]] = {}
        for section in text.split("\x01")[1:]:
            end = section.find("\0")
            if end < 0:
                found[section] = []
                continue
            names = _ADDED_NAME_SPAN.findall(section, end)
            joined = "".join(names)
            if "/" in joined or "\0" in joined:
                names = _ADDED_NAME.findall(section, end)  # a name spanning paths: the exact scan
            found[section[:end]] = names
        return found

    def commit_info(self, commit: str) -> CommitInfo:
        """Who, when and why of one commit, with its trailers and raw SSH signature, if any."""
        obj = self._commit(commit)
        message = obj.message
        signature = payload = None
        if obj.gpg_signature[0]:
            signature, payload = obj.gpg_signature
        return CommitInfo(
            id=str(obj.id),
            parents=tuple(str(p) for p in obj.parent_ids),
            author=_person(obj.author),
            committer=_person(obj.committer),
            message=message,
            trailers=parse_trailers(message),
            signature=signature,
            signed_payload=payload,
        )

    def _commit(self, commit: str) -> pygit2.Commit:
        try:
            obj = self._repo.get(commit)
        except (ValueError, pygit2.GitError) as exc:
            raise RevisionNotFound(commit) from exc
        if not isinstance(obj, pygit2.Commit):
            raise RevisionNotFound(commit, "not a commit")
        return obj

    def tree_id(self, commit: str) -> str:
        return str(self._commit(commit).tree_id)

    def tree_entries(self, tree: str) -> list[tuple[int, str, str]]:
        """(mode, name, object id) of a tree's entries, read from the raw object: several times
        faster than pygit2's entry objects, which matters when replaying a long history."""
        return _parse_tree(self._repo.odb.read(tree)[1])

    def fan_out_names(self, tree: str) -> set[bytes]:
        """The names (as bytes) in a fan-out tree, as fast as the raw object allows: its entries
        are `100644 <64 hex>.json\\0<id>`, all the same size, sliced without a parse loop. Entries
        of other shapes (which no valid registry holds) fall back to a full parse."""
        data = self._repo.odb.read(tree)[1]
        size = 97  # len("100644 ") + 64 + len(".json") + 1 + 20
        if len(data) % size == 0 and data[:7] == b"100644 " and data[size - 21 : size - 20] == b"\0":
            return {data[i + 7 : i + 76] for i in range(0, len(data), size)}
        return {name.encode() for _, name, _ in _parse_tree(data)}

    def release(self) -> None:
        """Close the object database's files and memory maps (libgit2 opens them again on the next
        read). After a bulk read: libgit2 keeps every pack window it touched mapped, and a tree read
        here and there faults in much of a pack around it (15 MB of resident memory at 1x)."""
        self._repo.free()

    def tree_items(self, tree: str) -> frozenset[bytes]:
        """A tree's entries as raw items, `<mode> <name>\\0<20-byte id>` each: two trees' items
        compare as sets (what one has that the other lacks) without parsing either. Fan-out trees,
        whose items all have the same size, are sliced without a parse loop.

        Raises:
            StoreCorrupt: no such tree.
        """
        try:
            data = self._repo.odb.read(tree)[1]
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise StoreCorrupt(tree, f"cannot read the tree: {exc}") from None
        size = 97  # len("100644 ") + 64 + len(".json") + 1 + 20
        count, rest = divmod(len(data), size)
        # Every entry `100644 <64>.json\0<20>`: checked by strided slices (C loops), not per entry.
        if not rest and data[6::size].count(32) == data[71::size].count(46) == data[76::size].count(0) == count:
            return frozenset([data[i : i + size] for i in range(0, len(data), size)])
        return _tree_items(data)

    def fan_out_trees(self, commit: str, since: tuple[str, Mapping[str, str]] | None = None) -> dict[str, str]:
        """`<kind-folder>/<hh>` -> tree id of every fan-out folder of the manifest folders at `commit`.

        `since`: another commit and this map of it; a folder whose tree is the same in both is
        not read again (a refresh changes two or three of the ~17 folders).

        Raises:
            RevisionNotFound: not a commit of this repository.
        """
        before: dict[str, str] = {}
        if since is not None:
            for mode, folder, folder_tree in self.tree_entries(str(self._commit(since[0]).tree_id)):
                if mode == _TREE_MODE and folder in KIND_BY_FOLDER:
                    before[folder] = folder_tree
        kept: set[str] = set()  # folders whose tree did not change: their fan-out trees are as they were
        found: dict[str, str] = {}
        for mode, folder, folder_tree in self.tree_entries(str(self._commit(commit).tree_id)):
            if mode == _TREE_MODE and folder in KIND_BY_FOLDER:
                if before.get(folder) == folder_tree:
                    kept.add(folder)
                    continue
                for fan_mode, fan, fan_tree in self.tree_entries(folder_tree):
                    if fan_mode == _TREE_MODE:
                        found[folder + "/" + fan] = fan_tree
        if kept:
            assert since is not None
            found.update((key, tree) for key, tree in since[1].items() if key.partition("/")[0] in kept)
        return found

    # Reading manifests ----------------------------------------------------------------------------

    def names_of_kind(self, commit: str, kind: str) -> Mapping[str, str]:
        """`metadata.name` -> digest of the manifests of `kind` at `commit` (one of them where
        upstream data repeats a name). Reads that kind's blobs once per tree; cached."""
        folder_entry = _tree_lookup(self._commit(commit).tree, KINDS[kind].folder)
        if folder_entry is None:
            return {}
        key = (str(folder_entry.id), kind)
        found = self._names.get(key)
        if found is None:
            entries = [e for e in self.entries(commit) if e.kind == kind]
            found = {}
            for entry, data in zip(entries, self.read_blobs([e.oid for e in entries]), strict=True):
                try:
                    name = orjson.loads(data)["metadata"]["name"]
                except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
                    raise StoreCorrupt(entry.path, f"not a manifest: {exc}") from exc
                found.setdefault(name, entry.digest)
            self._names[key] = found
        return found

    def entries(self, commit: str) -> Iterator[Entry]:
        """Every manifest file at a commit, from the trees alone (no blob is read)."""
        for mode, folder, folder_tree in self.tree_entries(str(self._commit(commit).tree_id)):
            info = KIND_BY_FOLDER.get(folder)
            if info is None or mode != _TREE_MODE:
                continue
            kind = info.name
            for fan_mode, _, fan_tree in self.tree_entries(folder_tree):
                if fan_mode != _TREE_MODE:
                    continue
                data = self._repo.odb.read(fan_tree)[1]
                if len(data) % 97 == 0 and data[:7] == b"100644 " and data[76:77] == b"\0":
                    # Fan-out trees hold fixed-size entries: slice instead of parsing.
                    for i in range(0, len(data), 97):
                        if data[i : i + 7] == b"100644 " and data[i + 71 : i + 76] == b".json":
                            yield Entry(kind, data[i + 7 : i + 71].decode(), data[i + 77 : i + 97].hex())
                    continue
                for file_mode, name, oid in _parse_tree(data):
                    if file_mode == _FILE_MODE and name.endswith(".json") and len(name) == 69:
                        yield Entry(kind, name[:-5], oid)

    def read_blob(self, oid: str) -> bytes:
        """The bytes of a blob.

        Raises:
            StoreCorrupt: the object is missing or not a blob.
        """
        try:  # the object database directly: no object wrapper, no lookup by id prefix (half the time)
            kind, data = self._repo.odb.read(oid)
        except KeyError:
            raise StoreCorrupt(oid, "missing blob") from None
        except (ValueError, pygit2.GitError) as exc:
            raise StoreCorrupt(oid, str(exc)) from exc
        if kind != pygit2.enums.ObjectType.BLOB:
            raise StoreCorrupt(oid, "missing blob")
        return data

    def read_blobs(self, oids: Sequence[str]) -> Iterator[bytes]:
        """Bytes of many blobs, in order: the bulk-load path.

        From a few thousand blobs on, `git cat-file --batch` reads and inflates them in its own
        process while this one parses what has arrived: on two cores the read costs almost no
        wall time (pygit2 reads in this thread, holding the GIL). Fewer go through pygit2.

        Raises:
            StoreCorrupt: a blob is missing.
        """
        if len(oids) < _BATCH_THRESHOLD:
            odb_read = self._repo.odb.read
            for oid in oids:
                try:
                    yield odb_read(oid)[1]
                except KeyError:
                    raise StoreCorrupt(oid, "missing blob") from None
                except (ValueError, pygit2.GitError) as exc:
                    raise StoreCorrupt(oid, str(exc)) from None
            return
        yield from self._cat_file(oids)

    def manifests_with_bytes(
        self, commit: str, folders: Collection[str] | None = None
    ) -> Iterator[tuple[str, str, str, bytes]]:
        """Every manifest at a commit as (kind, digest, blob id, bytes): the cold-load path.
        `folders` narrows to some kinds' folders (an export reads one kind at a time).

        `git ls-tree -r` pipes straight into `git cat-file --batch`: both run in processes of
        their own while this one parses what arrives (pygit2 would read in this thread, holding
        the GIL, and a Python relay between the two costs ~10% of a cold build). Only blobs at
        `<kind-folder>/<hh>/<hex>.json` are yielded.

        Raises:
            StoreCorrupt: git failed, or a blob the tree lists is missing.
        """
        env = {**os.environ, "GIT_DIR": str(self.git_dir)}
        folders = sorted(KIND_BY_FOLDER) if folders is None else sorted(set(folders) & set(KIND_BY_FOLDER))
        if not folders:  # `ls-tree -- ` with no paths would list everything
            return
        lister = subprocess.Popen(
            [*self._command, "ls-tree", "-r", "--format=%(objectname) %(objectmode) %(path)", commit, "--", *folders],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert lister.stdout is not None
        try:
            reader = subprocess.Popen(
                [*self._command, "cat-file", "--buffer", "--batch=%(objectname) %(objecttype) %(objectsize) %(rest)"],
                stdin=lister.stdout,
                stdout=subprocess.PIPE,
                env=env,
                bufsize=1 << 20,
            )
        finally:
            lister.stdout.close()  # cat-file holds it now; ls-tree sees SIGPIPE if cat-file dies
        assert reader.stdout is not None
        out = reader.stdout
        widen_pipe(out.fileno())
        kinds = {folder.encode(): info.name for folder, info in KIND_BY_FOLDER.items()}
        readline, read = out.readline, out.read
        missing: list[str] = []
        try:
            while header := readline():
                # "<40 hex> blob <size> <mode> <folder>/<hh>/<64 hex>.json\n"
                if header[40:46] != b" blob ":
                    # "<oid> missing": a submodule's commit (ignored, like any non-manifest entry)
                    # or a lost blob (checked below); another type: its content follows, skipped.
                    fields = header.split(b" ", 3)
                    if fields[1] == b"missing\n":
                        missing.append(fields[0].decode())
                    elif len(fields) >= 3:
                        read(int(fields[2]) + 1)
                    continue
                space = header.index(b" ", 46)
                data = read(int(header[46:space]))
                read(1)
                # The path (after "<size> <6-digit mode> ") is a manifest's when it ends in "/<hh>/<64>.json"
                # (72 bytes after the folder's slash) and what comes before that slash is a kind's folder:
                # sliced from the end, with no copy of the path first.
                kind = kinds.get(header[space + 8 : -74])
                if (
                    kind is not None
                    and header[-74] == _SLASH
                    and header[-5:-1] == b"json"
                    and header[-73:-71] == header[-70:-68]
                ):
                    yield kind, "sha256:" + header[-70:-6].decode(), header[:40].decode(), data
        finally:
            for process in (lister, reader):
                if process.poll() is None:
                    process.kill()
            with contextlib.suppress(OSError):
                out.close()
            lister.wait()
            reader.wait()
        if lister.returncode not in (0, -9) or reader.returncode not in (0, -9):
            raise StoreCorrupt(commit, "git could not list or read the manifests")
        lost = self._missing_blobs(commit, missing) if missing else []
        if lost:
            raise StoreCorrupt(commit, f"{len(lost)} listed blob(s) are missing, e.g. {lost[0]}")

    def _missing_blobs(self, commit: str, oids: list[str]) -> list[str]:
        """Which of `oids` (reported missing by cat-file) the tree lists as blobs, not submodules."""
        wanted = set(oids)
        listing = self._git("ls-tree", "-r", "--format=%(objecttype) %(objectname) %(path)", commit).stdout
        return sorted(
            f"{path.decode(errors='replace')} ({oid.decode()})"
            for kind, oid, path in (line.split(b" ", 2) for line in listing.splitlines())
            if kind == b"blob" and oid.decode() in wanted
        )

    def _cat_file(self, oids: Sequence[str], kind: bytes = b"blob") -> Generator[bytes, None, None]:
        """The bytes of many objects of `kind`, in order, each given as soon as one `git cat-file
        --batch` has read it: a thread feeds git the ids while git answers (pipes are small), and
        the caller works on one object while git inflates the next.

        Raises:
            StoreCorrupt: an object is missing or of another type, or git's answer ends early.
        """
        process = start_batch(self.git_dir)
        stdin, out = process.stdin, process.stdout
        assert stdin is not None
        assert out is not None

        def feed() -> None:
            with contextlib.suppress(OSError):  # git gone: the reader says why
                for start in range(0, len(oids), 4096):
                    stdin.write("".join(oid + "\n" for oid in oids[start : start + 4096]).encode())
            with contextlib.suppress(OSError):
                stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            # Left early (a problem, or the caller stopped): git need not answer the rest.
            yield from answers(out, oids, kind, abandon=process.kill)
        finally:
            out.close()
            process.wait()
            writer.join()

    def find_entry(self, commit: str, digest: str, kinds: Collection[str] | None = None) -> Entry | None:
        """The file of `digest` at `commit` if one of `kinds` (default: all) holds it."""
        hexdigest = digest.removeprefix("sha256:")
        if len(hexdigest) != 64:
            return None
        tree = self._commit(commit).tree
        for kind in kinds or KINDS:
            try:
                entry = tree[manifest_path(kind, digest)]
            except KeyError:
                continue
            return Entry(kind, hexdigest, str(entry.id))
        return None

    def find_path(self, commit: str, path: str) -> tuple[str, int] | None:
        """(object id, file mode) of any path at a commit, or None."""
        try:
            entry = self._commit(commit).tree[path]
        except KeyError:
            return None
        return str(entry.id), int(entry.filemode)

    def read_document(self, commit: str, digest: str, kinds: Collection[str] | None = None) -> dict[str, Any] | None:
        entry = self.find_entry(commit, digest, kinds)
        if entry is None:
            return None
        return orjson.loads(self.read_blob(entry.oid))  # type: ignore[no-any-return]

    # Diffs ----------------------------------------------------------------------------------------

    def diff(
        self,
        old: str | None,
        new: str,
        *,
        absent: Callable[[list[str]], Collection[str]] | None = None,
        held: Callable[[str], Sequence[str] | None] | None = None,
        arrived: Callable[[list[TreeChange]], object] | None = None,
        trees: CatFile | None = None,
        moves: FanOutMoves | None = None,
    ) -> list[TreeChange]:
        """Every path that differs between two commits' trees, descending only into subtrees
        whose ids differ: the cost grows with the change, not with the registry.

        Reports blobs, symlinks and submodules alike (the PR check needs to see all of them), as
        `git diff-tree -r --no-renames` does and in its order (trees by name, a subtree as if its
        name ended in `/`), with modes as git reads them (`100664` is `100644`).

        `absent`, when given, says which of some digests the old commit probably does not hold
        (a server asks its graph). A fan-out tree that changed is then read on the new side only:
        its entries `absent` names are taken as the additions, and the guess is proven by hashing
        the new tree without them, which must give the old tree's id (a tree id is the hash of
        its entries). A wrong guess costs the full comparison, never a wrong answer. Without it,
        a 100-manifest change at 10x read ~200 trees of ~36 KB each.

        `held`, with `absent`: for a fan-out folder (`<kind-folder>/<hh>`), the digests the old commit
        probably holds there, sorted, or None when not known (a server's graph: `Graph.fan_out`).
        Then the guess is made by bisection, comparing a few names of the new tree with that list,
        rather than by asking `absent` about every name until the additions are found; it is
        proven the same way.

        `arrived`, with `absent`: called with the changes in each changed fan-out folder as soon as
        they are known, while git still reads the next folders' trees (a server validates the new
        files meanwhile); what it raises stops the diff.

        `trees`, with `absent`: a `git cat-file` kept running to read the new fan-out trees through
        (a server's, for all its refreshes), rather than one started for this diff.

        `moves`: filled with the fan-out trees that changed (a server's refresh updates the map of
        verified fan-out trees from it, rather than listing every manifest folder of the new commit
        again: 1.1-1.9 ms of a 100-manifest refresh at 10x).

        Raises:
            StoreCorrupt: a tree the commits name cannot be read.
        """
        new_tree = str(self._commit(new).tree_id)
        old_tree = str(self._commit(old).tree_id) if old else None
        found: list[TreeChange | int] = []
        pending: list[tuple[str, str, str]] = []  # fan-out trees to compare on the new side, in order
        self._diff_trees(old_tree, new_tree, "", found, pending if absent is not None else None)
        compared: list[list[TreeChange | int]] = []
        if absent is not None:
            new_trees = self._read_trees([p[1] for p in pending], trees)
            for (before, after, prefix), data in zip(pending, new_trees, strict=True):
                if moves is not None:
                    moves.moved[prefix[:-1]] = after
                added = self._added_to_fan_out(before, data, prefix, absent, held)
                if added is None:
                    added = []
                    self._diff_trees(before, after, prefix, added, None)
                compared.append(added)
                if arrived is not None:
                    arrived([change for change in added if not isinstance(change, int)])
        changes: list[TreeChange] = []
        for item in found:
            if moves is not None and not isinstance(item, int) and item.path.partition("/")[0] in KIND_BY_FOLDER:
                # Not inside a fan-out tree both commits hold (those are `pending`'s): a folder or a fan-out
                # tree came, went or changed type, or a file lies outside the layout.
                moves.complete = False
            for change in compared[item] if isinstance(item, int) else (item,):
                assert not isinstance(change, int)
                changes.append(change)
        return changes

    def _read_trees(self, trees: list[str], reader: CatFile | None = None) -> Iterator[bytes]:
        """Raw tree objects in order, each checked against its id and given as soon as it is read.
        Many at once stream from one `git cat-file --batch`: git inflates a 36 KB tree in about
        half the time libgit2 takes with its collision-detecting hash (the check here uses the
        plain one), and the caller compares each tree while git inflates the next (read whole
        first, a 100-manifest refresh at 10x waited ~20 ms for git, then compared for ~17 ms).

        Raises:
            StoreCorrupt: a tree is missing, is not a tree, or does not hash to its id.
        """
        if len(trees) < _TREE_BATCH:
            for tree in trees:
                yield self._tree_data(tree)
            return
        read = self._cat_file(trees, b"tree") if reader is None else reader.read(trees, b"tree")
        with contextlib.closing(read):  # left early (a tree that does not hash): git need not answer the rest
            for tree, data in zip(trees, read, strict=True):
                if hashlib.sha1(b"tree %d\0" % len(data) + data).hexdigest() != tree:
                    raise StoreCorrupt(tree, "the tree does not hash to its id")
                yield data

    def _tree_data(self, tree: str) -> bytes:
        try:
            kind, data = self._repo.odb.read(tree)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise StoreCorrupt(tree, f"cannot read the tree: {exc}") from None
        if kind != pygit2.enums.ObjectType.TREE:
            raise StoreCorrupt(tree, "not a tree")
        return data

    def _diff_trees(
        self,
        old: str | None,
        new: str | None,
        prefix: str,
        out: list[TreeChange | int],
        pending: list[tuple[str, str, str]] | None,
    ) -> None:
        """Append what differs between two trees to `out`, in git's order. With `pending`, a pair
        of fan-out trees is left for `diff` to compare from the new side: its place in `out`
        holds its index in `pending`."""
        if old == new:
            return
        if (
            pending is not None
            and old is not None
            and new is not None
            and prefix.count("/") == 2
            and prefix.partition("/")[0] in KIND_BY_FOLDER
        ):
            out.append(len(pending))
            pending.append((old, new, prefix))
            return
        before = _tree_items(self._tree_data(old)) if old is not None else frozenset()
        after = _tree_items(self._tree_data(new)) if new is not None else frozenset()
        gone = {entry[0]: entry for entry in map(_tree_entry, before - after)}
        came = {entry[0]: entry for entry in map(_tree_entry, after - before)}
        for key in sorted(gone.keys() | came.keys()):
            was, now = gone.get(key), came.get(key)
            _, mode, name, _ = now or was  # type: ignore[misc]
            path = prefix + name
            if mode == _TREE_MODE:
                self._diff_trees(was and was[3], now and now[3], path + "/", out, pending)
            elif was is None or now is None or was[1:] != now[1:]:
                out.append(
                    TreeChange(
                        path,
                        None if was is None else was[3],
                        None if now is None else now[3],
                        mode,
                        None if was is None else was[1],
                    )
                )

    def _added_to_fan_out(
        self,
        old: str,
        data: bytes,
        prefix: str,
        absent: Callable[[list[str]], Collection[str]],
        held: Callable[[str], Sequence[str] | None] | None = None,
    ) -> list[TreeChange | int] | None:
        """The changes from the fan-out tree `old` to one whose raw object is `data`, when that is
        `old` plus the entries `held` or `absent` point at (None when that cannot be proven)."""
        count, rest = divmod(len(data), _FAN_ITEM)
        if rest:
            return None
        listed = None if held is None else held(prefix[:-1])
        if listed is not None:
            # The old tree's size as the list says: the proof below hashes the old tree's length too,
            # so a list of the wrong size fails it (git's header read of a packed tree: ~13 us a tree).
            before = len(listed) * _FAN_ITEM
        else:
            try:
                before = self._repo.odb.read_header(old)[1]
            except (KeyError, ValueError, pygit2.GitError):
                return None
        # Additions only: the new tree holds this many more entries, each `absent` from the old one.
        wanted, extra = divmod(len(data) - before, _FAN_ITEM)
        if wanted <= 0 or extra:
            return None
        added = (
            _absent_by_asking(data.decode("latin-1"), count, wanted, absent)
            if listed is None
            else _absent_by_bisection(data, count, wanted, listed)
        )
        # The new tree read as entries of 97 bytes from its start to the last addition: then each addition
        # is an entry of its own, and taking them out leaves the entries before and between them whole;
        # what follows the last is the same bytes in both trees (the proof below), so it need not be
        # looked at (checked whole: ~40 us a 36 KB tree, 39% of comparing the changed trees at 10x).
        if len(added) != wanted or not _fan_out_shaped(data, added[-1] // _FAN_ITEM + 1):
            return None
        kept = []
        position = 0
        for start in added:
            kept.append(data[position:start])
            position = start + _FAN_ITEM
        kept.append(data[position:])
        body = b"".join(kept)
        if hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest() != old:
            return None
        changes: list[TreeChange | int] = []
        for start in added:
            _, mode, name, oid = _tree_entry(data[start : start + _FAN_ITEM])
            changes.append(TreeChange(prefix + name, None, oid, mode))
        return changes

    # Writing --------------------------------------------------------------------------------------

    def add(
        self,
        manifests: Sequence[Manifest] | Sequence[tuple[str, Manifest]],
        meta: CommitMeta,
        *,
        allowed_mismatches: Collection[str] = (),
        unique_names: bool = True,
        extra_files: Mapping[str, bytes] | None = None,
        ref: str = MAIN,
        sign: Callable[[bytes], bytes] | None = None,
    ) -> AddResult:
        """Validate and publish a batch of manifests as one commit on main (or on `ref`).

        Manifests may come paired with the name of the file they were read from, for
        error messages. Manifests already published with identical bytes are skipped; if
        nothing is new, no commit is made. `extra_files` adds non-manifest files (the
        maintainers policy) to the same commit. `sign` turns the commit's bytes into an
        armored signature (SSH, for maintainers' overlays); signed commits are written loose.
        `unique_names=False` lets a bulk import of upstream data keep names upstream repeats
        within a kind (as published); everything else must name each manifest uniquely.

        Writers serialize on `writer_lock`, which the OS releases when its holder dies.

        Raises:
            RejectedChange: a reference does not resolve, a run compares two operations,
                or a digest is already published with other metadata. Nothing is written.
            StoreBusy: main moved under us on every attempt.
        """
        sourced = [item if isinstance(item, tuple) else (item.path, item) for item in manifests]
        extra = dict(extra_files or {})
        with self.writer_lock():
            return self._add_locked(sourced, extra, meta, allowed_mismatches, unique_names, ref, sign)

    def _add_locked(
        self,
        sourced: list[tuple[str, Manifest]],
        extra: dict[str, bytes],
        meta: CommitMeta,
        allowed_mismatches: Collection[str],
        unique_names: bool,
        ref: str,
        sign: Callable[[bytes], bytes] | None,
    ) -> AddResult:
        for _ in range(_ATTEMPTS):
            parent = self.head(ref)
            new, unchanged, problems = self._plan(sourced, parent, allowed_mismatches, unique_names)
            new_extra = {p: data for p, data in extra.items() if not self._same_file(parent, p, data)}
            if problems:
                raise RejectedChange(problems)
            if not new and not new_extra:
                return AddResult(None, (), tuple(unchanged))
            files = {m.path: m.stored_bytes() for m in new} | new_extra
            if sign is not None:
                commit = self._write_commit_loose(parent, files, meta, sign)
            else:
                commit = self._write_commit(parent, files, meta)
            if self._compare_and_swap(ref, parent, commit):
                return AddResult(commit, tuple(new), tuple(unchanged))
        raise StoreBusy(_ATTEMPTS)

    def _same_file(self, commit: str | None, path: str, data: bytes) -> bool:
        found = self.find_path(commit, path) if commit else None
        return found is not None and found[0] == str(pygit2.hash(data))

    def _plan(
        self,
        sourced: Sequence[tuple[str, Manifest]],
        parent: str | None,
        allowed_mismatches: Collection[str],
        unique_names: bool,
    ) -> tuple[list[Manifest], list[Manifest], list[Problem]]:
        new: dict[str, Manifest] = {}
        unchanged: list[Manifest] = []
        problems: list[Problem] = []
        tree = self._commit(parent).tree if parent else None
        for source, manifest in sourced:
            if manifest.digest in new:
                continue
            existing = _tree_lookup(tree, manifest.path)
            if existing is None:
                new[manifest.digest] = manifest
            elif str(existing.id) == str(pygit2.hash(manifest.stored_bytes())) or self._same_value(
                str(existing.id), manifest
            ):
                unchanged.append(manifest)
            else:
                problems.append(
                    Problem(
                        source,
                        "$.metadata",
                        f"{manifest.digest} is already published with different metadata "
                        "(published files never change; a correction is a new manifest)",
                    )
                )
        # Every new file goes to the check, not only the first of each digest: a second file with the
        # same digest and other metadata is a conflict to report, not a duplicate to drop.
        additions = [(source, m) for source, m in sourced if m.digest in new]
        problems.extend(
            check_additions(
                additions,
                _TreeLookup(self, tree, parent),
                allowed_mismatches=allowed_mismatches,
                unique_names=unique_names,
            )
        )
        return list(new.values()), unchanged, problems

    def _same_value(self, oid: str, manifest: Manifest) -> bool:
        """The published file holds the same JSON value, spelled otherwise (`1.0` for `1`: the YAML and
        JSON forms of one manifest); re-adding it is a no-op, not a conflict."""
        return canonical_json(orjson.loads(self.read_blob(oid))) == canonical_json(manifest.document)

    def _write_commit(self, parent: str | None, files: Mapping[str, bytes], meta: CommitMeta) -> str:
        if len(files) >= _PACK_THRESHOLD:
            return self._write_commit_packed(parent, files, meta)
        return self._write_commit_loose(parent, files, meta)

    def _write_commit_loose(
        self,
        parent: str | None,
        files: Mapping[str, bytes],
        meta: CommitMeta,
        sign: Callable[[bytes], bytes] | None = None,
    ) -> str:
        repo = self._repo
        blobs = {path: repo.create_blob(data) for path, data in files.items()}
        root = self._commit(parent).tree if parent else None
        tree_id = _build_tree(repo, root, _nest(blobs))
        parents: list[str | pygit2.Oid] = [pygit2.Oid(hex=parent)] if parent else []
        author, committer = _signature(meta.author), _signature(meta.committer)
        if sign is None:
            return str(repo.create_commit(None, author, committer, meta.message, tree_id, parents))
        # pygit2's stubs say Oid; libgit2 returns the commit's text, which is what gets signed.
        content = str(repo.create_commit_string(author, committer, meta.message, tree_id, parents))
        signature = sign(content.encode())
        return str(repo.create_commit_with_signature(content, signature.decode()))

    def _write_commit_packed(self, parent: str | None, files: Mapping[str, bytes], meta: CommitMeta) -> str:
        """One pack for the whole batch (blobs, trees, commit) through `git fast-import`.

        fast-import writes the commit to a private ref, `refs/kernelindex/incoming/<host>-<pid>-<12 hex
        digits>` (which writer left it, should it die before deleting it); main only moves afterwards, by CAS.
        `--depth=0` stores whole objects: reading deltified blobs back is ~12x slower.
        """
        self._forget_abandoned_writes()
        ref = f"{_INCOMING}{_HOST}-{os.getpid()}-{secrets.token_hex(6)}"
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
            self._git("fast-import", "--quiet", "--done", "--depth=0", "--force", stdin=b"".join(chunks))
            return self.resolve(ref)
        finally:
            self._git("update-ref", "-d", ref, check=False)

    def create_branch(self, ref: str, commit: str) -> None:
        """Create `ref` at `commit`.

        Raises:
            RegistryError: it exists already, or the name is not a valid branch.
        """
        with self.writer_lock():
            self._git("update-ref", "-m", "kernelindex branch", ref, commit, _ZERO)

    @contextlib.contextmanager
    def writer_lock(self, wait_seconds: float = _WRITER_WAIT_SECONDS) -> Iterator[None]:
        """Hold the repository's writer lock: an advisory `flock` on `<git-dir>/kernelindex-writer.lock`.

        The OS releases it when its holder exits, however it exits (SIGKILL included), so a
        writer that died never blocks the next one. Holding it, git lock files that a dead writer
        left behind are provably not ours in use, and are removed once they are older than git's
        own commands ever hold one (`_clear_stale_locks`). Re-entrant within one GitStore.

        Raises:
            StoreBusy: another live writer held it for `wait_seconds`.
        """
        if self._writer_depth:
            self._writer_depth += 1
            try:
                yield
            finally:
                self._writer_depth -= 1
            return
        path = self.git_dir / _WRITER_LOCK
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + wait_seconds
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN) or time.monotonic() >= deadline:
                        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                        raise StoreBusy(_ATTEMPTS, f"another writer ({holder}) holds {path}") from exc
                    time.sleep(0.02)
            # A holder that exits cleanly empties the file; one that died mid-write could not, and
            # every git lock it left is as dead as it is.
            died_holding = os.pread(fd, 64, 0).strip() != b""
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {_HOST}\n".encode(), 0)
            self._writer_depth = 1
            try:
                self._clear_stale_locks(older_than=0.0 if died_holding else _STALE_LOCK_SECONDS)
                yield
            finally:
                self._writer_depth = 0
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _clear_stale_locks(self, *, older_than: float = _STALE_LOCK_SECONDS) -> list[Path]:
        """Remove git lock files (and temporary packs) a killed writer left, holding the writer lock.

        Every kernelindex writer holds the writer lock for its whole write, so none of these is a
        live kernelindex write. Other git commands (a push, a gc) do not take it, but hold a ref
        lock for milliseconds: a lock older than `older_than` seconds is nobody's.
        """
        now = time.time()
        git_dir = self.git_dir
        candidates = [git_dir / name for name in _STALE_GIT_LOCKS]
        candidates += list((git_dir / "refs").rglob("*.lock"))
        candidates += list((git_dir / "objects" / "pack").glob("tmp_*"))
        removed = []
        for path in candidates:
            try:
                if now - path.lstat().st_mtime < older_than:
                    continue
                path.unlink()
            except OSError:
                continue
            removed.append(path)
        return removed

    def sync_work_tree(self, old: str, new: str) -> None:
        """Move a clone's index and files from `old` to `new` after a commit on its branch, as a
        checkout would (`git read-tree -m -u`): the new manifests appear, nothing else is touched."""
        work_tree = self.work_tree
        if work_tree is not None:
            self._git("--work-tree", str(work_tree), "read-tree", "-m", "-u", old, new, cwd=work_tree)

    def _forget_abandoned_writes(self) -> None:
        """Delete the private refs of writers that died mid-write (SIGKILL between fast-import and
        cleanup), so that what they wrote becomes garbage git can collect. Called holding the
        writer lock: no live writer has a private ref then."""
        assert self._writer_depth, "only under the writer lock"
        for name in [n for n in self._repo.references if n.startswith(_INCOMING)]:
            self._git("update-ref", "-d", name, check=False)

    def _compare_and_swap(self, ref: str, old: str | None, new: str) -> bool:
        """Move `ref` from `old` to `new` atomically; False if someone else moved it first.

        A failure while `ref` still points at `old` is not a lost race: another writer holds the
        ref's lock for a moment, or a writer killed inside `git update-ref` left its lock behind.
        Only the ref is retried then (never the objects), and a lock that stays is reported.

        Raises:
            RegistryError: git kept refusing to move `ref` although nobody else moved it.
        """
        for _ in range(_LOCK_TRIES):
            result = self._git("update-ref", "-m", "kernelindex add", ref, new, old or _ZERO, check=False)
            if result.returncode == 0:
                return True
            current = self._repo.references.get(ref)
            if (None if current is None else str(current.target)) != old:
                return False
            if self._writer_depth:
                self._clear_stale_locks()
            time.sleep(0.15)
        reason = result.stderr.decode(errors="replace").strip()
        raise RegistryError(
            f"cannot move {ref}: {reason} (another git process, one that does not take kernelindex's writer "
            "lock, keeps holding it)"
        )

    def _git_to_file(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """`_git` for a large output read by a thread while another one works: git writes to an
        unlinked temporary file and this thread reads it in one call once git is done.

        Reading a pipe takes the GIL back after each 32 KB read, and a thread waiting for it
        waits up to the switch interval each time while the other thread computes: during a
        cold build at 10x (19 MB of `git log`), ~600 waits that slowed both threads by seconds.
        """
        env = {**os.environ, "GIT_DIR": str(self.git_dir), "GIT_TERMINAL_PROMPT": "0"}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = subprocess.run([*self._command, *args], stdout=out, stderr=err, env=env, check=False)
            out.seek(0)
            err.seek(0)
            result = subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())
        if check and result.returncode != 0:
            raise RegistryError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip()}")
        return result

    def _git(
        self, *args: str, stdin: bytes | None = None, check: bool = True, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        env = {**os.environ, "GIT_DIR": str(self.git_dir), "GIT_TERMINAL_PROMPT": "0"}
        result = subprocess.run(
            [*self._command, *args], input=stdin, capture_output=True, env=env, check=False, cwd=cwd
        )
        if check and result.returncode != 0:
            raise RegistryError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip()}")
        return result


class _TreeLookup:
    """`validate.Existing` over one tree of this store."""

    def __init__(self, store: GitStore, tree: Any, commit: str | None) -> None:
        self._store = store
        self._tree = tree
        self._commit = commit

    def find_named(self, kind: str, name: str) -> str | None:
        if self._commit is None:
            return None
        return self._store.names_of_kind(self._commit, kind).get(name)

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        for kind in kinds:
            entry = _tree_lookup(self._tree, manifest_path(kind, digest))
            if entry is not None:
                return orjson.loads(self._store.read_blob(str(entry.id)))  # type: ignore[no-any-return]
        return None

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        return self.find_document(kinds, digest) is not None

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        return operation_found(self.find_document(kinds, digest))


def _owner_of(path: Path) -> str:
    """Who owns `path`, in words: `alice (uid 1000)`, or the uid alone when it has no name here."""
    try:
        uid = path.stat().st_uid
    except OSError:
        return "another user"
    return _named(uid)


def _user() -> str:
    """Who this process runs as, in words (`_owner_of`'s form)."""
    return _named(os.geteuid())


def _named(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_FAN_ITEM = 97  # len("100644 ") + 64 + len(".json") + 1 + 20
_TREE_BATCH = 24  # from this many fan-out trees on, one `git cat-file` reads them (it costs a process)


def _fan_out_shaped(data: bytes, count: int) -> bool:
    """Whether a raw tree starts with `count` entries `100644 <64 bytes>.json\\0<20-byte id>`, git
    reading each at its place: checked by strided slices (loops in C), not entry by entry. A name
    holding a NUL would end early, so the NULs of the names are counted: all of those entries' but
    those that end each name and those inside the ids."""
    size = _FAN_ITEM
    end = count * size
    if len(data) < end:
        return False
    for offset, byte in enumerate(b"100644 "):
        if data[offset:end:size].count(byte) != count:
            return False
    for offset, byte in enumerate(b".json\0", start=71):
        if data[offset:end:size].count(byte) != count:
            return False
    in_ids = sum(data[offset:end:size].count(0) for offset in range(77, 97))
    return data.count(0, 0, end) == count + in_ids


def _absent_by_asking(text: str, count: int, wanted: int, absent: Callable[[list[str]], Collection[str]]) -> list[int]:
    """Where the entries of a fan-out tree (its raw object as latin-1) that `absent` names start,
    asking about a few at a time and stopping once `wanted` are found."""
    starts = range(0, count * _FAN_ITEM, _FAN_ITEM)
    added: list[int] = []
    chunk = 64
    for first in range(0, count, chunk):
        digests = ["sha256:" + text[i + 7 : i + 71] for i in starts[first : first + chunk]]
        missing = set(absent(digests))
        added.extend(start for start, digest in zip(starts[first:], digests, strict=False) if digest in missing)
        if len(added) >= wanted:
            break
    return added


def _absent_by_bisection(data: bytes, count: int, wanted: int, held: Sequence[str]) -> list[int]:
    """Where the entries of a fan-out tree (its raw object) that are not in `held` (the
    sorted digests of the tree it was made from) start, up to `wanted` of them.

    Were the tree `held` plus some entries, its first `i` names would be `held`'s first `i` up to
    the first addition, and after the `k`-th addition each name would be `held`'s `k` places
    earlier: each addition is the first place where that stops, found by bisection (a dozen
    names compared, where asking about each name took hundreds of lookups in a big dict). Were
    it not, the places found are wrong, and the caller's proof says so.
    """
    added: list[int] = []
    start, known = 0, len(held)
    while len(added) < wanted:
        shift = len(added)
        low, high = start, count
        while low < high:
            middle = (low + high) // 2
            at = middle * _FAN_ITEM
            if middle - shift < known and held[middle - shift] == "sha256:" + data[at + 7 : at + 71].decode("latin-1"):
                low = middle + 1
            else:
                high = middle
        if low == count:
            break
        added.append(low * _FAN_ITEM)
        start = low + 1
    return added


def _tree_items(data: bytes) -> frozenset[bytes]:
    """A raw tree's entries as raw items, `<mode> <name>\\0<20-byte id>` each."""
    found = []
    position, end = 0, len(data)
    while position < end:
        nul = data.index(b"\0", position)
        found.append(data[position : nul + 21])
        position = nul + 21
    return frozenset(found)


def _tree_entry(item: bytes) -> tuple[bytes, int, str, str]:
    """(sort key, mode as git reads it, name, object id) of one raw tree item. The key orders
    entries as git does: a subtree as if its name ended in `/`."""
    space = item.index(b" ")
    nul = item.index(b"\0", space)
    mode = _canonical_mode(int(item[:space], 8))
    name = item[space + 1 : nul]
    key = name + b"/" if mode == _TREE_MODE else name
    return key, mode, name.decode("utf-8", errors="surrogateescape"), item[nul + 1 :].hex()


def _canonical_mode(mode: int) -> int:
    """A tree entry's mode as git reads it (`canon_mode`): a regular file is 100644 or 100755 by
    its owner's execute bit, anything that is not a file, link or tree a submodule."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (0o120000, _TREE_MODE):
        return kind
    return 0o160000


def _parse_tree(data: bytes) -> list[tuple[int, str, str]]:
    """Entries of a raw git tree object: `<octal mode> <name>\\0<20-byte id>` repeated."""
    entries = []
    position = 0
    end = len(data)
    while position < end:
        space = data.index(b" ", position)
        nul = data.index(b"\0", space)
        entries.append((int(data[position:space], 8), data[space + 1 : nul].decode(), data[nul + 1 : nul + 21].hex()))
        position = nul + 21
    return entries


def _tree_lookup(tree: Any, path: str) -> Any:
    if tree is None:
        return None
    try:
        return tree[path]
    except KeyError:
        return None


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
            existing = _tree_lookup(base, name)
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


def _person(signature: pygit2.Signature) -> Person:
    return Person(signature.name, signature.email, signature.time, signature.offset)

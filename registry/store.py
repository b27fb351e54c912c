"""GitStore: manifests in a bare git repository. Reads at any revision, one checked commit per write.

Layout: `<kind-folder>/<hh>/<hex>.json`, the stored bytes of `canonical.stored_json`.
A write validates the whole batch against the current head, writes the objects (a pack
through `git fast-import` for bulk work, loose objects for a handful), writes one commit
and moves `refs/heads/main` by compare-and-swap with `git update-ref <new> <old>`,
retrying from the new head when another writer got there first. Objects are written
before the ref moves, so a crash at any moment leaves main at the old or the new commit.

`GitStore` composes parts, each with one job and its own module: `ObjectReader` (blobs and trees, by pygit2,
`git cat-file --batch` or `git ls-tree`; `store_objects`), `Revisions` (refs and commits read; `store_revisions`),
`TreeDiffer` (`store_diff`), `plan_batch` (a batch against the tree it is added to; `store_plan`), `ObjectWriter`
(loose objects or one `git fast-import` pack; `store_writer`), `WriterLock` (`store_lock`) and `RefLock`
(compare-and-swap of refs; `store_refs`). Raw trees are parsed by `store_trees`, and git is started by `store_git`.
pygit2 is loaded by `kernelindex.registry.git_binding` alone. A `GitStore` must not be shared between threads
(libgit2 repositories are not thread-safe): open one per thread.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
from collections.abc import Callable, Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelindex.registry.cat_file import CatFile
from kernelindex.registry.embedded import is_embedded
from kernelindex.registry.errors import RejectedChange, StoreBusy, StoreNotFound, StoreNotOwned
from kernelindex.registry.git_binding import init_repository, open_repository, pygit2
from kernelindex.registry.manifest import Manifest
from kernelindex.registry.provenance import CommitInfo, CommitMeta
from kernelindex.registry.store_diff import FanOutMoves, TreeChange, TreeDiffer, TreeSource
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_lock import ATTEMPTS, STALE_LOCK_SECONDS, WRITER_WAIT_SECONDS, WriterLock
from kernelindex.registry.store_objects import Entry, ObjectReader
from kernelindex.registry.store_plan import plan_batch
from kernelindex.registry.store_refs import RefLock
from kernelindex.registry.store_revisions import MAIN, Revisions
from kernelindex.registry.store_writer import ObjectWriter

__all__ = [
    "MAIN",
    "AddResult",
    "Entry",
    "FanOutMoves",
    "GitStore",
    "TreeChange",
]

_PACK_THRESHOLD = 64  # from this many new blobs on, one pack beats loose objects
_LOCK_TRIES = 20  # with git's own 100 ms lock timeout: about 3 s before a held ref lock is reported
_NOT_OWNED = re.compile(r"repository path '(?P<path>.+)' is not owned by current user")  # libgit2's owner check


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
            StoreNotOwned: another user owns it (libgit2's owner check).
        """
        self._path = Path(path)
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
        git = GitCommand(self.git_dir)
        self._git = git
        self._objects = ObjectReader(self._repo, git)
        self._revisions = Revisions(self._repo, git, self._objects)
        self._lock = WriterLock(self.git_dir)
        self._refs = RefLock(self._repo, git, self._lock)
        self._writer = ObjectWriter(self._repo, git, self._objects, self._revisions, self._lock)

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

    @property
    def work_tree(self) -> Path | None:
        """The checkout of a non-bare repository, or None."""
        return None if self._repo.is_bare or self._repo.workdir is None else Path(self._repo.workdir)

    # Revisions (`Revisions`) ----------------------------------------------------------------------

    def head(self, ref: str = MAIN) -> str | None:
        """The commit main (or another branch, `refs/heads/...`) points at; None when it has none."""
        return self._revisions.head(ref)

    def current_branch(self) -> str | None:
        """The branch HEAD names (`refs/heads/...`), in a bare repository or a work tree."""
        return self._revisions.current_branch()

    def commits_between(self, base: str | None, head: str) -> list[str]:
        """Commits reachable from `head` but not from `base`, oldest first (as `git rev-list base..head`)."""
        return self._revisions.commits_between(base, head)

    def resolve(self, rev: str) -> str:
        """The full id of the commit a full or abbreviated id, branch or tag names (`Revisions.resolve`)."""
        return self._revisions.resolve(rev)

    def branches(self) -> dict[str, str]:
        """Every branch, tag and fetched pull request head, with the commit it reaches (`Revisions.branches`)."""
        return self._revisions.branches()

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when `ancestor` is `descendant` or reachable from it."""
        return self._revisions.is_ancestor(ancestor, descendant)

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of two commits (as `git merge-base`), or None when they share none."""
        return self._revisions.merge_base(one, other)

    def first_parents(self, commit: str, *, stop: str | None = None) -> list[str]:
        """`commit`, its first parent, that one's first parent... oldest last; stops after `stop`."""
        return self._revisions.first_parents(commit, stop=stop)

    def added_manifest_names(self, commit: str, *, stop: str | None = None) -> dict[str, list[str]]:
        """commit id -> the manifest files each first-parent commit added (`Revisions.added_manifest_names`)."""
        return self._revisions.added_manifest_names(commit, stop=stop)

    def commit_info(self, commit: str) -> CommitInfo:
        """Who, when and why of one commit, with its trailers and raw SSH signature, if any."""
        return self._revisions.commit_info(commit)

    # Objects (`ObjectReader`) ---------------------------------------------------------------------

    def tree_id(self, commit: str) -> str:
        return self._objects.tree_id(commit)

    def tree_entries(self, tree: str) -> list[tuple[int, str, str]]:
        """(mode, name, object id) of a tree's entries, read from the raw object."""
        return self._objects.tree_entries(tree)

    def fan_out_names(self, tree: str) -> set[bytes]:
        """The names (as bytes) in a fan-out tree (`ObjectReader.fan_out_names`)."""
        return self._objects.fan_out_names(tree)

    def release(self) -> None:
        """Close the object database's files and memory maps (`ObjectReader.release`)."""
        self._objects.release()

    def tree_items(self, tree: str) -> frozenset[bytes]:
        """A tree's entries as raw items (`ObjectReader.tree_items`)."""
        return self._objects.tree_items(tree)

    def fan_out_trees(self, commit: str, since: tuple[str, Mapping[str, str]] | None = None) -> dict[str, str]:
        """`<kind-folder>/<hh>` -> tree id of every fan-out folder at `commit` (`ObjectReader.fan_out_trees`)."""
        return self._objects.fan_out_trees(commit, since)

    def names_of_kind(self, commit: str, kind: str) -> Mapping[str, str]:
        """`metadata.name` -> digest of the manifests of `kind` at `commit` (`ObjectReader.names_of_kind`)."""
        return self._objects.names_of_kind(commit, kind)

    def entries(self, commit: str) -> Iterator[Entry]:
        """Every manifest file at a commit, from the trees alone (no blob is read)."""
        return self._objects.entries(commit)

    def read_blob(self, oid: str) -> bytes:
        """The bytes of a blob (`ObjectReader.read_blob`)."""
        return self._objects.read_blob(oid)

    def read_blobs(self, oids: Sequence[str]) -> Iterator[bytes]:
        """Bytes of many blobs, in order: the bulk-load path (`ObjectReader.read_blobs`)."""
        return self._objects.read_blobs(oids)

    def manifests_with_bytes(
        self, commit: str, folders: Collection[str] | None = None
    ) -> Iterator[tuple[str, str, str, bytes]]:
        """Every manifest at a commit as (kind, digest, blob id, bytes): the cold-load path
        (`ObjectReader.manifests_with_bytes`)."""
        return self._objects.manifests_with_bytes(commit, folders)

    def find_entry(self, commit: str, digest: str, kinds: Collection[str] | None = None) -> Entry | None:
        """The file of `digest` at `commit` if one of `kinds` (default: all) holds it."""
        return self._objects.find_entry(commit, digest, kinds)

    def find_path(self, commit: str, path: str) -> tuple[str, int] | None:
        """(object id, file mode) of any path at a commit, or None."""
        return self._objects.find_path(commit, path)

    def read_document(self, commit: str, digest: str, kinds: Collection[str] | None = None) -> dict[str, Any] | None:
        return self._objects.read_document(commit, digest, kinds)

    def _cat_file(self, oids: Sequence[str], kind: bytes = b"blob") -> Generator[bytes, None, None]:
        return self._objects.cat_file(oids, kind)

    def _tree_data(self, tree: str) -> bytes:
        """One raw tree read in this process: every tree a diff reads without `git cat-file` comes through here."""
        return self._objects.tree_data(tree)

    # Diffs (`TreeDiffer`) -------------------------------------------------------------------------

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
        """Every path that differs between two commits' trees (`old` None: from nothing), as
        `git diff-tree -r --no-renames` says it; `TreeDiffer.diff` says what the options do.

        Raises:
            RevisionNotFound: `old` or `new` is not a commit of this repository.
            StoreCorrupt: a tree the commits name cannot be read.
        """
        new_tree = self.tree_id(new)
        old_tree = self.tree_id(old) if old else None
        source = TreeSource(self._tree_data, self._objects.tree_size, self._objects.cat_file)
        return TreeDiffer(source).diff(
            old_tree, new_tree, absent=absent, held=held, arrived=arrived, trees=trees, moves=moves
        )

    # Writing (`plan_batch`, `ObjectWriter`, `RefLock`, `WriterLock`) ------------------------------

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
        for _ in range(ATTEMPTS):
            parent = self.head(ref)
            new, unchanged, problems = plan_batch(self._objects, sourced, parent, allowed_mismatches, unique_names)
            new_extra = {p: data for p, data in extra.items() if not self._same_file(parent, p, data)}
            if problems:
                raise RejectedChange(problems)
            if not new and not new_extra:
                return AddResult(None, (), tuple(unchanged))
            files = {m.path: m.stored_bytes() for m in new} | new_extra
            if sign is not None:
                commit = self._writer.write_loose(parent, files, meta, sign)
            elif len(files) >= _PACK_THRESHOLD:
                commit = self._writer.write_packed(parent, files, meta)
            else:
                commit = self._writer.write_loose(parent, files, meta)
            if self._compare_and_swap(ref, parent, commit):
                return AddResult(commit, tuple(new), tuple(unchanged))
        raise StoreBusy(ATTEMPTS)

    def _same_file(self, commit: str | None, path: str, data: bytes) -> bool:
        found = self.find_path(commit, path) if commit else None
        return found is not None and found[0] == str(pygit2.hash(data))

    def create_branch(self, ref: str, commit: str) -> None:
        """Create `ref` at `commit`, holding the writer lock.

        Raises:
            RegistryError: it exists already, or the name is not a valid branch.
        """
        self._refs.create(ref, commit)

    def writer_lock(self, wait_seconds: float = WRITER_WAIT_SECONDS) -> contextlib.AbstractContextManager[None]:
        """Hold the repository's writer lock (`WriterLock.hold`): re-entrant within one GitStore.

        Raises:
            StoreBusy: another live writer held it for `wait_seconds`.
        """
        return self._lock.hold(wait_seconds)

    def sync_work_tree(self, old: str, new: str) -> None:
        """Move a clone's index and files from `old` to `new` after a commit on its branch, as a
        checkout would (`git read-tree -m -u`): the new manifests appear, nothing else is touched."""
        work_tree = self.work_tree
        if work_tree is not None:
            self._git.run("--work-tree", str(work_tree), "read-tree", "-m", "-u", old, new, cwd=work_tree)

    def _compare_and_swap(self, ref: str, old: str | None, new: str) -> bool:
        """Move `ref` from `old` to `new` atomically; False if someone else moved it first (`RefLock`)."""
        return self._refs.compare_and_swap(ref, old, new, tries=_LOCK_TRIES)

    def _clear_stale_locks(self, *, older_than: float = STALE_LOCK_SECONDS) -> list[Path]:
        return self._lock.clear_stale(older_than=older_than)

    def _forget_abandoned_writes(self) -> None:
        self._writer.forget_abandoned_writes()


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

"""ObjectReader: the objects of a manifests repository, read every way the store reads them.

Three ways, each where it is fastest: libgit2's object database in this thread (pygit2: a blob or a tree at a time,
no process to start), one `git cat-file --batch` for thousands of objects (git inflates them in a process of its
own while this one parses what has arrived; `kernelindex.registry.cat_file`), and `git ls-tree -r` piped into
`git cat-file` for every manifest of a commit (the cold load). Trees are read as raw objects and parsed by
`kernelindex.registry.store_trees`, never through pygit2's entry objects.

The manifest layout is `<kind-folder>/<hh>/<hex>.json`. Commits and refs are `store_revisions`'s; this reader only
turns a commit into its tree. Not thread-safe (libgit2 repositories are not): one per thread, as `GitStore`.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.cat_file import answers, start_batch, widen_pipe
from kernelindex.registry.errors import RevisionNotFound, StoreCorrupt
from kernelindex.registry.git_binding import pygit2
from kernelindex.registry.kinds import KIND_BY_FOLDER, KINDS
from kernelindex.registry.manifest import manifest_path
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_trees import FILE_MODE, TREE_MODE, fan_out_items, parse_tree

__all__ = ["Entry", "ObjectReader", "tree_lookup"]

_BATCH_THRESHOLD = 2048  # from this many blobs on, read them through one `git cat-file --batch`
_SLASH = ord("/")


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


class ObjectReader:
    """Blobs and trees of one repository, and the manifests a commit's tree holds."""

    def __init__(self, repo: pygit2.Repository, git: GitCommand) -> None:
        self._repo = repo
        self._git = git
        self._git_dir = Path(repo.path)
        self._names: dict[tuple[str, str], dict[str, str]] = {}

    def commit(self, commit: str) -> pygit2.Commit:
        try:
            obj = self._repo.get(commit)
        except (ValueError, pygit2.GitError) as exc:
            raise RevisionNotFound(commit) from exc
        if not isinstance(obj, pygit2.Commit):
            raise RevisionNotFound(commit, "not a commit")
        return obj

    def tree_id(self, commit: str) -> str:
        return str(self.commit(commit).tree_id)

    def tree_entries(self, tree: str) -> list[tuple[int, str, str]]:
        """(mode, name, object id) of a tree's entries, read from the raw object: several times
        faster than pygit2's entry objects, which matters when replaying a long history."""
        return parse_tree(self._repo.odb.read(tree)[1])

    def fan_out_names(self, tree: str) -> set[bytes]:
        """The names (as bytes) in a fan-out tree, as fast as the raw object allows: its entries
        are `100644 <64 hex>.json\\0<id>`, all the same size, sliced without a parse loop. Entries
        of other shapes (which no valid registry holds) fall back to a full parse."""
        data = self._repo.odb.read(tree)[1]
        size = 97  # len("100644 ") + 64 + len(".json") + 1 + 20
        if len(data) % size == 0 and data[:7] == b"100644 " and data[size - 21 : size - 20] == b"\0":
            return {data[i + 7 : i + 76] for i in range(0, len(data), size)}
        return {name.encode() for _, name, _ in parse_tree(data)}

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
        return fan_out_items(data)

    def fan_out_trees(self, commit: str, since: tuple[str, Mapping[str, str]] | None = None) -> dict[str, str]:
        """`<kind-folder>/<hh>` -> tree id of every fan-out folder of the manifest folders at `commit`.

        `since`: another commit and this map of it; a folder whose tree is the same in both is
        not read again (a refresh changes two or three of the ~17 folders).

        Raises:
            RevisionNotFound: not a commit of this repository.
        """
        before: dict[str, str] = {}
        if since is not None:
            for mode, folder, folder_tree in self.tree_entries(str(self.commit(since[0]).tree_id)):
                if mode == TREE_MODE and folder in KIND_BY_FOLDER:
                    before[folder] = folder_tree
        kept: set[str] = set()  # folders whose tree did not change: their fan-out trees are as they were
        found: dict[str, str] = {}
        for mode, folder, folder_tree in self.tree_entries(str(self.commit(commit).tree_id)):
            if mode == TREE_MODE and folder in KIND_BY_FOLDER:
                if before.get(folder) == folder_tree:
                    kept.add(folder)
                    continue
                for fan_mode, fan, fan_tree in self.tree_entries(folder_tree):
                    if fan_mode == TREE_MODE:
                        found[folder + "/" + fan] = fan_tree
        if kept:
            assert since is not None
            found.update((key, tree) for key, tree in since[1].items() if key.partition("/")[0] in kept)
        return found

    # Reading manifests ----------------------------------------------------------------------------

    def names_of_kind(self, commit: str, kind: str) -> Mapping[str, str]:
        """`metadata.name` -> digest of the manifests of `kind` at `commit` (one of them where
        upstream data repeats a name). Reads that kind's blobs once per tree; cached."""
        folder_entry = tree_lookup(self.commit(commit).tree, KINDS[kind].folder)
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
        for mode, folder, folder_tree in self.tree_entries(str(self.commit(commit).tree_id)):
            info = KIND_BY_FOLDER.get(folder)
            if info is None or mode != TREE_MODE:
                continue
            kind = info.name
            for fan_mode, _, fan_tree in self.tree_entries(folder_tree):
                if fan_mode != TREE_MODE:
                    continue
                data = self._repo.odb.read(fan_tree)[1]
                if len(data) % 97 == 0 and data[:7] == b"100644 " and data[76:77] == b"\0":
                    # Fan-out trees hold fixed-size entries: slice instead of parsing.
                    for i in range(0, len(data), 97):
                        if data[i : i + 7] == b"100644 " and data[i + 71 : i + 76] == b".json":
                            yield Entry(kind, data[i + 7 : i + 71].decode(), data[i + 77 : i + 97].hex())
                    continue
                for file_mode, name, oid in parse_tree(data):
                    if file_mode == FILE_MODE and name.endswith(".json") and len(name) == 69:
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
        yield from self.cat_file(oids)

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
        env = self._git.env()
        folders = sorted(KIND_BY_FOLDER) if folders is None else sorted(set(folders) & set(KIND_BY_FOLDER))
        if not folders:  # `ls-tree -- ` with no paths would list everything
            return
        lister = subprocess.Popen(
            [*self._git.argv, "ls-tree", "-r", "--format=%(objectname) %(objectmode) %(path)", commit, "--", *folders],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert lister.stdout is not None
        try:
            reader = subprocess.Popen(
                [*self._git.argv, "cat-file", "--buffer", "--batch=%(objectname) %(objecttype) %(objectsize) %(rest)"],
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
        lost = self.missing_blobs(commit, missing) if missing else []
        if lost:
            raise StoreCorrupt(commit, f"{len(lost)} listed blob(s) are missing, e.g. {lost[0]}")

    def missing_blobs(self, commit: str, oids: list[str]) -> list[str]:
        """Which of `oids` (reported missing by cat-file) the tree lists as blobs, not submodules."""
        wanted = set(oids)
        listing = self._git.run("ls-tree", "-r", "--format=%(objecttype) %(objectname) %(path)", commit).stdout
        return sorted(
            f"{path.decode(errors='replace')} ({oid.decode()})"
            for kind, oid, path in (line.split(b" ", 2) for line in listing.splitlines())
            if kind == b"blob" and oid.decode() in wanted
        )

    def cat_file(self, oids: Sequence[str], kind: bytes = b"blob") -> Generator[bytes, None, None]:
        """The bytes of many objects of `kind`, in order, each given as soon as one `git cat-file
        --batch` has read it: a thread feeds git the ids while git answers (pipes are small), and
        the caller works on one object while git inflates the next.

        Raises:
            StoreCorrupt: an object is missing or of another type, or git's answer ends early.
        """
        process = start_batch(self._git_dir)
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
        tree = self.commit(commit).tree
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
            entry = self.commit(commit).tree[path]
        except KeyError:
            return None
        return str(entry.id), int(entry.filemode)

    def read_document(self, commit: str, digest: str, kinds: Collection[str] | None = None) -> dict[str, Any] | None:
        entry = self.find_entry(commit, digest, kinds)
        if entry is None:
            return None
        return orjson.loads(self.read_blob(entry.oid))  # type: ignore[no-any-return]

    # Diffs ----------------------------------------------------------------------------------------

    def tree_data(self, tree: str) -> bytes:
        try:
            kind, data = self._repo.odb.read(tree)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise StoreCorrupt(tree, f"cannot read the tree: {exc}") from None
        if kind != pygit2.enums.ObjectType.TREE:
            raise StoreCorrupt(tree, "not a tree")
        return data

    def tree_size(self, tree: str) -> int | None:
        """The size of a tree object from its header alone (git's header read of a packed tree: ~13 us), or None
        when it cannot be read."""
        try:
            return int(self._repo.odb.read_header(tree)[1])
        except (KeyError, ValueError, pygit2.GitError):
            return None


def tree_lookup(tree: Any, path: str) -> Any:
    """The entry at `path` of a pygit2 tree (None for no tree, or no such path)."""
    if tree is None:
        return None
    try:
        return tree[path]
    except KeyError:
        return None

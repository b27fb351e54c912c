"""TreeDiffer: what differs between two trees of a manifests repository, as `git diff-tree -r --no-renames` says it.

The walk descends only into subtrees whose ids differ, so its cost grows with the change, not with the registry.
A server that knows what the old tree holds (its graph) passes guesses, and a changed fan-out tree is then read on
the new side only, the guess proven by hashing (`TreeDiffer.diff`). Trees come from a `TreeSource`: the store's
object reader, or any function of an id to a raw tree (the differ's own tests build trees in memory).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field

from kernelindex.registry.cat_file import CatFile
from kernelindex.registry.errors import StoreCorrupt
from kernelindex.registry.kinds import KIND_BY_FOLDER
from kernelindex.registry.store_trees import FAN_ITEM, TREE_MODE, fan_out_shaped, tree_entry, tree_hash, tree_items

__all__ = ["FanOutMoves", "TreeChange", "TreeDiffer", "TreeSource"]

_TREE_BATCH = 24  # from this many fan-out trees on, one `git cat-file` reads them (it costs a process)


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
class TreeSource:
    """Where a differ reads trees. `tree`: the raw object of one tree, checked to be a tree (raises
    `StoreCorrupt` otherwise). `tree_size`: a tree's size in bytes from its header, or None when unknown.
    `stream`: many raw objects of a type, in order, each given as soon as it is read (one `git cat-file`
    started for them); unchecked, the differ hashes each tree against its id."""

    tree: Callable[[str], bytes]
    tree_size: Callable[[str], int | None]
    stream: Callable[[Sequence[str], bytes], Generator[bytes, None, None]]


class TreeDiffer:
    """Tree diffs over one `TreeSource`."""

    def __init__(self, source: TreeSource) -> None:
        self._source = source

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
        """Every path that differs between two trees (`old` None: the empty tree), descending only into subtrees
        whose ids differ: the cost grows with the change, not with the registry.

        Reports blobs, symlinks and submodules alike (the PR check needs to see all of them), as
        `git diff-tree -r --no-renames` does and in its order (trees by name, a subtree as if its
        name ended in `/`), with modes as git reads them (`100664` is `100644`).

        `absent`, when given, says which of some digests the old tree probably does not hold
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
            StoreCorrupt: a tree cannot be read.
        """
        found: list[TreeChange | int] = []
        pending: list[tuple[str, str, str]] = []  # fan-out trees to compare on the new side, in order
        self._diff_trees(old, new, "", found, pending if absent is not None else None)
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
                yield self._source.tree(tree)
            return
        read = self._source.stream(trees, b"tree") if reader is None else reader.read(trees, b"tree")
        with contextlib.closing(read):  # left early (a tree that does not hash): git need not answer the rest
            for tree, data in zip(trees, read, strict=True):
                if tree_hash(data) != tree:
                    raise StoreCorrupt(tree, "the tree does not hash to its id")
                yield data

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
        before = tree_items(self._source.tree(old)) if old is not None else frozenset()
        after = tree_items(self._source.tree(new)) if new is not None else frozenset()
        gone = {entry[0]: entry for entry in map(tree_entry, before - after)}
        came = {entry[0]: entry for entry in map(tree_entry, after - before)}
        for key in sorted(gone.keys() | came.keys()):
            was, now = gone.get(key), came.get(key)
            _, mode, name, _ = now or was  # type: ignore[misc]
            path = prefix + name
            if mode == TREE_MODE:
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
        count, rest = divmod(len(data), FAN_ITEM)
        if rest:
            return None
        listed = None if held is None else held(prefix[:-1])
        if listed is not None:
            # The old tree's size as the list says: the proof below hashes the old tree's length too,
            # so a list of the wrong size fails it (git's header read of a packed tree: ~13 us a tree).
            before = len(listed) * FAN_ITEM
        else:
            size = self._source.tree_size(old)
            if size is None:
                return None
            before = size
        # Additions only: the new tree holds this many more entries, each `absent` from the old one.
        wanted, extra = divmod(len(data) - before, FAN_ITEM)
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
        if len(added) != wanted or not fan_out_shaped(data, added[-1] // FAN_ITEM + 1):
            return None
        kept = []
        position = 0
        for start in added:
            kept.append(data[position:start])
            position = start + FAN_ITEM
        kept.append(data[position:])
        body = b"".join(kept)
        if tree_hash(body) != old:
            return None
        changes: list[TreeChange | int] = []
        for start in added:
            _, mode, name, oid = tree_entry(data[start : start + FAN_ITEM])
            changes.append(TreeChange(prefix + name, None, oid, mode))
        return changes

    # Writing --------------------------------------------------------------------------------------


def _absent_by_asking(text: str, count: int, wanted: int, absent: Callable[[list[str]], Collection[str]]) -> list[int]:
    """Where the entries of a fan-out tree (its raw object as latin-1) that `absent` names start,
    asking about a few at a time and stopping once `wanted` are found."""
    starts = range(0, count * FAN_ITEM, FAN_ITEM)
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
            at = middle * FAN_ITEM
            if middle - shift < known and held[middle - shift] == "sha256:" + data[at + 7 : at + 71].decode("latin-1"):
                low = middle + 1
            else:
                high = middle
        if low == count:
            break
        added.append(low * FAN_ITEM)
        start = low + 1
    return added

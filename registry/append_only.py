"""Append-only history: main's first-parent history never modified or deleted a published file.

A file is published once a first-parent commit of main holds it, and published files never
change (a correction is a new manifest). The pull-request check refuses edits in a change; this
checks a history as it is, for what no change check saw: a server's first start on a main whose
head (or any commit before it) edited a published manifest in place, deleted or moved one, or
merged a branch that did (a merge's tree is compared with its first parent's).

Each first-parent commit is compared with its parent one subtree at a time, skipping subtrees
whose ids are equal, and comparing changed ones as sets of raw entries: the cost follows what
the history touched. Only `policy/maintainers` may change (`kernelindex.registry.trust` judges how).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelindex.registry.signatures import POLICY_PATH
from kernelindex.registry.store import GitStore

__all__ = ["Violation", "first_violation"]

_TREE = b"40000"
_MAX_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Violation:
    """The first commit of main's first-parent history that modified or deleted a published file."""

    commit: str
    parent: str  # the last commit before it: the newest whose history is append-only
    behind: int  # how many first-parent commits it is before the head (0: the head itself)
    changes: tuple[str, ...]  # what it did, one line a path, at most a few

    def __str__(self) -> str:
        where = "the head of main" if self.behind == 0 else f"{self.behind} commit(s) before the head of main"
        shown = "; ".join(self.changes)
        return (
            f"commit {self.commit[:12]} ({where}) {shown}: published files never change or go away "
            "(a correction is a new manifest)"
        )


def first_violation(store: GitStore, base: str | None, head: str) -> Violation | None:
    """The oldest first-parent commit after `base` (None: from the root) up to `head` that modified
    or deleted a published file, or None when that history is append-only.

    Raises:
        RevisionNotFound, StoreCorrupt: a commit or tree of the history cannot be read.
    """
    chain = store.first_parents(head, stop=base)  # newest first
    for index in range(len(chain) - 1, 0, -1):
        commit, parent = chain[index - 1], chain[index]
        changes = _changes(store, store.tree_id(parent), store.tree_id(commit), "")
        if changes:
            return Violation(commit, parent, index - 1, tuple(changes[:_MAX_SHOWN]))
    return None


def _changes(store: GitStore, before: str, after: str, prefix: str) -> list[str]:
    """What the tree `after` modified or deleted of the tree `before` (paths under `prefix`)."""
    if before == after:
        return []
    old, new = store.tree_items(before), store.tree_items(after)
    gone = old - new
    if not gone:
        return []  # only additions
    now = {_name(item): item for item in new}
    found: list[str] = []
    for item in sorted(gone, key=_name):
        name = _name(item)
        path = prefix + name
        if path == POLICY_PATH:
            continue
        replaced = now.get(name)
        if _mode(item) == _TREE:
            if replaced is not None and _mode(replaced) == _TREE:
                found.extend(_changes(store, item[-20:].hex(), replaced[-20:].hex(), path + "/"))
            else:
                found.extend(f"deleted {file}" for file in _files(store, item[-20:].hex(), path + "/"))
        elif replaced is None:
            found.append(f"deleted {path}")
        elif _mode(replaced) != _mode(item):
            found.append(f"changed the mode or type of {path}")
        else:
            found.append(f"edited {path} in place")
        if len(found) >= _MAX_SHOWN:
            break
    return found


def _files(store: GitStore, tree: str, prefix: str) -> list[str]:
    """A few of the files under a tree (the first ones, depth first): what a deleted folder held."""
    found: list[str] = []
    for item in sorted(store.tree_items(tree), key=_name):
        path = prefix + _name(item)
        if _mode(item) == _TREE:
            found.extend(_files(store, item[-20:].hex(), path + "/"))
        elif path != POLICY_PATH:
            found.append(path)
        if len(found) >= _MAX_SHOWN:
            return found[:_MAX_SHOWN]
    return found


def _name(item: bytes) -> str:
    return item[item.index(b" ") + 1 : -21].decode(errors="replace")


def _mode(item: bytes) -> bytes:
    return item[: item.index(b" ")]

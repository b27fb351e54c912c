"""`store_trees`: raw git trees parsed as git parses them. Every expected value comes from git itself (`git mktree`,
`git ls-tree`, `git hash-object`), never from the parser."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kernelindex.registry.store_trees import (
    FAN_ITEM,
    canonical_mode,
    fan_out_items,
    fan_out_shaped,
    parse_tree,
    tree_entry,
    tree_hash,
    tree_items,
)


@pytest.fixture
def git_dir(tmp_path: Path) -> Path:
    path = tmp_path / "trees.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    return path


def _git(git_dir: Path, *args: str, stdin: bytes = b"") -> bytes:
    env = {**os.environ, "GIT_DIR": str(git_dir)}
    return subprocess.run(["git", *args], input=stdin, capture_output=True, env=env, check=True).stdout


def _blob(git_dir: Path, text: str) -> str:
    return _git(git_dir, "hash-object", "-w", "--stdin", stdin=text.encode()).decode().strip()


def _mktree(git_dir: Path, entries: list[tuple[str, str, str, str]]) -> tuple[str, bytes]:
    """A tree made by `git mktree` from (mode, type, id, name), and its raw bytes as git stores them."""
    listing = "".join(f"{mode} {kind} {oid}\t{name}\n" for mode, kind, oid, name in entries)
    tree = _git(git_dir, "mktree", "--missing", stdin=listing.encode()).decode().strip()
    return tree, _git(git_dir, "cat-file", "tree", tree)


def _ls_tree(git_dir: Path, tree: str) -> list[tuple[int, str, str]]:
    """(mode, name, id) of each entry as `git ls-tree` lists them, in git's order."""
    found = []
    for line in _git(git_dir, "ls-tree", "-z", tree).split(b"\0"):
        if line:
            info, name = line.split(b"\t", 1)
            mode, _, oid = info.split(b" ")
            found.append((int(mode, 8), name.decode(), oid.decode()))
    return found


def _fan_out(git_dir: Path, count: int) -> tuple[str, bytes]:
    names = sorted(f"0a{index:062x}.json" for index in range(count))
    return _mktree(git_dir, [("100644", "blob", _blob(git_dir, name), name) for name in names])


def test_a_tree_parses_as_git_lists_it(git_dir: Path) -> None:
    blob = _blob(git_dir, "content")
    sub, _ = _mktree(git_dir, [("100644", "blob", blob, "inner.json")])
    tree, data = _mktree(
        git_dir,
        [
            ("100644", "blob", blob, "a.json"),
            ("100755", "blob", blob, "run.sh"),
            ("120000", "blob", blob, "link"),
            ("040000", "tree", sub, "a"),
            ("160000", "commit", "1" * 40, "module"),
            ("100644", "blob", blob, "ünïcode.json"),
        ],
    )
    expected = _ls_tree(git_dir, tree)
    assert parse_tree(data) == expected
    assert [tree_entry(item)[1:] for item in sorted(tree_items(data), key=lambda i: tree_entry(i)[0])] == expected
    assert tree_hash(data) == tree  # git's id of those bytes
    assert parse_tree(b"") == [] and tree_items(b"") == frozenset()


def test_entries_sort_as_git_sorts_them_a_subtree_as_if_its_name_ended_in_a_slash(git_dir: Path) -> None:
    """`a` (a tree) sorts after `a.json` and `a-b`, before `a0`: as `a/`. git's order is the independent one."""
    blob = _blob(git_dir, "x")
    sub, _ = _mktree(git_dir, [("100644", "blob", blob, "f")])
    tree, data = _mktree(
        git_dir,
        [
            ("040000", "tree", sub, "a"),
            ("100644", "blob", blob, "a.json"),
            ("100644", "blob", blob, "a-b"),
            ("100644", "blob", blob, "a0"),
        ],
    )
    listed = [name for _, name, _ in _ls_tree(git_dir, tree)]
    assert listed == ["a-b", "a.json", "a", "a0"]
    assert [entry[2] for entry in sorted(map(tree_entry, tree_items(data)))] == listed


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (0o100644, 0o100644),
        (0o100664, 0o100644),  # group-writable: still a plain file (git's canon_mode)
        (0o100600, 0o100644),
        (0o100755, 0o100755),
        (0o100744, 0o100755),  # the owner's execute bit alone decides
        (0o100711, 0o100755),
        (0o100655, 0o100644),  # others' execute bits do not
        (0o120000, 0o120000),
        (0o040000, 0o040000),
        (0o160000, 0o160000),
        (0o060000, 0o160000),  # neither file, link nor tree: a gitlink
    ],
)
def test_modes_are_read_as_git_reads_them(stored: int, read: int) -> None:
    assert canonical_mode(stored) == read


def test_fan_out_trees_are_sliced_as_a_parse_would_read_them(git_dir: Path) -> None:
    _, data = _fan_out(git_dir, 5)
    assert len(data) == 5 * FAN_ITEM  # the fixed size of a manifest entry, as git stores it
    assert fan_out_items(data) == tree_items(data)
    blob = _blob(git_dir, "x")
    _, odd = _mktree(git_dir, [("100644", "blob", blob, "0a" + "1" * 62 + ".json"), ("100644", "blob", blob, "a")])
    assert fan_out_items(odd) == tree_items(odd)  # not all of the fixed size: parsed


def test_the_fan_out_shape_is_proven_up_to_the_count_and_no_further(git_dir: Path) -> None:
    """`fan_out_shaped(data, n)`: the first n entries are manifest entries. At the tree's own count it holds; one
    more than the tree holds does not."""
    _, data = _fan_out(git_dir, 4)
    assert fan_out_shaped(data, 4)
    assert not fan_out_shaped(data, 5)
    blob = _blob(git_dir, "x")
    last = "0a" + "f" * 62 + ".json"
    names = sorted(f"0a{index:062x}.json" for index in range(3))
    _, executable = _mktree(
        git_dir, [("100644", "blob", _blob(git_dir, n), n) for n in names] + [("100755", "blob", blob, last)]
    )
    assert fan_out_shaped(executable, 3)
    assert not fan_out_shaped(executable, 4)  # the fourth is 100755: 97 bytes, but not a manifest entry

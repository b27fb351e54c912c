"""`TreeDiffer` alone: trees handed over by a `TreeSource` of plain functions over raw objects held in memory, no
store in between. git's own `diff-tree` over the same objects is the expected answer."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Collection, Generator, Mapping, Sequence
from pathlib import Path

import pygit2
import pytest

from kernelindex.registry.errors import StoreCorrupt
from kernelindex.registry.store_diff import FanOutMoves, TreeChange, TreeDiffer, TreeSource

_BATCH = 24  # the differ's documented switch: from this many changed fan-out trees on, one stream reads them


class _Trees:
    """Raw trees by id, read out of a real repository once; the source records which way each was read."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self.one_by_one: list[str] = []
        self.streams: list[list[str]] = []
        self.forged: dict[str, bytes] = {}  # what the stream hands over instead of the real object

    def tree(self, oid: str) -> bytes:
        self.one_by_one.append(oid)
        kind, data = self._repo.odb.read(oid)
        if kind != pygit2.enums.ObjectType.TREE:
            raise StoreCorrupt(oid, "not a tree")
        return bytes(data)

    def tree_size(self, oid: str) -> int | None:
        return len(self._repo.odb.read(oid)[1])

    def stream(self, oids: Sequence[str], kind: bytes) -> Generator[bytes, None, None]:
        assert kind == b"tree"
        self.streams.append(list(oids))
        for oid in oids:
            yield self.forged.get(oid) or bytes(self._repo.odb.read(oid)[1])

    def source(self) -> TreeSource:
        return TreeSource(self.tree, self.tree_size, self.stream)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "diff.git"), bare=True)


def _hex(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def _tree(repo: pygit2.Repository, entries: Mapping[str, tuple[int, pygit2.Oid]]) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    for name, (mode, oid) in entries.items():
        builder.insert(name, oid, mode)
    return builder.write()


def _registry(repo: pygit2.Repository, fans: dict[str, range]) -> str:
    """A root tree with `benchmark-runs/<hh>/<64 hex>.json` for each fan and its numbered manifests."""
    blob, tree = pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.TREE
    folder = {
        fan: (tree, _tree(repo, {fan + _hex(n)[2:] + ".json": (blob, repo.create_blob(f"m{n}")) for n in numbers}))
        for fan, numbers in fans.items()
    }
    readme = repo.create_blob("readme")
    return str(_tree(repo, {"benchmark-runs": (tree, _tree(repo, folder)), "README.md": (blob, readme)}))


def _git_diff(repo: pygit2.Repository, old: str, new: str) -> list[TreeChange]:
    out = subprocess.run(
        ["git", "--git-dir", repo.path, "diff-tree", "-r", "-z", "--no-renames", "--full-index", old, new],
        capture_output=True,
        check=True,
    ).stdout
    fields = out.split(b"\0")
    changes = []
    for index in range(0, len(fields) - 1, 2):
        old_mode, new_mode, old_id, new_id, _ = fields[index][1:].split(b" ")
        was = None if old_id == b"0" * 40 else old_id.decode()
        now = None if new_id == b"0" * 40 else new_id.decode()
        before, after = int(old_mode, 8), int(new_mode, 8)
        path = fields[index + 1].decode()
        changes.append(TreeChange(path, was, now, after if now is not None else before, before if was else None))
    return changes


def _fans(count: int) -> list[str]:
    return [f"{index:02x}" for index in range(count)]


def _grown(repo: pygit2.Repository, changed: int) -> tuple[str, str, set[str]]:
    """Two roots with 30 fan-out trees; in the second, `changed` of them hold one manifest more."""
    before = {fan: range(index * 10, index * 10 + 3) for index, fan in enumerate(_fans(30))}
    after = {
        fan: range(numbers.start, numbers.stop + (1 if index < changed else 0))
        for index, (fan, numbers) in enumerate(before.items())
    }
    added = {"sha256:" + fan + _hex(numbers.stop - 1)[2:] for fan, numbers in list(after.items())[:changed]}
    return _registry(repo, before), _registry(repo, after), added


def test_the_differ_alone_says_what_git_says(repo: pygit2.Repository) -> None:
    old, new, added = _grown(repo, 5)
    trees = _Trees(repo)
    differ = TreeDiffer(trees.source())
    expected = _git_diff(repo, old, new)
    assert [c.status for c in expected] == ["added"] * 5
    assert differ.diff(old, new) == expected
    assert differ.diff(new, old) == _git_diff(repo, new, old)
    guessed = differ.diff(old, new, absent=lambda digests: [d for d in digests if d in added])
    assert guessed == expected
    assert differ.diff(old, new, absent=lambda digests: digests) == expected  # a wrong guess: the full comparison
    everything = differ.diff(None, new)  # from the empty tree
    assert {c.path for c in everything} == {
        c.path for c in _git_diff(repo, "4b825dc642cb6eb9a060e54bf8d69288fbee4904", new)
    }


def test_changed_fan_out_trees_are_read_one_by_one_below_the_batch_and_streamed_from_it(
    repo: pygit2.Repository,
) -> None:
    for changed, streamed in ((_BATCH - 1, False), (_BATCH, True)):
        old, new, added = _grown(repo, changed)
        trees = _Trees(repo)
        moves = FanOutMoves()

        def absent(digests: list[str], added: set[str] = added) -> Collection[str]:
            return [d for d in digests if d in added]

        found = TreeDiffer(trees.source()).diff(old, new, absent=absent, moves=moves)
        assert found == _git_diff(repo, old, new)
        assert len(found) == changed
        assert [len(s) for s in trees.streams] == ([changed] if streamed else [])
        assert len(moves.moved) == changed and moves.complete


def test_a_streamed_tree_that_does_not_hash_to_its_id_is_refused(repo: pygit2.Repository) -> None:
    old, new, added = _grown(repo, _BATCH)
    trees = _Trees(repo)
    first = _git_diff(repo, old, new)[0].path.rsplit("/", 1)[0]
    changed = repo.revparse_single(f"{new}:{first}").id
    trees.forged[str(changed)] = bytes(repo.odb.read(repo.revparse_single(f"{old}:{first}").id)[1])
    with pytest.raises(StoreCorrupt, match="does not hash to its id"):
        TreeDiffer(trees.source()).diff(old, new, absent=lambda digests: [d for d in digests if d in added])

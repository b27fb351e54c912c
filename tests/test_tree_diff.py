"""`GitStore.diff` reads trees in process: it must say what `git diff-tree -r --no-renames` says, in
the same order, for every shape of change (files, links, submodules, subtrees, a file that becomes a
folder, modes git reads as another), and a guess of what was added (`absent`, or the old commit's
fan-out folders as listed by `held`) may only ever make it faster: a wrong or partial guess gives the
same answer as none.

The expected answers come from git itself, run on the same two trees."""

from __future__ import annotations

import hashlib
import random
import subprocess
from collections.abc import Callable, Collection, Sequence

import pygit2
import pytest

from kernelindex import registry
from kernelindex.registry.cat_file import CatFile
from kernelindex.registry.errors import StoreCorrupt
from kernelindex.registry.kinds import KIND_BY_FOLDER
from kernelindex.registry.store import FanOutMoves, TreeChange

_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_SIGNATURE = pygit2.Signature("Test", "test@example.com", 1_700_000_000, 0)


def _git_diff(store: registry.GitStore, old: str | None, new: str) -> list[TreeChange]:
    """git's own answer, parsed the way the store read it before it diffed in process."""
    trees = [store.tree_id(c) if c else _EMPTY_TREE for c in (old, new)]
    output = subprocess.run(
        [
            "git",
            "--git-dir",
            str(store.git_dir),
            "diff-tree",
            "-r",
            "--raw",
            "-z",
            "--no-renames",
            "--full-index",
            *trees,
        ],
        capture_output=True,
        check=True,
    ).stdout
    fields = output.split(b"\0")
    changes = []
    for index in range(0, len(fields) - 1, 2):
        old_mode, new_mode, old_id, new_id, _ = fields[index][1:].split(b" ")
        path = fields[index + 1].decode("utf-8", errors="surrogateescape")
        was = None if old_id == b"0" * 40 else old_id.decode()
        now = None if new_id == b"0" * 40 else new_id.decode()
        before, after = int(old_mode, 8), int(new_mode, 8)
        changes.append(TreeChange(path, was, now, after if now is not None else before, before if was else None))
    return changes


def _blob(repo: pygit2.Repository, text: str) -> bytes:
    return repo.odb.write(pygit2.enums.ObjectType.BLOB, text.encode()).raw


def _tree(repo: pygit2.Repository, entries: dict[str, tuple[str, bytes]]) -> bytes:
    """A raw tree object from name -> (octal mode as git writes it, 20-byte id), in git's order."""

    def key(name: str) -> bytes:
        return name.encode() + (b"/" if entries[name][0] == "40000" else b"")

    raw = b"".join(
        entries[name][0].encode() + b" " + name.encode() + b"\0" + entries[name][1] for name in sorted(entries, key=key)
    )
    return repo.odb.write(pygit2.enums.ObjectType.TREE, raw).raw


def _commit(repo: pygit2.Repository, tree: bytes) -> str:
    return str(repo.create_commit(None, _SIGNATURE, _SIGNATURE, "test", pygit2.Oid(raw=tree), []))


def _hex(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def _fan_out(
    repo: pygit2.Repository, numbers: Collection[int], fan: str, extra: dict[str, tuple[str, bytes]] | None = None
) -> bytes:
    """A fan-out tree `<fan>/` of manifest-shaped files (names forced into the fan-out)."""
    entries = {fan + _hex(n)[2:] + ".json": ("100644", _blob(repo, f"manifest {n}")) for n in numbers}
    entries.update(extra or {})
    return _tree(repo, entries)


def _fans(repo: pygit2.Repository, fans: dict[str, bytes]) -> bytes:
    """A manifest folder's tree: fan-out folder name -> its tree's raw id."""
    return _tree(repo, {fan: ("40000", tree) for fan, tree in fans.items()})


def _root(
    repo: pygit2.Repository, folders: dict[str, dict[str, bytes]], extra: dict[str, tuple[str, bytes]] | None = None
) -> str:
    """A commit of manifest folders (folder -> its fan-out trees) and `extra` entries beside them."""
    entries = {folder: ("40000", _fans(repo, fans)) for folder, fans in folders.items()}
    return _commit(repo, _tree(repo, {**entries, **(extra or {})}))


def _both(store: registry.GitStore, old: str | None, new: str) -> list[TreeChange]:
    """The in-process answer, checked against git's with every kind of guess of what was added."""
    expected = _git_diff(store, old, new)
    assert store.diff(old, new) == expected
    added = {"sha256:" + c.path.rsplit("/", 1)[1][:-5] for c in expected if c.old is None and c.path.endswith(".json")}
    rng = random.Random(len(expected))
    guesses: list[Callable[[list[str]], Collection[str]]] = [
        lambda digests: [d for d in digests if d in added],  # right
        lambda digests: digests,  # everything is new
        lambda digests: [],  # nothing is new
        lambda digests: [d for d in digests if d in added or rng.random() < 0.3],  # too much
        lambda digests: [d for d in digests if d in added and rng.random() < 0.5],  # too little
    ]
    for guess in guesses:
        assert store.diff(old, new, absent=guess) == expected
    listed = _listed(store, old)
    extra = sorted("sha256:" + _hex(n) for n in range(1000, 1040))
    helds: list[Callable[[str], Sequence[str] | None]] = [
        lambda folder: listed.get(folder, []),  # right
        lambda folder: None,  # not known: `absent` is asked
        lambda folder: [],  # nothing held
        lambda folder: sorted([*listed.get(folder, []), *(d for d in extra if d[7:9] == folder[-2:])]),  # too much
        lambda folder: sorted([*listed.get(folder, []), *extra]),  # too much, in no fan-out of theirs
        lambda folder: [d for d in listed.get(folder, []) if rng.random() < 0.7],  # too little
        lambda folder: listed.get(folder, [])[::-1],  # out of order
        lambda folder: sorted(added),  # the new ones
    ]
    for held in helds:
        assert store.diff(old, new, absent=guesses[0], held=held) == expected
        assert store.diff(old, new, absent=guesses[1], held=held) == expected
    # Told of each changed fan-out folder's changes as they are known: those of both sides' folders.
    arrived: list[TreeChange] = []
    assert store.diff(old, new, absent=guesses[0], held=helds[0], arrived=arrived.extend) == expected
    in_both = _folders(store, old) & _folders(store, new)
    assert arrived == [c for c in expected if c.path.count("/") >= 2 and _folder(c.path) in in_both]
    # What it says of the fan-out trees, when it says it is all: the new commit's map, as listed afresh.
    moves = FanOutMoves()
    assert store.diff(old, new, absent=guesses[0], held=helds[0], moves=moves) == expected
    if old is not None and moves.complete:
        assert {**store.fan_out_trees(old), **moves.moved} == store.fan_out_trees(new)
    return expected


def _folder(path: str) -> str:
    return "/".join(path.split("/")[:2])


def _folders(store: registry.GitStore, commit: str | None) -> set[str]:
    """`<kind-folder>/<hh>` of every tree two levels down in a manifest folder at `commit`."""
    if commit is None:
        return set()
    names = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "ls-tree", "-r", "-d", "-z", "--name-only", commit],
        capture_output=True,
        check=True,
    ).stdout
    paths = names.decode(errors="surrogateescape").split("\0")
    return {path for path in paths if path.count("/") == 1 and path.split("/")[0] in KIND_BY_FOLDER}


def _listed(store: registry.GitStore, commit: str | None) -> dict[str, list[str]]:
    """`<folder>/<hh>` -> the sorted digests of the `.json` files in it at `commit` (what a graph holds)."""
    if commit is None:
        return {}
    names = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "ls-tree", "-r", "-z", "--name-only", commit],
        capture_output=True,
        check=True,
    ).stdout
    found: dict[str, list[str]] = {}
    for path in names.decode(errors="surrogateescape").split("\0"):
        parts = path.split("/")
        if len(parts) == 3 and parts[2].endswith(".json") and len(parts[2]) == 69:
            found.setdefault(parts[0] + "/" + parts[1], []).append("sha256:" + parts[2][:-5])
    return {folder: sorted(digests) for folder, digests in found.items()}


@pytest.fixture
def repo(store: registry.GitStore) -> pygit2.Repository:
    return pygit2.Repository(str(store.git_dir))


def _tree_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The trees the store reads through libgit2 from now on (`GitStore._tree_data`), in order."""
    read: list[str] = []
    original = registry.GitStore._tree_data

    def counting(self: registry.GitStore, tree: str) -> bytes:
        read.append(tree)
        return original(self, tree)

    monkeypatch.setattr(registry.GitStore, "_tree_data", counting)
    return read


def test_additions_to_fan_out_trees_are_found_from_the_new_side(
    store: registry.GitStore, repo: pygit2.Repository
) -> None:
    def root(runs: dict[str, bytes], impls: dict[str, bytes]) -> str:
        folders = {
            "benchmark-runs": ("40000", _tree(repo, {fan: ("40000", tree) for fan, tree in runs.items()})),
            "implementation-revisions": ("40000", _tree(repo, {fan: ("40000", tree) for fan, tree in impls.items()})),
            "README.md": ("100644", _blob(repo, "readme")),
        }
        return _commit(repo, _tree(repo, folders))

    before = root(
        {"0a": _fan_out(repo, range(20), "0a"), "1b": _fan_out(repo, range(5), "1b")}, {"22": _fan_out(repo, [1], "22")}
    )
    after = root(
        {"0a": _fan_out(repo, range(25), "0a"), "1b": _fan_out(repo, range(5), "1b"), "3c": _fan_out(repo, [7], "3c")},
        {"22": _fan_out(repo, [1, 2], "22")},
    )
    changes = _both(store, before, after)
    assert [c.status for c in changes] == ["added"] * 7
    assert _both(store, None, after)  # from nothing: everything is added
    assert [c.status for c in _both(store, after, before)] == ["deleted"] * 7


def test_edits_deletions_and_odd_entries_in_fan_out_trees(store: registry.GitStore, repo: pygit2.Repository) -> None:
    def root(fan: bytes) -> str:
        return _commit(repo, _tree(repo, {"benchmark-runs": ("40000", _tree(repo, {"0a": ("40000", fan)}))}))

    base = root(_fan_out(repo, range(10), "0a"))
    edited = {"0a" + _hex(3)[2:] + ".json": ("100644", _blob(repo, "edited"))}
    cases = [
        _fan_out(repo, [*range(10), 11], "0a", edited),  # an addition and an edit
        _fan_out(repo, [*range(1, 10), 11], "0a"),  # an addition and a deletion
        _fan_out(repo, range(12), "0a", {"0a" + _hex(4)[2:] + ".json": ("100755", _blob(repo, "manifest 4"))}),
        _fan_out(repo, range(12), "0a", {"notes.txt": ("100644", _blob(repo, "hi"))}),  # not a manifest name
        _fan_out(repo, range(12), "0a", {"0a" + _hex(99)[2:] + ".json": ("120000", _blob(repo, "target"))}),
        _fan_out(repo, range(12), "0a", {"sub": ("40000", _fan_out(repo, [5], "0a"))}),
        _fan_out(repo, range(12), "0a", {"0a" + _hex(98)[2:] + ".json": ("100664", _blob(repo, "group"))}),
    ]
    for fan in cases:
        new = root(fan)
        assert _both(store, base, new)
        assert _both(store, new, base)


def test_odd_entries_around_the_additions_in_both_trees(
    store: registry.GitStore, repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries a fan-out tree should not hold, in the old tree and the new alike: after the last
    addition they are the same bytes in both, and the additions are still found from the new side
    alone; before an addition they send the diff to the full comparison. Either way, git's answer."""

    def root(fan: bytes) -> str:
        return _commit(repo, _tree(repo, {"benchmark-runs": ("40000", _tree(repo, {"0a": ("40000", fan)}))}))

    last = "0a" + "f" * 62 + ".json"  # sorts after every other manifest name of the folder
    odd = [
        {last: ("100755", _blob(repo, "executable"))},  # 97 bytes, but not a 100644 entry
        {last: ("120000", _blob(repo, "a link"))},
        {"notes.txt": ("100644", _blob(repo, "hi")), "sub": ("40000", _fan_out(repo, [5], "0a"))},
        {"0-notes.txt": ("100644", _blob(repo, "hi"))},  # sorts before every manifest name
        {"0a" + "0" * 62 + ".json": ("100755", _blob(repo, "first"))},
    ]
    read = _tree_reads(monkeypatch)
    for extra in odd:
        old_fan = _fan_out(repo, range(10), "0a", extra)
        base, new = root(old_fan), root(_fan_out(repo, range(13), "0a", extra))
        assert [c.status for c in _both(store, base, new)] == ["added"] * 3
        assert _both(store, new, base)
        read.clear()
        listed = _listed(store, base)

        def held(folder: str, listed: dict[str, list[str]] = listed) -> list[str]:
            return listed.get(folder, [])

        assert store.diff(base, new, absent=lambda d: d, held=held) == _git_diff(store, base, new)
        # Found from the new side alone when the odd entries all follow the additions and are listed
        # as the old tree's (the old tree's size is then the list's).
        if extra is odd[0] or extra is odd[1]:
            assert old_fan.hex() not in read


def test_every_shape_of_change_outside_the_layout(store: registry.GitStore, repo: pygit2.Repository) -> None:
    blob, other = _blob(repo, "one"), _blob(repo, "two")
    submodule = bytes.fromhex(_hex(1)[:40])
    inner = _tree(repo, {"x": ("100644", blob), "y": ("100755", other)})
    before = _commit(
        repo,
        _tree(
            repo,
            {
                "a": ("100644", blob),  # becomes a folder
                "a-b": ("100644", blob),
                "b": ("40000", inner),  # becomes a file
                "c": ("100644", blob),  # mode only
                "d": ("100664", blob),  # git reads 100644: no change when written as such
                "e": ("120000", blob),  # a link that becomes a file
                "f": ("160000", submodule),  # a submodule that moves
                "g": ("40000", _tree(repo, {"deep": ("40000", inner)})),
                "removed": ("40000", inner),
            },
        ),
    )
    after = _commit(
        repo,
        _tree(
            repo,
            {
                "a": ("40000", inner),
                "a-b": ("100644", other),
                "b": ("100644", other),
                "c": ("100755", blob),
                "d": ("100644", blob),
                "e": ("100644", blob),
                "f": ("160000", bytes.fromhex(_hex(2)[:40])),
                "g": ("40000", _tree(repo, {"deep": ("40000", _tree(repo, {"x": ("100644", other)}))})),
                "new": ("40000", inner),
                "ünïcode name": ("100644", blob),
            },
        ),
    )
    assert len(_both(store, before, after)) > 10
    assert _both(store, after, before)
    assert _both(store, before, before) == []


def test_a_tree_that_is_not_there_is_a_corrupt_store(store: registry.GitStore, repo: pygit2.Repository) -> None:
    missing = bytes.fromhex(_hex(3)[:40])
    broken = _commit(repo, _tree(repo, {"benchmark-runs": ("40000", missing)}))
    fine = _commit(repo, _tree(repo, {"README.md": ("100644", _blob(repo, "x"))}))
    with pytest.raises(StoreCorrupt):
        store.diff(fine, broken)
    not_a_tree = _commit(repo, _tree(repo, {"benchmark-runs": ("40000", _blob(repo, "a blob"))}))
    with pytest.raises(StoreCorrupt):
        store.diff(fine, not_a_tree)


def test_with_a_right_guess_the_old_fan_out_trees_are_not_read(
    store: registry.GitStore, repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    def root(fans: dict[str, bytes]) -> str:
        runs = _tree(repo, {fan: ("40000", tree) for fan, tree in fans.items()})
        return _commit(repo, _tree(repo, {"benchmark-runs": ("40000", runs)}))

    old_fans = {"0a": _fan_out(repo, range(30), "0a"), "1b": _fan_out(repo, range(3), "1b")}
    before = root(old_fans)
    after = root({"0a": _fan_out(repo, range(32), "0a"), "1b": _fan_out(repo, range(4), "1b")})
    read = _tree_reads(monkeypatch)
    expected = _git_diff(store, before, after)
    added = {"sha256:" + c.path.rsplit("/", 1)[1][:-5] for c in expected}
    assert store.diff(before, after, absent=lambda digests: [d for d in digests if d in added]) == expected
    assert not {tree.hex() for tree in old_fans.values()} & set(read)
    read.clear()

    def unasked(digests: list[str]) -> list[str]:
        raise AssertionError("with the old folders listed, no digest is asked about")

    listed = _listed(store, before)
    assert store.diff(before, after, absent=unasked, held=lambda folder: listed[folder]) == expected
    assert not {tree.hex() for tree in old_fans.values()} & set(read)
    read.clear()
    assert store.diff(before, after) == expected  # without a guess, both sides are read
    assert {tree.hex() for tree in old_fans.values()} <= set(read)


def test_many_fan_out_trees_at_once(store: registry.GitStore, repo: pygit2.Repository) -> None:
    """Past a few dozen changed fan-out trees, git reads the new ones in one process."""

    def root(grow: int) -> str:
        fans = {
            f"{n:02x}": _fan_out(repo, range(n * 100, n * 100 + 20 + grow * (n % 3)), f"{n:02x}") for n in range(40)
        }
        runs = _tree(repo, {fan: ("40000", tree) for fan, tree in fans.items()})
        return _commit(repo, _tree(repo, {"benchmark-runs": ("40000", runs)}))

    before, after = root(0), root(2)
    changes = _both(store, before, after)
    assert len(changes) == 2 * sum(1 for n in range(40) if n % 3 == 1) + 4 * sum(1 for n in range(40) if n % 3 == 2)
    assert _both(store, after, before)
    kept = CatFile(store.git_dir)  # a server's git, kept between its refreshes: the same answers
    listed = _listed(store, before)
    for _ in range(2):
        assert store.diff(before, after, absent=lambda d: d, held=lambda f: listed.get(f, []), trees=kept) == changes
    kept.close()


def test_a_missing_tree_among_many_is_a_corrupt_store(store: registry.GitStore, repo: pygit2.Repository) -> None:
    """The new fan-out trees stream from one git process: one that is not there (past those it read
    first) stops the diff with the store's error, as a tree read in process does."""

    def root(missing: int | None) -> str:
        fans = {f"{n:02x}": _fan_out(repo, range(n * 100, n * 100 + 20 + (n != 0)), f"{n:02x}") for n in range(40)}
        if missing is not None:
            fans[f"{missing:02x}"] = bytes.fromhex(_hex(missing)[:40])
        runs = _tree(repo, {fan: ("40000", tree) for fan, tree in fans.items()})
        return _commit(repo, _tree(repo, {"benchmark-runs": ("40000", runs)}))

    before = _commit(
        repo,
        _tree(
            repo,
            {
                "benchmark-runs": (
                    "40000",
                    _tree(
                        repo,
                        {
                            f"{n:02x}": ("40000", _fan_out(repo, range(n * 100, n * 100 + 20), f"{n:02x}"))
                            for n in range(40)
                        },
                    ),
                )
            },
        ),
    )
    assert len(store.diff(before, root(None), absent=lambda digests: digests)) == 39
    kept = CatFile(store.git_dir)
    for missing in (1, 30):
        with pytest.raises(StoreCorrupt, match="cannot read the tree"):
            store.diff(before, root(missing), absent=lambda digests: digests)
        with pytest.raises(StoreCorrupt, match="cannot read the tree"):
            store.diff(before, root(missing), absent=lambda digests: digests, trees=kept)
        assert len(store.diff(before, root(None), absent=lambda digests: digests, trees=kept)) == 39
    kept.close()


def test_fan_out_trees_from_those_of_another_commit(store: registry.GitStore, repo: pygit2.Repository) -> None:
    """A refresh reads again only the folders whose tree changed: the same map as reading them all."""
    runs = {"0a": _fan_out(repo, range(3), "0a"), "1b": _fan_out(repo, [4], "1b")}
    impls = {"22": _fan_out(repo, [5], "22")}
    commits = [
        _root(repo, {"benchmark-runs": runs, "implementation-revisions": impls}),
        _root(
            repo, {"benchmark-runs": {**runs, "0a": _fan_out(repo, range(4), "0a")}, "implementation-revisions": impls}
        ),
        _root(repo, {"benchmark-runs": runs}),  # a folder gone
        _root(repo, {"benchmark-runs": runs, "verifications": {"33": _fan_out(repo, [6], "33")}}),  # a folder new
        _root(repo, {"benchmark-runs": runs}, {"README.md": ("100644", _blob(repo, "x"))}),
    ]
    for old in commits:
        for new in commits:
            expected = store.fan_out_trees(new)
            assert store.fan_out_trees(new, (old, store.fan_out_trees(old))) == expected


def test_the_fan_out_trees_a_diff_saw_change(store: registry.GitStore, repo: pygit2.Repository) -> None:
    """A refresh takes the new map of fan-out trees from its diff when the diff saw every change: only
    when files changed inside fan-out trees both commits hold. Any other shape must say it is not all."""
    runs = {"0a": _fan_out(repo, range(3), "0a"), "1b": _fan_out(repo, [4], "1b")}
    impls = {"22": _fan_out(repo, [5], "22")}
    base = _root(repo, {"benchmark-runs": runs, "implementation-revisions": impls})
    grown_0a, grown_22 = _fan_out(repo, range(4), "0a"), _fan_out(repo, [5, 6], "22")
    a_file = ("100644", _blob(repo, "x"))
    runs_and_a_file = _tree(repo, {**{fan: ("40000", tree) for fan, tree in runs.items()}, "x": a_file})
    cases: list[tuple[str, str, dict[str, str] | None]] = [  # (what, new commit, the moves when complete)
        ("nothing", base, {}),
        (
            "a file outside the manifest folders",
            _root(repo, {"benchmark-runs": runs, "implementation-revisions": impls}, {"README.md": a_file}),
            {},
        ),
        (
            "additions in two fan-out trees",
            _root(repo, {"benchmark-runs": {**runs, "0a": grown_0a}, "implementation-revisions": {"22": grown_22}}),
            {"benchmark-runs/0a": grown_0a.hex(), "implementation-revisions/22": grown_22.hex()},
        ),
        (
            "a fan-out tree new",
            _root(
                repo, {"benchmark-runs": {**runs, "3c": _fan_out(repo, [7], "3c")}, "implementation-revisions": impls}
            ),
            None,
        ),
        (
            "a fan-out tree gone",
            _root(repo, {"benchmark-runs": {"0a": runs["0a"]}, "implementation-revisions": impls}),
            None,
        ),
        (
            "a fan-out tree now a file",
            _root(repo, {"benchmark-runs": runs}, {"implementation-revisions": ("40000", _tree(repo, {"22": a_file}))}),
            None,
        ),
        (
            "a file beside the fan-out trees",
            _root(repo, {"implementation-revisions": impls}, {"benchmark-runs": ("40000", runs_and_a_file)}),
            None,
        ),
        ("a folder gone", _root(repo, {"benchmark-runs": runs}), None),
        (
            "a folder new",
            _root(
                repo,
                {
                    "benchmark-runs": runs,
                    "implementation-revisions": impls,
                    "verifications": {"33": _fan_out(repo, [6], "33")},
                },
            ),
            None,
        ),
        ("a folder now a file", _root(repo, {"benchmark-runs": runs}, {"implementation-revisions": a_file}), None),
    ]
    for what, new, expected in cases:
        moves = FanOutMoves()
        store.diff(base, new, absent=lambda digests: digests, held=lambda folder: None, moves=moves)
        assert moves.complete == (expected is not None), what
        if expected is not None:
            assert moves.moved == expected, what
            assert {**store.fan_out_trees(base), **moves.moved} == store.fan_out_trees(new), what

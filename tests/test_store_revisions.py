"""`Revisions` alone: what a revision names, how commits relate and what each commit added, as git's own
`rev-parse`, `rev-list`, `merge-base` and `log` say it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from kernelindex.registry.errors import RevisionNotFound
from kernelindex.registry.git_binding import open_repository
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_objects import ObjectReader
from kernelindex.registry.store_revisions import Revisions

_SIGNATURE = pygit2.Signature("Test", "test@example.com", 1_700_000_000, 0)
_NAME = "ab" + "1" * 62


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "revisions.git"), bare=True, initial_head="main")


def _revisions(repo: pygit2.Repository) -> Revisions:
    git_dir = Path(repo.path)
    opened, git = open_repository(str(git_dir)), GitCommand(git_dir)
    return Revisions(opened, git, ObjectReader(opened, git))


def _git(repo: pygit2.Repository, *args: str) -> str:
    env = {**os.environ, "GIT_DIR": repo.path}
    return subprocess.run(["git", *args], capture_output=True, env=env, check=True, text=True).stdout.strip()


def _commit(repo: pygit2.Repository, ref: str | None, files: dict[str, str], parents: list[str]) -> str:
    index = pygit2.Index()
    for path, text in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(text), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    oids = [pygit2.Oid(hex=p) for p in parents]
    return str(repo.create_commit(ref, _SIGNATURE, _SIGNATURE, f"{len(files)} files", tree, oids))


@pytest.fixture
def history(repo: pygit2.Repository) -> dict[str, str]:
    """root -> left -> merge (first parent left, second right), right off root; a tag on right."""
    manifest = f"benchmark-runs/ab/{_NAME}.json"
    root = _commit(repo, None, {"README.md": "hi"}, [])
    left = _commit(repo, None, {"README.md": "hi", manifest: "{}"}, [root])
    right = _commit(repo, "refs/heads/right", {"README.md": "bye"}, [root])
    merge = _commit(repo, "refs/heads/main", {"README.md": "bye", manifest: "{}"}, [left, right])
    repo.references.create("refs/tags/v1", right)
    return {"root": root, "left": left, "right": right, "merge": merge}


def test_revisions_resolve_as_git_rev_parse_does(repo: pygit2.Repository, history: dict[str, str]) -> None:
    revisions = _revisions(repo)
    for rev in ("main", "right", "v1", "refs/heads/main", history["left"], history["left"][:7]):
        assert revisions.resolve(rev) == _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}")
    for bad in ("no-such-branch", "-main", "main~1", "a" * 40, "abc"):
        with pytest.raises(RevisionNotFound):
            revisions.resolve(bad)
    tree = _git(repo, "rev-parse", "main^{tree}")
    with pytest.raises(RevisionNotFound, match="not a commit"):
        revisions.resolve(tree)
    assert revisions.head() == history["merge"] and revisions.head("refs/heads/nope") is None
    assert revisions.current_branch() == "refs/heads/main"
    assert revisions.branches() == {
        "refs/heads/main": history["merge"],
        "refs/heads/right": history["right"],
        "refs/tags/v1": history["right"],
    }


def test_commits_relate_as_git_says(repo: pygit2.Repository, history: dict[str, str]) -> None:
    revisions = _revisions(repo)
    merge, left, right, root = history["merge"], history["left"], history["right"], history["root"]
    assert revisions.first_parents(merge) == _git(repo, "rev-list", "--first-parent", merge).split()
    assert revisions.first_parents(merge, stop=left) == [merge, left]
    assert (
        revisions.commits_between(right, merge)
        == _git(repo, "rev-list", "--topo-order", "--reverse", f"{right}..{merge}").split()
    )
    assert revisions.merge_base(left, right) == _git(repo, "merge-base", left, right) == root
    assert revisions.is_ancestor(root, merge) and revisions.is_ancestor(merge, merge)
    assert not revisions.is_ancestor(merge, root)
    assert not revisions.is_ancestor("0" * 40, merge)


def test_added_manifest_names_follow_the_first_parent_history(repo: pygit2.Repository, history: dict[str, str]) -> None:
    """The merge adds nothing to its first parent (left already has the file); left adds it to root."""
    added = _revisions(repo).added_manifest_names(history["merge"])
    assert {commit: names for commit, names in added.items() if names} == {history["left"]: [_NAME]}
    assert history["right"] not in added  # off the first-parent history
    info = _revisions(repo).commit_info(history["merge"])
    assert info.parents == (history["left"], history["right"])
    assert info.author.name == "Test" and info.message == "2 files"

"""Revisions: the refs and commits of a manifests repository, read.

What a revision names (`resolve`), where branches point, how commits relate (ancestry, merge bases, first-parent
chains), who made a commit and why (`commit_info`), and which manifest files each commit of a history added
(`added_manifest_names`, one `git log` for a whole history). Moving a ref is `store_refs`'s job, never this one's.
"""

from __future__ import annotations

import re
from typing import Any

from kernelindex.registry.errors import RevisionNotFound, StoreCorrupt
from kernelindex.registry.git_binding import pygit2
from kernelindex.registry.kinds import KIND_BY_FOLDER
from kernelindex.registry.provenance import CommitInfo, Person, parse_trailers
from kernelindex.registry.store_git import GitCommand
from kernelindex.registry.store_objects import ObjectReader

__all__ = ["MAIN", "Revisions"]

MAIN = "refs/heads/main"
_PULL_HEAD = re.compile(r"refs/pull/[0-9]+/head")  # a forge's pull request (registry/mirror.py fetches them)
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


class Revisions:
    """Refs and commits of one repository (its objects read through `objects`)."""

    def __init__(self, repo: pygit2.Repository, git: GitCommand, objects: ObjectReader) -> None:
        self._repo = repo
        self._git = git
        self._objects = objects

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
            obj = self._objects.commit(current)
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
        result = self._git.run_to_file(
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
        obj = self._objects.commit(commit)
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


def _person(signature: pygit2.Signature) -> Person:
    return Person(signature.name, signature.email, signature.time, signature.offset)

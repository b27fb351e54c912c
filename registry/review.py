"""The check of a range of commits (base..head): the pull-request check, and what a server runs on
a new head of main before serving it.

Everything wrong is reported at once, each problem with the path it concerns:
- only additions of regular files under a manifest folder, at `<folder>/<hh>/<hex>.json`
  (no edit, delete, rename, mode change, symlink, submodule, file outside the layout);
- each file a valid manifest of the folder's kind, whose digest is its name;
- the set of additions consistent with base (`validate.check_additions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from registry.errors import InvalidManifest, Problem
from registry.kinds import KIND_BY_FOLDER
from registry.manifest import Manifest, load_manifest
from registry.parse import MAX_DOCUMENT_BYTES
from registry.store import GitStore, TreeChange
from registry.validate import check_additions

__all__ = ["MAX_FILES", "RangeReport", "check_range"]

MAX_FILES = 10_000
"""More files than this in one change is refused: split the pull request (bulk imports are commits
made by the importer, not pull requests)."""

_MANIFEST_PATH = re.compile(r"([a-z-]+)/([0-9a-f]{2})/([0-9a-f]{64})\.json")
_REGULAR = 0o100644


@dataclass(frozen=True, slots=True)
class RangeReport:
    base: str | None
    head: str
    added: tuple[Manifest, ...]
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_range(
    store: GitStore,
    base: str | None,
    head: str,
    *,
    max_files: int = MAX_FILES,
    allowed_paths: frozenset[str] = frozenset(),
) -> RangeReport:
    """Every problem with moving a registry from `base` to `head` (commit ids).

    `allowed_paths` are non-manifest files the caller judges itself (the maintainers policy).
    """
    changes = store.diff(base, head)
    problems: list[Problem] = []
    if len(changes) > max_files:
        problems.append(Problem(head, "", f"{len(changes):,} changed files; at most {max_files:,} in one change"))
    additions: list[tuple[str, Manifest]] = []
    for change in changes[: max_files + 1]:
        problem = _shape_problem(change, allowed_paths)
        if problem:
            problems.append(Problem(change.path, "", problem))
            continue
        if change.path in allowed_paths:
            continue
        assert change.new is not None
        data = store.read_blob(change.new)
        if len(data) > MAX_DOCUMENT_BYTES:
            problems.append(Problem(change.path, "", f"{len(data):,} bytes; the limit is {MAX_DOCUMENT_BYTES:,}"))
            continue
        try:
            manifest = load_manifest(data, change.path, "json")
        except InvalidManifest as exc:
            problems.extend(exc.problems)
            continue
        if manifest.path != change.path:
            problems.append(
                Problem(
                    change.path,
                    "",
                    f"a {manifest.kind} with digest {manifest.digest} belongs at {manifest.path}",
                )
            )
            continue
        if manifest.stored_bytes() != data:
            problems.append(
                Problem(
                    change.path,
                    "",
                    "not in the stored form (sorted keys, 2-space indent, normalized values, trailing "
                    "newline); write it with `kernelindex add`",
                )
            )
            continue
        additions.append((change.path, manifest))
    problems.extend(check_additions(additions, _AtCommit(store, base)))
    return RangeReport(base, head, tuple(m for _, m in additions), tuple(problems))


def _shape_problem(change: TreeChange, allowed_paths: frozenset[str]) -> str | None:
    if change.status == "deleted":
        return "deleted: published files never change (a correction is a new manifest)"
    if change.status == "modified":
        return "modified: published files never change (a correction is a new manifest)"
    if change.mode == 0o120000:
        return "a symbolic link: only regular files may be added"
    if change.mode == 0o160000:
        return "a submodule: only regular files may be added"
    if change.mode != _REGULAR:
        return f"file mode {change.mode:o}: manifests are regular, non-executable files (100644)"
    if change.path in allowed_paths:
        return None
    match = _MANIFEST_PATH.fullmatch(change.path)
    if not match or match.group(1) not in KIND_BY_FOLDER:
        return "outside the layout: manifests live at <kind-folder>/<hh>/<sha256-hex>.json"
    if match.group(2) != match.group(3)[:2]:
        return f"in the wrong fan-out folder: expected {match.group(1)}/{match.group(3)[:2]}/"
    return None


class _AtCommit:
    def __init__(self, store: GitStore, commit: str | None) -> None:
        self._store = store
        self._commit = commit

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, object] | None:
        if self._commit is None:
            return None
        return self._store.read_document(self._commit, digest, kinds)

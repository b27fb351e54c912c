"""The check of a range of commits (base..head): the pull-request check, and what a server runs on
a new head of main before serving it.

Everything wrong is reported at once, each problem with the path it concerns:
- only additions of regular files under a manifest folder, at `<folder>/<hh>/<hex>.json`
  (no edit, delete, rename, mode change, symlink, submodule, file outside the layout);
- each file a valid manifest of the folder's kind, in the stored form, whose digest is its name;
- the additions judged against base as every other door judges them (`validate.check_additions`: the
  stored form within 1 MiB, references resolve, one operation per run, a verification reruns in the same
  cohort, names free, nothing published overwritten: an edit of a published file that is the same manifest
  under other metadata is refused as `add` refuses it, with its message);
- overlays that need a maintainer (Retraction, Supersession, Verification) added only by
  commits signed by a maintainer of the policy in force at base; a change to
  `policy/maintainers` only as `kernelindex.registry.trust` allows (never the first policy, never by a
  stranger, removals by two maintainers); commits that claim a registered source signed too;
- the repository's own files (`kernelindex.registry.repofiles`: `.github/`, README, licence...) may be added,
  changed or deleted, each change named in the report, and only by commits signed by a maintainer
  of the policy in force at base, as a policy change.
- each commit a new contribution may hold (`provenance.commit_problems`): a `Source-URL` that is an
  http(s) link, and no character XML cannot carry in its message or people.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kernelindex.registry.errors import InvalidManifest, Problem, RegistryError
from kernelindex.registry.kinds import KIND_BY_FOLDER, KINDS
from kernelindex.registry.manifest import Manifest, load_manifest, stored_manifest
from kernelindex.registry.present import with_article
from kernelindex.registry.provenance import commit_problems
from kernelindex.registry.repofiles import is_repository_file
from kernelindex.registry.signatures import POLICY_PATH
from kernelindex.registry.store import GitStore, TreeChange
from kernelindex.registry.trust import TrustChain, parse_policy
from kernelindex.registry.validate import AtCommit, Existing, check_additions, stored_size_problem

__all__ = ["MAX_FILES", "RangeReport", "RepositoryFileChange", "check_range"]

MAX_FILES = 10_000
"""More files than this in one change is refused: split the pull request (bulk imports are commits
made by the importer, not pull requests)."""

_MANIFEST_PATH = re.compile(r"([a-z-]+)/([0-9a-f]{2})/([0-9a-f]{64})\.json")
_REGULAR = 0o100644
_EXECUTABLE = 0o100755
_OPEN_SOURCE = "community"
_SIGNED_FOLDERS = frozenset(info.folder for info in KINDS.values() if info.signed)


@dataclass(frozen=True, slots=True)
class RepositoryFileChange:
    """A change to one of the repository's own files (`kernelindex.registry.repofiles`), which only a maintainer may
    make.

    `signed_by` is the maintainer whose signed commits made every change to it in the range; None when
    signatures were not checked, or a commit was not signed by a maintainer (then a problem says so)."""

    path: str
    status: str  # added, modified, deleted, mode-changed
    signed_by: str | None = None


@dataclass(frozen=True, slots=True)
class RangeReport:
    base: str | None
    head: str
    added: tuple[Manifest, ...]
    problems: tuple[Problem, ...]
    commits: int = 0
    repository_files: tuple[RepositoryFileChange, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def check_range(
    store: GitStore,
    base: str | None,
    head: str,
    *,
    max_files: int = MAX_FILES,
    signatures: bool = True,
    changes: list[TreeChange] | None = None,
    existing: Existing | None = None,
    trust_root: bytes | None = None,
    chain: TrustChain | None = None,
    blobs: dict[str, bytes] | None = None,
    stored: Mapping[str, Manifest | None] | None = None,
) -> RangeReport:
    """Every problem with moving a registry from `base` to `head` (commit ids).

    With `signatures`, overlays, policy changes and claims of a registered source must come
    from commits signed by maintainers of the policy in force at base (from `trust_root`, the
    operator's pinned policy, or the registry's initial commit: see `kernelindex.registry.trust`); without,
    they are accepted as they stand (a local registry).
    `changes` is `store.diff(base, head)` and `existing` a view of base, when the caller has them;
    `blobs`, when given, gets the bytes of each file read, by blob id (for a caller that reads them next),
    and may hold some already; `stored`: what `stored_manifest` made of some of those bytes, by blob id
    (a server makes it while the diff still reads trees: `GitStore.diff(arrived=)`).
    """
    changes = store.diff(base, head) if changes is None else changes
    problems: list[Problem] = []
    if len(changes) > max_files:
        problems.append(Problem(head, "", f"{len(changes):,} changed files; at most {max_files:,} in one change"))
        changes = changes[:max_files]
    renamed = _renames(changes)
    additions: list[tuple[str, Manifest]] = []
    repository_files: dict[str, str] = {}
    sizes: dict[str, int] = {}
    edited: set[str] = set()  # published files a change edits: judged as additions, never reported as added
    for change in changes:
        problem = _shape_problem(change, renamed)
        edit = bool(problem) and change.status == "modified" and _MANIFEST_PATH.fullmatch(change.path) is not None
        if problem and not edit:
            problems.append(Problem(change.path, "", problem))
            continue
        if is_repository_file(change.path):
            repository_files[change.path] = change.status
            continue
        if change.path == POLICY_PATH:
            if change.new is not None and not signatures:
                problems.extend(_policy_file_problems(store.read_blob(change.new)))
            continue
        assert change.new is not None
        data = blobs.get(change.new) if blobs is not None else None
        if data is None:
            data = store.read_blob(change.new)
            if blobs is not None:
                blobs[change.new] = data
        too_big = stored_size_problem(change.path, len(data))  # unread: the file is the stored form, or refused
        if too_big is not None:
            problems.append(too_big)
            continue
        # Most additions are in the stored form, which proves much of what load_manifest checks.
        manifest = (
            stored[change.new] if stored is not None and change.new in stored else stored_manifest(data, change.path)
        )
        in_stored_form = manifest is not None
        if manifest is None:
            try:
                manifest = load_manifest(data, change.path, "json")
            except InvalidManifest as exc:
                problems.extend([Problem(change.path, "", str(problem))] if edit else exc.problems)
                continue
        if edit and (manifest.path != change.path or (not in_stored_form and manifest.stored_bytes() != data)):
            problems.append(Problem(change.path, "", str(problem)))
            continue
        # An edit that is the published manifest under other metadata (another name: names are not in the
        # digest) goes on to `check_additions`, which refuses it as `kernelindex add` and `validate` do.
        if manifest.path != change.path:
            problems.append(
                Problem(
                    change.path,
                    "",
                    f"{with_article(manifest.kind)} with digest {manifest.digest} belongs at {manifest.path}",
                )
            )
            continue
        if not in_stored_form and manifest.stored_bytes() != data:
            problems.append(
                Problem(
                    change.path,
                    "",
                    "not in the stored form (sorted keys, 2-space indent, normalized values, trailing "
                    "newline); write it with `kernelindex add`",
                )
            )
            continue
        sizes[change.path] = len(data)
        additions.append((change.path, manifest))
        if edit:
            edited.add(change.path)
    problems.extend(check_additions(additions, existing or AtCommit(store, base), stored_sizes=sizes))
    commits = store.commits_between(base, head)
    signers: dict[str, str | None] = {}
    for commit in commits:
        info = store.commit_info(commit)
        people = {"author": info.author, "committer": info.committer}
        problems.extend(commit_problems(f"commit {commit[:12]}", [("message", info.message)], info.trailers, people))
    if signatures:
        chain = chain or TrustChain(store, trust_root)
        problems.extend(_unsigned_changes(store, base, head, commits, chain, signers))
    named = tuple(
        RepositoryFileChange(path, status, signers.get(path)) for path, status in sorted(repository_files.items())
    )
    added = tuple(m for path, m in additions if path not in edited)
    return RangeReport(base, head, added, tuple(problems), len(commits), named)


def _policy_file_problems(data: bytes) -> list[Problem]:
    try:
        parse_policy(data)
    except RegistryError as exc:
        return [Problem(POLICY_PATH, "", str(exc))]
    return []


def _renames(changes: list[TreeChange]) -> dict[str, str]:
    """Added path -> deleted path, for blobs that moved."""
    deleted = {change.old: change.path for change in changes if change.status == "deleted"}
    return {
        change.path: deleted[change.new] for change in changes if change.status == "added" and change.new in deleted
    }


def _shape_problem(change: TreeChange, renamed: dict[str, str]) -> str | None:
    if change.path == POLICY_PATH and change.status in ("modified", "deleted", "added"):
        return None if change.new is None or change.mode == _REGULAR else "the policy must be a regular file (100644)"
    if is_repository_file(change.path):
        # The repository's own files change over time (a README is edited); a maintainer signs for each.
        if change.new is None or change.mode in (_REGULAR, _EXECUTABLE):
            return None
        return f"file mode {change.mode:o}: a repository file is a regular file (100644, or 100755 for a script)"
    if change.status == "deleted":
        return "deleted: published files never change (a correction is a new manifest)"
    if change.status == "modified":
        return "modified: published files never change (a correction is a new manifest)"
    if change.status == "mode-changed":
        return f"mode changed from {change.old_mode or 0:o} to {change.mode:o}: published files never change"
    if change.path in renamed:
        return f"renamed from {renamed[change.path]}: published files never move"
    if change.mode == 0o120000:
        return "a symbolic link: only regular files may be added"
    if change.mode == 0o160000:
        return "a submodule: only regular files may be added"
    if change.mode != _REGULAR:
        return f"file mode {change.mode:o}: manifests are regular, non-executable files (100644)"
    if change.path == POLICY_PATH:
        return None
    match = _MANIFEST_PATH.fullmatch(change.path)
    if not match or match.group(1) not in KIND_BY_FOLDER:
        return "outside the layout: manifests live at <kind-folder>/<hh>/<sha256-hex>.json"
    if match.group(2) != match.group(3)[:2]:
        return f"in the wrong fan-out folder: expected {match.group(1)}/{match.group(3)[:2]}/"
    return None


def _unsigned_changes(
    store: GitStore,
    base: str | None,
    head: str,
    commits: list[str],
    chain: TrustChain,
    signers: dict[str, str | None],
) -> list[Problem]:
    """The maintainers' acts in the range must come from maintainers of the policy in force at base:
    overlays and changes to the repository's own files from commits they signed (`signers` gets who
    signed for each repository file, or None), a policy change as `TrustChain.judge` says, and commits
    that claim a registered source's name (`Source:` of main's history) signed too."""
    problems: list[Problem] = []
    before = chain.policy_after(base) if base is not None else chain.pinned_root
    if base is None:
        # A whole history: its initial commit is the root (unless one is pinned); judge each change on it.
        for commit in store.first_parents(head)[::-1]:
            change = chain.change(commit)
            if change is not None and not change.accepted:
                problems.append(Problem(POLICY_PATH, "", f"commit {commit[:12]}: {change.reason}"))
    elif chain.policy_blob(base) != chain.policy_blob(head):
        change = chain.judge(before, base, head)
        if not change.accepted:
            problems.append(Problem(POLICY_PATH, "", change.reason))
    registered = _registered_sources(store, base)
    for commit in commits:
        info = store.commit_info(commit)
        parent = info.parents[0] if info.parents else None
        commit_changes = store.diff(parent, commit)
        overlays = [
            change.path
            for change in commit_changes
            if change.path.split("/", 1)[0] in _SIGNED_FOLDERS and change.new is not None
        ]
        # A whole history's root commit is the operator's, like the first policy: its own files stand.
        own = (
            [c.path for c in commit_changes if is_repository_file(c.path)]
            if parent is not None or base is not None
            else []
        )
        source = info.trailer("Source")
        claims = source is not None and source in registered
        if not overlays and not claims and not own:
            continue
        verdict = chain.verify(commit, before) if base is not None else chain.verify(commit)
        for path in own:
            signer = verdict.signer if verdict.verified else None
            signers[path] = signer if signers.get(path, signer) == signer else None
        if verdict.verified:
            continue
        why = verdict.reason or "not signed"
        problems.extend(
            Problem(
                path,
                "",
                "a repository file (not a manifest); a change to it needs a commit signed by a maintainer listed in "
                f"the {POLICY_PATH} in force, as a policy change does; commit {commit[:12]}: {why}",
            )
            for path in own
        )
        problems.extend(
            Problem(
                path,
                "",
                f"an overlay needs a commit signed by a maintainer listed in the {POLICY_PATH} in force; "
                f"commit {commit[:12]}: {why}",
            )
            for path in overlays
        )
        if claims:
            problems.append(
                Problem(
                    f"commit {commit[:12]}",
                    "Source",
                    f"claims the registered source {source!r}, whose data only maintainers publish; the commit is "
                    f"not signed by one ({why}). A contribution says `Source: community`",
                )
            )
    return problems


def _registered_sources(store: GitStore, base: str | None) -> frozenset[str]:
    """The sources main's history already publishes under (`Source:` trailers), except `community`."""
    if base is None:
        return frozenset()
    found = {store.commit_info(commit).trailer("Source") for commit in store.first_parents(base)}
    return frozenset(s for s in found if s and s != _OPEN_SOURCE)

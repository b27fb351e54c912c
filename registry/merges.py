"""Whose trailers speak for what a merge commit of main publishes: the commits it brings in.

main's first-parent history is the publication record, and a maintainer merges a pull request with a merge
commit, so the commit that publishes a contributor's manifest is the merge, whose message (GitHub's "Merge pull
request #N ...") carries no trailers. The contributor's commit that added the manifest carries them (`Source:
community`, `License:` ...). So a merge that names no `Source:` of its own speaks through the commits it brings in
(reachable from it, not from its first parent): for one manifest, the earliest of them that holds it; for the
commit as a whole (the graph's one source per commit of main), the one `Source:` they agree on. Every reader of
provenance goes through here (the graph's sources, a manifest's `provenance`, `kernelindex show` and `log`), so
they answer alike (`show` once said `source: unknown` for a run committed with `Source: community`).
"""

from __future__ import annotations

from kernelindex.registry.provenance import CommitInfo
from kernelindex.registry.store import GitStore

__all__ = ["brought_in", "introducing_commit", "publication_source"]


def _speaks_for_itself(info: CommitInfo) -> bool:
    return len(info.parents) < 2 or info.trailer("Source") is not None


def brought_in(store: GitStore, info: CommitInfo) -> list[str]:
    """The commits a merge brings into main (reachable from it, not from its first parent), oldest first, the merge
    itself left out; none for a commit with one parent."""
    if len(info.parents) < 2:
        return []
    return [commit for commit in store.commits_between(info.parents[0], info.id) if commit != info.id]


def publication_source(store: GitStore, info: CommitInfo) -> str | None:
    """The `Source:` a commit of main publishes under: its own; for a merge that names none, the one the commits it
    brings in agree on (None when they name none, or several)."""
    if _speaks_for_itself(info):
        return info.trailer("Source")
    named = {store.commit_info(commit).trailer("Source") for commit in brought_in(store, info)} - {None}
    return named.pop() if len(named) == 1 else None


def introducing_commit(store: GitStore, info: CommitInfo, digest: str) -> CommitInfo:
    """The commit whose trailers speak for the manifest `digest` that `info` (a commit of main) published: `info`
    itself, unless it is a merge that names no `Source:`; then the earliest commit it brings in that holds the
    manifest (`info` when none does, as for a manifest the merge itself added)."""
    if _speaks_for_itself(info):
        return info
    for commit in brought_in(store, info):
        if store.find_entry(commit, digest) is not None:
            return store.commit_info(commit)
    return info

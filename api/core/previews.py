"""Which pinned commits are published, and which previews may be served (a preview is a commit a pull
request proposes: served only once it passes the same check a merge would).

A commit in the history of the served head of main is published: an answer pinned to its full id
can never change (main only moves forward; the server refuses a rewritten one). Any other commit a
branch or tag reaches is a preview: main can still change its answer (a merge publishes its runs),
so it revalidates, and it is served only if it passes the pull-request check
(`kernelindex.registry.review.check_range` from its merge base with main, signatures required), else refused
with the check's report (`PREVIEW_REJECTED`). Verdicts are kept per (commit, merge base).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from kernelindex import registry
from kernelindex.registry.review import check_range
from kernelindex.registry.snapshots import Snapshots

__all__ = ["MAX_PROBLEMS", "PreviewRejected", "Previews"]

MAX_PROBLEMS = 20
"""Problems named in a refusal (the count says how many more)."""


class PreviewRejected(registry.RegistryError, ValueError):
    """A preview of a commit that fails the pull-request check."""

    def __init__(self, commit: str, base: str | None, problems: tuple[registry.Problem, ...]) -> None:
        self.commit = commit
        self.base = base
        self.problems = problems
        shown = "; ".join(str(p) for p in problems[:MAX_PROBLEMS])
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        against = f"its merge base {base[:12]} with main" if base else "an empty registry (no common history)"
        super().__init__(
            f"preview refused: {commit[:12]} fails the pull-request check against {against}: {shown}{more}"
        )
        # graphql-core copies an original error's `extensions` into the GraphQL error.
        self.extensions = {
            "commit": commit,
            "base": base,
            "problems": [{"file": p.source, "path": p.path, "reason": p.reason} for p in problems[:MAX_PROBLEMS]],
        }


class Previews:
    """Publication of pinned commits and the verdicts on previews, for one server."""

    def __init__(self, snapshots: Snapshots, capacity: int = 4096) -> None:
        self._snapshots = snapshots
        self._capacity = capacity
        self._lock = threading.Lock()
        self._published: OrderedDict[str, None] = OrderedDict()  # once in main's history, always
        self._verdicts: OrderedDict[tuple[str, str | None], tuple[registry.Problem, ...]] = OrderedDict()
        self.checks = 0  # pull-request checks run (each verdict is kept: a commit's never changes)

    def published(self, commit: str, head: str) -> bool:
        """Whether `commit` is in the history of `head` (the served head of main)."""
        if commit == head:
            return True
        with self._lock:
            if commit in self._published:
                self._published.move_to_end(commit)
                return True
        if not self._snapshots.store().is_ancestor(commit, head):
            return False  # not yet: main may still merge it, so this is never remembered
        with self._lock:
            self._published[commit] = None
            while len(self._published) > self._capacity:
                self._published.popitem(last=False)
        return True

    def check(self, commit: str, head: str) -> None:
        """Refuse a preview of `commit` that fails the pull-request check against main's `head`.

        Raises:
            PreviewRejected: with the check's problems.
        """
        store = self._snapshots.store()
        base = store.merge_base(head, commit)
        key = (commit, base)
        with self._lock:
            problems = self._verdicts.get(key)
            if problems is not None:
                self._verdicts.move_to_end(key)
        if problems is None:
            problems = check_range(store, base, commit, signatures=True, trust_root=self._snapshots.trust_root).problems
            with self._lock:
                self.checks += 1
                self._verdicts[key] = problems
                while len(self._verdicts) > self._capacity:
                    self._verdicts.popitem(last=False)
        if problems:
            raise PreviewRejected(commit, base, problems)

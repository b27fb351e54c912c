"""The pull-request check with its report, as `kernelindex validate --base --head --format text|markdown|json`
prints it (and `kernelindex import ... --branch` at its end): the problems, the repository's own files the
change touches (`kernelindex.registry.repofiles`), then what the change would do at merge
(`kernelindex.registry.report`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelindex import registry
from kernelindex.registry.report import PullRequestReport, pull_request_report, to_json, to_markdown
from kernelindex.registry.review import RangeReport, RepositoryFileChange, check_range

__all__ = ["RangeOutcome", "code_span", "range_report", "repository_files_text"]

_BACKTICKS = re.compile(r"`+")
_OWN_FILES = "not manifests: only a commit signed by a maintainer of the policy in force may change them"


def code_span(text: str) -> str:
    """`text` as a Markdown code span that shows it literally, whatever it holds (a path in a pull request is
    the contributor's): control characters as JSON escapes, and a fence of one backtick more than the longest
    run in it, padded with a space, which CommonMark's code spans (spec 6.1) read back as the text itself.

    >>> print(code_span("README.md"), code_span("a`b"), code_span("x\\n| y"))
    ` README.md ` `` a`b `` ` x\\n| y `
    """
    shown = json.dumps(text, ensure_ascii=False)[1:-1]
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(shown)), default=0) + 1)
    return f"{fence} {shown} {fence}"


def _signer(change: RepositoryFileChange) -> str:
    return change.signed_by or "no maintainer's signature"


def repository_files_text(changes: Sequence[RepositoryFileChange]) -> list[str]:
    """The repository's own files a change touches, as plain lines (empty when it touches none)."""
    if not changes:
        return []
    lines = ["", f"Repository files ({_OWN_FILES}):"]
    lines.extend(f"- {c.status} {json.dumps(c.path, ensure_ascii=False)} ({_signer(c)})" for c in changes)
    return lines


@dataclass(frozen=True, slots=True)
class RangeOutcome:
    check: RangeReport
    report: PullRequestReport | None  # None when the check failed: a broken change has no outcome
    base_label: str
    head_label: str

    @property
    def markdown(self) -> str:
        check = self.check
        lines = [
            f"## kernelindex validate `{self.base_label}..{self.head_label}`",
            "",
            f"{check.commits} commit(s), {len(check.added)} manifest(s) added.",
            "",
        ]
        if check.ok:
            lines.append("**All checks passed.**")
        else:
            lines.append(f"**{len(check.problems)} problem(s)**; nothing can be merged until all are fixed:")
            lines.append("")
            lines.extend(f"- {code_span(str(problem))}" for problem in check.problems)
        if check.repository_files:
            # A list, not a table: a `|` in a path would split a table's cells, even inside a code span (GFM).
            lines += ["", "### Repository files", "", f"These are {_OWN_FILES}.", ""]
            lines.extend(f"- {code_span(c.path)}: {c.status}, {_signer(c)}" for c in check.repository_files)
        if self.report is not None:
            lines += ["", to_markdown(self.report)]
        if check.added:
            shown = check.added[:50]
            lines += ["", "<details><summary>Added manifests</summary>", ""]
            lines.extend(f"- {m.kind} `{m.digest}` ({m.name})" for m in shown)
            if len(check.added) > len(shown):
                lines.append(f"- … {len(check.added) - len(shown):,} more")
            lines += ["", "</details>"]
        return "\n".join(lines)

    @property
    def json(self) -> dict[str, Any]:
        check = self.check
        return {
            "ok": check.ok,
            "base": check.base,
            "head": check.head,
            "commits": check.commits,
            "added": [{"kind": m.kind, "digest": m.digest, "name": m.name, "path": m.path} for m in check.added],
            "problems": [{"file": p.source, "path": p.path, "reason": p.reason} for p in check.problems],
            "repositoryFiles": [
                {"path": c.path, "status": c.status, "signedBy": c.signed_by} for c in check.repository_files
            ],
            "atMerge": to_json(self.report)["runs"] if self.report is not None else None,
        }


def range_report(
    store: registry.GitStore,
    base: str,
    head: str,
    base_label: str | None = None,
    head_label: str | None = None,
    *,
    trust_root: bytes | None = None,
) -> RangeOutcome:
    """Check base..head (commit ids) and, when the check passes, simulate the merge."""
    from kernelindex.registry.snapshots import build_graph, move_graph

    chain = registry.TrustChain(store, trust_root)
    check = check_range(store, base, head, chain=chain)
    report = None
    if check.ok and any(m.kind == "BenchmarkRun" for m in check.added):
        honour = chain.honour

        base_graph, publication = build_graph(store, base, None, honour)
        head_graph = move_graph(store, base_graph, head, publication, honour)
        merged_at = max(store.commit_info(head).committer.time, base_graph.committed_at)
        report = pull_request_report(check.added, base_graph, head_graph, merged_at)
    return RangeOutcome(check, report, base_label or base[:12], head_label or head[:12])

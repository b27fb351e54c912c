"""The pull-request check with its report, as `kernelindex validate --base --head --format text|markdown|json`
prints it (and `kernelindex import ... --branch` at its end): the problems, then what the change
would do at merge (`registry.report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import registry
from registry.report import PullRequestReport, pull_request_report, to_json, to_markdown
from registry.review import RangeReport, check_range

__all__ = ["RangeOutcome", "range_report"]


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
            lines.extend(f"- `{problem}`" for problem in check.problems)
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
    from registry.snapshots import build_graph, move_graph

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

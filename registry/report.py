"""What a pull request would do once merged: for every run it adds, the cohort it joins, the rank it
would get, the current record holder and whether the run takes the record, and how it differs
from its nearest peer.

The report simulates the merge: base's graph plus the change's manifests, published by one new
commit of main (so the new runs are eligible, as they will be once merged). It reads nothing but
the two graphs and the validated change (`review.check_range`), and decides nothing: the check
passes or fails on its own; this says what passing means.

The nearest peer of a run is the run ranked just ahead of it in its cohort (or just behind, for a
new leader). A run alone in its cohort is compared with the most similar run elsewhere (same
workload, else same operation): the comparison fields that differ (operation,
workload, protocol, environment, correctness policy, metric) are why it does not rank against it.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kernelindex.registry.cohorts import metric_key
from kernelindex.registry.graph import Graph
from kernelindex.registry.graph_apply import apply
from kernelindex.registry.manifest import Manifest
from kernelindex.registry.nodes import Run, Workload
from kernelindex.registry.present import format_value

__all__ = ["Difference", "PullRequestReport", "RunOutcome", "pull_request_report", "to_json", "to_markdown"]

MATERIAL = ("operation", "workload", "protocol", "environment", "correctness", "metric")


@dataclass(frozen=True, slots=True)
class Difference:
    field: str
    ours: str
    theirs: str
    material: bool


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """One added run, as of the simulated merge."""

    run: str
    name: str
    value: str | None  # the primary value, formatted
    cohort: str | None
    cohort_size: int  # runs in the cohort after the merge, this one included
    new_cohort: bool  # no run of base is in it
    rank: int | None  # None: it would not rank (see `reasons`)
    ranked: int  # runs ranked in the cohort after the merge
    tied: bool
    reasons: tuple[str, ...]  # why it would not rank
    holder: str | None  # the record holder in base (digest), if the cohort has one
    holder_name: str | None
    holder_value: str | None
    takes_record: bool
    peer: str | None
    peer_name: str | None
    differences: tuple[Difference, ...]


@dataclass(frozen=True, slots=True)
class PullRequestReport:
    base: str
    head: str
    runs: tuple[RunOutcome, ...]


def pull_request_report(added: Sequence[Manifest], base: Graph, head: Graph, merged_at: int) -> PullRequestReport:
    """The outcome at merge of every run among `added` (the change's manifests, all in `head`'s graph).

    `base` must be a graph of a commit of main; `merged_at` (seconds) dates the simulated merge.
    """
    digests = [m.digest for m in added if m.digest in head.nodes]
    position = len(base.mainline.commits)
    mainline = base.mainline.extended([head.commit], [merged_at], [None])
    published: ChainMap[str, int] = ChainMap(dict.fromkeys(digests, position), dict(base.published_in))
    merged = apply(
        base,
        head.commit,
        merged_at,
        mainline,
        position,
        [head.nodes[digest] for digest in digests],
        [],
        published_in=published,
    )
    runs = [digest for digest in digests if isinstance(merged.nodes[digest], Run)]
    return PullRequestReport(base.commit, head.commit, tuple(_outcome(d, base, merged) for d in sorted(runs)))


def _outcome(digest: str, base: Graph, merged: Graph) -> RunOutcome:
    run = merged.nodes[digest]
    assert isinstance(run, Run)
    facts = merged.facts[digest]
    cohort = merged.cohorts.get(facts.cohort) if facts.cohort else None
    before = base.cohorts.get(facts.cohort) if facts.cohort else None
    held = before.holder(base) if before is not None else None
    holder_run = base.nodes.get(held.run) if held is not None else None
    after = cohort.holder(merged) if cohort is not None else None
    place = merged.place(digest)
    ranked = cohort.ranked(merged) if cohort is not None else ()
    peer = _ranked_peer(digest, ranked) if place is not None else None
    if peer is None:
        peer = _nearest_elsewhere(run, merged, cohort.members if cohort is not None else ())
    peer_run = merged.nodes.get(peer) if peer else None
    return RunOutcome(
        run=digest,
        name=run.name,
        value=_display(run),
        cohort=facts.cohort,
        cohort_size=len(cohort.members) if cohort is not None else 1,
        new_cohort=before is None,
        rank=place.rank if place else None,
        ranked=len(ranked),
        tied=place.tied_with_previous if place else False,
        reasons=facts.reasons,
        holder=held.run if held is not None else None,
        holder_name=holder_run.name if holder_run is not None else None,
        holder_value=_display(holder_run) if isinstance(holder_run, Run) else None,
        takes_record=after is not None and after.run == digest,
        peer=peer,
        peer_name=peer_run.name if peer_run is not None else None,
        differences=_differences(run, peer_run, merged) if isinstance(peer_run, Run) else (),
    )


def _display(run: Run | Any) -> str | None:
    if not isinstance(run, Run) or run.primary is None:
        return None
    return f"{format_value(run.primary.value, run.primary.unit)} ({run.primary.statistic})"


def _ranked_peer(digest: str, ranked: Sequence[Any]) -> str | None:
    ids = [entry.id for entry in ranked]
    index = ids.index(digest)
    if index > 0:
        return str(ids[index - 1])
    return str(ids[1]) if len(ids) > 1 else None


def _nearest_elsewhere(run: Run, graph: Graph, exclude: Iterable[str]) -> str | None:
    """The run sharing the most comparison fields with `run` (same workload first, else operation),
    the most recently observed on a tie."""
    skip = set(exclude) | {run.digest}
    pool = [d for d in graph.runs_by["workload"].get(run.workload, ()) if d not in skip]
    if not pool:
        operation = graph.facts[run.digest].operation
        pool = [d for d in graph.runs_by["operation"].get(operation, ()) if d not in skip] if operation else []
    best: tuple[int, int, str] | None = None
    for digest in pool:
        other = graph.nodes[digest]
        if not isinstance(other, Run):
            continue
        shared = len(MATERIAL) - sum(1 for d in _differences(run, other, graph) if d.material)
        key = (shared, other.observed_ns, digest)
        if best is None or key > best:
            best = key
    return best[2] if best else None


def _comparison(run: Run, graph: Graph) -> dict[str, str]:
    workload = graph.nodes.get(run.workload)
    return {
        "operation": graph.facts[run.digest].operation or "?",
        "workload": run.workload,
        "protocol": run.protocol,
        "environment": run.environment,
        "correctness": workload.correctness if isinstance(workload, Workload) else "?",
        "metric": metric_key(run.primary),
    }


def _differences(run: Run, peer: Run, graph: Graph) -> tuple[Difference, ...]:
    ours, theirs = _comparison(run, graph), _comparison(peer, graph)
    found = [
        Difference(field, _label(graph, ours[field]), _label(graph, theirs[field]), True)
        for field in MATERIAL
        if ours[field] != theirs[field]
    ]
    if run.implementation != peer.implementation:
        found.append(
            Difference("implementation", _label(graph, run.implementation), _label(graph, peer.implementation), False)
        )
    ours_value, theirs_value = _display(run), _display(peer)
    if ours_value != theirs_value:
        found.append(Difference("value", ours_value or "none", theirs_value or "none", False))
    return tuple(found)


def _label(graph: Graph, value: str) -> str:
    node = graph.nodes.get(value)
    if node is None:
        return value
    return f"{node.name} ({value[:19]}…)"


def to_json(report: PullRequestReport) -> dict[str, Any]:
    return {
        "base": report.base,
        "head": report.head,
        "runs": [
            {
                "run": o.run,
                "name": o.name,
                "value": o.value,
                "cohort": o.cohort,
                "cohortSize": o.cohort_size,
                "newCohort": o.new_cohort,
                "rank": o.rank,
                "ranked": o.ranked,
                "tied": o.tied,
                "ineligibleReasons": list(o.reasons),
                "recordHolder": None
                if o.holder is None
                else {"run": o.holder, "name": o.holder_name, "value": o.holder_value},
                "takesRecord": o.takes_record,
                "nearestPeer": None
                if o.peer is None
                else {
                    "run": o.peer,
                    "name": o.peer_name,
                    "differences": [
                        {"field": d.field, "ours": d.ours, "theirs": d.theirs, "material": d.material}
                        for d in o.differences
                    ],
                },
            }
            for o in report.runs
        ],
    }


def to_markdown(report: PullRequestReport, limit: int = 200) -> str:
    """The report as a pull-request comment: one table row per run, then the differences from peers."""
    runs = report.runs
    if not runs:
        return "### At merge\n\nThis change adds no runs."
    records = sum(1 for o in runs if o.takes_record)
    lines = [
        "### At merge",
        "",
        f"{len(runs):,} new run(s); {records:,} would take their cohort's record.",
        "",
        "| run | value | cohort | rank at merge | record holder now | takes the record |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in runs[:limit]:
        cohort = "—" if o.cohort is None else f"`{o.cohort[7:23]}` ({o.cohort_size}{', new' if o.new_cohort else ''})"
        rank = (
            f"{o.rank} of {o.ranked}{' (tied)' if o.tied else ''}"
            if o.rank is not None
            else "not ranked: " + ", ".join(o.reasons or ("no cohort",))
        )
        holder = "none" if o.holder is None else f"{o.holder_name} · {o.holder_value}"
        lines.append(
            f"| {o.name} | {o.value or '—'} | {cohort} | {rank} | {holder} | {'**yes**' if o.takes_record else 'no'} |"
        )
    if len(runs) > limit:
        lines.append(f"| … {len(runs) - limit:,} more (see `--format json`) | | | | | |")
    peers = [o for o in runs[:limit] if o.peer is not None]
    if peers:
        lines += ["", "Nearest peers:", ""]
        for o in peers:
            material = [d for d in o.differences if d.material]
            other = [d for d in o.differences if not d.material]
            said = "; ".join(f"{d.field}: {d.ours} vs {d.theirs}" for d in material + other) or "no differences"
            kind = "material differences, so it does not rank against it" if material else "same cohort"
            lines.append(f"- {o.name} vs {o.peer_name}: {said} ({kind})")
    return "\n".join(lines)

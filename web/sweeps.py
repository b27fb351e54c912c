"""An operation's sweep: its best values against the workload axis that varies, one series per GPU, read
from the cohorts of the operation page's answer (their workloads' axes and their leaders).

Which axis: among the axes every measured case names (integers, by the WorkloadCase schema), the one with
the most distinct values
(then the first by name). Other axes may vary with it (a paged attention case's `batch_size`,
`len_indptr` and `num_pages` move together); the chart says which. Suites have no axes of their own and
are left out, as are cohorts without a ranked #1.

A point is a GPU (a product, whatever the architecture its environments name) at one value of the axis:
the lowest #1 value among that GPU's cohorts there (several cohorts when other axes, the protocol or the
environment's software differ). Lower is better, as in
every cohort. The table beside the chart lists every point with the run and the cohort it comes from.

>>> def cohort(gpu, m, value, key):
...     axes = [{"name": "m", "value": str(m), "number": float(m)}, {"name": "k", "value": "7", "number": 7.0}]
...     leader = {"digest": key, "name": key, "primary": {"value": value, "display": f"{value} ns"}}
...     return {"key": key, "workload": {"axes": axes}, "environment": {"product": gpu}, "leader": leader}
>>> sweep = operation_sweep([cohort("B200", 1, 5, "a"), cohort("B200", 4, 9, "b"), cohort("H100", 4, 7, "c"),
...                          cohort("B200", 4, 8, "d")])
>>> sweep.axis, sweep.also, [(r.gpu, r.x, r.run["name"], r.groups) for r in sweep.rows]
('m', (), [('B200', '1', 'a', 1), ('B200', '4', 'd', 2), ('H100', '4', 'c', 1)])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelindex.web.charts import SweepChart, sweep_chart

__all__ = ["Sweep", "SweepRow", "operation_sweep"]


@dataclass(frozen=True, slots=True)
class SweepRow:
    """One point as the table shows it: the GPU, the axis value as published, the best #1 there, and how
    many cohorts it is the best of."""

    gpu: str
    x: str
    number: float
    value: float
    display: str
    run: dict[str, Any]
    cohort: str
    groups: int


@dataclass(frozen=True, slots=True)
class Sweep:
    axis: str
    also: tuple[str, ...]  # other axes that vary too
    rows: tuple[SweepRow, ...]  # by GPU, then axis value
    chart: SweepChart


def _axes(cohort: dict[str, Any]) -> dict[str, dict[str, Any]]:
    workload = cohort.get("workload") or {}
    return {axis["name"]: axis for axis in workload.get("axes") or ()}


def operation_sweep(cohorts: Sequence[dict[str, Any]]) -> Sweep | None:
    """The sweep of an operation's cohorts, or None when no numeric axis takes two values."""
    measured = [
        (cohort, _axes(cohort))
        for cohort in cohorts
        if cohort.get("leader") and cohort["leader"].get("primary") and _axes(cohort)
    ]
    if not measured:
        return None
    shared = set.intersection(*(set(axes) for _, axes in measured))
    spread = {name: len({axes[name]["number"] for _, axes in measured}) for name in shared}
    varying = sorted((name for name, count in spread.items() if count > 1), key=lambda n: (-spread[n], n))
    if not varying:
        return None
    axis = varying[0]
    best: dict[tuple[str, float], tuple[dict[str, Any], dict[str, Any], int]] = {}
    for cohort, axes in measured:
        gpu = (cohort.get("environment") or {}).get("product") or "unknown GPU"
        place = (gpu, axes[axis]["number"])
        kept = best.get(place)
        count = kept[2] + 1 if kept else 1
        leader = cohort["leader"]
        if kept is None or leader["primary"]["value"] < kept[1]["leader"]["primary"]["value"]:
            best[place] = (axes[axis], cohort, count)
        else:
            best[place] = (kept[0], kept[1], count)
    rows = tuple(
        SweepRow(
            gpu=gpu,
            x=value["value"],
            number=number,
            value=cohort["leader"]["primary"]["value"],
            display=cohort["leader"]["primary"]["display"],
            run=cohort["leader"],
            cohort=cohort["key"],
            groups=count,
        )
        for (gpu, number), (value, cohort, count) in sorted(best.items())
    )
    series: dict[str, list[tuple[float, float, str]]] = {}
    for row in rows:
        series.setdefault(row.gpu, []).append((row.number, row.value, f"{row.gpu}, {axis} = {row.x}: {row.display}"))
    low_x, high_x = min(rows, key=lambda r: r.number), max(rows, key=lambda r: r.number)
    low_y, high_y = min(rows, key=lambda r: r.value), max(rows, key=lambda r: r.value)
    chart = sweep_chart(
        list(series.items()),
        (f"{axis} = {low_x.x}", f"{axis} = {high_x.x}"),
        (low_y.display, high_y.display),
    )
    if chart is None:
        return None
    return Sweep(axis, tuple(varying[1:]), rows, chart)

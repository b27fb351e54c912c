"""The geometry of the pages' inline SVG charts; templates only draw what these compute.

The charts: a leaderboard page's values with their 95% confidence intervals (a cell per entry on
one shared scale, lower is better, so the best is leftmost), a cohort's record history as a step chart (each
record holds until a lower value takes it), a serving cohort's Pareto frontier, and an operation's sweep (each
GPU's best value against the workload axis that varies). Coordinates are in SVG user units, rounded to 0.1.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "IntervalChart",
    "IntervalRow",
    "Mark",
    "ParetoChart",
    "StepChart",
    "SweepChart",
    "SweepPoint",
    "SweepSeries",
    "interval_chart",
    "pareto_chart",
    "step_chart",
    "sweep_chart",
]

WIDTH = 240
HEIGHT = 14
LEFT = 8
RIGHT = 8


@dataclass(frozen=True, slots=True)
class IntervalRow:
    """What one leaderboard entry contributes: its value, its interval when reported, its words."""

    value: float
    low: float | None
    high: float | None
    label: str
    tied: bool = False


@dataclass(frozen=True, slots=True)
class Mark:
    """One entry's cell of the chart: the value's x, its interval's ends (equal to x when not reported)."""

    x: float
    x_low: float
    x_high: float
    label: str
    tied: bool


@dataclass(frozen=True, slots=True)
class IntervalChart:
    """A column of the leaderboard: every row drawn on one shared scale, `width` x `height` per row."""

    width: int
    height: int
    marks: tuple[Mark, ...]
    low_label: str
    high_label: str


def _scale(lo: float, hi: float, left: float, right: float) -> tuple[float, float]:
    """(offset, factor) mapping [lo, hi] onto [left, right]; a zero span maps to the middle."""
    if hi <= lo:
        return (left + right) / 2, 0.0
    factor = (right - left) / (hi - lo)
    return left - lo * factor, factor


def interval_chart(rows: Sequence[IntervalRow], low_label: str = "", high_label: str = "") -> IntervalChart | None:
    """One mark per entry; x spans the smallest low to the largest high of these rows, lower is left.

    >>> chart = interval_chart([IntervalRow(10, 9, 11, "a"), IntervalRow(20, None, None, "b")])
    >>> [(m.x, m.x_low, m.x_high) for m in chart.marks]  # 9..20 onto 8..232: 224/11 units a step
    [(28.4, 8.0, 48.7), (232.0, 232.0, 232.0)]
    """
    if not rows:
        return None
    lows = [r.low if r.low is not None else r.value for r in rows]
    highs = [r.high if r.high is not None else r.value for r in rows]
    offset, factor = _scale(min(lows), max(highs), LEFT, WIDTH - RIGHT)
    marks = tuple(
        Mark(
            x=round(offset + r.value * factor, 1),
            x_low=round(offset + low * factor, 1),
            x_high=round(offset + high * factor, 1),
            label=r.label,
            tied=r.tied,
        )
        for r, low, high in zip(rows, lows, highs, strict=True)
    )
    return IntervalChart(WIDTH, HEIGHT, marks, low_label, high_label)


@dataclass(frozen=True, slots=True)
class Step:
    x: float
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class StepChart:
    width: int
    height: int
    path: str
    steps: tuple[Step, ...]
    first_day: str
    last_day: str


STEP_WIDTH = 320
STEP_HEIGHT = 80


def _seconds(instant: str) -> float:
    return dt.datetime.fromisoformat(instant).timestamp()


def step_chart(events: Sequence[tuple[str, float, str]], until: str | None = None) -> StepChart | None:
    """Record events `(at, value, label)` in time order as a step line: x is time (to `until`, the
    snapshot's date, if later), y the value (a new record is a step down).

    >>> chart = step_chart([("2026-01-01T00:00:00Z", 200.0, "a"), ("2026-01-03T00:00:00Z", 100.0, "b")],
    ...                    until="2026-01-05T00:00:00Z")
    >>> chart.path
    'M8.0,8.0H160.0V72.0H312.0'
    """
    if not events:
        return None
    times = [_seconds(at) for at, _, _ in events]
    end = max(times[-1], _seconds(until)) if until else times[-1]
    values = [value for _, value, _ in events]
    x_offset, x_factor = _scale(times[0], end, LEFT, STEP_WIDTH - RIGHT)
    # Higher values sit higher: y grows downwards in SVG, so the scale runs from the bottom up.
    y_offset, y_factor = _scale(min(values), max(values), STEP_HEIGHT - LEFT, LEFT)
    steps = tuple(
        Step(round(x_offset + t * x_factor, 1), round(y_offset + v * y_factor, 1), label)
        for t, (_, v, label) in zip(times, events, strict=True)
    )
    path = [f"M{steps[0].x},{steps[0].y}"]
    for step in steps[1:]:
        path.append(f"H{step.x}V{step.y}")
    path.append(f"H{round(x_offset + end * x_factor, 1) if x_factor else STEP_WIDTH - RIGHT:.1f}")
    return StepChart(STEP_WIDTH, STEP_HEIGHT, "".join(path), steps, events[0][0][:10], (until or events[-1][0])[:10])


@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    label: str
    frontier: bool
    length: float = 0.0  # a bar's length, when the chart has one axis


@dataclass(frozen=True, slots=True)
class ParetoChart:
    """A serving cohort's feasible runs: bars along its one axis, or a scatter of two with the frontier joined."""

    width: int
    height: int
    points: tuple[Point, ...]
    path: str
    bars: bool


PARETO_WIDTH = 480
PARETO_HEIGHT = 240
BAR = 16


def pareto_chart(points: Sequence[tuple[float, float | None, str, bool]]) -> ParetoChart | None:
    """Runs as `(x, y or None, label, on the frontier)`. Without a second axis (y None), bars from 0 to x
    in the order given; with one, a scatter over both ranges whose frontier points are joined in x order.

    >>> pareto_chart([(100.0, None, "a", True), (50.0, None, "b", False)]).points[1].length
    232.0
    >>> pareto_chart([(1.0, 10.0, "a", True), (3.0, 30.0, "b", True), (2.0, 5.0, "c", False)]).path
    'M8.0,187.2L472.0,8.0'

    (y spans 5..30 onto 232..8: y = 10 sits a fifth of the way up, 232 - 224 / 5 = 187.2.)
    """
    if not points:
        return None
    if all(y is None for _, y, _, _ in points):
        _, factor = _scale(0.0, max(x for x, _, _, _ in points), 0.0, PARETO_WIDTH - LEFT - RIGHT)
        bars = tuple(
            Point(LEFT, float(i * BAR + BAR // 2), label, frontier, round(x * factor, 1))
            for i, (x, _, label, frontier) in enumerate(points)
        )
        return ParetoChart(PARETO_WIDTH, len(points) * BAR, bars, "", True)
    pairs = [(x, y, label, frontier) for x, y, label, frontier in points if y is not None]
    x_offset, x_factor = _scale(min(p[0] for p in pairs), max(p[0] for p in pairs), LEFT, PARETO_WIDTH - RIGHT)
    y_offset, y_factor = _scale(min(p[1] for p in pairs), max(p[1] for p in pairs), PARETO_HEIGHT - LEFT, LEFT)
    scattered = tuple(
        Point(round(x_offset + x * x_factor, 1), round(y_offset + y * y_factor, 1), label, frontier)
        for x, y, label, frontier in pairs
    )
    front = sorted((p for p in scattered if p.frontier), key=lambda p: p.x)
    path = "".join(f"{'L' if i else 'M'}{p.x},{p.y}" for i, p in enumerate(front))
    return ParetoChart(PARETO_WIDTH, PARETO_HEIGHT, scattered, path, False)


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One point of a sweep: its place, and what it says (`label`, its tooltip)."""

    x: float
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class SweepSeries:
    """One GPU's line: its points in x order joined by `path`; `index` picks its colour and dash (0 to 7)."""

    name: str
    index: int
    path: str
    points: tuple[SweepPoint, ...]


@dataclass(frozen=True, slots=True)
class SweepChart:
    """Values against a workload axis, one series per GPU, inside the plot box (left, top, right, bottom);
    each axis is logarithmic when its values span a factor of 10 or more (all positive), else linear,
    and labelled at both ends."""

    width: int
    height: int
    box: tuple[float, float, float, float]
    series: tuple[SweepSeries, ...]
    x_log: bool
    y_log: bool
    x_low: str
    x_high: str
    y_low: str
    y_high: str


SWEEP_WIDTH = 640
SWEEP_HEIGHT = 300
_SWEEP_BOX = (76.0, 12.0, 628.0, 270.0)  # room for the value labels on the left and the axis labels below
_SERIES_STYLES = 8


def _logarithmic(values: Sequence[float]) -> bool:
    low, high = min(values), max(values)
    return low > 0 and high / low >= 10


def sweep_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float, str]]]],
    x_labels: tuple[str, str],
    y_labels: tuple[str, str],
) -> SweepChart | None:
    """Each series `(name, points)` with points `(x, y, label)`, drawn on shared scales; `x_labels` and
    `y_labels` name the ends of each axis (the smallest value's words first). None without two distinct x.

    >>> chart = sweep_chart([("A", [(1, 10, "a"), (100, 1000, "b")]), ("B", [(10, 100, "c")])], ("1", "100"),
    ...                     ("10", "1000"))
    >>> chart.x_log, chart.y_log, chart.series[0].path, chart.series[1].path
    (True, True, 'M76.0,270.0L628.0,12.0', 'M352.0,141.0')

    (Both axes span two decades: x = 10 and y = 100 sit halfway, at (76 + 628) / 2 and (12 + 270) / 2.)
    """
    xs = [x for _, points in series for x, _, _ in points]
    ys = [y for _, points in series for _, y, _ in points]
    if len(set(xs)) < 2:
        return None
    left, top, right, bottom = _SWEEP_BOX
    x_log, y_log = _logarithmic(xs), _logarithmic(ys)

    def axis(values: Sequence[float], log: bool, start: float, end: float) -> Callable[[float], float]:
        shown = [math.log10(v) for v in values] if log else list(values)
        offset, factor = _scale(min(shown), max(shown), start, end)
        return lambda v: round(offset + (math.log10(v) if log else v) * factor, 1)

    x_of = axis(xs, x_log, left, right)
    y_of = axis(ys, y_log, bottom, top)  # higher values sit higher: SVG's y grows downwards
    drawn = []
    for index, (name, points) in enumerate(series):
        placed = tuple(SweepPoint(x_of(x), y_of(y), label) for x, y, label in sorted(points, key=lambda p: p[0]))
        path = "".join(f"{'L' if i else 'M'}{p.x},{p.y}" for i, p in enumerate(placed))
        drawn.append(SweepSeries(name, index % _SERIES_STYLES, path, placed))
    return SweepChart(SWEEP_WIDTH, SWEEP_HEIGHT, _SWEEP_BOX, tuple(drawn), x_log, y_log, *x_labels, *y_labels)

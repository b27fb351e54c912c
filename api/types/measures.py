"""What a run measured, as leaves: its primary value, other measurements, source-native metrics, artifacts."""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

__all__ = ["Artifact", "Interval", "Measurement", "Metric", "Primary", "SourceNative"]


@strawberry.type
class Interval:
    low: float
    high: float


@strawberry.type(description="The measurement a run is ranked by (lower is better).")
class Primary:
    metric: str
    statistic: str
    unit: str
    value: float
    display: str = strawberry.field(description="The value as a reader wants it: 144.6 µs.")
    interval: Interval | None = strawberry.field(description="The 95% confidence interval, when reported.")


@strawberry.type
class Metric:
    name: str
    value: JSON


@strawberry.type(description="What the source itself reported, in its own terms.")
class SourceNative:
    source: str
    benchmark: str | None
    external_id: str | None
    metrics: list[Metric]
    summary: str | None = strawberry.field(description="e.g. SOL 0.6941 · 1.93× reference · 16/16 cases faster")


@strawberry.type
class Measurement:
    metric: str
    statistic: str
    unit: str
    value: float
    display: str
    sample_count: int | None


@strawberry.type(description="A file of evidence published with a run.")
class Artifact:
    role: str
    uri: str | None
    digest: str | None

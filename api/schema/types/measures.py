"""What a run measured, as leaves: its primary value, other measurements, source-native metrics, artifacts."""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

from kernelindex.schema.types.enums import ArtifactRole

__all__ = ["Artifact", "Interval", "Measurement", "Metric", "Primary", "SourceNative"]


@strawberry.type(description="A 95% confidence interval.")
class Interval:
    low: float = strawberry.field(description="The lower bound, in the unit of the value it bounds.")
    high: float = strawberry.field(description="The upper bound, in the unit of the value it bounds.")


@strawberry.type(
    description="The measurement a run is ranked by (lower is better). Value types such as this one have "
    "no `id`: a normalized cache keeps them inside their run."
)
class Primary:
    metric: str = strawberry.field(
        description="What is measured: `latency` (most runs) or `score` (KernelBot leaderboards)."
    )
    statistic: str = strawberry.field(
        description="Which statistic of the samples: mean, median, geomean, or `unspecified` when the source does "
        "not say."
    )
    unit: str = strawberry.field(description="The unit of `value`: `ns` for latencies, `s` for KernelBot scores.")
    value: float = strawberry.field(
        description="The value in `unit`, lower is better: nanoseconds for a latency (144571.0 is 144.6 µs), seconds "
        "for a KernelBot score. Compare values only inside one cohort, where unit and statistic agree; "
        "`display` words it for a reader."
    )
    display: str = strawberry.field(description="The value as a reader wants it: 144.6 µs.")
    interval: Interval | None = strawberry.field(description="The 95% confidence interval, when reported.")


@strawberry.type(description="One metric as a source reported it.")
class Metric:
    name: str = strawberry.field(description="The metric's name, as the source spells it.")
    value: JSON = strawberry.field(
        description="Its value, as the source published it (a number, a string or a structure)."
    )


@strawberry.type(description="What the source itself reported, in its own terms.")
class SourceNative:
    source: str = strawberry.field(description="The source's slug (sol-execbench, kernelbot...).")
    benchmark: str | None = strawberry.field(
        description="The source's name for the benchmark; null when it gives none."
    )
    external_id: str | None = strawberry.field(
        description="The source's own id of the result (`submission/6709`); null when it gives none."
    )
    metrics: list[Metric] = strawberry.field(
        description="The source's own metrics, in its order (SOL score, speedup...)."
    )
    summary: str | None = strawberry.field(description="e.g. SOL 0.6941 · 1.93× reference · 16/16 cases faster")


@strawberry.type(description="One measurement a run published.")
class Measurement:
    metric: str = strawberry.field(description="What is measured (latency, throughput...).")
    statistic: str = strawberry.field(description="Which statistic (mean, median, p05, p95, minimum, maximum, mad...).")
    unit: str = strawberry.field(description="The unit of `value` (ns for latencies).")
    value: float = strawberry.field(description="The value, in `unit`.")
    display: str = strawberry.field(description="The value as a reader wants it (144.6 µs).")
    sample_count: int | None = strawberry.field(description="How many samples it summarizes; null when not reported.")


@strawberry.type(description="A file of evidence published with a run.")
class Artifact:
    role: ArtifactRole = strawberry.field(description="What the file is.")
    uri: str | None = strawberry.field(
        description="Where it is (an http(s) URL, or the harness's repository); null when not published."
    )
    digest: str | None = strawberry.field(
        description="Its sha256 (`sha256:<hex>`), or the harness commit; null when not published."
    )

"""The serving pages (serving-v1 runs): a serving run at its permalink, and a serving cohort resolved to its
Pareto frontier (or ranked along its one axis), drawn."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from api.urls import Urls
from web import documents
from web.charts import pareto_chart
from web.render import Spec, copy_citations, guarded, json_asked, render, strip_json

__all__ = ["serving_cohort", "serving_run_page"]


def _serving_run_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    return {"run": data["servingRun"]}


async def serving_run_page(request: Request, commit: str, digest: str) -> Response:
    """The serving run page at its permalink, pinned to `commit` (already checked to be a full id of main)."""
    spec = Spec(
        template="serving_run.html",
        document=documents.SERVING_RUN,
        variables={"at": commit, "id": digest, **copy_citations(request)},
        title=lambda d: f"Serving run {d['servingRun']['name']} · {d['servingRun']['submitter'] or ''}",
        subject="servingRun",
        missing=f"serving run not found: {digest}",
        extra=_serving_run_extra,
    )
    return await render(request, spec, as_json=False, at=commit)


def _value(run: dict[str, Any], axis: str) -> float | None:
    """A run's comparable measurement on an axis `metric·statistic`, if it has one."""
    metric, _, statistic = axis.partition("·")
    for m in run["measurements"]:
        if m["metric"] == metric and m["statistic"] == statistic and m["comparable"]:
            return float(m["value"])
    return None


def _serving_cohort_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    cohort = data["servingCohort"]
    resolved = cohort["resolve"]
    axes = resolved["axes"][:2]
    points: list[tuple[float, float | None, str, bool]] = []
    for candidate in resolved["runs"]:
        run = candidate["run"]
        x = _value(run, axes[0]) if axes else None
        y = _value(run, axes[1]) if len(axes) > 1 else None
        if x is None or (len(axes) > 1 and y is None):
            continue
        label = f"{run['configuration']['summary'] if run['configuration'] else run['name']}: {x:g}"
        points.append((x, y, label + (" (frontier)" if candidate["onFrontier"] else ""), bool(candidate["onFrontier"])))
    return {"cohort": cohort, "resolved": resolved, "axes": axes, "chart": pareto_chart(points)}


@guarded
async def serving_cohort(request: Request) -> Response:
    """`/serving/cohorts/{key}`: the cohort's runs resolved without constraints: its Pareto frontier first."""
    key, as_json = strip_json(request.path_params["key"])
    at = request.path_params.get("commit")
    spec = Spec(
        template="serving_cohort.html",
        document=documents.SERVING_COHORT,
        variables={"at": at, "key": key},
        title=lambda d: f"Serving: {d['servingCohort']['model']['title'] if d['servingCohort']['model'] else key}",
        subject="servingCohort",
        missing=f"no serving cohort {key}",
        extra=_serving_cohort_extra,
    )
    return await render(request, spec, as_json or json_asked(request), at)

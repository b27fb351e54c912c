"""The serving pages (serving-v1 runs): a serving run at its permalink, a serving cohort resolved to its
Pareto frontier (or ranked along its one axis), drawn, and the serving resolver as a form (`/serving`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.codes import BAD_USER_INPUT
from kernelindex.core.urls import Urls
from kernelindex.web import documents
from kernelindex.web.charts import pareto_chart
from kernelindex.web.render import PageError, Spec, copy_citations, guarded, json_asked, render, strip_json

__all__ = [
    "CONSTRAINT_ROWS",
    "SERVING_PAGE",
    "ResolverForm",
    "resolver_form",
    "serving",
    "serving_cohort",
    "serving_run_page",
]


def _serving_run_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    return {"run": data["servingRun"]}


async def serving_run_page(request: Request, commit: str, digest: str) -> Response:
    """The serving run page at its permalink, pinned to `commit` (already checked to be a full id of main)."""
    spec = Spec(
        template="serving_run.html",
        document=documents.SERVING_RUN,
        variables={"at": commit, "id": digest, **copy_citations(request)},
        title=lambda d: f"Serving run {d['servingRun']['name']} · {d['servingRun']['submitter'] or ''}",
        description=lambda d: (
            f"An LLM-serving result ({d['servingRun']['submitter'] or 'unknown submitter'}): its "
            "measurements with units, topology, workload and declared SLOs, configuration and provenance."
        ),
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
        description=lambda d: (
            f"A serving cohort of {d['servingCohort']['size']} runs, resolved to its Pareto "
            "frontier: the configurations no other beats on every measured axis."
        ),
        subject="servingCohort",
        missing=f"no serving cohort {key}",
        extra=_serving_cohort_extra,
    )
    return await render(request, spec, as_json or json_asked(request), at)


SERVING_PAGE = 20  # serving cohorts the resolver's page shows at a time, each resolved
CONSTRAINT_ROWS = 3  # constraint rows the form offers (the API takes up to 16)
_OPERATORS = ("<=", "<", ">=", ">")
_DIRECTIONS = ("MINIMIZE", "MAXIMIZE")
_MAX_FIELD = 100  # characters of any one field of the form


def _field(request: Request, name: str) -> str:
    value = request.query_params.get(name, "").strip()
    if len(value) > _MAX_FIELD:
        raise PageError(400, BAD_USER_INPUT, f"{name}: at most {_MAX_FIELD} characters (got {len(value)})")
    return value


def _number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PageError(400, BAD_USER_INPUT, f"{name}: expected a number, not {text!r}") from None
    if not math.isfinite(value):
        raise PageError(400, BAD_USER_INPUT, f"{name}: expected a finite number, not {text!r}")
    return value


@dataclass(frozen=True, slots=True)
class ResolverForm:
    """The serving resolver's form as submitted: what the page's document is asked, and what the form shows
    again (each constraint row as typed)."""

    model: str | None
    workload: str | None
    constraints: list[dict[str, Any]]
    objective: dict[str, Any] | None
    rows: list[dict[str, str]]


def resolver_form(request: Request) -> ResolverForm:
    """The form's fields read and checked: a constraint row counts when it names a metric, and then needs an
    operator and a number; the objective is a metric and, optionally, a direction.

    Raises:
        PageError: 400, naming the field and why.
    """
    rows, constraints = [], []
    for i in range(1, CONSTRAINT_ROWS + 1):
        row = {part: _field(request, f"c{i}_{part}") for part in ("metric", "op", "value", "stat")}
        rows.append(row)
        if not row["metric"]:
            continue
        if row["op"] not in _OPERATORS:
            raise PageError(400, BAD_USER_INPUT, f"c{i}_op: expected one of {', '.join(_OPERATORS)}, not {row['op']!r}")
        constraint: dict[str, Any] = {
            "metric": row["metric"],
            "operator": row["op"],
            "value": _number(f"c{i}_value", row["value"]),
        }
        if row["stat"]:
            constraint["statistic"] = row["stat"]
        constraints.append(constraint)
    objective: dict[str, Any] | None = None
    metric, direction = _field(request, "objective"), _field(request, "direction").upper()
    if metric:
        objective = {"metric": metric}
        if direction:
            if direction not in _DIRECTIONS:
                raise PageError(400, BAD_USER_INPUT, f"direction: expected minimize or maximize, not {direction!r}")
            objective["direction"] = direction
    return ResolverForm(
        model=_field(request, "model") or None,
        workload=_field(request, "workload") or None,
        constraints=constraints,
        objective=objective,
        rows=rows,
    )


def _form_params(form: ResolverForm) -> list[tuple[str, str]]:
    """The form's fields as read (never the raw query string: it may carry anything), as its links repeat them."""
    fields = [("model", form.model or ""), ("workload", form.workload or "")]
    for i, row in enumerate(form.rows, start=1):
        fields += [(f"c{i}_{part}", row[part]) for part in ("metric", "op", "value", "stat")]
    if form.objective is not None:
        fields += [("objective", form.objective["metric"]), ("direction", form.objective.get("direction", "").lower())]
    return [(k, v) for k, v in fields if v]


def _serving_extra(data: dict[str, Any], links: Urls, form: ResolverForm) -> dict[str, Any]:
    found = data["servingCohorts"]
    cohorts = [edge["node"] for edge in found["edges"]]
    info = found["pageInfo"]
    return {
        "form": form,
        "cohorts": cohorts,
        "feasible": sum(1 for c in cohorts if c["resolve"]["runs"]),
        "metrics": data["servingMetrics"],
        "models": [edge["node"] for edge in data["models"]["edges"]],
        "workloads": [edge["node"] for edge in data["servingWorkloads"]["edges"]],
        "operators": _OPERATORS,
        "next_url": links.serving([*_form_params(form), ("after", info["endCursor"])]) if info["hasNextPage"] else None,
        "asked": bool(form.model or form.workload or form.constraints or form.objective),
    }


@guarded
async def serving(request: Request) -> Response:
    """`/serving`: the serving resolver as a form: a model and a workload narrow the serving cohorts, each
    resolved under the constraints given, ranked by the objective or to its Pareto frontier."""
    at = request.path_params.get("commit")
    form = resolver_form(request)
    after = request.query_params.get("after") or None
    spec = Spec(
        template="serving.html",
        document=documents.SERVING,
        variables={
            "at": at,
            "model": form.model,
            "workload": form.workload,
            "constraints": form.constraints or None,
            "objective": form.objective,
            "first": SERVING_PAGE,
            "after": after,
        },
        title=lambda d: "Serving: resolve under constraints",
        description=lambda d: (
            "Which serving configuration meets these SLOs? Each serving cohort resolved under "
            "constraints, ranked by an objective or to its Pareto frontier."
        ),
        query=[*_form_params(form), *([("after", after)] if after else [])],
        extra=lambda data, links: _serving_extra(data, links, form),
    )
    return await render(request, spec, json_asked(request), at)

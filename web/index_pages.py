"""The index pages: every operation (filterable), GPUs and a GPU, models and a model, project standings, and
sources. Each is a frontend of one named GraphQL document (`web/documents.py`), with its JSON twin."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.codes import BAD_USER_INPUT
from kernelindex.core.urls import Urls
from kernelindex.web import documents
from kernelindex.web.names import humanize_operation
from kernelindex.web.render import PageError, Spec, guarded, json_asked, render, strip_json

__all__ = [
    "GPU_PAGE",
    "MODEL_PAGE",
    "OPERATIONS_PAGE",
    "PROJECTS_PAGE",
    "gpu",
    "gpus",
    "model",
    "models",
    "operations",
    "projects",
    "sources",
]

OPERATIONS_PAGE = 100  # operations a page (the API's largest page): 480 in the embedded registry, 5 pages
PROJECTS_PAGE = 100
GPU_PAGE = 25  # operations a GPU page shows at a time, each with its five largest cohorts
MODEL_PAGE = 50  # serving cohorts a model page shows at a time
MAX_FILTER = 200  # characters of a family or a search of operations: a filter, not a document


def _edges(connection: dict[str, Any]) -> list[dict[str, Any]]:
    return [edge["node"] for edge in connection["edges"]]


def _next(connection: dict[str, Any]) -> str | None:
    info = connection["pageInfo"]
    return str(info["endCursor"]) if info["hasNextPage"] else None


def _filter(request: Request, name: str) -> str | None:
    value = request.query_params.get(name, "").strip()
    if len(value) > MAX_FILTER:
        raise PageError(400, BAD_USER_INPUT, f"{name}: at most {MAX_FILTER} characters (got {len(value)})")
    return value or None


# Operations -----------------------------------------------------------------------------------------


def _operations_extra(data: dict[str, Any], links: Urls, family: str | None, search: str | None) -> dict[str, Any]:
    found = data["operations"]
    after = _next(found)
    return {
        "rows": _edges(found),
        "families": data["operationFamilies"],
        "family": family,
        "search": search or "",
        "humanize": humanize_operation,
        "next_url": links.operations(family, search, after) if after else None,
        "all_url": links.operations() if family or search else None,
    }


def _operations_title(family: str | None, search: str | None) -> str:
    parts = [f"family {family}" if family else "", f"matching “{search}”" if search else ""]
    shown = ", ".join(p for p in parts if p)
    return f"Operations ({shown})" if shown else "Operations"


@guarded
async def operations(request: Request) -> Response:
    """`/operations`: every operation with its runs and cohorts; `?family=` and `?q=` narrow, `?after=` pages."""
    at = request.path_params.get("commit")
    family, search = _filter(request, "family"), _filter(request, "q")
    after = request.query_params.get("after") or None
    spec = Spec(
        template="operations.html",
        document=documents.OPERATIONS,
        variables={"at": at, "family": family, "search": search, "first": OPERATIONS_PAGE, "after": after},
        query=[(k, v) for k, v in (("family", family), ("q", search), ("after", after)) if v],
        title=lambda d: _operations_title(family, search),
        description=lambda d: (
            f"{d['operations']['totalCount']:,} GPU-kernel operations with their benchmark runs and "
            "comparison groups, by name."
        ),
        extra=lambda data, links: _operations_extra(data, links, family, search),
    )
    return await render(request, spec, json_asked(request), at)


# GPUs -----------------------------------------------------------------------------------------------


@guarded
async def gpus(request: Request) -> Response:
    """`/gpus`: every GPU product with runs, cohorts and operations measured on it."""
    at = request.path_params.get("commit")
    spec = Spec(
        template="gpus.html",
        document=documents.GPUS,
        variables={"at": at},
        title=lambda d: "GPUs",
        description=lambda d: f"{len(d['gpus'])} GPU products and the kernel benchmark results measured on each.",
    )
    return await render(request, spec, json_asked(request), at)


def _gpu_extra(data: dict[str, Any], links: Urls, after: str | None) -> dict[str, Any]:
    found = data["gpu"]
    rows = []
    for node in _edges(found["operations"]):
        operation = node["operation"]
        rows.append(
            {
                "operation": operation,
                "name": humanize_operation(operation["title"] or operation["name"]) if operation else "—",
                "count": node["cohortCount"],
                "cohorts": _edges(node["cohorts"]),
            }
        )
    following = _next(found["operations"])
    return {
        "gpu": found,
        "rows": rows,
        "next_url": links.gpu(found["slug"], following) if following else None,
        "first_url": links.gpu(found["slug"]) if after else None,
    }


def _gpu_description(data: dict[str, Any]) -> str:
    found = data["gpu"]
    return (
        f"GPU-kernel benchmark results on {found['product']}: {found['runCount']:,} runs in "
        f"{found['cohortCount']:,} comparison groups over {found['operationCount']:,} operations, each with its #1."
    )


@guarded
async def gpu(request: Request) -> Response:
    """`/gpus/{slug}`: a GPU's operations, most cohorts first, each with its largest cohorts and their leaders."""
    slug, as_json = strip_json(request.path_params["slug"])
    at = request.path_params.get("commit")
    after = request.query_params.get("after") or None
    spec = Spec(
        template="gpu.html",
        document=documents.GPU,
        variables={"at": at, "id": slug, "first": GPU_PAGE, "after": after},
        query=[("after", after)] if after else [],
        title=lambda d: d["gpu"]["product"],
        description=_gpu_description,
        subject="gpu",
        missing=f"no GPU {slug}",
        extra=lambda data, links: _gpu_extra(data, links, after),
    )
    return await render(request, spec, as_json or json_asked(request), at)


# Models ---------------------------------------------------------------------------------------------


@guarded
async def models(request: Request) -> Response:
    """`/models`: every model with its serving runs and cohorts."""
    at = request.path_params.get("commit")
    spec = Spec(
        template="models.html",
        document=documents.MODELS,
        variables={"at": at},
        title=lambda d: "Models",
        description=lambda d: (
            f"{d['models']['totalCount']} models with LLM-serving results, each compared only "
            "inside its serving cohorts."
        ),
        extra=lambda data, links: {"rows": _edges(data["models"])},
    )
    return await render(request, spec, json_asked(request), at)


def _model_extra(data: dict[str, Any], links: Urls, after: str | None) -> dict[str, Any]:
    found = data["model"]
    rows = []
    for cohort in _edges(found["servingCohorts"]):
        frontier = [c["run"] for c in cohort["resolve"]["runs"] if c["onFrontier"] or c["rank"] == 1]
        rows.append({"cohort": cohort, "frontier": frontier})
    following = _next(found["servingCohorts"])
    return {
        "model": found,
        "rows": rows,
        "next_url": links.model(found["name"], following) if following else None,
        "first_url": links.model(found["name"]) if after else None,
    }


@guarded
async def model(request: Request) -> Response:
    """`/models/{id}`: a model's serving cohorts, largest first, each with its Pareto frontier."""
    ident, as_json = strip_json(request.path_params["ident"])
    at = request.path_params.get("commit")
    after = request.query_params.get("after") or None
    spec = Spec(
        template="model.html",
        document=documents.MODEL,
        variables={"at": at, "id": ident, "first": MODEL_PAGE, "after": after},
        query=[("after", after)] if after else [],
        title=lambda d: f"Model: {d['model']['title'] or d['model']['name']}",
        description=lambda d: (
            f"LLM-serving results of {d['model']['model']}: "
            f"{d['model']['servingRuns']['totalCount']:,} serving runs in "
            f"{d['model']['servingCohorts']['totalCount']:,} serving cohorts, each with its Pareto frontier."
        ),
        subject="model",
        missing=f"no model {ident}",
        extra=lambda data, links: _model_extra(data, links, after),
    )
    return await render(request, spec, as_json or json_asked(request), at)


# Projects and sources -------------------------------------------------------------------------------


@guarded
async def projects(request: Request) -> Response:
    """`/projects`: project standings, most cohorts led first."""
    at = request.path_params.get("commit")
    after = request.query_params.get("after") or None
    spec = Spec(
        template="projects.html",
        document=documents.PROJECTS,
        variables={"at": at, "first": PROJECTS_PAGE, "after": after},
        query=[("after", after)] if after else [],
        title=lambda d: "Projects: standings",
        description=lambda d: (
            f"Standings of {d['projects']['totalCount']:,} GPU software projects: comparison "
            "groups led and records held, counted inside each group."
        ),
        extra=lambda data, links: {
            "rows": _edges(data["projects"]),
            "next_url": links.projects(_next(data["projects"])) if _next(data["projects"]) else None,
            "first_url": links.projects() if after else None,
        },
    )
    return await render(request, spec, json_asked(request), at)


@guarded
async def sources(request: Request) -> Response:
    """`/sources`: where results come from, the terms of their data, what each published and when last."""
    at = request.path_params.get("commit")
    spec = Spec(
        template="sources.html",
        document=documents.SOURCES,
        variables={"at": at},
        title=lambda d: "Sources",
        description=lambda d: (
            f"The {len(d['sources'])} sources of this registry's results, with the licence and "
            "attribution of their data."
        ),
    )
    return await render(request, spec, json_asked(request), at)

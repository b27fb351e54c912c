"""The pages about what the registry holds: home, operation, implementation, project, source, commit."""

from __future__ import annotations

import itertools
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.codes import BAD_USER_INPUT
from kernelindex.core.urls import Urls
from kernelindex.http import operations
from kernelindex.http.requests import server_of, wants_json
from kernelindex.web import documents
from kernelindex.web.link_previews import head_links
from kernelindex.web.names import humanize_operation
from kernelindex.web.render import PageError, Spec, guarded, json_asked, render, strip_json
from kernelindex.web.sweeps import operation_sweep

__all__ = ["commit", "home", "home_or_index", "implementation", "operation", "project", "source"]

_COMMIT_ID = re.compile(r"[0-9a-f]{4,40}")
PUBLISHED_PAGE = 50  # manifests a commit page lists at a time (an import publishes thousands)


def _home_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    newest = data["newest"]["edges"]
    return {
        "counts": sorted(data["counts"], key=lambda c: -c["count"]),
        "records": [edge["node"] for edge in data["records"]["edges"]],
        "cohorts": [edge["node"] for edge in data["cohorts"]["edges"]],
        "newest_observation": newest[0]["node"]["observedAt"] if newest else None,
        "humanize": humanize_operation,
    }


@guarded
async def home_or_index(request: Request) -> Response:
    """`/`: the home page for a browser, the API's index for an API client."""
    return await home(request) if not wants_json(request) else await operations.index(request)


@guarded
async def home(request: Request) -> Response:
    """`/` for a browser (and `/index.json`): counts, the newest records, the largest cohorts, freshness."""
    at = request.path_params.get("commit")
    spec = Spec(
        template="home.html",
        document=documents.HOME,
        variables={"at": at},
        title=lambda d: "KernelIndex registry",
        feeds=lambda data, links: [
            ("New records", head_links(links).feed("records")),
            ("Publications: what each commit of main published", head_links(links).feed("publications")),
        ],
        extra=_home_extra,
    )
    return await render(request, spec, request.url.path.endswith(".json"), at)


def _of_operation(operation: dict[str, Any] | None) -> str:
    return f" of {humanize_operation(operation['title'] or operation['name'])}" if operation else ""


def _operation_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    found = data["operation"]
    cohorts = [edge["node"] for edge in found["cohorts"]["edges"]]
    name = humanize_operation(found["title"] or found["name"])
    sweep = operation_sweep(cohorts)
    cohorts.sort(
        key=lambda c: ((c["environment"] or {}).get("gpu") or "", (c["workload"] or {}).get("label") or "", -c["size"])
    )
    by_gpu = [
        (gpu, list(group))
        for gpu, group in itertools.groupby(cohorts, key=lambda c: (c["environment"] or {}).get("gpu") or "unknown GPU")
    ]
    return {
        "operation": found,
        "name": name,
        "by_gpu": by_gpu,
        "sweep": sweep,
        "sweep_title": f"{name}: {sweep.axis} against the best value, one line per GPU" if sweep else None,
        "related": [edge["node"] for edge in found["related"]["edges"]],
        "humanize": humanize_operation,
    }


def _operation_description(data: dict[str, Any]) -> str:
    found = data["operation"]
    return (
        f"{humanize_operation(found['title'] or found['name'])} ({found['family']}): {found['runCount']:,} GPU-kernel "
        f"benchmark runs in {found['cohorts']['totalCount']:,} comparison groups, each with its #1."
    )


@guarded
async def operation(request: Request) -> Response:
    """`/operations/{id}`: the operation's cohorts by GPU and workload, each with its #1."""
    ident, as_json = strip_json(request.path_params["ident"])
    at = request.path_params.get("commit")
    spec = Spec(
        template="operation.html",
        document=documents.OPERATION,
        variables={"at": at, "id": ident},
        title=lambda d: humanize_operation(d["operation"]["title"] or d["operation"]["name"]),
        description=_operation_description,
        feeds=lambda data, links: [
            (
                f"Records of {humanize_operation(data['operation']['title'] or data['operation']['name'])}",
                head_links(links).feed(f"operations/{data['operation']['digest']}"),
            )
        ],
        card=lambda data, links: links.operation_card(data["commit"]["id"], data["operation"]["digest"]),
        subject="operation",
        missing=f"no operation {ident}",
        extra=_operation_extra,
    )
    return await render(request, spec, as_json or json_asked(request), at)


@guarded
async def implementation(request: Request) -> Response:
    """`/implementations/{id}`: one revision of code, its project, and its runs with their ranks."""
    ident, as_json = strip_json(request.path_params["ident"])
    at = request.path_params.get("commit")
    spec = Spec(
        template="implementation.html",
        document=documents.IMPLEMENTATION,
        variables={"at": at, "id": ident},
        title=lambda d: f"{d['implementation']['displayName']} · {d['implementation']['name']}",
        description=lambda d: (
            f"{d['implementation']['displayName']}'s implementation {d['implementation']['name']}"
            f"{_of_operation(d['implementation']['operation'])}: {d['implementation']['runs']['totalCount']:,} "
            "benchmark runs with their ranks."
        ),
        subject="implementation",
        missing=f"no implementation {ident}",
        extra=lambda data, links: {"impl": data["implementation"], "humanize": humanize_operation},
    )
    return await render(request, spec, as_json or json_asked(request), at)


@guarded
async def project(request: Request) -> Response:
    """`/projects/{id}`: who maintains implementations, and which."""
    ident, as_json = strip_json(request.path_params["ident"])
    at = request.path_params.get("commit")
    spec = Spec(
        template="project.html",
        document=documents.PROJECT,
        variables={"at": at, "id": ident},
        title=lambda d: d["project"]["displayName"],
        description=lambda d: (
            f"{d['project']['displayName']}: "
            f"{d['project']['implementations']['totalCount']:,} implementations of GPU kernels and their runs."
        ),
        subject="project",
        missing=f"no project {ident}",
        extra=lambda data, links: {"project": data["project"], "humanize": humanize_operation},
    )
    return await render(request, spec, as_json or json_asked(request), at)


def _source_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    runs = [edge["node"] for edge in data["runs"]["edges"]]
    return {"runs": runs, "source": runs[0]["source"] if runs else None, "humanize": humanize_operation}


@guarded
async def source(request: Request) -> Response:
    """`/sources/{slug}`: where results come from, the terms of their data, and its newest runs."""
    slug, as_json = strip_json(request.path_params["slug"])
    at = request.path_params.get("commit")

    spec = Spec(
        template="source.html",
        document=documents.SOURCE,
        variables={"at": at, "slug": slug},
        title=lambda d: str(d["runs"]["edges"][0]["node"]["source"]["name"] or slug),
        description=lambda d: (
            f"{d['runs']['edges'][0]['node']['source']['name'] or slug}: "
            f"{d['runs']['totalCount']:,} GPU-kernel benchmark runs, with the licence and attribution of the data."
        ),
        found=lambda d: bool(d["runs"]["edges"]),
        missing=f"no runs from source {slug!r}",
        extra=_source_extra,
    )
    return await render(request, spec, as_json or json_asked(request), at)


def _commit_extra(data: dict[str, Any], links: Urls, after: str | None) -> dict[str, Any]:
    found = data["commit"]
    trailers: dict[str, list[str]] = {}
    for trailer in found["trailers"]:
        trailers.setdefault(trailer["key"], []).append(trailer["value"])
    published = data["published"]
    page_info = published["pageInfo"]
    return {
        "c": found,
        "trailers": trailers,
        "counts": sorted(data["counts"], key=lambda c: -c["count"]),
        "published_counts": sorted(data["publishedCounts"], key=lambda c: -c["count"]),
        "published": [edge["node"] for edge in published["edges"]],
        "published_total": published["totalCount"],
        "next_url": links.commit(found["id"], page_info["endCursor"]) if page_info["hasNextPage"] else None,
        "first_url": links.commit(found["id"]) if after else None,
    }


@guarded
async def commit(request: Request) -> Response:
    """`/commits/{id}`: a commit of main, what it published (50 a page), its provenance and signature,
    and the registry as of it."""
    ident, as_json = strip_json(request.path_params["commit_id"])
    if not _COMMIT_ID.fullmatch(ident):
        raise PageError(400, BAD_USER_INPUT, f"expected a commit id (4 to 40 lowercase hex digits), not {ident!r}")
    after = request.query_params.get("after") or None
    spec = Spec(
        template="commit.html",
        document=documents.COMMIT,
        variables={"at": ident, "first": PUBLISHED_PAGE, "after": after},
        title=lambda d: f"Commit {d['commit']['shortId']}: {d['commit']['subject']}",
        description=lambda d: (
            f"What commit {d['commit']['shortId']} of main published "
            f"({d['published']['totalCount']:,} manifests), who signed it, and the registry as of it."
        ),
        extra=lambda data, links: _commit_extra(data, links, after),
        canonical=lambda full: server_of(request).urls.commit(full),
        query=[("after", after)] if after else [],
    )
    return await render(request, spec, as_json or json_asked(request), ident)

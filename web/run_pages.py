"""A run's permalink (its page for a browser, its dossier for an API client), KernelIndex's run URLs, and
the badges."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from kernelindex.core.cache import REVALIDATE, Representation, entity_tag
from kernelindex.core.codes import BAD_USER_INPUT, MANIFEST_NOT_FOUND
from kernelindex.core.urls import Urls
from kernelindex.http import permalinks
from kernelindex.http.requests import not_ready, server_of
from kernelindex.http.responses import error, finish
from kernelindex.web import documents
from kernelindex.web.badges import AMBER, BLUE, GREEN, badge
from kernelindex.web.charts import step_chart
from kernelindex.web.kernelindex_ids import digest_of, id_of
from kernelindex.web.link_previews import head_links
from kernelindex.web.names import humanize_operation
from kernelindex.web.render import Spec, cached, copy_citations, json_asked, render
from kernelindex.web.serving_pages import serving_run_page

__all__ = ["implementation_badge", "kernelindex_run", "run_badge", "run_description", "run_page", "run_permalink"]

SVG = "image/svg+xml"

# What each evidence level means, and what would raise it (attestations never do).
_EVIDENCE = {
    "REPORTED": "Reported: the source published the number; nobody here has rerun it.",
    "REPRODUCIBLE": "Reproducible: the implementation's source is public and the run carries raw evidence.",
    "VERIFIED": "Verified: a registry-controlled rerun in the same comparison group confirmed it.",
    "REPLICATED": "Replicated: two or more independent registry-controlled reruns confirmed it.",
}


def _raise_evidence(run: dict[str, Any]) -> str:
    trust = run["trust"]
    if trust == "REPORTED":
        public = bool(run["implementation"] and run["implementation"]["sourceAvailable"])
        missing = [
            *([] if public else ["public source for its implementation"]),
            *([] if run["hasRawEvidence"] else ["raw evidence with the run (raw samples or logs)"]),
        ]
        return (
            f"Reproducible needs {' and '.join(missing)}; verified needs a signed Verification of a "
            "registry-controlled rerun."
        )
    if trust == "REPRODUCIBLE":
        return "Verified needs a signed Verification of a registry-controlled rerun in the same comparison group."
    if trust == "VERIFIED":
        return "Replicated needs a second, independent verified rerun."
    return "This is the highest evidence level."


def _run_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    run = data["run"]
    operation = run["operation"]
    history = run["cohort"]["history"] if run["cohort"] else []
    leader = run["leader"]
    return {
        "run": run,
        "kernelindex_id": id_of(run["digest"]),
        "operation_name": humanize_operation(operation["title"] or operation["name"]) if operation else None,
        "compare_url": links.compare([leader["digest"], run["digest"]])
        if leader and leader["digest"] != run["digest"]
        else None,
        "evidence": _EVIDENCE.get(run["trust"], run["trust"]),
        "raise_evidence": _raise_evidence(run),
        "history_chart": step_chart(
            [(event["at"], event["value"], event["run"]["name"] if event["run"] else "") for event in history],
            until=data["commit"]["committedAt"],
        ),
    }


def _run_title(data: dict[str, Any]) -> str:
    """`Run 01a0032e · Databricks · 59.8 µs`: KernelIndex's short run id where it has one, else the digest's."""
    run = data["run"]
    short = (id_of(run["digest"]) or run["digest"].removeprefix("sha256:"))[:8]
    who = run["implementation"]["displayName"] if run["implementation"] else run["name"]
    value = run["primary"]["display"] if run["primary"] else "no primary measurement"
    return f"Run {short} · {who} · {value}"


def run_description(data: dict[str, Any]) -> str:
    """`Rank 2 of 14 in its comparison group · 144.6 µs mean latency · Recursive on NVIDIA B200 (sm_100):
    Fused attention …`: what a shared link to a run says."""
    run = data["run"]
    who = run["implementation"]["displayName"] if run["implementation"] else run["name"]
    gpu = run["environment"]["gpu"] if run["environment"] else "an unknown GPU"
    operation = run["operation"]
    what = humanize_operation(operation["title"] or operation["name"]) if operation else "an unknown operation"
    primary = run["primary"]
    value = f"{primary['display']} {primary['statistic']} {primary['metric']}" if primary else "no primary measurement"
    cohort = run["cohort"]
    rank = (
        f"Rank {run['rank']} of {cohort['rankedCount']} in its comparison group"
        if run["rank"] and cohort
        else "Not ranked"
    )
    return f"{rank} · {value} · {who} on {gpu}: {what}."


async def run_permalink(request: Request) -> Response:
    """`/at/{commit}/runs/{digest}`: one URL, two audiences: the run's page for a browser, its dossier for an
    API client (and at `.json`, whatever the client accepts)."""
    as_json = json_asked(request)
    if not as_json:
        # A run page shown before at this head skips the permalink's checks, which it passed then: a repeat
        # costs what a cached GraphQL answer does.
        variables = _variables(request, request.path_params["commit"], request.path_params["digest"])
        shown = cached(request, "run.html", variables)
        if shown is not None:
            return shown
    target = await permalinks.resolve_run(request)
    if isinstance(target, Response):
        return target
    if target.kind == "run" and not as_json:
        return await run_page(request, target.commit, target.digest)
    if target.kind == "servingRun" and not as_json:
        return await serving_run_page(request, target.commit, target.digest)
    return await permalinks.dossier(request, target)


def _variables(request: Request, commit: str, digest: str) -> dict[str, Any]:
    """The run page's variables: the dossier's, and its citations to copy (`kernelindex.web.render.copy_citations`)."""
    return {"at": commit, "id": digest, **copy_citations(request)}


async def run_page(request: Request, commit: str, digest: str) -> Response:
    """The run page at its permalink, pinned to `commit` (already checked to be a full id of main)."""
    spec = Spec(
        template="run.html",
        document=documents.RUN,
        variables=_variables(request, commit, digest),
        title=_run_title,
        description=run_description,
        feeds=lambda data, links: (
            [
                (
                    "Records of this run's comparison group",
                    head_links(links).feed(f"cohorts/{data['run']['cohort']['key']}"),
                )
            ]
            if data["run"]["cohort"]
            else []
        ),
        card=lambda data, links: links.run_card(data["commit"]["id"], data["run"]["digest"]),
        subject="run",
        missing=f"run not found: {digest}",
        extra=_run_extra,
    )
    return await render(request, spec, as_json=False, at=commit)


async def kernelindex_run(request: Request) -> Response:
    """KernelIndex's `/runs/{uuid}`: a permanent redirect to the run's permalink (the commit that published it)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    digest = digest_of(request.path_params["run_id"])
    if digest is None:
        message = f"no KernelIndex run {request.path_params['run_id']} in the catalog export"
        return error(404, message, MANIFEST_NOT_FOUND)
    answer = await server.queries.answer(documents.RUN_BY_ID, {"id": digest})
    run = (answer.data or {}).get("registry", {}).get("run") if answer.data else None
    if run is None:
        return error(404, f"run {digest} is not in this registry", MANIFEST_NOT_FOUND)
    return RedirectResponse(server.urls.run(run["provenance"]["commit"]["id"], run["digest"]), status_code=301)


def _svg(request: Request, svg: str, commit: str) -> Response:
    body = svg.encode()
    headers = {"etag": entity_tag(body), "cache-control": REVALIDATE, "x-kernelindex-commit": commit}
    return Response(body, media_type=SVG, headers=headers)


async def _badge_data(request: Request, document: str, field: str) -> tuple[dict[str, Any] | None, str] | Response:
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    ident = request.path_params["ident"]
    answer = await server.queries.answer(document, {"at": request.path_params.get("commit"), "id": ident})
    if answer.data is None or answer.data.get("registry") is None:
        return error(400, answer.messages or "no answer", BAD_USER_INPUT)
    found: dict[str, Any] | None = answer.data["registry"][field]
    return found, answer.data["registry"]["commit"]["id"]


async def _kept_badge(request: Request, name: str, draw: Callable[[Request], Awaitable[Response]]) -> Response:
    """A badge from the pages' cache, else drawn (`draw`) and kept: it depends only on the served head, its kind
    and what the URL names (it executed its query on every request before)."""
    server = server_of(request)
    refusal = not_ready(server)
    if refusal is not None:
        return refusal
    asked = orjson.dumps([request.path_params.get("commit"), request.path_params["ident"]]).decode()
    key = (server.snapshots.head.commit, f"badge:{name}", asked, "svg")
    kept = server.pages.get(key)
    if kept is None:
        drawn = await draw(request)
        if drawn.status_code != 200:
            return drawn
        kept = Representation(bytes(drawn.body), SVG, {k: v for k, v in drawn.headers.items() if k == "cache-control"})
        kept.headers["x-kernelindex-commit"] = drawn.headers["x-kernelindex-commit"]
        server.pages.put(key, kept)
    return finish(request, kept.body, media_type=SVG, headers=kept.headers)


async def run_badge(request: Request) -> Response:
    """`/badges/runs/{id}.svg`: the run's rank in its cohort and its value, at the head of main."""
    return await _kept_badge(request, "run", _run_badge)


async def implementation_badge(request: Request) -> Response:
    """`/badges/implementations/{id}.svg`: the best rank any of its runs holds in its cohort, with that value."""
    return await _kept_badge(request, "implementation", _implementation_badge)


async def _run_badge(request: Request) -> Response:
    answer = await _badge_data(request, documents.RUN_BADGE, "run")
    if isinstance(answer, Response):
        return answer
    run, commit = answer
    if run is None:
        return _svg(request, badge("kernelindex", "run not found", AMBER), commit)
    value = run["primary"]["display"] if run["primary"] else "no value"
    if run["rank"] is None:
        return _svg(request, badge("kernelindex", f"not ranked · {value}", AMBER), commit)
    color = GREEN if run["rank"] == 1 else BLUE
    return _svg(
        request, badge("kernelindex", f"rank {run['rank']}/{run['cohort']['rankedCount']} · {value}", color), commit
    )


async def _implementation_badge(request: Request) -> Response:
    answer = await _badge_data(request, documents.IMPLEMENTATION_BADGE, "implementation")
    if isinstance(answer, Response):
        return answer
    found, commit = answer
    if found is None:
        return _svg(request, badge("kernelindex", "implementation not found", AMBER), commit)
    ranked = [edge["node"] for edge in found["runs"]["edges"] if edge["node"]["rank"] is not None]
    if not ranked:
        return _svg(request, badge(found["displayName"], "not ranked", AMBER), commit)
    best = min(ranked, key=lambda node: (node["rank"], node["primary"]["value"]))
    message = f"rank {best['rank']}/{best['cohort']['rankedCount']} · {best['primary']['display']}"
    return _svg(request, badge(found["displayName"], message, GREEN if best["rank"] == 1 else BLUE), commit)

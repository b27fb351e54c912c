"""The preview images of run, cohort and operation pages (`.../card.png`, always pinned to a commit): each a
frontend of one GraphQL document, like the pages, drawn by `web/cards.py`. Pinned to a full commit id of
main, an image never changes (immutable caching); a prefix redirects to the full id; off main is 404."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.web import documents
from kernelindex.web.cards import Card, drawn
from kernelindex.web.link_previews import SITE
from kernelindex.web.names import day, humanize_operation
from kernelindex.web.render import Format, Spec, guarded, json_asked, render

__all__ = ["PNG", "cohort_card", "operation_card", "run_card"]

PNG = "image/png"


def _operation(found: dict[str, Any] | None) -> str:
    return humanize_operation(found["title"] or found["name"]) if found else "Unknown operation"


def _foot(data: dict[str, Any]) -> str:
    commit = data["commit"]
    return f"{SITE} · commit {commit['shortId']} of {day(commit['committedAt'])}"


def _who(run: dict[str, Any] | None) -> str:
    return str(run["implementation"]["displayName"]) if run and run["implementation"] else "unknown implementation"


def run_card_of(data: dict[str, Any]) -> Card:
    """A run's card: its operation, value, rank, implementation and GPU."""
    run = data["run"]
    primary = run["primary"]
    cohort = run["cohort"]
    rank = (
        f"Rank {run['rank']} of {cohort['rankedCount']} in its comparison group"
        if run["rank"] and cohort
        else "Not ranked"
    )
    gpu = run["environment"]["gpu"] if run["environment"] else "unknown GPU"
    statistic = f"{primary['statistic']} {primary['metric']} · " if primary else ""
    return Card(
        title=_operation(run["operation"]),
        value=primary["display"] if primary else "no primary measurement",
        lines=(rank, f"{_who(run)} on {gpu}", f"{statistic}evidence: {run['trust'].lower()}"),
        foot=_foot(data),
    )


def cohort_card_of(data: dict[str, Any]) -> Card:
    """A cohort's card: its operation, its #1's value and implementation, its size and GPU."""
    cohort = data["cohort"]
    leader = cohort["leader"]
    gpu = cohort["environment"]["gpu"] if cohort["environment"] else "unknown GPU"
    return Card(
        title=_operation(cohort["operation"]),
        value=leader["primary"]["display"] if leader and leader["primary"] else "no ranked run",
        lines=(
            f"#1: {_who(leader)}" if leader else "No run ranks here yet",
            f"{cohort['rankedCount']} ranked of {cohort['size']} runs on {gpu}",
            cohort["workload"]["label"] if cohort["workload"] else "unknown workload",
        ),
        foot=_foot(data),
    )


def operation_card_of(data: dict[str, Any]) -> Card:
    """An operation's card: its runs and comparison groups, and its largest group's #1."""
    found = data["operation"]
    cohorts = found["cohorts"]
    largest = cohorts["edges"][0]["node"] if cohorts["edges"] else None
    leader = largest["leader"] if largest else None
    gpu = largest["environment"]["gpu"] if largest and largest["environment"] else "unknown GPU"
    count = cohorts["totalCount"]
    lines = [f"{count:,} comparison group{'' if count == 1 else 's'} · family {found['family']}"]
    if leader and leader["primary"]:
        lines.append(f"Largest group's #1: {_who(leader)}, {leader['primary']['display']} on {gpu}")
    return Card(
        title=_operation(found),
        value=f"{found['runCount']:,} runs",
        lines=tuple(lines),
        foot=_foot(data),
    )


def _png(make: Any) -> Format:
    # Drawn in a worker thread (as every page is made), and kept by the card's words (`drawn`): every alias of
    # the same run, cohort or operation at the same commit says the same words and is drawn once.
    return Format("png", PNG, lambda data, links, meta: drawn(make(data)))


@guarded
async def run_card(request: Request) -> Response:
    """`/at/{commit}/runs/{digest}/card.png`: the run page's preview image."""
    at, digest = request.path_params["commit"], request.path_params["digest"]
    spec = Spec(
        template="card:run",
        document=documents.RUN_CARD,
        variables={"at": at, "id": digest},
        title=lambda d: "Run card",
        subject="run",
        missing=f"run not found: {digest}",
    )
    return await render(request, spec, json_asked(request), at, _png(run_card_of))


@guarded
async def cohort_card(request: Request) -> Response:
    """`/at/{commit}/cohorts/{key}/card.png`: the leaderboard page's preview image."""
    at, key = request.path_params["commit"], request.path_params["key"]
    spec = Spec(
        template="card:cohort",
        document=documents.COHORT_CARD,
        variables={"at": at, "key": key},
        title=lambda d: "Cohort card",
        subject="cohort",
        missing=f"no cohort {key}",
    )
    return await render(request, spec, json_asked(request), at, _png(cohort_card_of))


@guarded
async def operation_card(request: Request) -> Response:
    """`/at/{commit}/operations/{id}/card.png`: the operation page's preview image."""
    at, ident = request.path_params["commit"], request.path_params["ident"]
    spec = Spec(
        template="card:operation",
        document=documents.OPERATION_CARD,
        variables={"at": at, "id": ident},
        title=lambda d: "Operation card",
        subject="operation",
        missing=f"no operation {ident}",
    )
    return await render(request, spec, json_asked(request), at, _png(operation_card_of))

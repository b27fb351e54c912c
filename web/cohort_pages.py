"""The pages about ranking: a cohort's leaderboard, the records ledger, and compare."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.codes import BAD_USER_INPUT
from kernelindex.core.urls import Urls
from kernelindex.web import documents
from kernelindex.web.charts import IntervalRow, interval_chart, step_chart
from kernelindex.web.compare_formats import CSV, MARKDOWN, compare_csv, compare_markdown
from kernelindex.web.link_previews import head_links
from kernelindex.web.names import humanize_operation
from kernelindex.web.render import Format, PageError, Spec, copy_citations, guarded, json_asked, render, strip_json

__all__ = ["COMPARE_MAX", "COMPARE_MIN", "LEADERBOARD_PAGE", "RECORDS_PAGE", "compare", "leaderboard", "records"]

LEADERBOARD_PAGE = 50
RECORDS_PAGE = 25
COMPARE_MIN = 2
COMPARE_MAX = 8
_TRUSTS = ("REPORTED", "REPRODUCIBLE", "VERIFIED", "REPLICATED")


def _operation_name(operation: dict[str, Any] | None) -> str:
    return humanize_operation(operation["title"] or operation["name"]) if operation else "unknown operation"


def _who(run: dict[str, Any]) -> str:
    return str(run["implementation"]["displayName"]) if run["implementation"] else str(run["name"])


def _leaderboard_title(data: dict[str, Any]) -> str:
    cohort = data["cohort"]
    gpu = cohort["environment"]["gpu"] if cohort["environment"] else "unknown GPU"
    return f"Leaderboard: {_operation_name(cohort['operation'])}, {gpu}"


def _leaderboard_description(data: dict[str, Any]) -> str:
    cohort = data["cohort"]
    workload = cohort["workload"]["label"] if cohort["workload"] else "an unknown workload"
    first = cohort["entries"]["edges"][0]["node"]["run"] if cohort["entries"]["edges"] else None
    leader = f" #1: {_who(first)}, {first['primary']['display']}." if first and first["primary"] else ""
    return f"{cohort['rankedCount']} ranked runs of {_operation_name(cohort['operation'])} ({workload}).{leader}"


def _leaderboard_extra(data: dict[str, Any], links: Urls, after: str | None, min_trust: str | None) -> dict[str, Any]:
    cohort = data["cohort"]
    entries = [edge["node"] for edge in cohort["entries"]["edges"]]
    rows = []
    for entry in entries:
        primary = entry["run"]["primary"]
        interval = primary["interval"] or {}
        rows.append(
            IntervalRow(
                value=primary["value"],
                low=interval.get("low"),
                high=interval.get("high"),
                label=f"#{entry['rank']} {_who(entry['run'])}: {primary['display']}",
                tied=entry["tiedWithPrevious"],
            )
        )
    page_info = cohort["entries"]["pageInfo"]
    commit, unit = data["commit"]["id"], cohort["metricKey"].split(":")[-1]
    # Each row's links and interval made here, in Python: in the template, each call went through Jinja2's
    # Context.call and each step through its attribute lookup (~0.1 ms of a 50-row page).
    board = [
        (
            entry,
            links.implementation(run["implementation"]["digest"]) if run["implementation"] else None,
            links.run(commit, run["digest"]),
            f"{interval['low']:,.6g} to {interval['high']:,.6g} {unit}" if interval else None,
        )
        for entry in entries
        for run, interval in [(entry["run"], entry["run"]["primary"]["interval"])]
    ]
    return {
        "cohort": cohort,
        "board": board,
        "operation_name": _operation_name(cohort["operation"]),
        "chart": interval_chart(
            rows,
            entries[0]["run"]["primary"]["display"] if entries else "",
            entries[-1]["run"]["primary"]["display"] if entries else "",
        ),
        "next_url": links.cohort(cohort["key"], page_info["endCursor"], min_trust)
        if page_info["hasNextPage"]
        else None,
        "first_url": links.cohort(cohort["key"], None, min_trust) if after else None,
        "trust_filters": [
            (t, links.cohort(cohort["key"], None, None if t == "REPORTED" else t), t == (min_trust or "REPORTED"))
            for t in _TRUSTS
        ],
        "min_trust": min_trust,
    }


@guarded
async def leaderboard(request: Request) -> Response:
    """`/cohorts/{key}`: the cohort's ranked entries, 50 a page, with their values and intervals drawn."""
    key, as_json = strip_json(request.path_params["key"])
    at = request.path_params.get("commit")
    after = request.query_params.get("after") or None
    min_trust = request.query_params.get("minTrust") or None
    if min_trust is not None and min_trust not in _TRUSTS:
        raise PageError(400, BAD_USER_INPUT, f"minTrust: expected one of {', '.join(_TRUSTS)}, not {min_trust!r}")
    spec = Spec(
        template="leaderboard.html",
        document=documents.LEADERBOARD,
        variables={
            "at": at,
            "key": key,
            "first": LEADERBOARD_PAGE,
            "after": after,
            "minTrust": min_trust,
            **copy_citations(request),
        },
        title=_leaderboard_title,
        description=_leaderboard_description,
        feeds=lambda data, links: [
            (
                f"Records of this comparison group: {_leaderboard_title(data)}",
                head_links(links).feed(f"cohorts/{data['cohort']['key']}"),
            )
        ],
        card=lambda data, links: links.cohort_card(data["commit"]["id"], data["cohort"]["key"]),
        subject="cohort",
        missing=f"no cohort {key}",
        extra=lambda data, links: _leaderboard_extra(data, links, after, min_trust),
        query=[(k, v) for k, v in (("after", after), ("minTrust", min_trust)) if v],
    )
    return await render(request, spec, as_json or json_asked(request), at)


def _records_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    ledger = data["records"]
    rows = []
    for edge in ledger["edges"]:
        node = edge["node"]
        history = node["cohort"]["history"]
        rows.append(
            {
                "node": node,
                "operation_name": _operation_name(node["cohort"]["operation"]),
                "chart": step_chart(
                    [(e["at"], e["value"], e["run"]["name"] if e["run"] else "") for e in history],
                    until=data["commit"]["committedAt"],
                ),
                "events": len(history),
            }
        )
    page_info = ledger["pageInfo"]
    return {"rows": rows, "next_url": links.records(page_info["endCursor"]) if page_info["hasNextPage"] else None}


@guarded
async def records(request: Request) -> Response:
    """`/records`: every cohort's current record holder, newest first, with its record history drawn."""
    at = request.path_params.get("commit")
    after = request.query_params.get("after") or None
    spec = Spec(
        template="records.html",
        document=documents.RECORDS,
        variables={"at": at, "first": RECORDS_PAGE, "after": after},
        title=lambda d: "Records ledger",
        description=lambda d: (
            f"The records ledger: the current record holder of each of {d['records']['totalCount']:,} "
            "comparison groups, newest record first."
        ),
        feeds=lambda data, links: [("New records", head_links(links).feed("records"))],
        extra=_records_extra,
        query=[("after", after)] if after else [],
    )
    return await render(request, spec, json_asked(request), at)


def _compare_extra(data: dict[str, Any], links: Urls) -> dict[str, Any]:
    found = data["compare"]
    ranks = {entry["run"]["digest"]: entry for entry in found["entries"] or ()}
    rows = sorted(found["rows"], key=lambda row: (not row["material"] or row["same"], row["same"]))
    return {"compare": found, "ranks": ranks, "rows": rows}


def _compare_file(request: Request) -> Format | None:
    """The compare page as a file when its path asks for one (`/compare.md`, `/compare.csv`), else None."""
    path = request.url.path
    if path.endswith(".csv"):
        return Format(
            "csv",
            CSV,
            lambda data, links, meta: compare_csv(data["compare"]),
            {"content-disposition": f'attachment; filename="compare-{_file_commit(request)}.csv"'},
        )
    if path.endswith(".md"):
        return Format(
            "md",
            MARKDOWN,
            lambda data, links, meta: compare_markdown(
                data["compare"], meta["commit"], meta["committed_at"], links.compare(_runs(request))
            ),
        )
    return None


def _file_commit(request: Request) -> str:
    """What a downloaded file is named after: the commit its URL pins, else `head`."""
    return str(request.path_params.get("commit") or "head")


def _runs(request: Request) -> list[str]:
    return request.query_params.getlist("run")


@guarded
async def compare(request: Request) -> Response:
    """`/compare?run=A&run=B...`: 2 to 8 runs side by side, material mismatches first; `/compare.md` and
    `/compare.csv` are the same table as Markdown and CSV."""
    at = request.path_params.get("commit")
    runs = request.query_params.getlist("run")
    if not COMPARE_MIN <= len(runs) <= COMPARE_MAX:
        raise PageError(
            400, BAD_USER_INPUT, f"compare takes {COMPARE_MIN} to {COMPARE_MAX} runs (?run=A&run=B), not {len(runs)}"
        )
    spec = Spec(
        template="compare.html",
        document=documents.COMPARE,
        variables={"at": at, "runs": runs},
        title=lambda d: f"Compare {len(d['compare']['runs'])} runs",
        description=_compare_description,
        extra=_compare_extra,
        query=[("run", run) for run in runs],
    )
    other = _compare_file(request)
    return await render(request, spec, json_asked(request) and other is None, at, other)


def _compare_description(data: dict[str, Any]) -> str:
    found = data["compare"]
    names = ", ".join(_who(run) for run in found["runs"])
    if found["material"]:
        return f"{names}: not comparable, they differ in {', '.join(found['material'])}."
    return f"{names} side by side" + (", ranked in one comparison group." if found["sameCohort"] else ".")

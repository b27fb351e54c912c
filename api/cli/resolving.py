"""`kernelindex serving runs|cohorts|resolve` and `kernelindex resolve kernel`: serving results, and the two
resolvers (which run to deploy for a serving cohort under bounds; which kernel cohort answers a request).

Like every read command they run one named GraphQL document through `kernelindex.cli.ask` (locally or `--api URL`) and
print it with `kernelindex.cli.listing`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any

import typer

from kernelindex.cli.browsing import read, short
from kernelindex.cli.console import guarded
from kernelindex.cli.listing import Column, Listing, dig, nodes, output, print_listing
from kernelindex.cli.options import (
    API_TIMEOUT_SECONDS,
    ApiOption,
    ApiTimeoutOption,
    AtOption,
    CursorOption,
    JsonlOption,
    JsonOption,
    LimitOption,
    RepoOption,
)
from kernelindex.cli.vocabularies import ServingRunStatus

__all__ = ["resolve_app", "serving_app"]

serving_app = typer.Typer(
    help="Serving results: runs, cohorts and the resolver (which run meets your bounds).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
resolve_app = typer.Typer(
    help="The resolvers: which measured results answer a request.", no_args_is_help=True, rich_markup_mode=None
)

_SERVING_COLUMNS = (
    Column("run", lambda r: short(r["digest"])),
    Column("name", lambda r: r["name"]),
    Column("model", lambda r: dig(r, "model", "name")),
    Column("submitter", lambda r: r["submitter"]),
    Column("accelerator", lambda r: dig(r, "topology", "acceleratorModel")),
    Column("count", lambda r: dig(r, "topology", "totalAccelerators"), right=True),
    Column("scenario", lambda r: r["scenario"]),
    Column("quality", lambda r: r["qualityPolicy"]),
    Column("status", lambda r: r["status"]),
    Column("trust", lambda r: r["trust"]),
)


def _heading(what: str, connection: dict[str, Any] | None, shown: int, commit: str) -> str:
    total = (connection or {}).get("totalCount", shown)
    return f"{what}: {shown:,} of {total:,} at {commit[:12]}"


@serving_app.command("runs")
@guarded
def serving_runs(
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    model: Annotated[str | None, typer.Option(help="A model: name, digest or prefix.")] = None,
    accelerator: Annotated[str | None, typer.Option(help="An accelerator, a word of it ('h200').")] = None,
    scenario: Annotated[str | None, typer.Option(help="A load scenario (Server, Offline...).")] = None,
    submitter: Annotated[str | None, typer.Option(help="Who submitted the result.")] = None,
    quality_policy: Annotated[str | None, typer.Option(help="An accuracy target (mlperf_closed_99...).")] = None,
    cohort: Annotated[str | None, typer.Option(help="A serving cohort key or a prefix of >= 12 hex digits.")] = None,
    status: Annotated[
        list[ServingRunStatus] | None, typer.Option(case_sensitive=False, help="Only this outcome (repeatable).")
    ] = None,
    eligible: Annotated[bool, typer.Option("--eligible", help="Only runs that rank.")] = False,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """Serving runs, narrowed as the API's ServingRunFilter narrows them."""
    from kernelindex.cli.documents import SERVING_RUNS

    mode = output(as_json, as_jsonl)
    given: dict[str, Any] = {
        "model": model,
        "accelerator": accelerator,
        "scenario": scenario,
        "submitter": submitter,
        "qualityPolicy": quality_policy,
        "cohort": cohort,
        "status": [s.value for s in status] if status else None,
        "eligibleOnly": eligible or None,
    }
    run_filter = {key: value for key, value in given.items() if value is not None}
    data = read(
        SERVING_RUNS, {"filter": run_filter or None, "first": limit, "after": cursor}, repo, api, at, api_timeout
    )
    snapshot = data["registry"]
    items, more = nodes(snapshot["servingRuns"])
    heading = _heading("serving runs", snapshot["servingRuns"], len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, _SERVING_COLUMNS, more), mode)


@serving_app.command("cohorts")
@guarded
def serving_cohorts(
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    model: Annotated[str | None, typer.Option(help="A model: name, digest or prefix.")] = None,
    workload: Annotated[str | None, typer.Option(help="A serving workload: name, digest or prefix.")] = None,
    min_size: Annotated[int | None, typer.Option("--min-size", min=0, help="At least this many runs.")] = None,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """Serving cohorts: the runs comparable with each other (same model, load, topology, quality and metrics)."""
    from kernelindex.cli.documents import SERVING_COHORTS

    mode = output(as_json, as_jsonl)
    given = {"model": model, "workload": workload, "minSize": min_size}
    cohort_filter = {key: value for key, value in given.items() if value is not None}
    data = read(
        SERVING_COHORTS, {"filter": cohort_filter or None, "first": limit, "after": cursor}, repo, api, at, api_timeout
    )
    snapshot = data["registry"]
    items, more = nodes(snapshot["servingCohorts"])
    columns = (
        Column("cohort", lambda c: short(c["key"])),
        Column("model", lambda c: dig(c, "model", "name")),
        Column("workload", lambda c: dig(c, "workload", "name")),
        Column("topology", lambda c: c["topologyKey"]),
        Column("quality", lambda c: c["qualityPolicy"]),
        Column("runs", lambda c: c["size"], right=True),
        Column("metrics", lambda c: [f"{m['metric']}·{m['statistic']}" for m in c["metrics"]]),
    )
    heading = _heading("serving cohorts", snapshot["servingCohorts"], len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, columns, more), mode)


_BOUND = re.compile(
    r"^\s*(?P<metric>[A-Za-z0-9_.]+)(?::(?P<statistic>[A-Za-z0-9_.]+))?\s*(?P<op><=|>=|<|>)\s*(?P<value>\S+)\s*$"
)


def _constraint(text: str) -> dict[str, Any]:
    """`ttft_ms<=200` or `ttft_ms:p99 <= 200` as a ServingConstraintInput; anything else is a usage error.

    >>> _constraint("ttft_ms:p99<=200")
    {'metric': 'ttft_ms', 'operator': '<=', 'value': 200.0, 'statistic': 'p99'}
    """
    matched = _BOUND.match(text)
    value: float | None = None
    if matched:
        try:
            value = float(matched["value"])
        except ValueError:
            value = None
    if matched is None or value is None or value != value or value in (float("inf"), float("-inf")):
        raise typer.BadParameter(f"{text!r}: expected METRIC[:STATISTIC] <=|<|>=|> NUMBER", param_hint="--where")
    bound: dict[str, Any] = {"metric": matched["metric"], "operator": matched["op"], "value": value}
    if matched["statistic"]:
        bound["statistic"] = matched["statistic"]
    return bound


@serving_app.command("resolve")
@guarded
def serving_resolve(
    key: Annotated[str, typer.Argument(metavar="COHORT", help="A serving cohort key or a prefix of >= 12 hex digits.")],
    where: Annotated[
        list[str] | None,
        typer.Option("--where", help="A bound every run must meet: 'ttft_ms<=200', 'tpot_ms:p99<50' (repeatable)."),
    ] = None,
    objective: Annotated[
        str | None, typer.Option(help="Rank the feasible runs by this metric (default: the Pareto frontier).")
    ] = None,
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """A serving cohort's runs that meet every bound, ranked by an objective, else its Pareto frontier."""
    from kernelindex import registry
    from kernelindex.cli.documents import SERVING_RESOLVE

    mode = output(as_json, as_jsonl)
    constraints = [_constraint(text) for text in where or []]
    variables = {
        "key": key,
        "constraints": constraints or None,
        "objective": {"metric": objective} if objective else None,
    }
    data = read(SERVING_RESOLVE, variables, repo, api, at, api_timeout)
    snapshot = data["registry"]
    found = snapshot["servingCohort"]
    if found is None:
        raise registry.RegistryError(f"no serving cohort {key!r} at {snapshot['commit']['id'][:12]}")
    resolution = found["resolve"] or {}
    metric = dig(resolution, "objective", "metric")
    columns = (
        Column("rank", lambda c: c["rank"], right=True),
        Column(metric or "value", lambda c: c["value"], right=True),
        Column("frontier", lambda c: c["onFrontier"]),
        *_SERVING_COLUMNS[:6],
        Column("missing", lambda c: c["missingAxes"]),
    )
    items = resolution.get("runs") or []
    reasons = Counter(reason for x in resolution.get("excluded") or [] for reason in x["reasons"])
    listed = ", ".join(f"{reason} × {count:,}" for reason, count in sorted(reasons.items()))
    notes = [f"excluded: {len(resolution.get('excluded') or []):,} runs ({listed})"] if reasons else []
    how = f"ranked by {metric}" if metric else "the Pareto frontier"
    heading = (
        f"serving cohort {short(found['key'])} ({dig(found, 'model', 'name') or '-'}, {found['size']:,} runs): "
        f"{len(items):,} feasible, {how}, at {snapshot['commit']['id'][:12]}"
    )
    print_listing(Listing(data, heading, items, [_flat(c) for c in columns], None, notes), mode)


def _flat(column: Column) -> Column:
    """A column of a serving run read from a candidate (whose run is nested), candidate fields first."""
    return Column(
        column.header, lambda c: column.value({**c["run"], **{k: v for k, v in c.items() if k != "run"}}), column.right
    )


_AXIS = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>-?\d+)\s*$")


def _axes(texts: list[str]) -> list[dict[str, Any]]:
    axes = []
    for text in texts:
        matched = _AXIS.match(text)
        if matched is None:
            raise typer.BadParameter(f"{text!r}: expected NAME=INTEGER", param_hint="--axis")
        axes.append({"name": matched["name"], "value": int(matched["value"])})
    return axes


def _shape(text: str) -> list[int]:
    """`2048x4096` or `2048,4096` (or `[2048, 4096]`) as dimensions; anything else is a usage error.

    >>> _shape("2048x4096"), _shape("[2048, 4096]")
    ([2048, 4096], [2048, 4096])
    """
    parts = [part.strip() for part in re.split(r"[x,]", text.strip().strip("[]"))]
    if not parts or not all(re.fullmatch(r"\d{1,12}", part) for part in parts):
        raise typer.BadParameter(f"{text!r}: expected dimensions such as 2048x4096", param_hint="--shape")
    return [int(part) for part in parts]


@resolve_app.command("kernel")
@guarded
def resolve_kernel(
    operation: Annotated[
        str, typer.Argument(metavar="OPERATION", help="Its name, title, family or a benchmark's name ('rmsnorm').")
    ],
    gpu: Annotated[str | None, typer.Option(help="A GPU product or architecture ('b200', 'sm_100').")] = None,
    dtype: Annotated[str | None, typer.Option(help="A dtype (bfloat16, bf16...).")] = None,
    shape: Annotated[str | None, typer.Option(help="A tensor shape of the case: 2048x4096.")] = None,
    axis: Annotated[
        list[str] | None, typer.Option("--axis", help="An axis of the case: tokens=3000 (repeatable).")
    ] = None,
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """The cohorts measuring exactly a request, with their leader, best verified and best deployable runs; else the
    nearest measured cases with each difference explained; else what the registry does not know."""
    from kernelindex.cli.documents import RESOLVE_KERNEL

    mode = output(as_json, as_jsonl)
    variables = {
        "operation": operation,
        "gpu": gpu,
        "dtype": dtype,
        "shape": _shape(shape) if shape is not None else None,
        "axes": _axes(axis) if axis else None,
        "first": limit,
        "after": cursor,
    }
    data = read(RESOLVE_KERNEL, variables, repo, api, at, api_timeout)
    snapshot = data["registry"]
    found = snapshot["resolveKernel"]
    exact = found["mode"] == "EXACT"
    items, more = nodes(found["exact"] if exact else found["nearest"])

    def answer(item: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = item if exact else item["answer"]
        return found

    columns = [
        Column("cohort", lambda a: short(dig(answer(a), "cohort", "key"))),
        Column("title", lambda a: dig(answer(a), "cohort", "title")),
        Column("runs", lambda a: dig(answer(a), "cohort", "size"), right=True),
        Column("leader", lambda a: dig(answer(a), "leader", "run", "name")),
        Column("value", lambda a: dig(answer(a), "leader", "run", "primary", "display"), right=True),
        Column("best verified", lambda a: dig(answer(a), "bestVerified", "run", "name")),
        Column("best deployable", lambda a: dig(answer(a), "bestDeployable", "run", "name")),
    ]
    if not exact:
        columns.append(Column("differences", lambda a: [d["explanation"] for d in a["differences"]]))
    notes = [f"{problem['part']}: {problem['message']}" for problem in found["problems"]]
    heading = f"{found['mode']}: {found['summary']} (at {snapshot['commit']['id'][:12]})"
    print_listing(Listing(data, heading, items, columns, more, notes), mode)

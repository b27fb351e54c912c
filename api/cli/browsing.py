"""The read commands over kernel runs: `search`, `runs`, `records`, `compare`, `changes`, `gpus`, `models`.

Each runs one named GraphQL document (`api/cli/documents.py`) through the one runner (`kernelindex.cli.ask`): the query
service over a local registry, or a served registry with `--api URL` (`KERNELINDEX_API`), pinned by `--at`. It prints
a table (`kernelindex.cli.listing`), the answer's `data` (`--json`) or the list's items one per line (`--jsonl`);
`--limit`
and `--cursor` page the list as the API pages it (`first`, `after`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from kernelindex.cli.ask import Document
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
from kernelindex.cli.vocabularies import RecordOrder, RunOrder, RunStatus, Trust

__all__ = ["RUN_COLUMNS", "changes", "compare", "gpus", "models", "read", "records", "runs", "search"]


def read(
    document: Document,
    variables: dict[str, Any],
    repo: Any,
    api: str | None,
    at: str | None,
    timeout: float = API_TIMEOUT_SECONDS,
) -> dict[str, Any]:
    """The snapshot (`registry`) of `document`'s answer at `at`, asked locally or of `api` (within `timeout`
    seconds); null variables dropped (the document's defaults apply)."""
    from kernelindex.cli.ask import ask

    given = {name: value for name, value in {**variables, "at": at}.items() if value is not None}
    return ask(document, given, repo=repo, api=api, timeout=timeout)


def short(digest: Any) -> str | None:
    """A digest as its first 12 hex digits after `sha256:`, enough to name it to any command."""
    return digest[:19] if isinstance(digest, str) else None


RUN_COLUMNS = (
    Column("run", lambda r: short(r["digest"])),
    Column("name", lambda r: r["name"]),
    Column("operation", lambda r: dig(r, "operation", "name")),
    Column("implementation", lambda r: dig(r, "implementation", "name")),
    Column("gpu", lambda r: dig(r, "environment", "gpu")),
    Column("workload", lambda r: dig(r, "workload", "label")),
    Column("value", lambda r: dig(r, "primary", "display"), right=True),
    Column("rank", lambda r: r["rank"], right=True),
    Column("trust", lambda r: r["trust"]),
    Column("status", lambda r: r["status"]),
)


def _heading(what: str, connection: dict[str, Any] | None, shown: int, commit: str) -> str:
    total = (connection or {}).get("totalCount", shown)
    return f"{what}: {shown:,} of {total:,} at {commit[:12]}"


@guarded
def search(
    words: Annotated[
        list[str],
        typer.Argument(
            metavar="QUERY...",
            help="Words and keys: rmsnorm b200 dtype:bfloat16 (several words are one query, quoted or not).",
        ),
    ],
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """Runs matching a query in the search grammar, most relevant first (keys: op, family, gpu, dtype, shape...)."""
    from kernelindex.cli.documents import SEARCH

    mode = output(as_json, as_jsonl)
    query = " ".join(words)  # `search rmsnorm b200` asks what `search 'rmsnorm b200'` asks
    data = read(SEARCH, {"query": query, "first": limit, "after": cursor}, repo, api, at, api_timeout)
    snapshot = data["registry"]
    found = snapshot["search"] or {}
    items, more = nodes(found.get("runs"))
    notes = [f"ignored {issue['token']!r}: {issue['message']}" for issue in found.get("issues") or []]
    heading = _heading(f"runs matching {query!r}", found.get("runs"), len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, RUN_COLUMNS, more, notes), mode)


@guarded
def runs(
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    operation: Annotated[str | None, typer.Option(help="An operation: name, digest or prefix.")] = None,
    gpu: Annotated[str | None, typer.Option(help="A GPU product, a word of it or an architecture ('b200').")] = None,
    source: Annotated[str | None, typer.Option(help="A source's slug (sol-execbench...).")] = None,
    min_trust: Annotated[
        Trust | None, typer.Option("--min-trust", case_sensitive=False, help="At or above this evidence level.")
    ] = None,
    status: Annotated[
        list[RunStatus] | None, typer.Option(case_sensitive=False, help="Only this outcome (repeat for several).")
    ] = None,
    implementation: Annotated[str | None, typer.Option(help="An implementation: name, digest or prefix.")] = None,
    workload: Annotated[str | None, typer.Option(help="A workload: name, digest or prefix.")] = None,
    cohort: Annotated[str | None, typer.Option(help="A cohort key or a prefix of >= 12 hex digits.")] = None,
    deployable: Annotated[bool, typer.Option("--deployable", help="Only runs whose implementation can ship.")] = False,
    eligible: Annotated[bool, typer.Option("--eligible", help="Only runs that rank.")] = False,
    license_known: Annotated[
        bool | None, typer.Option("--license-known/--license-unknown", help="By whether the licence is known.")
    ] = None,
    installable: Annotated[
        bool | None, typer.Option("--installable/--not-installable", help="By whether an install recipe exists.")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Measured at or after this instant (ISO 8601).")] = None,
    order: Annotated[RunOrder, typer.Option(case_sensitive=False, help="The order.")] = RunOrder.NEWEST_OBSERVED,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """Kernel runs, narrowed as the API's RunFilter narrows them, newest observed first."""
    from kernelindex.cli.documents import RUNS

    mode = output(as_json, as_jsonl)
    given: dict[str, Any] = {
        "operation": operation,
        "gpu": gpu,
        "source": source,
        "minTrust": min_trust.value if min_trust else None,
        "status": [s.value for s in status] if status else None,
        "implementation": implementation,
        "workload": workload,
        "cohort": cohort,
        "deployableOnly": deployable or None,
        "eligibleOnly": eligible or None,
        "licenseKnown": license_known,
        "installable": installable,
        "observedSince": since,
    }
    run_filter = {key: value for key, value in given.items() if value is not None}
    variables = {"filter": run_filter or None, "order": order.value, "first": limit, "after": cursor}
    data = read(RUNS, variables, repo, api, at, api_timeout)
    snapshot = data["registry"]
    items, more = nodes(snapshot["runs"])
    heading = _heading("runs", snapshot["runs"], len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, RUN_COLUMNS, more), mode)


@guarded
def records(
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    operation: Annotated[str | None, typer.Option(help="An operation: name, digest or prefix.")] = None,
    gpu: Annotated[str | None, typer.Option(help="A GPU product, a word of it or an architecture ('b200').")] = None,
    source: Annotated[str | None, typer.Option(help="A source's slug.")] = None,
    since: Annotated[str | None, typer.Option(help="Records set at or after this instant (ISO 8601).")] = None,
    order: Annotated[RecordOrder, typer.Option(case_sensitive=False, help="The order.")] = RecordOrder.NEWEST,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """The runs holding each cohort's record (its best value), newest record first."""
    from kernelindex.cli.documents import RECORDS

    mode = output(as_json, as_jsonl)
    given = {"operation": operation, "gpu": gpu, "source": source, "since": since}
    record_filter = {key: value for key, value in given.items() if value is not None}
    variables = {"filter": record_filter or None, "order": order.value, "first": limit, "after": cursor}
    data = read(RECORDS, variables, repo, api, at, api_timeout)
    snapshot = data["registry"]
    items, more = nodes(snapshot["records"])
    columns = (
        Column("since", lambda r: r["since"]),
        Column("cohort", lambda r: dig(r, "cohort", "title")),
        Column("runs", lambda r: dig(r, "cohort", "size"), right=True),
        Column("holder", lambda r: dig(r, "holder", "name")),
        Column("implementation", lambda r: dig(r, "holder", "implementation", "name")),
        Column("gpu", lambda r: dig(r, "holder", "environment", "gpu")),
        Column("value", lambda r: dig(r, "holder", "primary", "display"), right=True),
        Column("cause", lambda r: dig(r, "event", "cause")),
        Column("gain %", lambda r: _percent(dig(r, "event", "improvementPct")), right=True),
    )
    heading = _heading("records", snapshot["records"], len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, columns, more), mode)


def _value_of(index: int) -> Callable[[dict[str, Any]], Any]:
    """The value a compare row gives the run at `index`."""
    return lambda row: dig(row, "values", index)


def _percent(value: Any) -> str | None:
    return f"{value:.1f}" if isinstance(value, int | float) else None


@guarded
def compare(
    ids: Annotated[list[str], typer.Argument(metavar="RUN...", help="Two or more runs: digests, prefixes or names.")],
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """Runs side by side: every field, which differ, and which difference makes them incomparable (`material`)."""
    from kernelindex.cli.documents import COMPARE

    mode = output(as_json, as_jsonl)
    data = read(COMPARE, {"runs": ids}, repo, api, at, api_timeout)
    snapshot = data["registry"]
    found = snapshot["compare"] or {}
    shown = found.get("runs") or []
    columns = (
        Column("field", lambda r: r["field"]),
        *(Column(run["name"], _value_of(i)) for i, run in enumerate(shown)),
        Column("same", lambda r: r["same"]),
        Column("material", lambda r: r["material"]),
    )
    verdict = "one cohort: ranked together" if found.get("sameCohort") else "not comparable as ranked"
    notes = [f"not found: {', '.join(found['missing'])}"] if found.get("missing") else []
    material = found.get("material") or []
    if material:
        notes.append(f"material differences: {', '.join(material)}")
    heading = f"{len(shown):,} runs compared ({verdict}) at {snapshot['commit']['id'][:12]}"
    print_listing(Listing(data, heading, found.get("rows") or [], columns, None, notes), mode)


@guarded
def changes(
    since: Annotated[
        str | None, typer.Option(help="Only the commits of main after this one (a commit, prefix, branch or tag).")
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
    """What each commit of main published, retracted, superseded and verified, and the records it moved; newest
    first."""
    from kernelindex.cli.documents import CHANGES

    mode = output(as_json, as_jsonl)
    data = read(CHANGES, {"since": since, "first": limit, "after": cursor}, repo, api, at, api_timeout)
    snapshot = data["registry"]
    items, more = nodes(snapshot["changes"])
    columns = (
        Column("commit", lambda c: dig(c, "commit", "id")[:12]),
        Column("committed", lambda c: c["committedAt"]),
        Column("source", lambda c: dig(c, "source", "slug")),
        Column("published", lambda c: c["publishedCount"], right=True),
        Column("retracted", lambda c: len(c["retracted"]), right=True),
        Column("superseded", lambda c: len(c["superseded"]), right=True),
        Column("verified", lambda c: len(c["verified"]), right=True),
        Column("records moved", lambda c: dig(c, "moved", "totalCount"), right=True),
        Column("kinds", lambda c: [f"{k['kind']} {k['count']:,}" for k in c["publishedCounts"]]),
    )
    what = f"commits after {since}" if since else "commits"
    heading = _heading(what, snapshot["changes"], len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, columns, more), mode)


@guarded
def gpus(
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=0, help="At most this many (the list is not paged).")
    ] = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """GPU products with environments in the registry, most kernel runs first."""
    from kernelindex.cli.documents import GPUS

    mode = output(as_json, as_jsonl)
    data = read(GPUS, {}, repo, api, at, api_timeout)
    snapshot = data["registry"]
    every = snapshot["gpus"]
    items = every if limit is None else every[:limit]
    if limit is not None:  # the data a script gets is what the table shows
        data = {**data, "registry": {**snapshot, "gpus": items}}
    columns = (
        Column("gpu", lambda g: g["slug"]),
        Column("product", lambda g: g["product"]),
        Column("vendor", lambda g: g["vendor"]),
        Column("architectures", lambda g: g["architectures"]),
        Column("runs", lambda g: g["runCount"], right=True),
        Column("cohorts", lambda g: g["cohortCount"], right=True),
        Column("operations", lambda g: g["operationCount"], right=True),
    )
    heading = f"gpus: {len(items):,} of {len(every):,} at {snapshot['commit']['id'][:12]}"
    print_listing(Listing(data, heading, items, columns), mode)


@guarded
def models(
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    as_jsonl: JsonlOption = False,
) -> None:
    """Models served in the registry's serving runs, by name."""
    from kernelindex.cli.documents import MODELS

    mode = output(as_json, as_jsonl)
    data = read(MODELS, {"first": limit, "after": cursor}, repo, api, at, api_timeout)
    snapshot = data["registry"]
    items, more = nodes(snapshot["models"])
    columns = (
        Column("model", lambda m: short(m["digest"])),
        Column("name", lambda m: m["name"]),
        Column("title", lambda m: m["title"]),
        Column("weights", lambda m: m["model"]),
        Column("serving runs", lambda m: dig(m, "servingRuns", "totalCount"), right=True),
        Column("cohorts", lambda m: dig(m, "servingCohorts", "totalCount"), right=True),
    )
    heading = _heading("models", snapshot["models"], len(items), snapshot["commit"]["id"])
    print_listing(Listing(data, heading, items, columns, more), mode)

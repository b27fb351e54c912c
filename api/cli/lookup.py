"""`kernelindex lookup cohort KEY | operation NAME`: what a contributor reuses to land in a leaderboard.

Runs rank only against runs with the same operation, workload, protocol, environment, correctness policy and
metric (a cohort), so a new run measured against a leaderboard names that leaderboard's workload, protocol
and environment by digest. This lists them, with their names and how many runs use each, for one cohort or
for every cohort of an operation; as a table, or `--json` for scripts. It reads through the query service
(`kernelindex.cli.ask`): locally, or from a served registry with `--api URL`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import typer

from kernelindex import registry
from kernelindex.cli.console import emit_json, guarded
from kernelindex.cli.listing import cell
from kernelindex.cli.options import (
    API_TIMEOUT_SECONDS,
    ApiOption,
    ApiTimeoutOption,
    AtOption,
    JsonOption,
    RepoOption,
)

__all__ = ["app"]

app = typer.Typer(
    help="The workloads, protocols and environments to reuse: of a cohort, or of an operation's cohorts.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

# (the field of a cohort, its plural, the field of it a table shows beside its name)
_PARTS = (
    ("workload", "workloads", "label"),
    ("protocol", "protocols", "harness"),
    ("environment", "environments", "gpu"),
)
_MAX_PAGES = 1_000  # 100 cohorts a page: far beyond any operation, and a bound on a misbehaving server


@dataclass
class _Part:
    """A workload, protocol or environment, with the runs and cohorts that use it."""

    digest: str
    name: str
    title: str | None
    detail: str
    runs: int = 0
    cohorts: list[str] = field(default_factory=list)

    def json(self, detail: str) -> dict[str, Any]:
        """As JSON, its detail under the name the API gives it (`label`, `harness`, `gpu`)."""
        return {
            "digest": self.digest,
            "name": self.name,
            "title": self.title,
            detail: self.detail,
            "runs": self.runs,
            "cohorts": len(self.cohorts),
        }


def _tally(cohorts: list[dict[str, Any]]) -> dict[str, list[_Part]]:
    """Each part of the cohorts, most runs first (then by name), with its runs summed over its cohorts."""
    found: dict[str, dict[str, _Part]] = {plural: {} for _, plural, _ in _PARTS}
    for cohort in cohorts:
        for single, plural, detail in _PARTS:
            node = cohort.get(single)
            if node is None:  # a cohort whose part is not in the registry (upstream data can dangle)
                continue
            part = found[plural].setdefault(
                node["digest"], _Part(node["digest"], node["name"], node.get("title"), str(node.get(detail) or ""))
            )
            part.runs += int(cohort["size"])
            part.cohorts.append(cohort["key"])
    return {plural: sorted(parts.values(), key=lambda p: (-p.runs, p.name)) for plural, parts in found.items()}


def _show(heading: str, parts: dict[str, list[_Part]], as_json: bool, about: dict[str, Any]) -> None:
    if as_json:
        details = {plural: detail for _, plural, detail in _PARTS}
        emit_json({**about, **{plural: [p.json(details[plural]) for p in found] for plural, found in parts.items()}})
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(soft_wrap=False)
    if not console.is_terminal:  # piped: as wide as the rows, so a digest is never folded
        console = Console(width=300, soft_wrap=False)
    console.print(Text(cell(heading)), highlight=False)
    for (_, plural, detail), found in zip(_PARTS, parts.values(), strict=True):
        table = Table(box=None, pad_edge=False, highlight=False)
        for column in ("digest", "name", detail, "runs", "cohorts"):
            table.add_column(column, justify="right" if column in ("runs", "cohorts") else "left", no_wrap=True)
        for part in found:
            row = (part.digest, part.name, part.detail, f"{part.runs:,}", f"{len(part.cohorts):,}")
            table.add_row(*(Text(cell(value)) for value in row))  # a served registry's text: never markup
        console.print()
        console.print(f"{plural.capitalize()} ({len(found):,})", highlight=False, markup=False)
        console.print(table)


@app.command("operation")
@guarded
def operation(
    ident: Annotated[str, typer.Argument(metavar="NAME", help="An operation: its name, digest or a hex prefix.")],
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    as_json: JsonOption = False,
) -> None:
    """The workloads, protocols and environments of an operation's cohorts, with their runs."""
    from kernelindex.cli.ask import ask
    from kernelindex.cli.documents import LOOKUP_OPERATION

    cohorts: list[dict[str, Any]] = []
    after: str | None = None
    found: dict[str, Any] | None = None
    commit = ""
    for _ in range(_MAX_PAGES):
        variables = {"at": at, "id": ident, "after": after}
        data = ask(LOOKUP_OPERATION, variables, repo=repo, api=api, timeout=api_timeout)["registry"]
        commit, found = data["commit"]["id"], data["operation"]
        if found is None:
            names = [edge["node"]["name"] for edge in data["matching"]["edges"]]
            hint = f"; operations matching it: {', '.join(names)}" if names else ""
            raise registry.RegistryError(f"no operation {ident!r} at {commit[:12]}{hint}")
        page = found["cohorts"]
        cohorts += [edge["node"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert found is not None
    parts = _tally(cohorts)
    about = {
        "commit": commit,
        "operation": {k: found[k] for k in ("digest", "name", "title", "family", "runCount")},
        "cohorts": len(cohorts),
    }
    heading = (
        f"operation {found['name']} ({found['digest']}): {found['runCount']:,} runs in {len(cohorts):,} cohorts, "
        f"at {commit[:12]}"
    )
    _show(heading, parts, as_json, about)


@app.command("cohort")
@guarded
def cohort(
    key: Annotated[str, typer.Argument(metavar="KEY", help="A cohort key, or a unique prefix of >= 12 hex digits.")],
    repo: RepoOption = None,
    at: AtOption = None,
    api: ApiOption = None,
    api_timeout: ApiTimeoutOption = API_TIMEOUT_SECONDS,
    as_json: JsonOption = False,
) -> None:
    """The workload, protocol and environment a cohort compares under, with its runs."""
    from kernelindex.cli.ask import ask
    from kernelindex.cli.documents import LOOKUP_COHORT

    data = ask(LOOKUP_COHORT, {"at": at, "key": key}, repo=repo, api=api, timeout=api_timeout)["registry"]
    commit, found = data["commit"]["id"], data["cohort"]
    if found is None:
        raise registry.RegistryError(f"no cohort {key!r} at {commit[:12]}")
    operation = found["operation"] or {}
    about = {
        "commit": commit,
        "cohort": {k: found[k] for k in ("key", "size", "rankedCount", "metricKey")},
        "operation": operation or None,
    }
    # The operation's digest too, as `lookup operation` heads its table: an implementation of it names it
    # (`spec.operationDigest`), the next manifest a contributor writes.
    of = f"{operation['name']} ({operation['digest']})" if operation else "an operation not in the registry"
    heading = (
        f"cohort {found['key']}: {found['size']:,} runs ({found['rankedCount']:,} ranked) of {of}, "
        f"{found['metricKey']}, at {commit[:12]}"
    )
    _show(heading, _tally([found]), as_json, about)

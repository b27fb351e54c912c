"""How `kernelindex import <source> PATH` imports: a benchmark's native output to manifests, as a report, a
commit on a branch (followed by the pull-request report), or files in a directory for review.

Every source command (`api/cli/sources.py`) takes its own arguments and options, then the same ones of
where and how to write (`ImportOptions`): `importer` adds those to its signature and gives the command them
as one value; `run_import` does the rest with the command's planner.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

import typer

from kernelindex import registry
from kernelindex.cli.console import Progress, echo, emit_json, guarded, progress_bar
from kernelindex.cli.identity import identity, signer_for
from kernelindex.cli.options import (
    AuthorOption,
    BranchOption,
    DryRunOption,
    JsonOption,
    OutOption,
    RepoOption,
    SigningKeyOption,
    SignOption,
    SkipBadOption,
)
from kernelindex.cli.stores import read_trust_root, try_open, writable_store

if TYPE_CHECKING:  # the importers load only when an import runs: a server never needs them
    from kernelindex.registry.importers.plan import ImportPlan, Reconciled

__all__ = ["ImportOptions", "importer", "run_import"]

Planner = Callable[[Progress], "ImportPlan"]


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """Where and how an import writes: what every `kernelindex import <source>` takes besides its source.
    Each field's type is its command-line option (`kernelindex.cli.options`), in the order the help lists them."""

    repo: RepoOption = None
    branch: BranchOption = None
    out: OutOption = None
    dry_run: DryRunOption = False
    skip_bad: SkipBadOption = False
    author: AuthorOption = None
    sign: SignOption = False
    signing_key: SigningKeyOption = None
    as_json: JsonOption = False


def importer(command: Callable[..., None]) -> Callable[..., None]:
    """A source's import command: its own parameters, then `ImportOptions`' fields as options, given to it
    as one `options` value; registry errors become located lines (`guarded`)."""
    hints = get_type_hints(command, include_extras=True)
    own = [p.replace(annotation=hints[p.name]) for p in inspect.signature(command).parameters.values()]
    option_types = get_type_hints(ImportOptions, include_extras=True)
    shared = [
        inspect.Parameter(
            field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default, annotation=option_types[field.name]
        )
        for field in dataclasses.fields(ImportOptions)
    ]

    @functools.wraps(command)
    def run(**values: Any) -> None:
        options = ImportOptions(**{p.name: values.pop(p.name) for p in shared})
        command(**values, options=options)

    parameters = [p for p in own if p.name != "options"] + shared
    run.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}  # what typer reads them from
    return guarded(run)


def run_import(planner: Planner, options: ImportOptions) -> None:
    """Plan, reconcile and write an import; every source command is this with its own planner."""
    from kernelindex.registry.importers.plan import commit_plan, reconcile, write_directory
    from kernelindex.registry.importers.sourcefiles import SourceFileError

    if sum(bool(x) for x in (options.branch, options.out, options.dry_run)) > 1:
        raise typer.BadParameter("choose one of --branch, --out and --dry-run", param_hint="--branch/--out/--dry-run")
    if options.sign and (options.out is not None or options.dry_run):
        raise typer.BadParameter("--sign signs a commit: not with --out or --dry-run", param_hint="--sign")
    started = time.perf_counter()
    with progress_bar(not options.as_json) as progress:
        try:
            plan = planner(progress)
        except SourceFileError as exc:
            raise registry.InvalidManifest([exc.problem]) from None
    if plan.problems and not options.skip_bad:
        raise registry.InvalidManifest(
            [
                *plan.problems,
                registry.Problem(
                    plan.inputs[0].name if plan.inputs else "input",
                    "",
                    f"{len(plan.problems):,} malformed row(s): nothing was written (--skip-bad imports the rest)",
                ),
            ]
        )
    store = try_open(options.repo)
    target = _target(store, options.branch, options.out, options.dry_run)
    if target is not None:
        writable_store(options.repo)  # a commit goes to a registry that is named (or a clone), never the embedded one
    result: registry.AddResult | None = None
    written: list[Path] = []
    if target is not None and store is not None:
        person = None
        if options.author:
            name, email = identity(options.author, store, "author")
            person = registry.Person(name, email, 0)
        signer = signer_for(store, options.signing_key) if options.sign else None
        before = store.head(target)
        reconciled, result = commit_plan(store, plan, target, person, signer)
        if result and result.commit and store.work_tree is not None and target == store.current_branch() and before:
            store.sync_work_tree(before, result.commit)
    else:
        if options.sign:
            raise typer.BadParameter(
                "--sign signs a commit: give --branch NAME (or run in a clone)", param_hint="--sign"
            )
        reconciled = reconcile(plan, store, store.head() if store is not None else None)
        if reconciled.problems:  # what `GitStore.add` would refuse: a report or a directory says so, as a commit does
            raise registry.RejectedChange(list(reconciled.problems))
        if options.out is not None:
            written = write_directory(reconciled, options.out)
    seconds = time.perf_counter() - started
    pr = _pr_report(store, target) if store is not None and target and target != registry.store.MAIN else None
    if options.as_json:
        emit_json(_json(plan, reconciled, result, target, written, options.out, seconds, pr))
    else:
        _text(plan, reconciled, result, target, written, options.out, seconds, pr)


def _target(store: registry.GitStore | None, branch: str | None, out: Path | None, dry_run: bool) -> str | None:
    """The ref to commit on, or None for a report or a directory."""
    if dry_run or out is not None:
        return None
    if branch:
        if store is None:
            raise typer.BadParameter("--branch needs a registry (--repo, or run inside a clone)", param_hint="--branch")
        return f"refs/heads/{branch}"
    if store is None or store.work_tree is None:
        return None  # outside a clone the default is the report only
    current = store.current_branch()
    if current is None or current == registry.store.MAIN:
        raise typer.BadParameter(
            "you are on main: imports go on a branch (git switch -c import-x), or pass --branch or --dry-run",
            param_hint="--branch",
        )
    return current


def _pr_report(store: registry.GitStore, target: str) -> Any:
    """The PR report of main..target (None when main is missing)."""
    from kernelindex.cli import report

    main = store.head()
    head = store.head(target)
    if main is None or head is None or main == head:
        return None
    return report.range_report(store, main, head, trust_root=read_trust_root(None))


def _json(
    plan: ImportPlan,
    reconciled: Reconciled,
    result: registry.AddResult | None,
    target: str | None,
    written: list[Path],
    out: Path | None,
    seconds: float,
    pr: Any,
) -> dict[str, Any]:
    statuses = reconciled.statuses()
    return {
        "source": plan.terms.slug,
        "inputs": [{"file": f.name, "sha256": f.sha256} for f in plan.inputs],
        "rowsRead": len(plan.rows) + len(plan.problems),
        "runs": plan.runs,
        "manifests": {
            "produced": len(plan.manifests),
            "new": len(reconciled.new),
            "unchanged": len(reconciled.unchanged),
            "conflicting": len(reconciled.conflicting),
            "byKind": dict(sorted(plan.kinds().items())),
        },
        "skipped": dict(sorted(plan.skipped.items())),
        "rows": [
            {
                "at": row.where,
                "run": row.run,
                "manifest": row.manifest,
                "status": statuses.get(row.run or row.manifest or ""),
                "skipped": row.skipped,
            }
            for row in plan.rows
        ],
        "conflicts": [
            {"at": w, "digest": m.digest, "kind": m.kind, "reason": why} for w, m, why in reconciled.conflicting
        ],
        "sameIdentity": [
            {"digest": d, "first": first, "alsoNamed": name, "at": where}
            for d, (first, name, where) in plan.merged.items()
        ],
        "problems": [{"at": p.source, "path": p.path, "reason": p.reason} for p in plan.problems],
        "commit": result.commit if result else None,
        "branch": target.removeprefix("refs/heads/") if target else None,
        "written": [str(p) for p in written],
        "directory": str(out) if out else None,
        "seconds": round(seconds, 3),
        "report": pr.json if pr is not None else None,
    }


def _text(
    plan: ImportPlan,
    reconciled: Reconciled,
    result: registry.AddResult | None,
    target: str | None,
    written: list[Path],
    out: Path | None,
    seconds: float,
    pr: Any,
) -> None:
    for source in plan.inputs:
        echo(f"read {source.name} (sha256:{source.sha256})")
    rows = len(plan.rows) + len(plan.problems)
    skipped = plan.skipped
    echo(f"{rows:,} rows: {plan.runs:,} runs, {sum(skipped.values()):,} skipped, {len(plan.problems):,} malformed")
    for reason, count in sorted(skipped.items(), key=lambda item: (-item[1], item[0])):
        echo(f"  skipped {count:,}: {reason}")
    kinds = ", ".join(f"{n:,} {kind}" for kind, n in sorted(plan.kinds().items()))
    echo(f"{len(plan.manifests):,} manifests ({kinds})")
    echo(
        f"  against the registry: {len(reconciled.new):,} new, {len(reconciled.unchanged):,} unchanged, "
        f"{len(reconciled.conflicting):,} conflicting"
    )
    for where, manifest, why in reconciled.conflicting:
        echo(f"  conflicting  {where}: {manifest.kind} {manifest.name}: {why}")
    for digest, (first, name, where) in plan.merged.items():
        echo(f"  one identity {where}: {name!r} has the spec of {first} ({digest[:19]}…): kept as one manifest")
    for problem in plan.problems:
        echo(f"  malformed    {problem} (skipped: --skip-bad)")
    if target is not None:
        short = target.removeprefix("refs/heads/")
        if result is None or result.commit is None:
            echo(f"nothing to commit on {short}: every manifest is already there")
        else:
            echo(f"commit {result.commit} on {short}: +{len(result.added):,} manifests")
    elif out is not None:
        echo(f"wrote {len(written):,} file(s) under {out} ({len(reconciled.new) - len(written):,} already there)")
    else:
        echo("dry run: nothing written (--branch NAME commits, --out DIR writes files)")
    echo(f"done in {seconds:.1f} s")
    if pr is not None:
        echo("")
        echo(pr.markdown, lines=True)

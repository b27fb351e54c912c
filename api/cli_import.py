"""`kernelindex import <source> PATH`: a benchmark's native output to manifests, as a report, a commit
on a branch (followed by the pull-request report), or files in a directory for review.

Registered on `api.cli`'s `import` group when that module loads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import registry
from api import cli

if TYPE_CHECKING:  # the importers load only when an import runs (a server never needs them: issue 14)
    from registry.importers.plan import ImportPlan, Reconciled

__all__ = ["run_import"]

Progress = Callable[[str, int, int], None]
Planner = Callable[[Progress], "ImportPlan"]

BranchOption = Annotated[
    str | None, typer.Option("--branch", help="Commit on this branch (created from main), then print the PR report.")
]
OutOption = Annotated[
    Path | None, typer.Option("--out", help="Write the new manifests under this directory for review instead.")
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Only report (the default outside a clone): nothing is written.")
]
SkipBadOption = Annotated[
    bool, typer.Option("--skip-bad", help="Import the good rows even when some are malformed (they are listed).")
]
AuthorOption = Annotated[
    str | None, typer.Option(help="'Name <email>': author and Signed-off-by (default: the source, via the importer).")
]
SignOption = Annotated[
    bool, typer.Option("--sign", "-S", help="SSH-sign the commit: imports of registered sources are maintainers'.")
]
SigningKeyOption = Annotated[Path | None, typer.Option(help="SSH key for --sign (default: user.signingkey).")]


def run_import(
    planner: Planner,
    *,
    repo: Path | None,
    branch: str | None,
    out: Path | None,
    dry_run: bool,
    skip_bad: bool,
    author: str | None,
    as_json: bool,
    sign: bool = False,
    signing_key: Path | None = None,
) -> None:
    """Plan, reconcile and write an import; every source command is this with its own planner."""
    from registry.importers.plan import commit_plan, reconcile, write_directory
    from registry.importers.sourcefiles import SourceFileError

    if sum(bool(x) for x in (branch, out, dry_run)) > 1:
        raise typer.BadParameter("choose one of --branch, --out and --dry-run", param_hint="--branch/--out/--dry-run")
    if sign and (out is not None or dry_run):
        raise typer.BadParameter("--sign signs a commit: not with --out or --dry-run", param_hint="--sign")
    started = time.perf_counter()
    with cli._progress(not as_json) as progress:
        try:
            plan = planner(progress)
        except SourceFileError as exc:
            raise registry.InvalidManifest([exc.problem]) from None
    if plan.problems and not skip_bad:
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
    store = cli._try_open(repo)
    target = _target(store, branch, out, dry_run)
    result: registry.AddResult | None = None
    written: list[Path] = []
    if target is not None and store is not None:
        person = None
        if author:
            name, email = cli._identity(author, store, "author")
            person = registry.Person(name, email, 0)
        signer = cli._signer(store, signing_key) if sign else None
        before = store.head(target)
        reconciled, result = commit_plan(store, plan, target, person, signer)
        if result and result.commit and store.work_tree is not None and target == store.current_branch() and before:
            store.sync_work_tree(before, result.commit)
    else:
        if sign:
            raise typer.BadParameter(
                "--sign signs a commit: give --branch NAME (or run in a clone)", param_hint="--sign"
            )
        reconciled = reconcile(plan, store, store.head() if store is not None else None)
        if out is not None:
            written = write_directory(reconciled, out)
    seconds = time.perf_counter() - started
    pr = _pr_report(store, target) if store is not None and target and target != registry.store.MAIN else None
    if as_json:
        cli._emit_json(_json(plan, reconciled, result, target, written, out, seconds, pr))
    else:
        _text(plan, reconciled, result, target, written, out, seconds, pr)


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
    from api import cli_report

    main = store.head()
    head = store.head(target)
    if main is None or head is None or main == head:
        return None
    return cli_report.range_report(store, main, head, trust_root=cli._read_trust_root(None))


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
    echo = typer.echo
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
        echo(pr.markdown)


# Sources ----------------------------------------------------------------------------------------------


@cli.import_app.command("liger")
@cli._guard
def import_liger(
    csv: Annotated[Path, typer.Argument(help="Liger-Kernel's benchmark/data/all_benchmark_data.csv.")],
    revision: Annotated[
        str | None, typer.Option(help="The Liger-Kernel commit the CSV comes from (links the benchmark scripts).")
    ] = None,
    repo: cli.RepoOption = None,
    branch: BranchOption = None,
    out: OutOption = None,
    dry_run: DryRunOption = False,
    skip_bad: SkipBadOption = False,
    author: AuthorOption = None,
    sign: SignOption = False,
    signing_key: SigningKeyOption = None,
    as_json: cli.JsonOption = False,
) -> None:
    """Liger-Kernel's benchmark CSV: one run per speed row of a curated kernel (BSD-2-Clause data)."""
    from registry.importers.liger import plan_liger

    run_import(
        lambda progress: plan_liger(csv, revision=revision, progress=progress),
        repo=repo,
        branch=branch,
        out=out,
        dry_run=dry_run,
        skip_bad=skip_bad,
        author=author,
        as_json=as_json,
        sign=sign,
        signing_key=signing_key,
    )


@cli.import_app.command("sol-execbench")
@cli._guard
def import_sol_execbench(
    path: Annotated[
        Path,
        typer.Argument(
            help="A SOL-ExecBench dataset directory (definition.json, workload.jsonl, solution_*.json, trace.jsonl) "
            "and/or saved leaderboard API responses (/api/kernels, /api/kernels/{id}, /api/submissions)."
        ),
    ],
    commit: Annotated[
        str | None,
        typer.Option(help="The nvidia/sol-execbench commit the solutions come from (without it they are skipped)."),
    ] = None,
    top: Annotated[
        int, typer.Option(help="Submissions kept per kernel, best SOL score first, one per submitter first (0: all).")
    ] = 3,
    stack: Annotated[
        str | None, typer.Option(help="Keep only submissions evaluated by this evaluation stack version.")
    ] = None,
    repo: cli.RepoOption = None,
    branch: BranchOption = None,
    out: OutOption = None,
    dry_run: DryRunOption = False,
    skip_bad: SkipBadOption = False,
    author: AuthorOption = None,
    sign: SignOption = False,
    signing_key: SigningKeyOption = None,
    as_json: cli.JsonOption = False,
) -> None:
    """SOL-ExecBench: definitions, workloads, solutions and traces, or leaderboard submissions."""
    from registry.importers.sol_execbench import plan_sol_execbench

    if top < 0:
        raise typer.BadParameter("0 or more", param_hint="--top")
    run_import(
        lambda progress: plan_sol_execbench(
            path, commit=commit, top=top or None, stack_version=stack, progress=progress
        ),
        repo=repo,
        branch=branch,
        out=out,
        dry_run=dry_run,
        skip_bad=skip_bad,
        author=author,
        as_json=as_json,
        sign=sign,
        signing_key=signing_key,
    )


@cli.import_app.command("gpumode")
@cli._guard
def import_gpumode(
    path: Annotated[
        Path,
        typer.Argument(
            help="GPUMODE/kernelbot-data rows as the datasets-server serves them: a leaderboards file and "
            "successful-submissions files (a directory, or one file)."
        ),
    ],
    top: Annotated[int, typer.Option(help="Distinct users kept per board, best score first (0: all).")] = 100,
    repo: cli.RepoOption = None,
    branch: BranchOption = None,
    out: OutOption = None,
    dry_run: DryRunOption = False,
    skip_bad: SkipBadOption = False,
    author: AuthorOption = None,
    sign: SignOption = False,
    signing_key: SigningKeyOption = None,
    as_json: cli.JsonOption = False,
) -> None:
    """GPU MODE KernelBot: each user's best submission per curated board, one run per benchmark shape."""
    from registry.importers.gpumode import plan_gpumode

    if top < 0:
        raise typer.BadParameter("0 or more", param_hint="--top")
    run_import(
        lambda progress: plan_gpumode(path, top=top or None, progress=progress),
        repo=repo,
        branch=branch,
        out=out,
        dry_run=dry_run,
        skip_bad=skip_bad,
        author=author,
        as_json=as_json,
        sign=sign,
        signing_key=signing_key,
    )


@cli.import_app.command("flashinfer-bench")
@cli._guard
def import_flashinfer_bench(
    path: Annotated[
        Path,
        typer.Argument(
            help="A FlashInfer-Bench dataset (a clone of flashinfer-ai/flashinfer-trace: definitions/, solutions/, "
            "traces/), or its files beside the dataset API's listing (info.json)."
        ),
    ],
    revision: Annotated[
        str | None, typer.Option(help="The dataset commit the files come from (default: the listing's sha).")
    ] = None,
    include_author: Annotated[
        list[str] | None,
        typer.Option(
            "--include-author",
            help="An author directory of solutions/ and traces/ to import (repeatable; default: baseline). "
            "A model's solutions are labelled llm-generated.",
        ),
    ] = None,
    repo: cli.RepoOption = None,
    branch: BranchOption = None,
    out: OutOption = None,
    dry_run: DryRunOption = False,
    skip_bad: SkipBadOption = False,
    author: AuthorOption = None,
    sign: SignOption = False,
    signing_key: SigningKeyOption = None,
    as_json: cli.JsonOption = False,
) -> None:
    """FlashInfer-Bench: definitions, solutions (with their Apache-2.0 source by digest) and traces."""
    from registry.importers.flashinfer import BASELINE, plan_flashinfer

    run_import(
        lambda progress: plan_flashinfer(
            path, revision=revision, authors=include_author or [BASELINE], progress=progress
        ),
        repo=repo,
        branch=branch,
        out=out,
        dry_run=dry_run,
        skip_bad=skip_bad,
        author=author,
        as_json=as_json,
        sign=sign,
        signing_key=signing_key,
    )


@cli.import_app.command("mlperf")
@cli._guard
def import_mlperf(
    path: Annotated[
        Path,
        typer.Argument(
            help="MLPerf Inference summary_results.json (of an mlcommons/inference_results_<round> repository), "
            "or a directory of them."
        ),
    ],
    repo: cli.RepoOption = None,
    branch: BranchOption = None,
    out: OutOption = None,
    dry_run: DryRunOption = False,
    skip_bad: SkipBadOption = False,
    author: AuthorOption = None,
    sign: SignOption = False,
    signing_key: SigningKeyOption = None,
    as_json: cli.JsonOption = False,
) -> None:
    """MLPerf Inference: closed-division datacenter LLM results as serving runs (Apache-2.0 data)."""
    from registry.importers.mlperf import plan_mlperf

    run_import(
        lambda progress: plan_mlperf(path, progress=progress),
        repo=repo,
        branch=branch,
        out=out,
        dry_run=dry_run,
        skip_bad=skip_bad,
        author=author,
        as_json=as_json,
        sign=sign,
        signing_key=signing_key,
    )

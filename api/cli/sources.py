"""`kernelindex import <source>`: one command per source, each with its own arguments and options and then
`ImportOptions` (`importing.importer`); KernelIndex's own catalog export and run pages import directly."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from kernelindex import registry
from kernelindex.cli.console import emit_json, guarded, progress_bar
from kernelindex.cli.importing import ImportOptions, importer, run_import
from kernelindex.cli.options import JsonOption, RepoOption
from kernelindex.cli.stores import writable_store

__all__ = ["COMMANDS"]


# KernelIndex's own export and run pages -------------------------------------------------------------


@guarded
def import_kernelindex_export(
    export: Annotated[Path, typer.Argument(help="The catalog export, a .jsonl.zst file.")],
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import the upstream catalog export: one commit per source; a second import changes nothing."""
    from kernelindex.registry.importers import (
        import_export,  # importers load only for an import: a server never needs them
    )

    store = writable_store(repo)
    started = time.perf_counter()
    with progress_bar(not as_json) as report:
        results = import_export(store, export, report)
    _report_import(results, time.perf_counter() - started, as_json)


@guarded
def import_kernelindex_seeds(
    directory: Annotated[Path, typer.Argument(help="A directory of run pages (*.txt) and manifests/.")],
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import KernelIndex run pages (bundles and reconstructed implementations), dated as published."""
    from kernelindex.registry.importers import import_seed_pages

    store = writable_store(repo)
    started = time.perf_counter()
    results = import_seed_pages(store, directory)
    _report_import(results, time.perf_counter() - started, as_json)


def _report_import(results: list[registry.AddResult], seconds: float, as_json: bool) -> None:
    if as_json:
        emit_json(
            {
                "commits": [r.commit for r in results if r.commit],
                "added": sum(len(r.added) for r in results),
                "unchanged": sum(len(r.unchanged) for r in results),
                "seconds": round(seconds, 3),
            }
        )
        return
    for result in results:
        if result.commit:
            typer.echo(
                f"commit {result.commit}: +{len(result.added)} manifests ({len(result.unchanged)} already there)"
            )
    added = sum(len(r.added) for r in results)
    if not added:
        typer.echo("nothing new: every manifest is already published")
    typer.echo(f"done in {seconds:.1f} s")


# Benchmarks' native output -----------------------------------------------------------------------------


@importer
def import_liger(
    csv: Annotated[Path, typer.Argument(help="Liger-Kernel's benchmark/data/all_benchmark_data.csv.")],
    revision: Annotated[
        str | None, typer.Option(help="The Liger-Kernel commit the CSV comes from (links the benchmark scripts).")
    ] = None,
    *,
    options: ImportOptions,
) -> None:
    """Liger-Kernel's benchmark CSV: one run per speed row of a curated kernel (BSD-2-Clause data)."""
    from kernelindex.registry.importers.liger import plan_liger

    run_import(
        lambda progress: plan_liger(csv, revision=revision, progress=progress),
        options,
    )


@importer
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
    *,
    options: ImportOptions,
) -> None:
    """SOL-ExecBench: definitions, workloads, solutions and traces, or leaderboard submissions."""
    from kernelindex.registry.importers.sol_execbench import plan_sol_execbench

    if top < 0:
        raise typer.BadParameter("0 or more", param_hint="--top")
    run_import(
        lambda progress: plan_sol_execbench(
            path, commit=commit, top=top or None, stack_version=stack, progress=progress
        ),
        options,
    )


@importer
def import_gpumode(
    path: Annotated[
        Path,
        typer.Argument(
            help="GPUMODE/kernelbot-data rows as the datasets-server serves them: a leaderboards file and "
            "successful-submissions files (a directory, or one file)."
        ),
    ],
    top: Annotated[int, typer.Option(help="Distinct users kept per board, best score first (0: all).")] = 100,
    *,
    options: ImportOptions,
) -> None:
    """GPU MODE KernelBot: each user's best submission per curated board, one run per benchmark shape."""
    from kernelindex.registry.importers.gpumode import plan_gpumode

    if top < 0:
        raise typer.BadParameter("0 or more", param_hint="--top")
    run_import(
        lambda progress: plan_gpumode(path, top=top or None, progress=progress),
        options,
    )


@importer
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
    *,
    options: ImportOptions,
) -> None:
    """FlashInfer-Bench: definitions, solutions (with their Apache-2.0 source by digest) and traces."""
    from kernelindex.registry.importers.flashinfer import BASELINE, plan_flashinfer

    run_import(
        lambda progress: plan_flashinfer(
            path, revision=revision, authors=include_author or [BASELINE], progress=progress
        ),
        options,
    )


@importer
def import_mlperf(
    path: Annotated[
        Path,
        typer.Argument(
            help="MLPerf Inference summary_results.json (of an mlcommons/inference_results_<round> repository), "
            "or a directory of them."
        ),
    ],
    *,
    options: ImportOptions,
) -> None:
    """MLPerf Inference: closed-division datacenter LLM results as serving runs (Apache-2.0 data)."""
    from kernelindex.registry.importers.mlperf import plan_mlperf

    run_import(
        lambda progress: plan_mlperf(path, progress=progress),
        options,
    )


COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("kernelindex-export", import_kernelindex_export),
    ("kernelindex-seeds", import_kernelindex_seeds),
    ("liger", import_liger),
    ("sol-execbench", import_sol_execbench),
    ("gpumode", import_gpumode),
    ("flashinfer-bench", import_flashinfer_bench),
    ("mlperf", import_mlperf),
)
"""`kernelindex import`'s subcommands, in the order its help lists them."""

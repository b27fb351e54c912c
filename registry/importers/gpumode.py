"""Import GPU MODE KernelBot rows (`GPUMODE/kernelbot-data`, as the Hugging Face datasets-server answers
them: `{"rows": [{"row": {...}}]}` files of the `leaderboards` config and of a board's successful
submissions) as manifests.

The mapping is KernelIndex's (`apps/web/src/server/import/gpumode/`: normalize.ts, parse.ts,
reconcile.ts, problems/amd.ts), so the same rows give the same digests here and upstream: a curated
problem is an OperationSpec; each benchmark shape (`benchmark.N.spec`, "k: 7168; m: 1024; ...") a
WorkloadCase; a submission an ImplementationRevision (its code, when the row carries it, named by
digest as `spec.source`) of its user's SoftwareProject; each benchmark of a submission a per-case
BenchmarkRun (mean, best, worst, std and runs in ns, as the runner reported them).

A board keeps its best `top` users' best submissions, by leaderboard score (lower is better): a
user's later, slower submissions are skipped (per-user dedupe), as are rows that are not a passed,
scored leaderboard run, and boards without a curated problem. Malformed rows are refused with file,
line and column.

Only the per-shape boards (the AMD competition: amd-fp8-mm, amd-mla-decode, amd-mixture-of-experts)
are curated here; upstream's flat boards (one leaderboard score per submission) are skipped, said why.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.importers.fields import (
    BadValue,
    Located,
    Record,
    collation_key,
    evaluate_axis,
    js_round,
    kebab,
    pruned,
    utc_instant,
)
from kernelindex.registry.importers.locate import json_path
from kernelindex.registry.importers.plan import ImportPlan, SourceTerms
from kernelindex.registry.importers.sourcefiles import InputFile, Progress, SourceFileError, json_document

__all__ = ["DEFAULT_TOP", "PROBLEMS", "TERMS", "Problem", "benchmark_key", "plan_gpumode"]

API_VERSION = "kernelindex.dev/v1alpha1"
DATASET_URL = "https://huggingface.co/datasets/GPUMODE/kernelbot-data"
REFERENCE_KERNELS = "gpu-mode/reference-kernels"
DEFAULT_TOP = 100

TERMS = SourceTerms(
    slug="gpumode-kernelbot",
    name="GPU MODE KernelBot",
    license="June 9 Researcher Reciprocity License v1.0. Redistribution and public display permitted with notice "
    "retention and attribution; use for AI training requires researcher reciprocity",
    attribution="GPU Mode and the KernelBot dataset",
    url=DATASET_URL,
)


@dataclass(frozen=True, slots=True)
class Tensor:
    name: str
    shape: tuple[str | int, ...]
    dtype: str
    layout: str | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """A curated KernelBot board: upstream's problems/amd.ts, entry for entry."""

    leaderboard: str
    slug: str
    title: str
    family: str
    description: str
    task_path: str
    axes: dict[str, tuple[str, int | str | None]]  # name -> (role, constant value or expression)
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]


def _variables(*names: str) -> dict[str, tuple[str, int | str | None]]:
    return dict.fromkeys(names, ("variable", None))


PROBLEMS: dict[str, Problem] = {
    p.leaderboard: p
    for p in (
        Problem(
            "amd-fp8-mm",
            "gpumode-amd-fp8-mm",
            "AMD FP8 blockwise GEMM",
            "gemm",
            "FP8-blockwise matrix multiply optimized for MI300: A (m×k) and B (n×k) in e4m3fnuz column-major with "
            "fp32 blockwise scales (128-wide k blocks), output C (m×n) in bf16 row-major. Shapes are drawn from "
            "DeepSeek-R1.",
            "problems/amd/fp8-mm/task.yml",
            {
                **_variables("m", "n", "k", "seed"),
                "k_blocks": ("derived", "k // 128"),
                "n_blocks": ("derived", "n // 128"),
            },
            (
                Tensor("a", ("m", "k"), "fp8_e4m3fnuz", "col_major"),
                Tensor("b", ("n", "k"), "fp8_e4m3fnuz", "col_major"),
                Tensor("a_scale", ("m", "k_blocks"), "fp32", "col_major"),
                Tensor("b_scale", ("n_blocks", "k_blocks"), "fp32", "col_major"),
            ),
            (Tensor("c", ("m", "n"), "bf16", "row_major"),),
        ),
        Problem(
            "amd-mla-decode",
            "gpumode-amd-mla-decode",
            "AMD MLA decode",
            "mla-attention",
            "Multi-head latent attention decode for MI300: bf16 Q/K/V, non-paged pre-allocated latent KV cache, "
            "single decode step over a variable prefill length. Dimensions follow DeepSeek-R1/V3 (hidden 7168, 128 "
            "heads, kv-lora rank 512, rope dim 64).",
            "problems/amd/mla-decode/task.yml",
            {
                **_variables("batchsize", "dim", "dq", "prefill", "seed"),
                "sq": ("constant", 1),
                "n_heads": ("constant", 128),
                "v_head_dim": ("constant", 128),
                "kv_lora_rank": ("constant", 512),
                "qk_rope_head_dim": ("constant", 64),
                "kv_dim": ("derived", "kv_lora_rank + qk_rope_head_dim"),
            },
            (
                Tensor("input", ("batchsize", "sq", "dim"), "bf16"),
                Tensor("kv_cache", ("batchsize", "prefill", "kv_dim"), "bf16"),
            ),
            (
                Tensor("attn_output", ("batchsize", "n_heads", "sq", "v_head_dim"), "bf16"),
                Tensor("kv_cache_out", ("batchsize", "prefill", "kv_dim"), "bf16"),
            ),
        ),
        Problem(
            "amd-mixture-of-experts",
            "gpumode-amd-moe",
            "AMD DeepSeek-style MoE layer",
            "moe",
            "DeepSeek-style mixture-of-experts layer on a single MI300X: softmax router, top-k routing to routed "
            "plus shared experts, fp16 activations. Expert/router weights and configuration accompany the input "
            "tensor as described upstream.",
            "problems/amd/moe/task.yml",
            _variables(
                "bs", "seqlen", "dhidden", "dexpert", "nroutedexperts", "nsharedexperts", "nexpertspertoken", "seed"
            ),
            (Tensor("input", ("bs", "seqlen", "dhidden"), "fp16"),),
            (Tensor("output", ("bs", "seqlen", "dhidden"), "fp16"),),
        ),
    )
}

_HARDWARE: dict[str, dict[str, str]] = {
    "AMD Instinct MI300X": {"vendor": "amd", "product": "AMD Instinct MI300X", "architecture": "gfx942"},
    "AMD Instinct MI325X": {"vendor": "amd", "product": "AMD Instinct MI325X", "architecture": "gfx942"},
    "MI300": {"vendor": "amd", "product": "AMD Instinct MI300X", "architecture": "gfx942"},
}
_SPEC_ENTRY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):\s*(-?\d+)")


def _hardware(name: str) -> dict[str, str]:
    return dict(_HARDWARE.get(name) or {"vendor": "amd", "product": name, "architecture": "unknown"})


def benchmark_key(axes: dict[str, int]) -> str:
    """A case's identity within its problem: the sorted bindings, `k7168-m1024-n1536-seed8135`.

    >>> benchmark_key({"m": 1024, "n": 1536, "k": 7168, "seed": 8135})
    'k7168-m1024-n1536-seed8135'
    """
    return "-".join(f"{axis}{value}" for axis, value in sorted(axes.items(), key=lambda item: collation_key(item[0])))


@dataclass(frozen=True, slots=True)
class Benchmark:
    index: int
    axes: dict[str, int]
    mean: float
    best: float | None
    worst: float | None
    std: float | None
    runs: int | None


def _benchmarks(result: Record) -> list[Benchmark]:
    """Unfold run_result's flattened `benchmark.N.*` map (string values, in ns).

    Raises:
        BadValue: a missing or non-numeric count, mean or spec, or a spec entry that is not `axis: int`.
    """
    raw = result.value
    count_text = raw.get("benchmark-count")
    count = _to_number(count_text)
    if count is None or not float(count).is_integer() or count <= 0:
        raise BadValue(result.at("benchmark-count"), f"not a positive whole number: {count_text!r}")
    found = []
    for index in range(int(count)):
        key = f"benchmark.{index}."
        mean = _to_number(raw.get(key + "mean"))
        if key + "mean" not in raw:
            raise BadValue(result.path, f"{key}mean is missing")
        if mean is None or mean <= 0:
            raise BadValue(result.at(key + "mean"), f"not a positive number: {raw.get(key + 'mean')!r}")
        spec = raw.get(key + "spec")
        if not isinstance(spec, str):
            raise BadValue(result.at(key + "spec") if key + "spec" in raw else result.path, f"{key}spec is missing")
        axes: dict[str, int] = {}
        for part in spec.split(";"):
            match = _SPEC_ENTRY.fullmatch(part.strip())
            if match is None:
                raise BadValue(result.at(key + "spec"), f"unparseable benchmark spec entry {part.strip()!r}")
            axes[match[1].lower()] = int(match[2])
        std, runs = _to_number(raw.get(key + "std")), _to_number(raw.get(key + "runs"))
        found.append(
            Benchmark(
                index,
                axes,
                mean,
                _positive(raw.get(key + "best")),
                _positive(raw.get(key + "worst")),
                std if std is not None and std >= 0 else None,
                int(runs) if runs is not None and float(runs).is_integer() and runs > 0 else None,
            )
        )
    return found


def _to_number(value: Any) -> float | None:
    """JavaScript's Number() of a dataset cell, None when it is not a finite number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", value):
        return float(value)
    return None


def _positive(value: Any) -> float | None:
    number = _to_number(value)
    return number if number is not None and number > 0 else None


@dataclass(slots=True)
class _Row:
    where: str
    record: Record
    located: Located
    score: float | None


@dataclass(slots=True)
class _Board:
    name: str
    gpu_types: list[str]
    rows: list[_Row] = field(default_factory=list)


def plan_gpumode(path: Path, *, top: int | None = DEFAULT_TOP, progress: Progress | None = None) -> ImportPlan:
    """Read KernelBot datasets-server files under `path` (a directory, or one file) and map them.

    `top` keeps that many distinct users per board (None: all). Malformed rows are collected in
    `plan.problems`; the caller decides.

    Raises:
        SourceFileError: a file is not JSON, or there is no leaderboards file to name the boards.
    """
    plan = ImportPlan(TERMS)
    files = sorted(p for p in path.rglob("*.json") if p.is_file()) if path.is_dir() else [path]
    boards: dict[int, _Board] = {}
    submissions: list[tuple[Located, list[Record]]] = []
    for file in files:
        source = InputFile.of(file, path if path.is_dir() else None)
        plan.inputs.append(source)
        value = json_document(source)
        located = Located(source, file.read_bytes())
        try:
            rows = [r.need_record("row") for r in Record(value).records("rows")]
        except BadValue as exc:
            plan.refuse(located.problem(exc))
            continue
        if rows and "submission_id" in rows[0]:
            submissions.append((located, rows))
            continue
        for row in rows:
            try:
                identifier = row.integer("id")
                if identifier in boards:
                    raise BadValue(row.at("id"), f"repeats leaderboard {identifier}")
                boards[identifier] = _Board(row.text("name"), row.texts("gpu_types", optional=True))
            except BadValue as exc:
                plan.refuse(located.problem(exc))
    if not boards and submissions:
        raise SourceFileError(
            submissions[0][0].source.at(1, 1, "no leaderboards file beside the submissions: it names their boards")
        )
    mapper = _Mapper(plan, top)
    seen: dict[int, str] = {}
    for located, rows in submissions:
        for row in rows:
            where = f"{located.source.name}:{json_path(row.path)}"
            try:
                identifier = row.integer("submission_id")
                if identifier in seen:
                    raise BadValue(row.at("submission_id"), f"repeats submission {identifier} ({seen[identifier]})")
                seen[identifier] = where
                board = boards.get(row.integer("leaderboard_id"))
                row.integer("user_id")
                row.text("submission_time")
                for key in ("run_mode", "file_name", "code"):
                    row.maybe_text(key)
                row.flag("run_passed")
                score = row.maybe_number("run_score")
                row.record("run_result", optional=True)
                row.record("run_system_info", optional=True)
            except BadValue as exc:
                plan.refuse(located.problem(exc))
                continue
            if board is None:
                plan.skip(where, f"leaderboard {row.integer('leaderboard_id')} is not in the leaderboards file")
                continue
            board.rows.append(_Row(where, row, located, score))
    for board in boards.values():
        mapper.board(board)
    return plan


class _Mapper:
    def __init__(self, plan: ImportPlan, top: int | None) -> None:
        self.plan = plan
        self.top = top
        self.projects: set[str] = set()

    def _add(self, where: str, document: dict[str, Any]) -> str:
        return self.plan.add(where, pruned(document)).digest

    def board(self, board: _Board) -> None:
        problem = PROBLEMS.get(board.name)
        if problem is None:
            for row in board.rows:
                self.plan.skip(row.where, f"board {board.name} has no curated problem")
            return
        if not board.rows:
            return
        # Best score first (lower is better), the file's order among equals: a user's first row is their best.
        ordered = sorted(board.rows, key=lambda r: r.score if r.score is not None else float("inf"))
        users: set[int] = set()
        operation: str | None = None
        for row in ordered:
            record = row.record
            result = record.record("run_result", optional=True)
            if (
                record.flag("run_passed") is not True
                or record.maybe_text("run_mode") != "leaderboard"
                or row.score is None
                or row.score <= 0
                or result is None
            ):
                self.plan.skip(row.where, "not a passed, scored leaderboard run")
                continue
            try:
                benchmarks = _benchmarks(result)
            except BadValue as exc:
                self.plan.refuse(row.located.problem(exc))
                continue
            user = record.integer("user_id")
            if user in users:
                self.plan.skip(row.where, "a better submission of the same user is kept (one per user)")
                continue
            if self.top is not None and len(users) >= self.top:
                self.plan.skip(row.where, f"below the best {self.top} users of the board")
                continue
            users.add(user)
            if operation is None:
                operation = self._add(row.where, _operation(problem))
            try:
                self._submission(row, problem, board, operation, benchmarks)
            except InvalidManifest as exc:
                self.plan.problems.extend(exc.problems)
            except ValueError as exc:
                self.plan.refuse(row.located.problem(BadValue(record.at("run_result"), str(exc))))

    def _submission(
        self, row: _Row, problem: Problem, board: _Board, operation: str, benchmarks: list[Benchmark]
    ) -> None:
        record = row.record
        identifier, user = record.integer("submission_id"), record.integer("user_id")
        system = record.record("run_system_info", optional=True)
        gpu = (system.maybe_text("gpu") if system else None) or (board.gpu_types[0] if board.gpu_types else "unknown")
        observed = utc_instant(record.text("submission_time"))
        if observed is None:
            raise ValueError(f"submission_time is not a timestamp: {record.text('submission_time')!r}")
        hardware = _hardware(gpu)
        project = f"kernelbot-user-{kebab(str(user))}"
        if project not in self.projects:
            self.projects.add(project)
            self._add(
                row.where,
                {
                    "apiVersion": API_VERSION,
                    "kind": "SoftwareProject",
                    "metadata": {"name": project},
                    "spec": {
                        "name": f"KernelBot user {user}",
                        "host": {"kind": "other", "id": f"gpumode-kernelbot/user/{user}"},
                    },
                },
            )
        code = record.maybe_text("code") or None
        file_name = record.maybe_text("file_name")
        source = None
        if code is not None:
            data = code.encode("utf-8")
            source = {
                "contentDigest": "sha256:" + hashlib.sha256(data).hexdigest(),
                "fileName": file_name,
                "sizeBytes": len(data),
            }
        implementation = self._add(
            row.where,
            {
                "apiVersion": API_VERSION,
                "kind": "ImplementationRevision",
                "metadata": {
                    "name": f"kernelbot-submission-{identifier}",
                    "title": f"{problem.leaderboard} · submission {identifier}",
                    "description": file_name,
                    # The project link, kept as a label as the catalog export's import keeps it.
                    "labels": {"project": project},
                    "sourceRefs": [{"url": DATASET_URL}],
                },
                "spec": {
                    "projectRevision": {"version": f"submission-{identifier}"},
                    "operation": {"specDigest": operation},
                    "callable": {"language": "python"},
                    "support": {
                        "hardwareArchitectures": [hardware["architecture"]],
                        "productsTested": [hardware["product"]],
                        "dtypes": list(dict.fromkeys(t.dtype for t in problem.inputs)),
                    },
                    "source": source,
                    "licensing": {},
                },
            },
        )
        protocol = self._add(row.where, _PROTOCOL)
        environment = self._add(
            row.where,
            {
                "apiVersion": API_VERSION,
                "kind": "ExecutionEnvironment",
                "metadata": {
                    "name": kebab(f"gpumode-kernelbot-{gpu}"),
                    "title": f"KernelBot runner · {hardware['product']}",
                },
                "spec": {"hardware": hardware, "software": {}},
            },
        )
        labels = {}
        if system is not None:
            for key in ("torch", "platform"):
                value = system.maybe_text(key)
                if value:
                    labels[key] = value
        score = row.score
        for benchmark in benchmarks:
            case = self._add(row.where, _case(problem, operation, benchmark.axes))
            metrics: dict[str, Any] = {"mean_ns": benchmark.mean}
            if benchmark.best is not None:
                metrics["best_ns"] = benchmark.best
            metrics["leaderboard_score_s"] = score
            run = self.plan.add(
                row.where,
                pruned(
                    {
                        "apiVersion": API_VERSION,
                        "kind": "BenchmarkRun",
                        "metadata": {
                            "name": kebab(f"kernelbot-{identifier}-{benchmark_key(benchmark.axes)}"),
                            "title": f"{problem.leaderboard} · submission {identifier} · case {benchmark.index}",
                            "labels": labels or None,
                        },
                        "spec": {
                            "implementationDigest": implementation,
                            "workloadDigest": case,
                            "protocolDigest": protocol,
                            "environmentDigest": environment,
                            "status": "passed",
                            "timing": {
                                "primaryStatistic": "mean",
                                "samples": benchmark.runs,
                                "latencyNs": {
                                    "mean": js_round(benchmark.mean),
                                    "minimum": js_round(benchmark.best) if benchmark.best is not None else None,
                                    "maximum": js_round(benchmark.worst) if benchmark.worst is not None else None,
                                },
                            },
                            "measurements": [
                                {
                                    "metric": "latency",
                                    "unit": "ns",
                                    "statistic": "std",
                                    "value": benchmark.std,
                                    "sampleCount": benchmark.runs,
                                }
                            ]
                            if benchmark.std is not None
                            else None,
                            "sourceNative": {
                                "source": "gpumode-kernelbot",
                                "benchmark": f"{problem.leaderboard}/{benchmark.index}",
                                "externalId": f"submission/{identifier}",
                                "metrics": metrics,
                            },
                            "observedAt": observed,
                        },
                    }
                ),
            )
            self.plan.imported(f"{row.where}.benchmark.{benchmark.index}", run)


_PROTOCOL: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": "BenchmarkProtocol",
    "metadata": {"name": "gpumode-kernelbot-eval", "title": "GPU MODE KernelBot evaluation harness"},
    "spec": {
        "harness": {"name": "reference-kernels eval.py", "repository": f"https://github.com/{REFERENCE_KERNELS}"},
        "measurement": {"timer": "wall_clock", "primaryStatistic": "mean"},
        "correctness": {"reference": "problem reference implementation", "comparator": "kernelbot_eval"},
        "comparability": {
            "family": "gpumode_kernelbot",
            "notes": "Per-case wall-clock statistics as published in the KernelBot dataset. Comparable only within "
            "one leaderboard problem and GPU type; runner software versions ride each run's labels.",
        },
    },
}


def _tensor(tensor: Tensor) -> dict[str, Any]:
    return {
        "name": tensor.name,
        "tensor": {"shape": list(tensor.shape), "dtype": tensor.dtype, "layout": tensor.layout},
    }


def _operation(problem: Problem) -> dict[str, Any]:
    axes: dict[str, Any] = {}
    for name, (role, value) in problem.axes.items():
        if role == "constant":
            axes[name] = {"role": "constant", "type": "integer", "value": value}
        elif role == "derived":
            axes[name] = {"role": "derived", "type": "integer", "expression": value}
        else:
            axes[name] = {"role": "variable", "type": "integer"}
    return {
        "apiVersion": API_VERSION,
        "kind": "OperationSpec",
        "metadata": {
            "name": problem.slug,
            "title": problem.title,
            "description": problem.description,
            "sourceRefs": [{"url": f"https://github.com/{REFERENCE_KERNELS}/blob/main/{problem.task_path}"}],
        },
        "spec": {
            "family": problem.family,
            "axes": axes,
            "inputs": [_tensor(t) for t in problem.inputs],
            "outputs": [_tensor(t) for t in problem.outputs],
            "semantics": {"mutation": "none", "determinism": "unspecified"},
        },
    }


def _case(problem: Problem, operation: str, axes: dict[str, int]) -> dict[str, Any]:
    """Raises: ValueError: a shape names an axis the benchmark does not bind."""
    bindings = dict(axes)
    for name, (role, value) in problem.axes.items():
        if role == "constant" and isinstance(value, int):
            bindings[name] = value
    for name, (role, value) in problem.axes.items():
        if role == "derived" and isinstance(value, str) and name not in bindings:
            bindings[name] = evaluate_axis(value, bindings)

    def bound(dim: str | int) -> int:
        if isinstance(dim, int):
            return dim
        if dim not in bindings:
            raise ValueError(f"unbound axis {dim!r} in {problem.leaderboard}")
        return bindings[dim]

    title = f"{problem.title} · " + ", ".join(f"{a}={v}" for a, v in axes.items())
    return {
        "apiVersion": API_VERSION,
        "kind": "WorkloadCase",
        "metadata": {
            "name": kebab(f"{problem.slug}-{benchmark_key(axes)}"),
            "title": title if len(title) <= 200 else title[:199] + "…",
        },
        "spec": {
            "operationSpecDigest": operation,
            "axes": axes,
            "tensors": {t.name: {"shape": [bound(d) for d in t.shape], "dtype": t.dtype} for t in problem.inputs},
            "correctness": {"comparator": "kernelbot_eval"},
        },
    }

"""Import Liger-Kernel's benchmark CSV (`benchmark/data/all_benchmark_data.csv`) as manifests.

The mapping is KernelIndex's (`apps/web/src/server/import/liger/normalize.ts`), so that the same
rows yield the same digests here and upstream: a curated kernel (`liger_kernels.KERNELS`) is one
OperationSpec; each timed pass (forward, backward, full) one BenchmarkProtocol; each GPU one
ExecutionEnvironment (hardware only: the CSV records no CUDA, driver or torch version); each
provider of a kernel one ImplementationRevision of its project (Liger-Kernel, PyTorch,
Transformers, Megatron-LM, DeepSpeed); each bound config one WorkloadCase; each speed row one
BenchmarkRun, its median the primary statistic, p20/p80 as measurements.

Memory rows, uncurated kernels, unknown config shapes, providers, GPUs and passes are skipped and
counted with their reason. Malformed rows (a missing or extra field, a non-numeric or non-ms
value, a config that is not JSON, a row that repeats an earlier one) are refused with their
file, line and column.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.importers.fields import evaluate_axis, js_round, kebab
from kernelindex.registry.importers.liger_kernels import KERNELS, MODES, Binding, Kernel, Tensor
from kernelindex.registry.importers.plan import ImportPlan, SourceTerms
from kernelindex.registry.importers.sourcefiles import InputFile, Progress, SourceFileError, csv_records

__all__ = ["COLUMNS", "TERMS", "kebab", "plan_liger"]

REPO_URL = "https://github.com/linkedin/Liger-Kernel"
API_VERSION = "kernelindex.dev/v1alpha1"

TERMS = SourceTerms(
    slug="liger-kernel-bench",
    name="Liger-Kernel benchmarks",
    license="BSD-2-Clause. Redistribution permitted with copyright notice retention",
    attribution="LinkedIn Liger-Kernel; Copyright 2024 LinkedIn Corporation",
    url=REPO_URL,
)

COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)

_HARDWARE: dict[str, dict[str, str]] = {
    "NVIDIA A100-SXM4-80GB": {
        "vendor": "nvidia",
        "product": "NVIDIA A100",
        "architecture": "sm_80",
        "formFactor": "SXM4-80GB",
    },
    "NVIDIA H100 80GB HBM3": {
        "vendor": "nvidia",
        "product": "NVIDIA H100",
        "architecture": "sm_90",
        "formFactor": "80GB HBM3",
    },
    "NVIDIA H100 PCIe": {"vendor": "nvidia", "product": "NVIDIA H100", "architecture": "sm_90", "formFactor": "PCIe"},
    "NVIDIA B200": {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "sm_100"},
    "NVIDIA GeForce RTX 3090": {"vendor": "nvidia", "product": "NVIDIA GeForce RTX 3090", "architecture": "sm_86"},
    "NVIDIA GeForce RTX 4090": {"vendor": "nvidia", "product": "NVIDIA GeForce RTX 4090", "architecture": "sm_89"},
}

# project slug -> (display name, repository, GitHub id)
_PROJECTS = {
    "liger-kernel": ("Liger-Kernel", REPO_URL, "linkedin/Liger-Kernel"),
    "pytorch": ("PyTorch", "https://github.com/pytorch/pytorch", "pytorch/pytorch"),
    "megatron-lm": ("NVIDIA Megatron-LM", "https://github.com/NVIDIA/Megatron-LM", "NVIDIA/Megatron-LM"),
    "deepspeed": ("DeepSpeed", "https://github.com/deepspeedai/DeepSpeed", "deepspeedai/DeepSpeed"),
    "transformers": (
        "Hugging Face Transformers",
        "https://github.com/huggingface/transformers",
        "huggingface/transformers",
    ),
}

_BSD2 = {"declared": "BSD-2-Clause", "concluded": "BSD-2-Clause"}
_LIGER = {"project": "liger-kernel", "language": "triton", "licensing": _BSD2, "pip": "liger-kernel"}

# provider -> project, title, language, description, licensing, pip package, role
_PROVIDERS: dict[str, dict[str, Any]] = {
    "liger": {**_LIGER, "title": "Liger", "description": "Liger-Kernel Triton implementation."},
    "liger_fused_add_rms_norm": {
        **_LIGER,
        "title": "Liger fused",
        "description": "Liger-Kernel fused add + RMSNorm Triton implementation.",
    },
    "liger_rms_norm": {
        **_LIGER,
        "title": "Liger unfused",
        "description": "Residual add in PyTorch followed by the Liger RMSNorm Triton kernel (unfused baseline).",
    },
    "huggingface": {
        "project": "transformers",
        "title": "Transformers",
        "language": "python",
        "description": "Hugging Face Transformers reference module.",
        "licensing": {"declared": "Apache-2.0"},
        "role": "baseline",
    },
    "torch": {
        "project": "pytorch",
        "title": "PyTorch",
        "language": "python",
        "description": "PyTorch reference module.",
        "licensing": {"declared": "BSD-3-Clause"},
        "role": "baseline",
    },
    "torch_compile": {
        "project": "pytorch",
        "title": "torch.compile",
        "language": "python",
        "description": "PyTorch reference module compiled with torch.compile.",
        "licensing": {"declared": "BSD-3-Clause"},
    },
    "liger_in_place": {
        **_LIGER,
        "title": "Liger in-place",
        "description": "Liger-Kernel Triton implementation, in-place variant.",
    },
    "liger_tiled": {
        **_LIGER,
        "title": "Liger tiled",
        "description": "Liger-Kernel MLP under seq-sharded tiled execution (same computation, chunked over the "
        "sequence).",
    },
    "megatron": {
        "project": "megatron-lm",
        "title": "Megatron",
        "language": "python",
        "description": "Megatron-Core module for the benchmarked operation.",
        "licensing": {"declared": "BSD-3-Clause"},
    },
    "megatron-fused": {
        "project": "megatron-lm",
        "title": "Megatron fused",
        "language": "python",
        "description": "Megatron-Core fused_vocab_parallel_cross_entropy (fused kernel path).",
        "licensing": {"declared": "BSD-3-Clause"},
    },
    "megatron-unfused": {
        "project": "megatron-lm",
        "title": "Megatron unfused",
        "language": "python",
        "description": "Megatron-Core vocab_parallel_cross_entropy (unfused reference path).",
        "licensing": {"declared": "BSD-3-Clause"},
        "role": "baseline",
    },
    "deepspeed_tiled": {
        "project": "deepspeed",
        "title": "DeepSpeed tiled",
        "language": "python",
        "description": "DeepSpeed TiledMLP seq-sharded execution.",
        "licensing": {"declared": "Apache-2.0"},
    },
}

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?")
_MS_TO_NS = 1_000_000


def plan_liger(path: Path, *, revision: str | None = None, progress: Progress | None = None) -> ImportPlan:
    """Read a Liger benchmark CSV and map its rows to manifests.

    `revision` is the Liger-Kernel commit the CSV comes from (it links each operation to its benchmark
    script; metadata only). Malformed rows are collected in `plan.problems`; the caller decides.

    Raises:
        SourceFileError: the file cannot be read as CSV (bad header, unterminated quote, not UTF-8).
    """
    source = InputFile.of(path)
    plan = ImportPlan(TERMS, [source], revision)
    mapper = _Mapper(plan, revision)
    records = csv_records(source)
    header = next(records, None)
    if header is None:
        raise SourceFileError(source.at(1, 1, "empty file: expected the header " + ",".join(COLUMNS)))
    missing = [c for c in COLUMNS if c not in header.fields]
    extra = [c for c in header.fields if c not in COLUMNS]
    if missing or extra:
        said = [f"missing column(s) {', '.join(missing)}"] if missing else []
        said += [f"unexpected column(s) {', '.join(extra)}"] if extra else []
        raise SourceFileError(source.at(1, 1, "; ".join(said)))
    order = [header.fields.index(c) for c in COLUMNS]
    seen: dict[tuple[str, ...], int] = {}
    for record in records:
        if progress and record.line % 200 == 0:
            progress("read " + source.name, record.line, 0)
        where = f"{source.name}:{record.line}"
        if len(record.fields) != len(header.fields):
            plan.refuse(source.at(record.line, 1, f"expected {len(header.fields)} fields, found {len(record.fields)}"))
            continue
        row = {c: record.fields[i] for c, i in zip(COLUMNS, order, strict=True)}
        column = {c: record.columns[i] for c, i in zip(COLUMNS, order, strict=True)}
        key = tuple(row[c] for c in COLUMNS if not c.startswith("y_value"))
        if key in seen:
            plan.refuse(source.at(record.line, 1, f"repeats line {seen[key]} (same kernel, provider, case and time)"))
            continue
        seen[key] = record.line
        try:
            mapper.row(where, row)
        except _BadValue as exc:
            plan.refuse(source.at(record.line, column[exc.column], exc.reason, exc.column))
        except InvalidManifest as exc:
            for problem in exc.problems:
                plan.refuse(problem)
    return plan


class _BadValue(Exception):
    def __init__(self, column: str, reason: str) -> None:
        self.column = column
        self.reason = reason
        super().__init__(f"{column}: {reason}")


def _float(row: dict[str, str], column: str) -> float:
    text = row[column].strip()
    if not _NUMBER.fullmatch(text):
        raise _BadValue(column, f"not a number: {row[column]!r}")
    return float(text)


class _Mapper:
    """Rows to manifests, each shared manifest made once (operations, environments, protocols ...)."""

    def __init__(self, plan: ImportPlan, revision: str | None) -> None:
        self.plan = plan
        self.revision = revision
        self.operations: dict[str, str] = {}
        self.environments: dict[str, str] = {}
        self.protocols: dict[str, str] = {}
        self.implementations: dict[str, str] = {}
        self.projects: set[str] = set()
        self.workloads: dict[str, str] = {}

    def row(self, where: str, row: dict[str, str]) -> None:
        plan = self.plan
        if row["metric_name"] != "speed":
            plan.skip(where, f"{row['metric_name'] or 'unnamed'} metric (only speed rows are runs)")
            return
        if row["metric_unit"] != "ms":
            raise _BadValue("metric_unit", f"a speed row must be in ms, not {row['metric_unit']!r}")
        ms50, ms20, ms80 = (_float(row, c) for c in ("y_value_50", "y_value_20", "y_value_80"))
        if not ms50 > 0:
            raise _BadValue("y_value_50", f"the median must be positive, not {row['y_value_50']!r}")
        x_value = _float(row, "x_value")
        try:
            config = orjson.loads(row["extra_benchmark_config_str"])
        except orjson.JSONDecodeError as exc:
            raise _BadValue("extra_benchmark_config_str", f"not JSON: {exc.msg}") from None
        if not isinstance(config, dict):
            raise _BadValue("extra_benchmark_config_str", "not a JSON object")
        if not _TIMESTAMP.fullmatch(row["timestamp"]):
            raise _BadValue("timestamp", f"expected YYYY-MM-DD HH:MM:SS, not {row['timestamp']!r}")
        kernel = KERNELS.get(row["kernel_name"])
        if kernel is None:
            plan.skip(where, f"uncurated kernel {row['kernel_name']}")
            return
        mode = row["kernel_operation_mode"]
        if mode not in MODES:
            plan.skip(where, f"unknown pass {mode!r} of {kernel.csv_name}")
            return
        provider = _PROVIDERS.get(row["kernel_provider"])
        if provider is None:
            plan.skip(where, f"unknown provider {row['kernel_provider']}")
            return
        binding = kernel.bind(int(x_value), row["x_name"], config) if x_value.is_integer() and x_value > 0 else None
        if binding is None:
            plan.skip(where, f"unrecognised config of {kernel.csv_name}")
            return
        operation = self._operation(where, kernel)
        hardware = _HARDWARE.get(row["gpu_name"])
        if hardware is None:
            plan.skip(where, f"unknown GPU {row['gpu_name']}")
            return
        environment = self._environment(where, row["gpu_name"], hardware)
        protocol = self._protocol(where, mode)
        implementation = self._implementation(where, kernel, row["kernel_provider"], provider, operation)
        workload = self._workload(where, kernel, binding, operation)
        run = plan.add(
            where,
            _run(row, kernel, binding, (ms50, ms20, ms80), implementation, workload, protocol, environment),
        )
        plan.imported(where, run)

    def _operation(self, where: str, kernel: Kernel) -> str:
        found = self.operations.get(kernel.csv_name)
        if found is None:
            script = f"benchmark/scripts/benchmark_{kernel.csv_name}.py"
            url = f"{REPO_URL}/blob/{self.revision}/{script}" if self.revision else f"{REPO_URL}/tree/main/{script}"
            axes: dict[str, Any] = {name: {"role": "variable", "type": "integer"} for name in _signature_axes(kernel)}
            axes.update(
                {name: {"role": "derived", "type": "integer", "expression": e} for name, e in kernel.derived.items()}
            )
            document = {
                "apiVersion": API_VERSION,
                "kind": "OperationSpec",
                "metadata": {
                    "name": kernel.slug,
                    "title": kernel.title,
                    "description": kernel.description,
                    "sourceRefs": [{"url": url}],
                },
                "spec": {
                    "family": kernel.family,
                    "axes": axes,
                    "inputs": [_argument(t) for t in kernel.inputs],
                    "outputs": [_argument(t) for t in kernel.outputs],
                    "semantics": {"mutation": "none", "determinism": "unspecified"},
                },
            }
            found = self.operations[kernel.csv_name] = self.plan.add(where, document).digest
        return found

    def _environment(self, where: str, gpu: str, hardware: dict[str, str]) -> str:
        found = self.environments.get(gpu)
        if found is None:
            document = {
                "apiVersion": API_VERSION,
                "kind": "ExecutionEnvironment",
                "metadata": {
                    "name": kebab(f"liger-bench-{gpu}"),
                    "title": f"Liger benchmark host · {gpu.removeprefix('NVIDIA ')}",
                },
                "spec": {"hardware": dict(hardware), "software": {}},
            }
            found = self.environments[gpu] = self.plan.add(where, document).digest
        return found

    def _protocol(self, where: str, mode: str) -> str:
        found = self.protocols.get(mode)
        if found is None:
            notes = (
                f"Timed: {MODES[mode]}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 "
                "spread). The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each "
                "run's labels. Comparable only within one kernel, workload, timed pass, and GPU."
            )
            document = {
                "apiVersion": API_VERSION,
                "kind": "BenchmarkProtocol",
                "metadata": {
                    "name": kebab(f"liger-bench-do-bench-{mode}"),
                    "title": f"Liger benchmark harness · {mode} pass",
                },
                "spec": {
                    "harness": {"name": "Liger-Kernel benchmark scripts", "repository": REPO_URL},
                    "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
                    "comparability": {"family": "liger_kernel_bench", "notes": notes},
                },
            }
            found = self.protocols[mode] = self.plan.add(where, document).digest
        return found

    def _implementation(self, where: str, kernel: Kernel, name: str, provider: dict[str, Any], operation: str) -> str:
        key = f"{kernel.csv_name}/{name}"
        found = self.implementations.get(key)
        if found is None:
            project = provider["project"]
            if project not in self.projects:
                self.projects.add(project)
                display, repository, github = _PROJECTS[project]
                self.plan.add(
                    where,
                    {
                        "apiVersion": API_VERSION,
                        "kind": "SoftwareProject",
                        "metadata": {"name": project},
                        "spec": {"name": display, "repository": repository, "host": {"kind": "github", "id": github}},
                    },
                )
            # Upstream links an implementation to its project outside the manifest (v1alpha1 has no field
            # for it); as with the catalog export, the link is kept as a label: metadata, not identity.
            labels = {"project": project} | ({"role": provider["role"]} if "role" in provider else {})
            spec: dict[str, Any] = {
                "projectRevision": {},
                "operation": {"specDigest": operation},
                "callable": {"language": provider["language"]},
                "support": {"hardwareArchitectures": [], "dtypes": []},
                "licensing": dict(provider["licensing"]),
            }
            if "pip" in provider:
                spec["buildVariants"] = [{"name": "pip", "install": {"kind": "pip", "package": provider["pip"]}}]
            document = {
                "apiVersion": API_VERSION,
                "kind": "ImplementationRevision",
                "metadata": {
                    "name": kebab(f"liger-bench-{kernel.csv_name}-{name}"),
                    "title": f"{kernel.title} · {provider['title']}",
                    "description": provider["description"],
                    "labels": labels,
                    "sourceRefs": [{"url": REPO_URL}],
                },
                "spec": spec,
            }
            found = self.implementations[key] = self.plan.add(where, document).digest
        return found

    def _workload(self, where: str, kernel: Kernel, binding: Binding, operation: str) -> str:
        key = f"{kernel.csv_name}/{_case_key(binding)}"
        found = self.workloads.get(key)
        if found is None:
            bound: dict[str, int] = dict(binding.axes)
            for name, expression in kernel.derived.items():
                bound[name] = evaluate_axis(expression, bound)

            def size(dim: str | int) -> int:
                return dim if isinstance(dim, int) else bound[dim]

            spec: dict[str, Any] = {
                "operationSpecDigest": operation,
                "axes": dict(binding.axes),
                "tensors": {
                    t.name: {
                        "shape": [size(d) for d in t.shape],
                        "dtype": binding.dtype if t.dtype == "cfg" else t.dtype,
                    }
                    for t in kernel.inputs
                },
                "correctness": {"comparator": "not_asserted"},
            }
            if binding.scalars:
                spec["scalars"] = {name: {"dtype": "fp32", "value": v} for name, v in binding.scalars.items()}
            axes = ", ".join(f"{a}={v}" for a, v in binding.axes.items())
            document = {
                "apiVersion": API_VERSION,
                "kind": "WorkloadCase",
                "metadata": {
                    "name": kebab(f"{kernel.slug}-{_case_key(binding)}"),
                    "title": f"{kernel.title} · {axes} · {binding.dtype}",
                },
                "spec": spec,
            }
            found = self.workloads[key] = self.plan.add(where, document).digest
        return found


def _run(
    row: dict[str, str],
    kernel: Kernel,
    binding: Binding,
    values: tuple[float, float, float],
    implementation: str,
    workload: str,
    protocol: str,
    environment: str,
) -> dict[str, Any]:
    ms50, ms20, ms80 = values
    mode, provider, stamp = row["kernel_operation_mode"], row["kernel_provider"], row["timestamp"]
    case = _case_key(binding)
    external = "/".join((kernel.csv_name, mode, provider, kebab(row["gpu_name"]), case, kebab(stamp)))
    return {
        "apiVersion": API_VERSION,
        "kind": "BenchmarkRun",
        "metadata": {
            "name": kebab(f"liger-{kernel.csv_name}-{mode}-{provider}-{row['gpu_name']}-{case}-{stamp}"),
            "title": f"{kernel.title} · {provider} · {mode}",
            "labels": {"liger_version": row["liger_version"]},
        },
        "spec": {
            "implementationDigest": implementation,
            "workloadDigest": workload,
            "protocolDigest": protocol,
            "environmentDigest": environment,
            "status": "passed",
            "timing": {"primaryStatistic": "median", "latencyNs": {"median": js_round(ms50 * _MS_TO_NS)}},
            "measurements": [
                {"metric": "latency", "unit": "ns", "statistic": "p20", "value": js_round(ms20 * _MS_TO_NS)},
                {"metric": "latency", "unit": "ns", "statistic": "p80", "value": js_round(ms80 * _MS_TO_NS)},
            ],
            "sourceNative": {
                "source": TERMS.slug,
                "benchmark": f"{kernel.csv_name}/{mode}",
                "externalId": external,
                "metrics": {"ms_50": ms50, "ms_20": ms20, "ms_80": ms80},
            },
            "observedAt": _iso_instant(stamp),
        },
    }


def _iso_instant(stamp: str) -> str:
    """`2024-09-03 15:39:30` (UTC by the source's convention) as JavaScript's toISOString writes it."""
    moment = datetime.fromisoformat(stamp.replace(" ", "T")).replace(tzinfo=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _argument(tensor: Tensor) -> dict[str, Any]:
    return {
        "name": tensor.name,
        "tensor": {"shape": list(tensor.shape), "dtype": "float" if tensor.dtype == "cfg" else tensor.dtype},
    }


def _signature_axes(kernel: Kernel) -> list[str]:
    names: dict[str, None] = {}
    for tensor in (*kernel.inputs, *kernel.outputs):
        for dim in tensor.shape:
            if isinstance(dim, str) and dim not in kernel.derived:
                names[dim] = None
    return list(names)


def _case_key(binding: Binding) -> str:
    """Sorted axis bindings and the dtype: `hidden1024-rows2048-bf16` (axis names are lower-case ASCII
    with `_`, where upstream's localeCompare and code-point order agree)."""
    axes = "-".join(f"{axis}{value}" for axis, value in sorted(binding.axes.items()))
    return f"{axes}-{binding.dtype}"

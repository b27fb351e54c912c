"""The FlashInfer-Bench trace format, which SOL-ExecBench adopted: definitions, workload entries and
traces read field by field (a refusal says which JSON path and why) and mapped to manifests as
KernelIndex's `sol/normalize.ts` does, for both importers (`sol_execbench.py`, `flashinfer.py`).

- a definition is an OperationSpec (axes lower-cased, dtypes to registry names, a null shape a scalar);
- a workload entry is an exact WorkloadCase (shapes bound from the entry's axes, the definition's
  constants and derived axes), keyed by its uuid, else by a digest of its axes;
- a trace's environment is an ExecutionEnvironment; a trace is a per-case BenchmarkRun (mean latency
  in integer ns, the raw milliseconds kept in `sourceNative.metrics`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import orjson

from kernelindex.registry.importers.fields import (
    BadValue,
    Record,
    collation_key,
    evaluate_axis,
    js_round,
    kebab,
    utc_instant,
)

__all__ = [
    "API_VERSION",
    "Trace",
    "argument_key",
    "case_document",
    "check_definition",
    "dtype",
    "hardware",
    "language",
    "operation_document",
    "read_trace",
    "trace_environment",
    "trace_run_document",
    "workload_entry_key",
]

API_VERSION = "kernelindex.dev/v1alpha1"

_DTYPES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
    "float64": "fp64",
    "double": "fp64",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e4m3": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2",
    "nvfp4": "nvfp4",
    "float4_e2m1": "fp4_e2m1",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "bool": "bool",
}
_LANGUAGES = {
    "cuda_cpp": "cuda",
    "cute_dsl": "cute_dsl",
    "cutile": "cutile",
    "cutlass": "cutlass",
    "cudnn": "cudnn",
    "triton": "triton",
    "pytorch": "pytorch",
}
_B200 = {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "sm_100"}
_H100 = {"vendor": "nvidia", "product": "NVIDIA H100", "architecture": "sm_90"}
_HARDWARE = {
    "B200": _B200,
    "NVIDIA_B200": _B200,
    "GB200": {"vendor": "nvidia", "product": "NVIDIA GB200", "architecture": "sm_100"},
    "H200": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"},
    "H100": _H100,
    "NVIDIA_H100": _H100,
    "A100": {"vendor": "nvidia", "product": "NVIDIA A100", "architecture": "sm_80"},
}
_SUBSET_TAGS = {"L1", "L2", "Quant", "FlashInfer-Bench"}
_TRACE_STATUS = {
    "PASSED": "passed",
    "INCORRECT_SHAPE": "incorrect_shape",
    "INCORRECT_NUMERICAL": "incorrect_numerical",
    "INCORRECT_DTYPE": "incorrect_dtype",
    "RUNTIME_ERROR": "runtime_error",
    "COMPILE_ERROR": "compile_error",
    "TIMEOUT": "timeout",
    "REWARD_HACK": "suspected_reward_hack",
    "INVALID_REFERENCE": "invalid_reference",
}
# Error bounds the harness writes as strings when a comparison overflowed: no bound is recorded
# (upstream's trace parser, version 2).
_NO_BOUND = {"Infinity", "-Infinity", "NaN"}


def hardware(name: str) -> dict[str, str]:
    """A harness's GPU name as vendor, product and architecture (unknown names keep their words).

    >>> hardware("NVIDIA B200")
    {'vendor': 'nvidia', 'product': 'NVIDIA B200', 'architecture': 'unknown'}
    """
    return dict(
        _HARDWARE.get(name) or {"vendor": "nvidia", "product": name.replace("_", " "), "architecture": "unknown"}
    )


def dtype(name: str) -> str:
    return _DTYPES.get(name) or re.sub(r"[^a-z0-9_]", "_", name.lower())


def language(name: str) -> str:
    return _LANGUAGES.get(name) or re.sub(r"[^a-z0-9_]", "_", name.lower())


def argument_key(name: str) -> str:
    lowered = re.sub(r"[^a-z0-9_]", "_", name.lower())
    return lowered if re.match(r"[a-z]", lowered) else f"x_{lowered}"


def _dimension(value: str | int) -> str | int:
    if isinstance(value, int):
        return value
    return int(value) if re.fullmatch(r"\d+", value) else value.lower()


def workload_entry_key(entry: dict[str, Any]) -> str:
    """A case's stable identity: its uuid, else the first 12 hex of the sha256 of its sorted axes as
    JavaScript's JSON.stringify writes them.

    >>> axes = {"seq_len": 128, "head_dim": 64, "num_heads": 32, "batch_size": 64, "hidden_size": 2048}
    >>> workload_entry_key({"axes": axes})
    'edabdcf4bcec'
    """
    uuid = entry.get("uuid")
    if isinstance(uuid, str) and uuid:
        return uuid
    axes = dict(sorted(entry["axes"].items(), key=lambda item: collation_key(item[0])))
    return hashlib.sha256(orjson.dumps(axes)).hexdigest()[:12]


def check_definition(record: Record) -> None:
    """Every field of a definition the mapping reads, with its type.

    Raises:
        BadValue: a missing or mistyped field.
    """
    for key in ("axes", "inputs", "outputs"):
        record.mapping(key)
    for axis_name, axis in record.mapping("axes").items():
        spec = Record(axis, (*record.at("axes"), axis_name))
        kind = spec.text("type")
        if kind not in ("var", "const", "expr"):
            raise BadValue(spec.at("type"), f"an axis is var, const or expr, not {kind!r}")
        if kind == "const":
            spec.integer("value")
        if kind == "expr":
            spec.text("expression")
    for group in ("inputs", "outputs"):
        for tensor_name, tensor in record.mapping(group).items():
            spec = Record(tensor, (*record.at(group), tensor_name))
            spec.text("dtype")
            shape = spec.raw("shape")
            if shape is not None and (
                not isinstance(shape, list)
                or not all(isinstance(d, str | int) and not isinstance(d, bool) for d in shape)
            ):
                raise BadValue(spec.at("shape"), "a shape is a list of axis names and integers")
    record.maybe_text("description")
    record.maybe_text("op_type")
    record.maybe_text("reference")
    record.texts("tags", optional=True)


def _family(record: Record, tags: list[str]) -> str:
    op_type = record.maybe_text("op_type")
    if op_type:
        return kebab(op_type)
    tag = next((t for t in tags if t not in _SUBSET_TAGS and not t.startswith("model:")), None)
    return kebab(tag) if tag else "uncategorized"


def _argument(name: str, tensor: dict[str, Any]) -> dict[str, Any]:
    shape = tensor.get("shape")
    if not shape:
        return {"name": argument_key(name), "scalar": {"dtype": dtype(tensor["dtype"])}}
    return {
        "name": argument_key(name),
        "tensor": {"shape": [_dimension(d) for d in shape], "dtype": dtype(tensor["dtype"])},
    }


def operation_document(name: str, record: Record, tags: list[str], source_url: str) -> dict[str, Any]:
    """A checked definition (`check_definition`) as an OperationSpec; `source_url` is where it was read."""
    axes: dict[str, Any] = {}
    for axis_name, axis in record.mapping("axes").items():
        if axis["type"] == "const":
            axes[axis_name.lower()] = {"role": "constant", "type": "integer", "value": axis.get("value")}
        elif axis["type"] == "expr":
            axes[axis_name.lower()] = {"role": "derived", "type": "integer", "expression": axis["expression"].lower()}
        else:
            axes[axis_name.lower()] = {"role": "variable", "type": "integer"}
    return {
        "apiVersion": API_VERSION,
        "kind": "OperationSpec",
        "metadata": {
            "name": kebab(name),
            "title": name,
            "description": record.maybe_text("description") or None,
            "sourceRefs": [{"url": source_url}],
        },
        "spec": {
            "family": _family(record, tags),
            "axes": axes,
            "inputs": [_argument(n, t) for n, t in record.mapping("inputs").items()],
            "outputs": [_argument(n, t) for n, t in record.mapping("outputs").items()],
            "semantics": {"mutation": "none", "determinism": "unspecified"},
            "reference": {"language": "python"} if record.maybe_text("reference") else None,
        },
    }


def _bindings(record: Record, entry_axes: dict[str, int]) -> dict[str, int]:
    axes = record.mapping("axes")
    bindings = {name.lower(): value for name, value in entry_axes.items()}
    for name, axis in axes.items():
        if axis["type"] == "const" and axis.get("value") is not None:
            bindings[name.lower()] = axis["value"]
    for name, axis in axes.items():
        if axis["type"] == "expr" and axis.get("expression") and name.lower() not in bindings:
            bindings[name.lower()] = evaluate_axis(axis["expression"].lower(), bindings)
    return bindings


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def case_document(name: str, record: Record, operation: str, entry: Record) -> dict[str, Any]:
    """One workload entry of the definition `name` (its checked `record`) as an exact WorkloadCase of
    the OperationSpec `operation`.

    Raises:
        ValueError: an axis the shapes need is bound nowhere.
    """
    entry_axes: dict[str, int] = entry.mapping("axes")
    bindings = _bindings(record, entry_axes)
    key = workload_entry_key(entry.value)
    descriptors = entry.mapping("inputs", optional=True)

    def size(raw: str | int) -> int:
        dim = _dimension(raw)
        if isinstance(dim, int):
            return dim
        if dim not in bindings:
            raise ValueError(f"unbound axis {dim!r} in workload {key}")
        return bindings[dim]

    tensors: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for argument, tensor in record.mapping("inputs").items():
        descriptor = descriptors.get(argument)
        mapped = dtype(tensor["dtype"])
        if isinstance(descriptor, dict) and descriptor.get("type") == "scalar" and _is_number(descriptor.get("value")):
            scalars[argument_key(argument)] = {"dtype": mapped, "value": descriptor["value"]}
            continue
        if not tensor.get("shape"):
            continue
        generator = None
        if isinstance(descriptor, dict):
            generator = {"generator": "safetensors" if descriptor.get("type") == "safetensors" else "random"}
        shape = [size(d) for d in tensor["shape"]]
        tensors[argument_key(argument)] = {"shape": shape, "dtype": mapped, "data": generator}
    title = f"{name} · " + ", ".join(f"{a}={v}" for a, v in entry_axes.items())
    tolerance = entry.mapping("tolerance", optional=True)
    return {
        "apiVersion": API_VERSION,
        "kind": "WorkloadCase",
        "metadata": {
            "name": f"{kebab(name)}-{key[:8]}",
            "title": title if len(title) <= 200 else title[:199] + "…",
        },
        "spec": {
            "operationSpecDigest": operation,
            "axes": {a.lower(): v for a, v in entry_axes.items()},
            "tensors": tensors,
            "scalars": scalars or None,
            "correctness": {
                "comparator": "sol_execbench_eval",
                "maxAbsoluteError": tolerance.get("max_atol"),
                "maxRelativeError": tolerance.get("max_rtol"),
            },
        },
    }


def trace_environment(hardware_name: str, libs: dict[str, str]) -> dict[str, Any]:
    """The environment a trace reports: its GPU, CUDA, PyTorch and the other libraries."""
    product = hardware(hardware_name)
    rest = {language(name): version for name, version in libs.items() if name not in ("cuda", "torch")}
    torch = libs.get("torch")
    return {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "metadata": {
            "name": kebab(f"sol-trace-{hardware_name}-{'-'.join(libs.values())}"),
            "title": f"{product['product']} (trace-reported software)",
        },
        "spec": {
            "hardware": product,
            "software": {
                "cudaToolkit": libs.get("cuda"),
                "framework": {"name": "pytorch", "version": torch} if torch else None,
                "libraries": rest or None,
            },
        },
    }


@dataclass(frozen=True, slots=True)
class Trace:
    """One trace line, every field the mapping uses checked."""

    definition: str
    solution: str | None
    workload: Record
    key: str  # the workload entry's key
    status: str  # the registry's run status
    latency_ms: float | None
    reference_ms: float | None
    speedup: float | None
    max_absolute_error: float | None
    max_relative_error: float | None
    has_correctness: bool
    hardware: str
    libs: dict[str, str]
    observed: str


def _bound(correctness: Record, key: str) -> float | None:
    if correctness.raw(key) in _NO_BOUND:
        return None
    return correctness.number(key)


def read_trace(trace: Record) -> Trace:
    """A trace line's fields, checked.

    Raises:
        BadValue: a missing or mistyped field, no evaluation, an unknown status, a latency that is not
            positive, a timestamp that is not one.
    """
    name = trace.text("definition")
    solution = trace.maybe_text("solution")
    workload = trace.need_record("workload")
    for axis, bound in workload.mapping("axes").items():
        if isinstance(bound, bool) or not isinstance(bound, int):
            raise BadValue((*workload.at("axes"), axis), f"an axis is bound to an integer, not {bound!r}")
    workload.maybe_text("uuid")
    workload.mapping("inputs", optional=True)
    evaluation = trace.record("evaluation", optional=True)
    if evaluation is None:
        raise BadValue(trace.path, "evaluation is missing: a trace without an evaluation measured nothing")
    status = _TRACE_STATUS.get(evaluation.text("status"))
    if status is None:
        raise BadValue(evaluation.at("status"), f"unknown trace status {evaluation.text('status')!r}")
    performance = evaluation.record("performance", optional=True)
    latency = reference = speedup = None
    if performance is not None:
        for key in performance.value:
            if key.startswith("latency_") and key != "latency_ms":
                unit = key.removeprefix("latency_")
                raise BadValue(performance.at(key), f"latencies are in ms (latency_ms), not {unit!r} ({key})")
        latency = performance.number("latency_ms")
        if latency <= 0:
            raise BadValue(performance.at("latency_ms"), f"a latency is positive, not {latency!r}")
        reference = performance.maybe_number("reference_latency_ms")
        speedup = performance.maybe_number("speedup_factor")
    correctness = evaluation.record("correctness", optional=True)
    absolute = relative = None
    if correctness is not None:
        relative = _bound(correctness, "max_relative_error")
        absolute = _bound(correctness, "max_absolute_error")
    environment = evaluation.need_record("environment")
    hardware_name = environment.text("hardware")
    libs = environment.mapping("libs")
    for lib, version in libs.items():
        if not isinstance(version, str):
            raise BadValue((*environment.at("libs"), lib), f"a library version is a string, not {version!r}")
    stamp = evaluation.text("timestamp")
    observed = utc_instant(stamp)
    if observed is None:
        raise BadValue(evaluation.at("timestamp"), f"not a timestamp: {stamp!r}")
    return Trace(
        definition=name,
        solution=solution,
        workload=workload,
        key=workload_entry_key(workload.value),
        status=status,
        latency_ms=latency,
        reference_ms=reference,
        speedup=speedup,
        max_absolute_error=absolute,
        max_relative_error=relative,
        has_correctness=correctness is not None,
        hardware=hardware_name,
        libs=libs,
        observed=observed,
    )


def trace_run_document(
    trace: Trace, source: str, implementation: str, case: str, protocol: str, environment: str
) -> dict[str, Any]:
    """A trace as a per-case BenchmarkRun of `source` (the `sourceNative.source` slug); the comparator
    stays `sol_execbench_eval` for every trace source, as upstream keeps it for digest stability."""
    metrics: dict[str, Any] | None = None
    if trace.latency_ms is not None:
        metrics = {"latency_ms": trace.latency_ms}
        if trace.reference_ms is not None:
            metrics["reference_latency_ms"] = trace.reference_ms
        if trace.speedup is not None:
            metrics["speedup_factor"] = trace.speedup
    return {
        "apiVersion": API_VERSION,
        "kind": "BenchmarkRun",
        "metadata": {
            "name": kebab(f"sol-trace-{trace.definition}-{trace.key[:8]}"),
            "title": f"{trace.solution or 'unknown solution'} · {trace.definition}",
        },
        "spec": {
            "implementationDigest": implementation,
            "workloadDigest": case,
            "protocolDigest": protocol,
            "environmentDigest": environment,
            "status": trace.status,
            "correctness": {
                "comparator": "sol_execbench_eval",
                "maximumAbsoluteError": trace.max_absolute_error,
                "maximumRelativeError": trace.max_relative_error,
            }
            if trace.has_correctness
            else None,
            "timing": {"primaryStatistic": "mean", "latencyNs": {"mean": js_round(trace.latency_ms * 1e6)}}
            if trace.latency_ms is not None
            else None,
            "sourceNative": {"source": source, "benchmark": trace.definition, "metrics": metrics},
            "observedAt": trace.observed,
        },
    }

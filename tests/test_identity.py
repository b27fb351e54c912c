"""Digest invariance: what may change without changing an identity, and what may not.

Each table row is a change applied to a valid document; the digest of the result is compared
with the digest of the document as it was.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES, TEST_DATA, make_operation, make_protocol, make_workload_suite

from kernelindex import registry
from kernelindex.registry.parse import load_document

Doc = dict[str, Any]
Change = Callable[[Doc], None]


def _example(name: str) -> Doc:
    document: Doc = load_document((EXAMPLES / f"{name}.yaml").read_bytes(), f"{name}.yaml")
    return document


def _digest(document: Doc) -> str:
    return str(registry.manifest_from_document(copy.deepcopy(document), "<test>").digest)


def _changed(document: Doc, change: Change) -> Doc:
    result = copy.deepcopy(document)
    change(result)
    return result


def _reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reverse_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(item) for item in value]
    return value


def _set(path: str, value: Any) -> Change:
    """A change that sets `spec.a.b` (dotted, from the document root) to `value`."""

    def change(document: Doc) -> None:
        *parents, last = path.split(".")
        node = document
        for key in parents:
            node = node[key]
        node[last] = value

    return change


def _with_support(**lists: list[str]) -> Doc:
    base = _example("implementation-revision")
    for key, value in lists.items():
        base["spec"]["support"][key] = value
    return base


def _run_with_two_measurements() -> Doc:
    run = _example("benchmark-run")
    run["spec"]["measurements"] = [
        {"metric": "latency", "unit": "ns", "statistic": "median", "value": 8120},
        {"metric": "throughput", "unit": "gbps", "statistic": "mean", "value": 2.5},
    ]
    return run


def _operation_with_two_outputs() -> Doc:
    operation = _example("operation-spec")
    operation["spec"]["outputs"].append({"name": "rstd", "tensor": {"shape": ["tokens"], "dtype": "fp32"}})
    return operation


ALL_EXAMPLES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))

SAME: list[tuple[str, Callable[[], Doc], Change]] = [
    # metadata is editorial: never part of identity
    ("metadata.title", lambda: _example("benchmark-run"), _set("metadata.title", "Another title")),
    ("metadata.name", lambda: _example("benchmark-run"), _set("metadata.name", "renamed-run")),
    ("metadata.labels", lambda: _example("operation-spec"), _set("metadata.labels", {"a": "b", "c": "d"})),
    ("metadata.description", lambda: _example("workload-case"), _set("metadata.description", "Words.")),
    (
        "metadata.authors removed",
        lambda: _example("implementation-revision"),
        lambda d: d["metadata"].pop("authors"),
    ),
    (
        "metadata.sourceRefs",
        lambda: _example("model-revision"),
        _set("metadata.sourceRefs", [{"url": "https://x"}]),
    ),
    # set-like support lists: any order, duplicates collapse
    (
        "hardwareArchitectures order",
        lambda: _with_support(hardwareArchitectures=["sm_100", "sm_80", "sm_90"]),
        _set("spec.support.hardwareArchitectures", ["sm_90", "sm_100", "sm_80"]),
    ),
    (
        "hardwareArchitectures duplicates",
        lambda: _with_support(hardwareArchitectures=["sm_100", "sm_80"]),
        _set("spec.support.hardwareArchitectures", ["sm_80", "sm_100", "sm_80", "sm_100"]),
    ),
    (
        "productsTested order and duplicates",
        lambda: _with_support(productsTested=["NVIDIA B200", "NVIDIA H100"]),
        _set("spec.support.productsTested", ["NVIDIA H100", "NVIDIA B200", "NVIDIA H100"]),
    ),
    (
        "axes order",
        lambda: _with_support(axes=["tokens >= 1", "hidden == 4096"]),
        _set("spec.support.axes", ["hidden == 4096", "tokens >= 1"]),
    ),
    (
        "dtypes order and duplicates",
        lambda: _with_support(dtypes=["bf16", "fp16", "fp8"]),
        _set("spec.support.dtypes", ["fp8", "bf16", "fp16", "bf16"]),
    ),
    (
        "layouts order",
        lambda: _with_support(layouts=["col_major", "row_major"]),
        _set("spec.support.layouts", ["row_major", "col_major", "row_major"]),
    ),
    # durations: one quantity, many spellings
    ("latency 8120 ns", lambda: _example("benchmark-run"), _set("spec.timing.latencyNs.median", "8120 ns")),
    ("latency 8120ns", lambda: _example("benchmark-run"), _set("spec.timing.latencyNs.median", "8120ns")),
    ("latency 8.12 us", lambda: _example("benchmark-run"), _set("spec.timing.latencyNs.median", "8.12 us")),
    ("latency 8.12µs", lambda: _example("benchmark-run"), _set("spec.timing.latencyNs.median", "8.12µs")),
    (
        "latency 0.00812 ms",
        lambda: _example("benchmark-run"),
        _set("spec.timing.latencyNs.median", "0.00812 ms"),
    ),
    (
        "latency 0.00000812 s",
        lambda: _example("benchmark-run"),
        _set("spec.timing.latencyNs.median", "0.00000812 s"),
    ),
    (
        "confidence95 with units",
        lambda: _example("benchmark-run"),
        _set("spec.timing.latencyNs.confidence95", ["8.095 us", "0.008151 ms"]),
    ),
    (
        "every latency statistic",
        lambda: _example("benchmark-run"),
        _set("spec.timing.latencyNs.mad", "0.024 us"),
    ),
    (
        "warmupDuration",
        lambda: _changed(make_protocol(), _set("spec.measurement.warmupDuration", 5_000_000)),
        _set("spec.measurement.warmupDuration", "5 ms"),
    ),
    # numbers: JSON has one number type
    ("1.0 is 1", lambda: _example("benchmark-run"), _set("spec.correctness.matchedRatio", 1)),
    ("0.0 is 0", lambda: _example("workload-case"), _set("spec.tensors.input.data.parameters.mean", 0)),
    # key order, at every level
    *(
        (
            f"key order of {name}",
            functools.partial(_example, name),
            lambda d: _replace_all(d, _reverse_keys(d)),
        )
        for name in ALL_EXAMPLES
    ),
]

DIFFERENT: list[tuple[str, Callable[[], Doc], Change]] = [
    ("inputs reordered", lambda: _example("operation-spec"), lambda d: d["spec"]["inputs"].reverse()),
    ("outputs reordered", _operation_with_two_outputs, lambda d: d["spec"]["outputs"].reverse()),
    (
        "tensor shape reordered",
        lambda: _example("operation-spec"),
        lambda d: d["spec"]["inputs"][0]["tensor"]["shape"].reverse(),
    ),
    (
        "workload shape reordered",
        lambda: _example("workload-case"),
        lambda d: d["spec"]["tensors"]["input"]["shape"].reverse(),
    ),
    (
        "cases reordered",
        lambda: make_workload_suite(make_operation("op"), (1, 2, 3)),
        lambda d: d["spec"]["cases"].reverse(),
    ),
    ("measurements reordered", _run_with_two_measurements, lambda d: d["spec"]["measurements"].reverse()),
    (
        "build variants are not a set",
        lambda: _example("implementation-revision"),
        lambda d: d["spec"]["buildVariants"].append(copy.deepcopy(d["spec"]["buildVariants"][0]) | {"name": "other"}),
    ),
    (
        "latency changed by 1 ns",
        lambda: _example("benchmark-run"),
        _set("spec.timing.latencyNs.median", 8121),
    ),
    (
        "statistic renamed",
        lambda: _example("benchmark-run"),
        lambda d: d["spec"]["timing"]["latencyNs"].update(mean=d["spec"]["timing"]["latencyNs"].pop("median")),
    ),
    (
        "timestamp spelled otherwise",
        lambda: _example("benchmark-run"),
        _set("spec.observedAt", "2026-08-01T12:00:00.000Z"),
    ),
    ("status", lambda: _example("benchmark-run"), _set("spec.status", "timeout")),
    (
        "a set-like list gains a member",
        lambda: _example("implementation-revision"),
        _set("spec.support.dtypes", ["bf16", "fp16"]),
    ),
    (
        "string case",
        lambda: _example("execution-environment"),
        _set("spec.hardware.product", "nvidia b200 sxm"),
    ),
    ("reference", lambda: _example("benchmark-run"), _set("spec.protocolDigest", "sha256:" + "0" * 64)),
    (
        "a tolerance",
        lambda: _example("workload-case"),
        _set("spec.correctness.maxAbsoluteError", 0.011),
    ),
]


def _replace_all(document: Doc, replacement: Doc) -> None:
    document.clear()
    document.update(replacement)


@pytest.mark.parametrize(("base", "change"), [(b, c) for _, b, c in SAME], ids=[n for n, _, _ in SAME])
def test_digest_unchanged(base: Callable[[], Doc], change: Change) -> None:
    document = base()
    assert _digest(_changed(document, change)) == _digest(document)


@pytest.mark.parametrize(("base", "change"), [(b, c) for _, b, c in DIFFERENT], ids=[n for n, _, _ in DIFFERENT])
def test_digest_changed(base: Callable[[], Doc], change: Change) -> None:
    document = base()
    assert _digest(_changed(document, change)) != _digest(document)


@pytest.mark.parametrize(
    "spelling", [8000, 8000.0, "8000 ns", "8000ns", "8 us", "8us", "8 µs", "8µs", "0.008 ms", "0.008ms", "0.000008 s"]
)
def test_durations_are_nanoseconds(spelling: int | float | str) -> None:
    """`"0.008 ms"` and `8000` give the same digest."""
    reference = _changed(_example("benchmark-run"), _set("spec.timing.latencyNs.median", 8000))
    document = _changed(reference, _set("spec.timing.latencyNs.median", spelling))
    manifest = registry.manifest_from_document(document, "run.json")
    assert manifest.document["spec"]["timing"]["latencyNs"]["median"] == 8000
    assert manifest.digest == _digest(reference)


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_yaml_and_json_spellings_agree(name: str) -> None:
    yaml_bytes = (EXAMPLES / f"{name}.yaml").read_bytes()
    from_yaml = registry.load_manifest(yaml_bytes, f"{name}.yaml")
    as_json = json.dumps(load_document(yaml_bytes, f"{name}.yaml"), indent=1).encode()
    from_json = registry.load_manifest(as_json, f"{name}.json")
    assert from_json.digest == from_yaml.digest
    assert from_json.stored_bytes() == from_yaml.stored_bytes()


def test_hand_written_yaml_equals_its_canonical_json_twin() -> None:
    """tests/data/authoring: units, hex integers, unquoted timestamps, flow style, `no`, 1.0 and 1e0."""
    folder: Path = TEST_DATA / "authoring"
    authored = registry.load_manifest((folder / "run-authored.yaml").read_bytes(), "run-authored.yaml")
    canonical = registry.load_manifest((folder / "run-canonical.json").read_bytes(), "run-canonical.json")
    assert authored.digest == canonical.digest
    assert authored.document["spec"]["timing"]["latencyNs"] == {
        "median": 8120,
        "p05": 8072,
        "p95": 8151,
        "confidence95": [8095, 8151],
    }
    assert authored.document["spec"]["observedAt"] == "2026-08-01T12:00:00Z"
    assert authored.document["spec"]["sourceNative"]["benchmark"] == "no"


def test_set_like_lists_are_stored_sorted_and_unique() -> None:
    """Sorted by UTF-16 code units, as upstream's JavaScript sorts (not by code point)."""
    document = _with_support(productsTested=["\ue000 board", "\U0001f600 board", "B200", "B200", "A100"])
    manifest = registry.manifest_from_document(document, "implementation.json")
    assert manifest.document["spec"]["support"]["productsTested"] == [
        "A100",
        "B200",
        "\U0001f600 board",
        "\ue000 board",
    ]


def test_ordered_lists_keep_their_order() -> None:
    document = _example("implementation-revision")
    document["spec"]["buildVariants"].insert(0, copy.deepcopy(document["spec"]["buildVariants"][0]) | {"name": "zzz"})
    manifest = registry.manifest_from_document(document, "implementation.json")
    assert [v["name"] for v in manifest.document["spec"]["buildVariants"]] == ["zzz", "source"]


def test_normalization_does_not_touch_the_input() -> None:
    document = _with_support(dtypes=["fp8", "bf16", "fp8"])
    document["metadata"]["name"] = "x"
    before = copy.deepcopy(document)
    registry.manifest_from_document(document, "implementation.json")
    assert document == before

"""The cold build's decoder makes from a manifest's bytes exactly the node `nodes.extract` makes
from its parsed document: on every manifest of the embedded registry, on every kind the helpers
write, and on documents of shapes no valid manifest has."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from helpers import (
    basic_scenario,
    commit_manifests,
    make_attestation,
    make_implementation,
    make_project,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    make_workload,
    make_workload_suite,
    to_manifest,
)

from kernelindex import registry
from kernelindex.registry.decode import decode
from kernelindex.registry.nodes import Node, Run, extract
from kernelindex.registry.snapshots import stream_nodes


def _same(kind: str, digest: str, oid: str, data: bytes) -> None:
    """decode == extract, down to each field's type (1 == 1.0 == True would hide a wrong type)."""
    expected = extract(kind, digest, oid, orjson.loads(data))
    found = decode(kind, digest, oid, data)
    assert type(found) is type(expected)
    assert found == expected
    assert [type(value) for value in found] == [type(value) for value in expected]
    if isinstance(expected, Run) and expected.primary is not None:
        assert isinstance(found, Run) and found.primary is not None
        assert [type(value) for value in found.primary] == [type(value) for value in expected.primary]


@pytest.mark.slow  # reads all 21,763 manifests
def test_every_embedded_manifest_decodes_to_the_node_extract_makes(embedded: registry.GitStore) -> None:
    head = embedded.head()
    assert head is not None
    kinds: set[str] = set()
    for kind, digest, oid, data in embedded.manifests_with_bytes(head):
        _same(kind, digest, oid, data)
        kinds.add(kind)
    assert len(kinds) == 13  # every upstream kind is in the embedded registry


def _stored(document: dict[str, Any]) -> tuple[str, str, bytes]:
    manifest = to_manifest(document)
    return manifest.kind, manifest.digest, manifest.stored_bytes()


def _helper_documents() -> list[dict[str, Any]]:
    scenario = basic_scenario()
    runs = scenario.runs
    return [
        *scenario.docs,
        make_workload_suite(scenario.operation, (512, 1024, 4096)),
        make_project("kernels", repository="https://example.com/kernels"),
        make_attestation(runs[0]),
        make_retraction(runs[1]),
        make_supersession(runs[2], runs[0]),
        make_verification(runs[0], runs[1]),
    ]


@pytest.mark.parametrize("index", range(len(_helper_documents())))
def test_each_kind_the_helpers_write_decodes_the_same(index: int) -> None:
    kind, digest, data = _stored(_helper_documents()[index])
    _same(kind, digest, "0" * 40, data)


def _run() -> dict[str, Any]:
    return copy.deepcopy(basic_scenario().runs[0])


def _implementation() -> dict[str, Any]:
    return copy.deepcopy(basic_scenario().implementations[0])


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], object]:
    def change(document: dict[str, Any]) -> None:
        target = document
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = value

    return change


def _drop(*path: str) -> Callable[[dict[str, Any]], object]:
    def change(document: dict[str, Any]) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target.pop(path[-1], None)

    return change


# Shapes a write would refuse, or that the decoder's structs treat specially: each must come out as
# extract makes it (the same node, or the same error).
ODD_RUNS: dict[str, Callable[[dict[str, Any]], object]] = {
    "no title": _drop("metadata", "title"),
    "null title": _set(("metadata", "title"), None),
    "title not a string": _set(("metadata", "title"), 7),
    "empty sourceNative": _set(("spec", "sourceNative"), {}),
    "null sourceNative": _set(("spec", "sourceNative"), None),
    "sourceNative without source": _set(("spec", "sourceNative"), {"benchmark": "x"}),
    "no timing, measurements": lambda d: (
        d["spec"].pop("timing"),
        d["spec"].__setitem__(
            "measurements", [{"metric": "throughput", "statistic": "mean", "unit": "tok/s", "value": 3}]
        ),
    ),
    "no timing, no measurements": _drop("spec", "timing"),
    "null timing": _set(("spec", "timing"), None),
    "raw samples in timing": _set(("spec", "timing", "rawSamples"), [1, 2, 3]),
    "null raw samples": _set(("spec", "timing", "rawSamples"), None),
    "logs in evidence": _set(("spec", "evidence"), {"logs": "https://example.com/log"}),
    "empty evidence": _set(("spec", "evidence"), {}),
    "evidence a list": _set(("spec", "evidence"), ["logs"]),
    "confidence interval": _set(("spec", "timing", "latencyNs", "confidence95"), [7000, 9000]),
    "declared statistic missing": _set(("spec", "timing", "primaryStatistic"), "p95"),
    "latency as floats": _set(("spec", "timing", "latencyNs"), {"median": 8120.5, "mean": 8200.25}),
    "no status": _drop("spec", "status"),
    "status not a string": _set(("spec", "status"), 3),
    "no name": _drop("metadata", "name"),
    "bad observedAt": _set(("spec", "observedAt"), "yesterday"),
}


@pytest.mark.parametrize("change", ODD_RUNS.values(), ids=ODD_RUNS.keys())
def test_odd_runs_decode_or_fail_as_extract_does(change: Callable[[dict[str, Any]], object]) -> None:
    document = _run()
    change(document)
    data = orjson.dumps(document)
    _same_or_same_error("BenchmarkRun", data)


ODD_IMPLEMENTATIONS: dict[str, Callable[[dict[str, Any]], object]] = {
    "labels with a project": _set(("metadata", "labels"), {"project": "kernels"}),
    "labels not a mapping": _set(("metadata", "labels"), ["project"]),
    "null repository still counts as present": _set(("spec", "projectRevision", "repository"), None),
    "a source and no repository": lambda d: (
        d["spec"]["projectRevision"].pop("repository", None),
        d["spec"].__setitem__("source", {"url": "https://example.com"}),
    ),
    "authors without names": _set(("metadata", "authors"), [{"email": "a@example.com"}, {"github": "octo"}]),
    "authors not a list": _set(("metadata", "authors"), "someone"),
    "no callable": _drop("spec", "callable"),
}


@pytest.mark.parametrize("change", ODD_IMPLEMENTATIONS.values(), ids=ODD_IMPLEMENTATIONS.keys())
def test_odd_implementations_decode_or_fail_as_extract_does(change: Callable[[dict[str, Any]], object]) -> None:
    document = _implementation()
    change(document)
    _same_or_same_error("ImplementationRevision", orjson.dumps(document))


def _same_or_same_error(kind: str, data: bytes) -> None:
    digest = "sha256:" + "ab" * 32
    try:
        expected: Node | BaseException = extract(kind, digest, "0" * 40, orjson.loads(data))
    except Exception as exc:  # what extract raises, decode must raise too
        expected = exc
    if isinstance(expected, BaseException):
        with pytest.raises(type(expected)):
            decode(kind, digest, "0" * 40, data)
    else:
        _same(kind, digest, "0" * 40, data)


def test_a_blob_that_is_not_json_fails_as_before() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        decode("BenchmarkRun", "sha256:" + "ab" * 32, "0" * 40, b"{not json")


def test_workloads_with_equal_policies_share_one_key_and_different_ones_do_not() -> None:
    """The decoder remembers keys by the policy's stored bytes: equal bytes, equal key; one changed
    tolerance, another key (each equal to the key computed from the parsed document)."""
    operation = basic_scenario().operation
    documents = [
        make_workload(operation, tokens=512),
        make_workload(operation, tokens=1024),
        make_workload(operation, tokens=512, max_absolute_error=0.02),
    ]
    nodes = []
    for document in documents:
        kind, digest, data = _stored(document)
        _same(kind, digest, "0" * 40, data)
        nodes.append(decode(kind, digest, "0" * 40, data))
    assert nodes[0].correctness == nodes[1].correctness != nodes[2].correctness  # type: ignore[union-attr]


def test_implementations_of_one_project_share_its_name() -> None:
    """A project's name is one string however many implementations carry it (the graph keeps every node:
    memory), from the decoder and from `extract` alike; equal to the label either way."""
    operation = basic_scenario().operation
    documents = [make_implementation(operation, name) for name in ("kernel-a", "kernel-b")]
    for document in documents:
        document["metadata"]["labels"] = {"project": "".join(["flash", "infer"])}  # two distinct str objects
    decoded, extracted = [], []
    for document in documents:
        kind, digest, data = _stored(document)
        decoded.append(decode(kind, digest, "0" * 40, data))
        extracted.append(extract(kind, digest, "0" * 40, orjson.loads(data)))
    for pair in (decoded, extracted):
        first, second = (node.project for node in pair)  # type: ignore[union-attr]
        assert first == "flashinfer" and first is second


def test_a_build_keeps_one_string_for_equal_run_titles_and_instants(store: registry.GitStore) -> None:
    """A cold build's stream gives every decoder one `shared` table: two runs with the same title and
    observation instant hold the same strings; each node still equals what `extract` makes."""
    scenario = basic_scenario()
    runs = [
        make_run(
            scenario.implementations[0],
            scenario.workload,
            scenario.protocol,
            scenario.environment,
            latency,
            "".join(["2026-08-05T00:00:00", "Z"]),
            name=f"titled-{latency}",
        )
        for latency in (900, 950)
    ]
    for run in runs:
        run["metadata"]["title"] = "".join(["same ", "title"])  # equal values, distinct objects in the files
    head = commit_manifests(store, [*scenario.docs, *runs])
    found = [n for n in stream_nodes(store, head) if isinstance(n, Run) and n.name.startswith("titled-")]
    assert len(found) == 2
    assert found[0].title == "same title" and found[0].title is found[1].title
    assert found[0].observed_at is found[1].observed_at
    for node in found:
        _same("BenchmarkRun", node.digest, node.oid, store.read_blob(node.oid))

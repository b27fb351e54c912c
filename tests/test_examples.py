"""The upstream examples are valid and digest-chained: every reference equals the digest of the example
it names (data/kernelindex/examples)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES, commit_manifests

from kernelindex import registry

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@pytest.fixture(scope="module")
def examples() -> dict[str, registry.Manifest]:
    """Every example, loaded through the one entry point, by file name."""
    return {p.name: registry.load_manifest(p.read_bytes(), p.name) for p in EXAMPLE_FILES}


def test_one_example_per_upstream_kind(examples: dict[str, registry.Manifest]) -> None:
    upstream = {name for name, info in registry.KINDS.items() if not info.lifecycle}
    assert len(upstream) == 13
    assert sorted(m.kind for m in examples.values()) == sorted(upstream)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_each_reference_names_the_example_of_its_kind(path: Path, examples: dict[str, registry.Manifest]) -> None:
    by_digest: dict[str, registry.Manifest] = {m.digest: m for m in examples.values()}
    manifest = examples[path.name]
    for reference in manifest.info.references:
        target = reference.read(manifest.document)
        if target is None:
            continue  # an optional reference the example does not use
        named = by_digest.get(target)
        assert named is not None, f"{'.'.join(reference.path)} = {target} is no example's digest"
        assert named.kind in reference.targets


def test_the_chain_is_complete(examples: dict[str, registry.Manifest]) -> None:
    """The examples use every reference field their kinds declare, and the references declared are
    all there are: any example digest found anywhere in a spec is at a declared reference."""
    by_digest = {m.digest: m for m in examples.values()}
    declared = 0
    for manifest in examples.values():
        paths = {".".join(r.path) for r in manifest.info.references}
        declared += len(paths)
        for where, value in _strings(manifest.document["spec"], ("spec",)):
            if _DIGEST.fullmatch(value) and value in by_digest:
                assert where in paths, f"{manifest.kind}: {where} names an example but is not a declared reference"
        for reference in manifest.info.references:
            assert reference.read(manifest.document) is not None, f"{manifest.kind}: {reference.path} unused"
    assert declared == 11  # run 4, serving run 3, workload case/suite, implementation, configuration


def _strings(value: Any, path: tuple[str, ...]) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [found for key, child in value.items() for found in _strings(child, (*path, key))]
    if isinstance(value, list):
        return [found for child in value for found in _strings(child, path)]
    return [(".".join(path), value)] if isinstance(value, str) else []


def test_the_run_measures_one_operation(examples: dict[str, registry.Manifest]) -> None:
    run = examples["benchmark-run.yaml"].document["spec"]
    by_digest = {m.digest: m for m in examples.values()}
    implementation = by_digest[run["implementationDigest"]].document
    workload = by_digest[run["workloadDigest"]].document
    operation = examples["operation-spec.yaml"].digest
    assert implementation["spec"]["operation"]["specDigest"] == operation
    assert workload["spec"]["operationSpecDigest"] == operation


def test_the_examples_make_a_valid_registry(store: registry.GitStore, examples: dict[str, registry.Manifest]) -> None:
    """In any order: the store checks the references of a batch against the batch itself."""
    ordered = sorted(examples.values(), key=lambda m: m.digest)
    commit = commit_manifests(store, ordered)
    assert {e.digest for e in store.entries(commit)} == {m.digest for m in examples.values()}


def test_yaml_timestamps_stay_strings(examples: dict[str, registry.Manifest]) -> None:
    """A YAML 1.1 loader turns `2026-08-01T12:00:00Z` into a datetime, and every run digest breaks."""
    assert examples["benchmark-run.yaml"].document["spec"]["observedAt"] == "2026-08-01T12:00:00Z"
    assert examples["serving-run.yaml"].document["spec"]["observedAt"] == "2026-08-01T12:00:00Z"

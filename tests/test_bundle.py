"""Bundles: KernelIndex's submission format and plain YAML streams, read, checked and published as one change.

The valid bundle is docs/examples/bundles/submission.yaml (ours, in upstream's format); the broken ones are
edits of it, each refused whole with the entry named, and nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import DOC_EXAMPLES, commit_manifests, commit_meta, object_ids

from kernelindex import registry
from kernelindex.registry.bundle import add_bundle, check_bundle, project_slug, read_bundle

SUBMISSION = DOC_EXAMPLES / "bundles" / "submission.yaml"
KINDS_DIR = DOC_EXAMPLES / "kinds"


def _text() -> str:
    return SUBMISSION.read_text()


def _edit(old: str, new: str, count: int = 1) -> bytes:
    text = _text()
    assert text.count(old) == count, old
    return text.replace(old, new).encode()


def _example(stem: str) -> registry.Manifest:
    return registry.load_manifest((KINDS_DIR / f"{stem}.yaml").read_bytes(), f"{stem}.yaml")


def _refused(data: bytes, source: str = "submission.yaml", **kwargs: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(registry.InvalidManifest) as refused:
        read_bundle(data, source, **kwargs)
    return [(p.source, p.path, p.reason) for p in refused.value.problems]


class _Empty:
    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        return None

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        return False

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        return False, None

    def find_named(self, kind: str, name: str) -> str | None:
        return None


@pytest.fixture
def store(tmp_path: Path) -> registry.GitStore:
    return registry.GitStore.init(tmp_path / "manifests.git")


def test_the_submission_reads_entry_by_entry_in_file_order() -> None:
    bundle = read_bundle(SUBMISSION.read_bytes(), "submission.yaml", projects=[])
    assert bundle.form == "submission"
    assert [(e.where, e.manifest.kind) for e in bundle.entries] == [
        ("projects[0]", "SoftwareProject"),
        ("operations[0]", "OperationSpec"),
        ("workloads[0]", "WorkloadCase"),
        ("implementations[0].manifest", "ImplementationRevision"),
        ("runs[0].run", "BenchmarkRun"),
        ("runs[0].protocol", "BenchmarkProtocol"),
        ("runs[0].environment", "ExecutionEnvironment"),
    ]
    # The same manifests as the separate examples (the bundle copies them): the same digests.
    stems = ["software-project", "operation-spec", "workload-case", "implementation-revision", "benchmark-run"]
    stems += ["benchmark-protocol", "execution-environment"]
    assert [m.digest for m in bundle.manifests] == [_example(stem).digest for stem in stems]
    implementation = bundle.entries[3].manifest
    assert implementation.document["metadata"]["labels"] == {"project": "larkspur-kernels"}
    assert "labels:" not in _text().split("implementations:")[1].split("runs:")[0]  # the file gives a slug only


def test_the_whole_bundle_is_added_as_one_commit(store: registry.GitStore) -> None:
    bundle = read_bundle(SUBMISSION.read_bytes(), "submission.yaml", projects=[])
    assert check_bundle(bundle, _Empty()) == []
    result = add_bundle(store, bundle, commit_meta(subject="Add a Larkspur softmax run"))
    assert result.commit is not None and store.head() == result.commit
    assert store.commit_info(result.commit).parents == ()
    assert sorted(m.digest for m in result.added) == sorted({m.digest for m in bundle.manifests})
    assert sorted(e.digest for e in store.entries(result.commit)) == sorted(m.digest for m in bundle.manifests)
    stored = store.read_document(result.commit, bundle.entries[3].manifest.digest)
    assert stored is not None and stored["metadata"]["labels"]["project"] == "larkspur-kernels"
    again = add_bundle(store, bundle, commit_meta(subject="again"))
    assert again.commit is None and len(again.unchanged) == 7


def test_a_bad_entry_refuses_the_whole_bundle_by_its_place() -> None:
    data = _edit("          timer: device_events", "          timer: Device Events")
    assert _refused(data) == [
        (
            "submission.yaml",
            "$.runs[0].protocol.spec.measurement.timer",
            "String should match pattern '^[a-z][a-z0-9_]*$' (got 'Device Events')",
        )
    ]


def test_a_bundle_refused_by_the_registry_writes_nothing(store: registry.GitStore) -> None:
    """Each entry is valid alone; together with the registry, the run's workload does not resolve."""
    commit_manifests(store, [_example("software-project")])
    before_head, before_objects = store.head(), object_ids(store)
    text = _text()
    start = text.index("workloads:")
    data = (text[:start] + text[text.index("implementations:") :]).encode()  # the workload entry removed
    bundle = read_bundle(data, "submission.yaml", projects=store.names_of_kind(store.head() or "", "SoftwareProject"))
    with pytest.raises(registry.RejectedChange) as refused:
        add_bundle(store, bundle, commit_meta())
    workload = _example("workload-case").digest
    assert [(p.source, p.path, p.reason) for p in refused.value.problems] == [
        (
            "submission.yaml",
            "$.runs[0].run.spec.workloadDigest",
            f"{workload} does not resolve to a WorkloadCase or WorkloadSuite",
        )
    ]
    assert store.head() == before_head and object_ids(store) == before_objects


def test_a_run_names_the_protocol_and_environment_beside_it() -> None:
    protocol = _example("benchmark-protocol").digest
    data = _edit("          warmupIterations: 25", "          warmupIterations: 26")
    (problem,) = _refused(data)
    assert problem[:2] == ("submission.yaml", "$.runs[0].run.spec.protocolDigest")
    assert problem[2].startswith(f"{protocol} is not runs[0].protocol, whose digest is sha256:")


def test_a_project_slug_resolves_in_the_bundle_or_the_registry() -> None:
    without_project = _text().split("operations:", 1)
    data = ("operations:" + without_project[1]).encode()
    assert _refused(data, projects=["larkspur-kernels-2"]) == [
        (
            "submission.yaml",
            "$.implementations[0].projectSlug",
            "no project 'larkspur-kernels' in this bundle or the registry (a project's slug is its metadata.name "
            "in kebab case)",
        )
    ]
    # A registered project named otherwise than its slug: the label is its name.
    bundle = read_bundle(data, "submission.yaml", projects=["larkspur.kernels"])
    assert bundle.entries[2].manifest.document["metadata"]["labels"] == {"project": "larkspur.kernels"}
    # No registry to look in (validating files alone): the slug is left for the registry's check.
    assert "labels" not in read_bundle(data, "submission.yaml").entries[2].manifest.document["metadata"]
    assert project_slug("Larkspur Kernels!") == "larkspur-kernels"


def test_an_implementation_states_its_project_once() -> None:
    assert _refused(_edit("  - projectSlug: larkspur-kernels\n", "  -\n")) == [
        (
            "submission.yaml",
            "$.implementations[0].projectSlug",
            "projectSlug is required: the slug of the implementation's project",
        )
    ]
    data = _edit(
        "        name: larkspur-row-softmax-v0-3\n",
        "        name: larkspur-row-softmax-v0-3\n        labels: {project: other}\n",
    )
    assert _refused(data, projects=[]) == [
        (
            "submission.yaml",
            "$.implementations[0].manifest.metadata.labels.project",
            "'other' is not the project 'larkspur-kernels' names ('larkspur-kernels')",
        )
    ]


def test_the_shape_of_a_bundle_is_checked_before_its_manifests() -> None:
    assert _refused(b"projects: []\nextras: [1]\nruns: {}\n") == [
        (
            "submission.yaml",
            "$.extras",
            "unknown section 'extras'; a bundle has projects, operations, workloads, implementations, runs",
        ),
        ("submission.yaml", "$.runs", "runs is a list of entries"),
    ]
    assert _refused(b"projects: []\n") == [("submission.yaml", "$", "the bundle holds no manifest")]
    lines = [line for line in (KINDS_DIR / "workload-case.yaml").read_text().splitlines() if not line.startswith("#")]
    entry = "\n".join(("  - " if i == 0 else "    ") + line for i, line in enumerate(lines))
    assert _refused(f"operations:\n{entry}\n".encode()) == [
        ("submission.yaml", "$.operations[0].kind", "an OperationSpec goes here, not a WorkloadCase")
    ]
    assert _refused(f"implementations:\n{entry}\n".encode()) == [
        (
            "submission.yaml",
            "$.implementations[0]",
            "an entry of implementations is a mapping {projectSlug, manifest}, not a manifest itself",
        )
    ]
    data = _edit("  - run:\n", "  - extra: 1\n    run:\n")
    assert _refused(data) == [
        ("submission.yaml", "$.runs[0].extra", "unknown field 'extra'; an entry of runs has run, protocol, environment")
    ]
    without_environment = _text().split("    environment:")[0].encode()
    assert _refused(without_environment) == [("submission.yaml", "$.runs[0]", "missing required field 'environment'")]


def test_every_problem_of_every_entry_is_reported_at_once() -> None:
    data = _edit("  family: softmax", "  family: Softmax")
    data = data.replace(b"        status: passed", b"        status: great")
    paths = [path for _, path, _ in _refused(data)]
    assert paths == ["$.operations[0].spec.family", "$.runs[0].run.spec.status"]


def test_one_digest_twice_with_other_metadata_is_a_conflict_named_by_place() -> None:
    text = _text()
    protocol = text[text.index("    protocol:") : text.index("    environment:")]
    second = text[text.index("  - run:") :].replace(
        "title: CUDA events, median of 100 samples (fictional)", "title: Another title"
    )
    bundle = read_bundle((text + second).encode(), "submission.yaml", projects=[])
    assert protocol in text
    # The second run and environment are the first ones again (the same file: no conflict); the protocol differs.
    assert [(p.source, p.path) for p in check_bundle(bundle, _Empty())] == [
        ("submission.yaml", "$.runs[1].protocol.metadata")
    ]


def test_a_yaml_stream_is_a_bundle_of_documents(store: registry.GitStore) -> None:
    stems = ["operation-spec", "workload-case", "software-project"]
    documents = [
        "".join(ln for ln in (KINDS_DIR / f"{s}.yaml").read_text().splitlines(True) if not ln.startswith("#"))
        for s in stems
    ]
    data = ("---\n" + "---\n".join(documents) + "---\n").encode()
    bundle = read_bundle(data, "three.yaml")
    assert bundle.form == "stream"
    assert [e.where for e in bundle.entries] == ["document 1", "document 2", "document 3"]
    result = add_bundle(store, bundle, commit_meta())
    assert result.commit is not None and len(result.added) == 3
    broken = data.replace(b"  family: softmax", b"  family: Soft Max")
    bad = "String should match pattern '^[a-z0-9][a-z0-9-]*$' (got 'Soft Max')"
    assert _refused(broken, "three.yaml") == [("three.yaml (document 1)", "$.spec.family", bad)]


def test_one_manifest_is_the_bundle_of_one() -> None:
    path = KINDS_DIR / "operation-spec.yaml"
    bundle = read_bundle(path.read_bytes(), "op.yaml", projects=[])
    assert (bundle.form, [e.where for e in bundle.entries]) == ("manifest", [""])
    assert bundle.manifests[0].digest == _example("operation-spec").digest
    assert _refused(b"apiVersion: kernelindex.dev/v1alpha1\nkind: Nope\n", "x.yaml")[0][:2] == ("x.yaml", "$")


def test_a_bundle_is_bounded_like_a_file() -> None:
    from kernelindex.registry.parse import MAX_DOCUMENT_BYTES

    assert _refused(b"#" * (MAX_DOCUMENT_BYTES + 1)) == [
        (
            "submission.yaml",
            "",
            f"file is {MAX_DOCUMENT_BYTES + 1:,} bytes; the limit is {MAX_DOCUMENT_BYTES:,} (1 MiB)",
        )
    ]


def _values(value: Any) -> int:
    """Every value of a JSON document, containers included, counted here on its own (not by the parser)."""
    if isinstance(value, dict):
        return 1 + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


def _with_labels(document: dict[str, Any], total: int) -> dict[str, Any]:
    """`document` with labels added until it holds exactly `total` values."""
    labelled = {**document, "metadata": {**document["metadata"], "labels": {}}}
    missing = total - _values(labelled)
    labelled["metadata"]["labels"] = {f"k{i}": "v" for i in range(missing)}
    assert _values(labelled) == total
    return labelled


@pytest.mark.parametrize(
    "form",
    [pytest.param("stream", marks=pytest.mark.slow), "submission"],  # YAML's 20,000 values take ~10 s to parse
)
def test_each_manifest_of_a_file_holds_a_manifests_values_at_most(form: str) -> None:
    """A file of several may hold 100,000 values, but each manifest in it the 20,000 of a file of one: what the
    check of its stored file (`load_document`) would refuse is refused here, at the boundary."""
    from kernelindex.registry.parse import MAX_NODES

    project = registry.load_manifest((KINDS_DIR / "software-project.yaml").read_bytes(), "p.yaml").document
    operation = registry.load_manifest((KINDS_DIR / "operation-spec.yaml").read_bytes(), "o.yaml").document

    name = "f.yaml" if form == "stream" else "f.json"  # a submission may be JSON: fast to read

    def file_of(big: dict[str, Any]) -> bytes:
        if form == "stream":
            return (json.dumps(big) + "\n---\n" + json.dumps(operation)).encode()
        return json.dumps({"projects": [big], "operations": [operation]}).encode()

    at_limit = read_bundle(file_of(_with_labels(project, MAX_NODES)), name, projects=[])
    assert len(at_limit.entries) == 2
    refused = _refused(file_of(_with_labels(project, MAX_NODES + 1)), name, projects=[])
    where = ("f.yaml (document 1)", "$.") if form == "stream" else ("f.json", "$.projects[0].")
    assert len(refused) == 1 and refused[0][0] == where[0] and refused[0][1].startswith(where[1])
    assert refused[0][2] == f"more than {MAX_NODES:,} values"
    with pytest.raises(registry.InvalidManifest, match="more than 20,000 values"):  # as a file of one is refused
        registry.load_manifest(json.dumps(_with_labels(project, MAX_NODES + 1)).encode(), "x.json", "json")

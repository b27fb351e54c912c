"""The embedded registry: every manifest at its own digest, the seed pages' digests,
the provenance of its history, and a rebuild that yields the same commit ids. Read-only: the
repository is only opened, and rebuilt elsewhere (tmp_path)."""

from __future__ import annotations

import gc
import hashlib
import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA, EMBEDDED_REPO, EXPORT, SEEDS

from kernelindex import registry
from kernelindex.registry import lookup
from kernelindex.registry.importers import commit_plan, import_export, import_seed_pages, plan_liger
from kernelindex.registry.validate import operation_mismatch

pytestmark = pytest.mark.slow

# data/corpus/README.md ("Distinct manifests: 19,765 (...)") plus the seed commit: two runs and
# the two implementations the corpus lacks.
CORPUS_KINDS = {
    "BenchmarkRun": 7857,
    "WorkloadCase": 5371,
    "ImplementationRevision": 4250,
    "ServingRun": 722,
    "SoftwareProject": 615,
    "OperationSpec": 449,
    "WorkloadSuite": 256,
    "ServingConfiguration": 130,
    "ServingStackRevision": 71,
    "ServingWorkload": 17,
    "ExecutionEnvironment": 15,
    "BenchmarkProtocol": 6,
    "ModelRevision": 6,
}
SEED_KINDS = {"BenchmarkRun": 2, "ImplementationRevision": 2}
# The Liger-Kernel CSV (data/sources/liger/README.md: 2,448 rows, 1,649 of them speed rows): one run per
# speed row, as KernelIndex publishes; the other kinds are what those rows bind (tests/test_importers_liger.py).
LIGER_KINDS = {
    "BenchmarkRun": 1649,
    "WorkloadCase": 237,
    "ImplementationRevision": 63,
    "OperationSpec": 31,
    "ExecutionEnvironment": 6,
    "SoftwareProject": 5,
    "BenchmarkProtocol": 3,
}
LIGER_CSV = DATA / "sources" / "liger" / "all_benchmark_data.csv"
LIGER_REVISION = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"  # data/sources/liger/README.md
TOTAL = 19_765 + 4 + 1_994
CORPUS_SOURCES = ["sol-execbench", "gpumode-kernelbot", "flashinfer-bench", "mlperf-inference"]  # oldest first


@dataclass(frozen=True)
class Loaded:
    head: str
    entries: list[registry.Entry]
    blobs: list[bytes]


@pytest.fixture(scope="module")
def loaded(embedded: registry.GitStore) -> Loaded:
    head = embedded.head()
    assert head is not None
    entries = list(embedded.entries(head))
    return Loaded(head, entries, list(embedded.read_blobs([e.oid for e in entries])))


@pytest.fixture(scope="module")
def documents(loaded: Loaded) -> dict[str, dict[str, Any]]:
    return {e.digest: json.loads(b) for e, b in zip(loaded.entries, loaded.blobs, strict=True)}


# Every manifest ----------------------------------------------------------------------------------------


def test_every_manifest_sits_at_its_recomputed_digest(loaded: Loaded) -> None:
    """All 21,763, through the full entry point (parsing, strict model, normalization, digest)."""
    wrong: list[str] = []
    gc.disable()  # 20k validations allocate a lot and free nothing: collections only cost time
    try:
        for entry, data in zip(loaded.entries, loaded.blobs, strict=True):
            manifest = registry.load_manifest(data, entry.path, "json")
            if manifest.digest != entry.digest or manifest.kind != entry.kind:
                wrong.append(f"{entry.path}: digest {manifest.digest} ({manifest.kind})")
            elif manifest.path != entry.path or data != registry.stored_json(manifest.document):
                wrong.append(f"{entry.path}: stored bytes are not stored_json of the normalized document")
    finally:
        gc.enable()
    assert wrong == []
    assert len(loaded.entries) == TOTAL


def test_kinds_are_the_corpus_the_seeds_and_liger(loaded: Loaded) -> None:
    expected = Counter(CORPUS_KINDS) + Counter(SEED_KINDS) + Counter(LIGER_KINDS)
    assert Counter(e.kind for e in loaded.entries) == expected
    assert sum(CORPUS_KINDS.values()) == 19_765
    assert sum(LIGER_KINDS.values()) == 1_994


def test_the_tree_holds_manifests_only(embedded: registry.GitStore, loaded: Loaded) -> None:
    folders = {registry.KINDS[k].folder for k in CORPUS_KINDS}
    top = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "ls-tree", "--name-only", loaded.head],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert set(top) == folders
    every_file = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "ls-tree", "-r", "--name-only", loaded.head],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(every_file) == sorted(e.path for e in loaded.entries)


def test_every_reference_resolves(loaded: Loaded, documents: dict[str, dict[str, Any]]) -> None:
    kinds = {e.digest: e.kind for e in loaded.entries}
    dangling = []
    for entry in loaded.entries:
        for reference in registry.KINDS[entry.kind].references:
            target = reference.read(documents[entry.digest])
            if target is not None and kinds.get(target) not in reference.targets:
                dangling.append(f"{entry.path}: {'.'.join(reference.path)} -> {target}")
    assert dangling == []


# The seed pages ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedPage:
    name: str
    run_prefix: str  # the page prints a truncated run digest
    published: str
    bundle: dict[str, Any]  # the page's "Show manifest" JSON


def _read_page(path: Path) -> SeedPage:
    text = path.read_text(encoding="utf-8")
    (run_prefix,) = re.findall(r"^(sha256:[0-9a-f]{12,})…$", text, re.MULTILINE)
    (published,) = re.findall(r"^Published (\d{4}-\d{2}-\d{2}) ", text, re.MULTILINE)
    start = text.index("{", text.index("Show manifest"))
    bundle, _ = json.JSONDecoder().raw_decode(text, start)
    return SeedPage(path.stem, run_prefix, published, bundle)


def _pages() -> list[SeedPage]:
    return [_read_page(p) for p in sorted(SEEDS.glob("*.txt"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_seed_page_digests_reproduce(page: SeedPage, embedded: registry.GitStore, loaded: Loaded) -> None:
    run = registry.manifest_from_document(page.bundle["run"], f"{page.name}: run")
    protocol = registry.manifest_from_document(page.bundle["protocol"], f"{page.name}: protocol")
    environment = registry.manifest_from_document(page.bundle["environment"], f"{page.name}: environment")
    assert run.digest.startswith(page.run_prefix)
    assert run.document["spec"]["protocolDigest"] == protocol.digest
    assert run.document["spec"]["environmentDigest"] == environment.digest
    # the bundle shipped beside the page is the page's JSON
    shipped = json.loads((SEEDS / "manifests" / f"{page.name}.bundle.json").read_text())
    assert shipped == page.bundle
    # all three are published, as the page shows them
    for manifest in (run, protocol, environment):
        entry = embedded.find_entry(loaded.head, manifest.digest, (manifest.kind,))
        assert entry is not None
        assert json.loads(embedded.read_blob(entry.oid)) == manifest.document
    # and the run was published on the day the page says
    published = lookup.publication(embedded, run.path)
    assert published is not None
    assert datetime.fromtimestamp(published.committer.time, UTC).date().isoformat() == page.published


@pytest.mark.parametrize("path", sorted((SEEDS / "manifests").glob("*.json")), ids=lambda p: p.name)
def test_seed_manifests_are_in_the_registry(path: Path, embedded: registry.GitStore, loaded: Loaded) -> None:
    document = json.loads(path.read_text())
    parts = document.values() if path.name.endswith(".bundle.json") else [document]
    for part in parts:
        manifest = registry.manifest_from_document(part, path.name)
        assert embedded.find_entry(loaded.head, manifest.digest, (manifest.kind,)) is not None, manifest.digest


def test_reconstructed_implementations_are_the_ones_the_runs_name() -> None:
    for path in sorted((SEEDS / "manifests").glob("*.implementation.json")):
        implementation = registry.load_manifest(path.read_bytes(), path.name)
        bundle = json.loads((SEEDS / "manifests" / path.name.replace(".implementation", ".bundle")).read_text())
        assert bundle["run"]["spec"]["implementationDigest"] == implementation.digest


# History -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chain(embedded: registry.GitStore, loaded: Loaded) -> list[registry.CommitInfo]:
    """main's first-parent history, oldest first."""
    return [embedded.commit_info(c) for c in reversed(embedded.first_parents(loaded.head))]


def test_history_is_one_commit_per_source_then_the_seeds_then_liger(chain: list[registry.CommitInfo]) -> None:
    assert len(chain) == 6
    assert chain[0].parents == ()
    assert [c.trailer("Source") for c in chain] == [*CORPUS_SOURCES, "sol-execbench", "liger-kernel-bench"]
    for info in chain:
        assert info.trailer("License"), info.subject
        assert info.trailer("Source-Snapshot"), info.subject
        assert info.trailer("Signed-off-by") == "KernelIndex registry importer <importer@registry.kernelindex.invalid>"
        assert info.committer.email == "importer@registry.kernelindex.invalid"
        assert info.signature is None


def test_corpus_commits_name_the_export_they_came_from(chain: list[registry.CommitInfo]) -> None:
    snapshot = "sha256:" + hashlib.sha256(EXPORT.read_bytes()).hexdigest()
    assert EXPORT.name.endswith(f"-{snapshot[7:15]}.jsonl.zst")  # upstream names files by their sha256
    for info in chain[:4]:
        assert info.trailer_values("Source-Snapshot") == [snapshot]
        assert info.trailer("Source-Export") == EXPORT.name


def test_licences_are_the_sources_own(chain: list[registry.CommitInfo]) -> None:
    licences = {info.trailer("Source"): info.trailer("License") or "" for info in chain[:4]}
    assert licences["flashinfer-bench"].startswith("Apache-2.0")
    assert licences["mlperf-inference"].startswith("Apache-2.0")
    assert licences["gpumode-kernelbot"].startswith("June 9 Researcher Reciprocity License v1.0")
    assert licences["sol-execbench"].startswith("NVIDIA website terms")
    assert chain[4].trailer("License") == licences["sol-execbench"]  # the seeds keep their source's terms


def test_the_seed_commit_is_dated_as_the_pages_were_published(chain: list[registry.CommitInfo]) -> None:
    seed = chain[4]
    pages = {p.name: p for p in _pages()}
    snapshots = seed.trailer_values("Source-Snapshot")
    named = {}
    for value in snapshots:
        digest, name = value.split(" ")
        named[name] = digest
    assert set(named) == {"000_e2385c33f2609bf3.txt", "003_038d564f462db663.txt"}
    for name, digest in named.items():
        assert digest == "sha256:" + hashlib.sha256((SEEDS / name).read_bytes()).hexdigest()
        published = pages[name.removesuffix(".txt")].published
        assert published == "2026-08-24"
        for person in (seed.author, seed.committer):
            assert datetime.fromtimestamp(person.time, UTC).isoformat() == f"{published}T00:00:00+00:00"


def test_the_43_operation_mismatches_are_recorded(
    chain: list[registry.CommitInfo], loaded: Loaded, documents: dict[str, dict[str, Any]]
) -> None:
    flashinfer = chain[2]
    assert flashinfer.trailer("Source") == "flashinfer-bench"
    warnings = flashinfer.trailer_values("Integrity-Warning")
    assert len(warnings) == 43
    assert all(re.fullmatch(r"sha256:[0-9a-f]{64} operation-mismatch", w) for w in warnings)
    recorded = {w.split(" ")[0] for w in warnings}
    # ... and they are exactly the runs of the whole registry whose operations disagree
    found = set()
    for entry in loaded.entries:
        if entry.kind == "BenchmarkRun":
            spec = documents[entry.digest]["spec"]
            implementation = documents[spec["implementationDigest"]]
            workload = documents[spec["workloadDigest"]]
            if operation_mismatch(implementation, workload):
                found.add(entry.digest)
    assert found == recorded
    for info in (chain[0], chain[1], chain[3], chain[4], chain[5]):
        assert info.trailer_values("Integrity-Warning") == []


def test_commits_only_add_files(embedded: registry.GitStore, chain: list[registry.CommitInfo]) -> None:
    added = 0
    for info in chain:
        changes = embedded.diff(info.parents[0] if info.parents else None, info.id)
        assert {c.status for c in changes} == {"added"}, info.subject
        added += len(changes)
    assert added == TOTAL


def test_the_liger_commit_carries_its_provenance(embedded: registry.GitStore, chain: list[registry.CommitInfo]) -> None:
    liger = chain[5]
    assert liger.subject == "Import Liger-Kernel benchmarks (1,649 runs)"
    assert liger.trailer_values("Source-Snapshot") == [
        f"sha256:{hashlib.sha256(LIGER_CSV.read_bytes()).hexdigest()} all_benchmark_data.csv"
    ]
    assert liger.trailer("Source-Revision") == LIGER_REVISION
    assert (liger.trailer("License") or "").startswith("BSD-2-Clause")
    assert "LinkedIn Corporation" in (liger.trailer("Attribution") or "")  # data/sources/liger/LICENSE
    assert liger.trailer("Signed-off-by") == "KernelIndex registry importer <importer@registry.kernelindex.invalid>"
    # Dated by the data: authored at the latest timestamp of the CSV, committed no earlier than its parent.
    assert datetime.fromtimestamp(liger.author.time, UTC).isoformat() == "2026-07-26T00:09:58+00:00"
    assert liger.committer.time == chain[4].committer.time
    kinds = Counter(c.path.split("/")[0] for c in embedded.diff(chain[4].id, liger.id))
    assert kinds == Counter({registry.KINDS[k].folder: n for k, n in LIGER_KINDS.items()})


def test_the_repository_is_packed_and_sound() -> None:
    objects = EMBEDDED_REPO / "objects"
    loose = [p for p in objects.iterdir() if re.fullmatch(r"[0-9a-f]{2}", p.name)]
    assert loose == []
    assert len(list((objects / "pack").glob("*.pack"))) == 1
    size = sum(p.stat().st_size for p in EMBEDDED_REPO.rglob("*") if p.is_file())
    assert size < 40 * 1024 * 1024
    fsck = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "fsck", "--strict", "--no-dangling", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr


# Rebuild -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> registry.GitStore:
    store = registry.GitStore.init(tmp_path_factory.mktemp("rebuild") / "manifests.git")
    import_export(store, EXPORT)
    import_seed_pages(store, SEEDS)
    commit_plan(store, plan_liger(LIGER_CSV, revision=LIGER_REVISION))
    return store


def test_a_rebuild_yields_the_same_commits(rebuilt: registry.GitStore, embedded: registry.GitStore) -> None:
    head = rebuilt.head()
    assert head is not None
    assert head == embedded.head()
    assert rebuilt.first_parents(head) == embedded.first_parents(head)
    assert rebuilt.tree_id(head) == embedded.tree_id(head)


def test_a_second_import_changes_nothing(rebuilt: registry.GitStore) -> None:
    head = rebuilt.head()
    results = [*import_export(rebuilt, EXPORT), *import_seed_pages(rebuilt, SEEDS)]
    assert [r.commit for r in results] == [None] * len(results)
    assert sum(len(r.added) for r in results) == 0
    assert sum(len(r.unchanged) for r in results) == 19_765
    reconciled, result = commit_plan(rebuilt, plan_liger(LIGER_CSV, revision=LIGER_REVISION))
    assert result is None
    assert (len(reconciled.new), len(reconciled.unchanged), len(reconciled.conflicting)) == (0, 1_994, 0)
    assert rebuilt.head() == head

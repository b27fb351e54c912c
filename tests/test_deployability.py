"""`kernelindex.registry.deployability`: licences, install recipes, source and upstream's deployability verdict, as
table tests on hand-built implementations and against upstream's own columns for the corpus."""

from __future__ import annotations

import io
import json
from typing import Any

import orjson
import pytest
import zstandard
from helpers import EMBEDDED_REPO, EXPORT, SEEDS, digest_of, make_implementation, make_operation

from kernelindex import registry
from kernelindex.registry import nodes as n
from kernelindex.registry.deployability import (
    LICENSE_UNKNOWN,
    NO_INSTALL_RECIPE,
    NO_PUBLIC_SOURCE,
    InstallVariant,
    conclude_licence,
    facts_of_document,
    implementation_facts,
    licence_of,
    verdict,
)
from kernelindex.registry.snapshots import Snapshots

OPERATION = make_operation("op-deploy")


def _implementation(
    *,
    licensing: dict[str, Any] | None = None,
    variants: list[dict[str, Any]] | None = None,
    repository: str | None = "https://example.invalid/kernels",
    source: dict[str, Any] | None = None,
) -> dict[str, Any]:
    document = make_implementation(OPERATION, "k", repository=repository)
    document["spec"]["licensing"] = {"declared": "Apache-2.0"} if licensing is None else licensing
    if variants is not None:
        document["spec"]["buildVariants"] = variants
    if source is not None:
        document["spec"]["source"] = source
    registry.manifest_from_document(json.loads(json.dumps(document)), "<test>")  # a valid manifest
    return document


PIP = {"name": "pip", "install": {"kind": "pip", "package": "kernels", "version": "1.2.0"}}
SOURCE = {"contentDigest": "sha256:" + "ab" * 32, "fileName": "kernel.py", "sizeBytes": 120}


@pytest.mark.parametrize(
    ("licensing", "declared", "concluded", "known", "permissive"),
    [
        ({"declared": "Apache-2.0"}, "Apache-2.0", "Apache-2.0", True, True),
        ({"declared": "apache-2.0"}, "apache-2.0", "Apache-2.0", True, True),  # case-corrected, as upstream
        ({"declared": "MIT OR BSD-3-Clause"}, "MIT OR BSD-3-Clause", "MIT OR BSD-3-Clause", True, False),
        ({"declared": "Totally Custom License"}, "Totally Custom License", None, False, False),
        ({}, None, None, False, False),
        ({"declared": "   "}, "   ", None, False, False),
        # The stated conclusion wins over the declaration, also when it is not SPDX (upstream's rule).
        ({"declared": "MIT", "concluded": "GPL-3.0-only"}, "MIT", "GPL-3.0-only", True, False),
        ({"declared": "MIT", "concluded": "see LICENSE"}, "MIT", None, False, False),
        ({"concluded": "BSD-2-Clause"}, None, "BSD-2-Clause", True, True),
        # Non-commercial: known (so deployable by upstream's policy), never permissive.
        ({"declared": "CC-BY-NC-4.0"}, "CC-BY-NC-4.0", "CC-BY-NC-4.0", True, False),
    ],
)
def test_licences(
    licensing: dict[str, Any], declared: str | None, concluded: str | None, known: bool, permissive: bool
) -> None:
    licence = licence_of(licensing)
    assert (licence.declared, licence.concluded, licence.known, licence.permissive) == (
        declared,
        concluded,
        known,
        permissive,
    )
    assert licence.stated == licensing.get("concluded")


def test_licence_evidence_is_kept() -> None:
    licence = licence_of({"declared": "MIT", "evidence": {"path": "LICENSE", "digest": "sha256:" + "cd" * 32}})
    assert licence.evidence == "LICENSE" and licence_of({}).evidence is None
    assert conclude_licence(None) is None and conclude_licence("mit") == "MIT"


@pytest.mark.parametrize(
    ("document", "reasons"),
    [
        (_implementation(variants=[PIP]), ()),
        (_implementation(variants=[PIP], licensing={"declared": "CC-BY-NC-4.0"}), ()),
        (_implementation(), (NO_INSTALL_RECIPE,)),
        (_implementation(variants=[PIP], licensing={}), (LICENSE_UNKNOWN,)),
        (_implementation(variants=[PIP], repository=None), (NO_PUBLIC_SOURCE,)),
        (_implementation(variants=[PIP], repository=None, source=SOURCE), ()),  # the measured file itself
        (
            _implementation(repository=None, licensing={"declared": "Custom"}),
            (NO_PUBLIC_SOURCE, NO_INSTALL_RECIPE, LICENSE_UNKNOWN),
        ),
    ],
)
def test_verdicts(document: dict[str, Any], reasons: tuple[str, ...]) -> None:
    facts = facts_of_document(digest_of(document), document)
    assert facts.deployability.reasons == reasons
    assert facts.deployability.deployable is (reasons == ())
    assert facts.deployability.policy == "deployability-v1"
    assert facts.installable is (NO_INSTALL_RECIPE not in reasons)
    assert facts.source.available is (NO_PUBLIC_SOURCE not in reasons)


def test_the_verdict_lists_every_reason_in_order() -> None:
    assert verdict(source_available=False, installable=False, licence_known=False).reasons == (
        "NO_PUBLIC_SOURCE",
        "NO_INSTALL_RECIPE",
        "LICENSE_UNKNOWN",
    )
    assert verdict(source_available=True, installable=True, licence_known=True).deployable


def test_source_and_variants_are_typed() -> None:
    git = {"name": "git", "install": {"kind": "git", "repository": "https://example.invalid/k", "commit": "a" * 40}}
    pip = {
        "name": "dev",
        "install": {"kind": "pip", "package": "kernels"},
        "requirements": {"torch": ">=2.4", "cuda": "12"},
    }
    document = _implementation(variants=[git, pip], source=SOURCE)
    facts = facts_of_document(digest_of(document), document)
    assert facts.source.repository == "https://example.invalid/kernels"
    assert facts.source.commit == "b81d40e0" * 5 and facts.source.version is None
    assert (facts.source.content_digest, facts.source.file_name, facts.source.size_bytes) == (
        "sha256:" + "ab" * 32,
        "kernel.py",
        120,
    )
    assert [(v.name, v.kind, v.pinned) for v in facts.variants] == [("git", "git", True), ("dev", "pip", False)]
    assert facts.variants[1].requirements == (("cuda", "12"), ("torch", ">=2.4"))
    assert facts.variants[0].repository == "https://example.invalid/k" and facts.variants[0].commit == "a" * 40


@pytest.mark.parametrize(
    ("kind", "version", "commit", "command", "pinned"),
    [
        ("pip", "1.2.0", None, None, True),
        ("pip", None, None, "pip install kernels", False),
        ("pip", None, None, "pip install kernels==1.2.0", True),
        ("pip", None, None, "pip install git+https://example.invalid/k@abc123", True),
        ("git", None, "a" * 40, None, True),
        ("git", None, None, "git clone https://example.invalid/k", False),
        ("git", None, None, "pip install git+https://example.invalid/k@v1.2", True),
        ("container", None, None, "docker pull example.invalid/kernels", False),
        ("container", None, None, "docker pull example.invalid/kernels:1.2", True),
        ("package", "1.2", None, None, True),
        ("package", None, None, "apt install kernels", False),
        ("source", None, None, "make", False),
    ],
)
def test_pinned_install_lines(
    kind: str, version: str | None, commit: str | None, command: str | None, pinned: bool
) -> None:
    variant = InstallVariant("v", kind, "kernels", version, None, commit, command, ())
    assert variant.pinned is pinned


def test_facts_of_a_graph_node_read_its_manifest(basic_store: registry.GitStore) -> None:
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    graph = snapshots.head
    nodes = [node for node in graph.nodes.values() if isinstance(node, n.Implementation)]
    assert len(nodes) == 2
    for node in nodes:
        facts = implementation_facts(node, lambda oid: orjson.loads(basic_store.read_blob(oid)))
        assert facts.digest == node.digest
        assert facts.source.available is node.source_available  # the graph's rule and this one agree
        assert facts.licence.concluded == "Apache-2.0" and facts.deployability.reasons == (NO_INSTALL_RECIPE,)


# The embedded registry ----------------------------------------------------------------------------


def _upstream_verdicts() -> dict[str, tuple[str, ...]]:
    """deployability-v1 applied to upstream's own columns of the export's implementations."""
    found = {}
    with EXPORT.open("rb") as raw:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw)):
            record = orjson.loads(line)
            if record["table"] != "implementations":
                continue
            row = record["row"]
            reasons = []
            if not row["sourceAvailable"]:
                reasons.append("NO_PUBLIC_SOURCE")
            if not row["installable"]:
                reasons.append("NO_INSTALL_RECIPE")
            if row["licenseExpression"] is None:
                reasons.append("LICENSE_UNKNOWN")
            found[row["implementationDigest"]] = tuple(reasons)
    return found


@pytest.mark.slow
def test_verdicts_over_the_embedded_registry() -> None:
    store = registry.GitStore(EMBEDDED_REPO)
    ours: dict[str, tuple[str, ...]] = {}
    projects: dict[str, str | None] = {}
    for _, digest, _, data in store.manifests_with_bytes(store.head() or "", ["implementation-revisions"]):
        document = orjson.loads(data)
        ours[digest] = facts_of_document(digest, document).deployability.reasons
        projects[digest] = (document["metadata"].get("labels") or {}).get("project")
    upstream = _upstream_verdicts()
    assert len(upstream) == 4250
    # Every corpus implementation gets the verdict upstream's own columns give it.
    assert {d: ours[d] for d in upstream} == upstream
    # The two seed implementations carry no repository, recipe or licence (data/seeds/manifests).
    seeds = [json.loads(p.read_text()) for p in sorted((SEEDS / "manifests").glob("*.implementation.json"))]
    assert [s["spec"]["licensing"] for s in seeds] == [{}, {}]
    assert all("buildVariants" not in s["spec"] and "repository" not in s["spec"]["projectRevision"] for s in seeds)
    for seed in seeds:
        assert ours[digest_of(seed)] == (NO_PUBLIC_SOURCE, NO_INSTALL_RECIPE, LICENSE_UNKNOWN)
    # Liger's CSV names no commit of the code it measured: none of its 63 implementations has public
    # source; those with an install recipe are Liger's own kernels (its PyPI package), licence known.
    liger = [d for d in ours if d not in upstream and d not in {digest_of(s) for s in seeds}]
    assert len(liger) == 63 and len(ours) == 4250 + 2 + 63
    assert {ours[d] for d in liger} == {(NO_PUBLIC_SOURCE,), (NO_PUBLIC_SOURCE, NO_INSTALL_RECIPE)}
    assert {projects[d] for d in liger if ours[d] == (NO_PUBLIC_SOURCE,)} == {"liger-kernel"}
    assert not any(reasons == () for reasons in ours.values())  # nothing in the embedded registry is deployable

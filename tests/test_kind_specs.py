"""One spec per kind (`kernelindex.registry.kind_specs`): every table that names kinds agrees with the specs, and a
kind declared only by its spec, its model and its GraphQL type is validated, stored, built into the graph, cached,
answered over GraphQL and named on a page."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from helpers import (
    PROJECT_ROOT,
    basic_scenario,
    commit_manifests,
    digest_of,
    make_attestation,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    to_manifest,
)
from server import serve

from kernelindex import registry
from kernelindex.core.kind_words import kind_words
from kernelindex.registry import graphcache
from kernelindex.registry import nodes as n
from kernelindex.registry.decode import _DECODERS, _DERIVED, _derive, decode
from kernelindex.registry.kinds import KIND_BY_FOLDER, KINDS
from kernelindex.schema.types.manifest_types import MANIFEST_TYPES, check_manifest_types, types_by_name

TESTS = Path(__file__).resolve().parent

# What the tables said before the specs existed (tests/schema.graphql holds the enum): the expected values here are
# those tables, copied, so a spec that drifts from what clients and pages saw fails.
_LABELS_BEFORE = {
    "BenchmarkRun": "runs",
    "ImplementationRevision": "implementations",
    "OperationSpec": "operations",
    "WorkloadCase": "workload cases",
    "WorkloadSuite": "workload suites",
    "SoftwareProject": "projects",
    "BenchmarkProtocol": "protocols",
    "ExecutionEnvironment": "environments",
    "ServingRun": "serving runs",
    "ServingConfiguration": "serving configurations",
    "ServingStackRevision": "serving stacks",
    "ServingWorkload": "serving workloads",
    "ModelRevision": "models",
}
_NODE_CLASSES_BEFORE = {  # the node class of each kind, as `nodes.extract` chose it
    "BenchmarkRun": n.Run,
    "WorkloadCase": n.Workload,
    "WorkloadSuite": n.Workload,
    "ImplementationRevision": n.Implementation,
    "OperationSpec": n.Operation,
    "SoftwareProject": n.Project,
    "BenchmarkProtocol": n.Protocol,
    "ExecutionEnvironment": n.Environment,
    "Attestation": n.Attestation,
    "Retraction": n.Retraction,
    "Supersession": n.Supersession,
    "Verification": n.Verification,
    "ServingRun": n.ServingRun,
    "ServingWorkload": n.ServingWorkload,
    "ServingConfiguration": n.ServingConfiguration,
    "ServingStackRevision": n.ServingStack,
    "ModelRevision": n.Model,
}
_TYPES_BEFORE = {  # node(id:)'s table: GraphQL type -> node class
    "Run": n.Run,
    "Operation": n.Operation,
    "Workload": n.Workload,
    "Implementation": n.Implementation,
    "Project": n.Project,
    "Protocol": n.Protocol,
    "Environment": n.Environment,
    "Attestation": n.Attestation,
    "Retraction": n.Retraction,
    "Supersession": n.Supersession,
    "Verification": n.Verification,
    "ServingRun": n.ServingRun,
    "Model": n.Model,
    "ServingStack": n.ServingStack,
    "ServingConfiguration": n.ServingConfiguration,
    "ServingWorkload": n.ServingWorkload,
}


def test_the_manifest_kind_enum_lists_every_kind_in_the_specs_order() -> None:
    sdl = (TESTS / "schema.graphql").read_text()
    block = re.search(r"enum ManifestKind \{(.*?)\n\}", sdl, re.DOTALL)
    assert block is not None
    values = re.findall(r"^  (\w+)$", block.group(1), re.MULTILINE)
    assert values == list(KINDS)


def test_each_kind_has_its_node_class_and_the_class_holds_the_spec_s_fields() -> None:
    assert {name: n.node_class(spec) for name, spec in KINDS.items()} == _NODE_CLASSES_BEFORE
    for spec in KINDS.values():
        cls = n.node_class(spec)
        assert cls._fields == spec.field_names, spec.name
        assert all(field.how in ("const", "present") or field.how in n.READERS for field in spec.fields), spec.name


def test_the_cache_gives_one_class_id_per_node_class_and_the_rest_are_other() -> None:
    classes = graphcache._classes()
    assert len(classes) == len(set(classes)) == len(set(_NODE_CLASSES_BEFORE.values())) + 1
    assert classes[-1] is n.Other
    assert set(classes[:-1]) == set(_NODE_CLASSES_BEFORE.values())


def test_every_kind_decodes_fast_written_by_hand_or_derived_from_its_spec() -> None:
    assert set(_DECODERS) <= set(KINDS)
    assert [name for name in KINDS if name not in _DECODERS and _derive(name) is None] == []


def _same_node(kind: str, digest: str, oid: str, data: bytes) -> None:
    """The derived decoder itself (no fallback to `extract` behind it) makes what `extract` makes, field types and
    all."""
    decoder = _derive(kind)
    assert decoder is not None, kind
    expected = n.extract(kind, digest, oid, orjson.loads(data))
    found = decoder(digest, oid, data, {})
    assert type(found) is type(expected) and found == expected
    assert [type(value) for value in found] == [type(value) for value in expected]


def test_the_derived_decoders_of_the_lifecycle_kinds_make_what_extract_makes() -> None:
    s = basic_scenario()
    runs = s.runs
    for document in (
        make_attestation(runs[0]),
        make_retraction(runs[0]),
        make_supersession(runs[0], runs[1]),
        make_verification(runs[0], runs[1]),
        s.protocol,
        s.environment,
    ):
        manifest = to_manifest(document)
        _same_node(manifest.kind, manifest.digest, "0" * 40, manifest.stored_bytes())


@pytest.mark.slow  # reads every manifest of the embedded registry
def test_the_derived_decoders_make_what_extract_makes_on_the_embedded_registry(embedded: registry.GitStore) -> None:
    head = embedded.head()
    assert head is not None
    derived = set()
    for kind, digest, oid, data in embedded.manifests_with_bytes(head):
        if kind not in _DECODERS:
            _same_node(kind, digest, oid, data)
            derived.add(kind)
    assert derived == set(KINDS) - set(_DECODERS) - {"Attestation", "Retraction", "Supersession", "Verification"}


def test_a_string_that_is_no_kind_is_answered_as_other_and_not_remembered() -> None:
    data = b'{"metadata": {"name": "x"}, "spec": {}}'
    for _ in range(3):
        node = decode("NoSuchKind", "sha256:" + "0" * 64, "0" * 40, data)
        assert type(node) is n.Other and node.kind == "NoSuchKind"
    assert "NoSuchKind" not in _DERIVED and "NoSuchKind" not in n._MAKERS


def test_folders_references_and_lifecycle_roles_agree() -> None:
    assert len(KIND_BY_FOLDER) == len(KINDS)
    assert all(KIND_BY_FOLDER[spec.folder] is spec for spec in KINDS.values())
    for spec in KINDS.values():
        for reference in spec.references:
            assert set(reference.targets) <= set(KINDS), spec.name
    lifecycle = {spec.name: (spec.acts_on, spec.signed) for spec in KINDS.values() if spec.lifecycle}
    assert lifecycle == {
        "Attestation": ("run", False),
        "Retraction": ("run", True),
        "Supersession": ("supersedes", True),
        "Verification": ("run", True),
    }


def test_pages_count_each_kind_in_the_words_they_used() -> None:
    assert {name: kind_words(name) for name in KINDS if not KINDS[name].lifecycle} == _LABELS_BEFORE
    assert [kind_words(name) for name in ("Retraction", "Nonsense")] == ["Retraction", "Nonsense"]


def test_every_kind_s_graphql_type_is_marked_and_holds_its_node_class() -> None:
    assert check_manifest_types() == []
    assert {name: node_cls for name, (node_cls, _) in types_by_name().items()} == _TYPES_BEFORE
    assert set(MANIFEST_TYPES) == set(_TYPES_BEFORE)


def _pinned_id(type_name: str, commit: str, key: str) -> str:
    return base64.urlsafe_b64encode(f"{type_name}:{commit}:{key}".encode()).decode().rstrip("=")


@pytest.mark.slow  # a server
def test_manifest_takes_the_id_of_a_supersession_like_any_other_manifest_s(basic_store: registry.GitStore) -> None:
    """`manifest(digest:)` took the id of every manifest-backed type but Supersession's: its table was spelled by
    hand and left it out."""
    s = basic_scenario()
    correction = make_run(s.implementations[0], s.workload, s.protocol, s.environment, 7950, "2026-08-02T12:00:00Z")
    supersession = make_supersession(correction, s.runs[1])
    head = commit_manifests(basic_store, [correction, supersession], when=1_700_003_600)
    ident = _pinned_id("Supersession", head, digest_of(supersession))
    with serve(basic_store.path) as api:
        answer = api.graphql("query($d: String!) { manifest(digest: $d) { kind digest } }", {"d": ident}).json()
    assert answer["data"] == {"manifest": {"kind": "Supersession", "digest": digest_of(supersession)}}
    assert "errors" not in answer


_TOY_PACKAGE = {
    "__init__.py": '''
        """A toy kind: its spec, then (the spec registered first) its GraphQL type."""
        from kernelindex.registry.kinds import KindSpec, NodeField, Reference, register

        register(
            KindSpec(
                "Gadget",
                "toykind.model.Gadget",
                "gadgets",
                (Reference(("spec", "operationSpecDigest"), ("OperationSpec",)),),
                fields=(NodeField("colour", "spec.colour"), NodeField("operation", "spec.operationSpecDigest", "intern")),
                graphql="Gadget",
                noun="a gadget",
                label="toy gadgets",
                summary="A toy kind, added by a test.",
            )
        )

        import strawberry

        from kernelindex.schema.types.base import Named
        from kernelindex.schema.types.manifest_types import manifest_type


        @manifest_type
        @strawberry.type(name="Gadget", description="A toy kind, added by a test.")
        class GadgetType(Named):
            @strawberry.field(description="Its colour.")
            def colour(self) -> str:
                return self._node.colour
    ''',
    "model.py": """
        from typing import Literal

        from kernelindex.registry.kinds.common import DigestStr, Metadata, Str200, Strict
        from kernelindex.registry.kinds.kernel import ApiVersion


        class GadgetSpec(Strict):
            colour: Str200
            operation_spec_digest: DigestStr


        class Gadget(Strict):
            api_version: ApiVersion
            kind: Literal["Gadget"]
            metadata: Metadata
            spec: GadgetSpec
    """,
}

_TOY_SCRIPT = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import toykind  # before anything reads the tables the specs make
from pathlib import Path
from helpers import basic_scenario, commit_manifests, digest_of
from server import serve
from kernelindex import registry
from kernelindex.registry import graphcache
from kernelindex.registry.snapshots import build_graph

operation = basic_scenario().operation
gadget = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Gadget", "metadata": {"name": "blue-gadget"},
          "spec": {"colour": "blue", "operationSpecDigest": digest_of(operation)}}
found = {"digest": digest_of(gadget)}
try:
    registry.manifest_from_document({**gadget, "spec": {"operationSpecDigest": digest_of(operation)}}, "bad.json")
except registry.InvalidManifest as exc:
    found["invalid"] = [(p.path, p.reason) for p in exc.problems]
store = registry.GitStore.init(Path(sys.argv[3]))
head = commit_manifests(store, [*basic_scenario().docs, gadget])
listed = __import__("subprocess").run(
    ["git", "-C", sys.argv[3], "ls-tree", "-r", "--name-only", head], capture_output=True, text=True, check=True
)
found["stored"] = [p for p in listed.stdout.splitlines() if p.startswith("gadgets/")]
graph, publication = build_graph(store, head)
graph.prepare()
node = graph.nodes[digest_of(gadget)]
found["node"] = [type(node).__name__, node.kind, node.name, node.colour, node.operation]
again, _ = graphcache.decode(graphcache.encode(graph, publication))
cached = again.nodes[digest_of(gadget)]
found["cached"] = [type(cached).__name__, cached == node]
with serve(store.path) as api:
    found["graphql"] = api.graphql(
        'query($d: String!) { manifest(digest: $d, kind: Gadget) { kind name path } }', {"d": "blue-gadget"}
    ).json()
    found["kinds"] = api.graphql('{ __type(name: "ManifestKind") { enumValues { name } } }').json()
    ident = __import__("base64").urlsafe_b64encode(f"Gadget:{head}:{digest_of(gadget)}".encode()).decode().rstrip("=")
    found["node"].append(api.graphql(
        'query($i: ID!) { node(id: $i) { __typename ... on Gadget { colour name } } }', {"i": ident}
    ).json())
    page = api.client.get("/", headers={"accept": "text/html"})
    found["page"] = [page.status_code, "1</strong> toy gadgets" in page.text]
print(json.dumps(found))
"""


@pytest.fixture
def toy_kind(tmp_path: Path) -> Path:
    """A package declaring a toy kind, Gadget: its spec, its model and its GraphQL type, and nothing else."""
    package = tmp_path / "toys" / "toykind"
    package.mkdir(parents=True)
    for name, text in _TOY_PACKAGE.items():
        (package / name).write_text(textwrap.dedent(text))
    return package.parent


@pytest.mark.slow  # a fresh interpreter, a registry and a server
def test_a_toy_kind_declared_once_is_validated_stored_built_cached_answered_and_named(
    toy_kind: Path, tmp_path: Path
) -> None:
    # A fresh interpreter: the kind is registered before the schema (and its enum) is built.
    ran = subprocess.run(
        [sys.executable, "-c", _TOY_SCRIPT, str(toy_kind), str(TESTS), str(tmp_path / "manifests.git")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found["invalid"] == [["$.spec", "missing required field 'colour'"]]
    operation = digest_of(basic_scenario().operation)
    assert found["node"][:5] == ["Gadget", "Gadget", "blue-gadget", "blue", operation]
    assert found["node"][5]["data"] == {"node": {"__typename": "Gadget", "colour": "blue", "name": "blue-gadget"}}
    hexdigest = found["digest"].removeprefix("sha256:")
    assert found["stored"] == [f"gadgets/{hexdigest[:2]}/{hexdigest}.json"]
    assert found["cached"] == ["Gadget", True]
    manifest = found["graphql"]["data"]["manifest"]
    assert manifest == {"kind": "Gadget", "name": "blue-gadget", "path": f"gadgets/{hexdigest[:2]}/{hexdigest}.json"}
    assert {"name": "Gadget"} in found["kinds"]["data"]["__type"]["enumValues"]
    assert found["page"] == [200, True]

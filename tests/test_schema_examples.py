"""Our documentation's examples and the starters of `kernelindex new`, against the models and the schemas.

- docs/examples/kinds: one valid example per kind (a few more runs for the lifecycle kinds to name),
  digest-chained, published together as one commit;
- docs/examples/invalid: each refused by the registry where and why its header says, and by the schema
  exactly when its header says the schema can tell;
- each kind's starter: parses, and fails validation at its placeholders and nowhere else; filled in from
  the kind's example, it is valid.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pygit2
import pytest
from helpers import DOC_EXAMPLES, commit_manifests
from jsonschemas import ecma_validator, errors_of

from kernelindex import registry
from kernelindex.registry.parse import load_document
from kernelindex.registry.schemas import kind_slug, schema_of
from kernelindex.registry.schemas.starter import render_starter
from kernelindex.registry.validate import check_additions

KIND_EXAMPLES = sorted((DOC_EXAMPLES / "kinds").glob("*.yaml"))
INVALID_EXAMPLES = sorted((DOC_EXAMPLES / "invalid").glob("*.yaml"))
_HEADER = re.compile(r"# expect: (?P<path>\$\S*): (?P<reason>.+)\n# schema: (?P<schema>refuses|accepts|never sees)")


class _Nothing:
    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        return None

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        return False

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        return False, None

    def find_named(self, kind: str, name: str) -> str | None:
        return None


@pytest.fixture(scope="module")
def examples() -> dict[str, registry.Manifest]:
    return {path.stem: registry.load_manifest(path.read_bytes(), path.name) for path in KIND_EXAMPLES}


def test_an_example_of_every_kind(examples: dict[str, registry.Manifest]) -> None:
    assert {m.kind for m in examples.values()} == set(registry.KINDS)
    for kind in registry.KINDS:
        assert examples[kind_slug(kind)].kind == kind  # docs/examples/kinds/<kind-slug>.yaml


@pytest.mark.parametrize("path", KIND_EXAMPLES, ids=lambda p: p.name)
def test_each_example_is_valid_under_its_schema(path: Path) -> None:
    document = load_document(path.read_bytes(), path.name)
    assert errors_of(ecma_validator(schema_of(document["kind"])), document) == []


def test_the_examples_are_digest_chained_and_publish_as_one_commit(
    examples: dict[str, registry.Manifest], tmp_path: Path
) -> None:
    """Every reference names another example (none dangles, the verification reruns the same cohort), and
    every reference field of every kind is used once at least."""
    additions = [(f"{stem}.yaml", m) for stem, m in examples.items()]
    assert check_additions(additions, _Nothing()) == []
    used = {(m.kind, path) for m in examples.values() for path, _, _ in m.references()}
    declared = {(name, "$." + ".".join(r.path)) for name, info in registry.KINDS.items() for r in info.references}
    assert used == declared
    store = registry.GitStore.init(tmp_path / "manifests.git")
    commit = commit_manifests(store, list(examples.values()))
    tree = pygit2.Repository(str(tmp_path / "manifests.git")).get(commit).tree  # type: ignore[union-attr]
    assert sorted(e.path for e in store.entries(commit)) == sorted(m.path for m in examples.values())
    assert len(tree) == len({m.info.folder for m in examples.values()})


@pytest.mark.parametrize("path", INVALID_EXAMPLES, ids=lambda p: p.stem)
def test_each_invalid_example_is_refused_where_and_why_it_says(path: Path) -> None:
    header = _HEADER.search(path.read_text())
    assert header, f"{path.name}: no '# expect:' and '# schema:' lines"
    with pytest.raises(registry.InvalidManifest) as refused:
        registry.load_manifest(path.read_bytes(), path.name)
    problems = refused.value.problems
    assert [p.path for p in problems] == [header["path"]]
    assert header["reason"] in problems[0].reason
    if header["schema"] == "never sees":
        return  # the reader refuses the file: there is no document for a schema to judge
    document = load_document(path.read_bytes(), path.name)
    schema_errors = errors_of(ecma_validator(schema_of(document["kind"])), document)
    if header["schema"] == "refuses":
        assert schema_errors, f"{path.name}: the schema accepts what its header says it refuses"
    else:
        assert schema_errors == [], f"{path.name}: the schema refuses it; move it to 'refuses'"


_LIMITATION = re.compile(r"^\| `(?P<file>[a-z0-9-]+\.yaml)` \| (?P<rule>[^|]+) \| (?P<why>[^|]+) \|$", re.MULTILINE)


def _schema_errors(path: Path) -> list[str] | None:
    """The published schema's errors on an example, or None when there is no document to judge (the reader
    refuses the file first; so does check-jsonschema's)."""
    try:
        document = load_document(path.read_bytes(), path.name)
    except registry.InvalidManifest:
        return None
    return errors_of(ecma_validator(schema_of(document["kind"])), document)


def test_the_invalid_examples_the_schemas_accept_are_the_documented_limitations() -> None:
    """docs/contributing.md's table of what the schemas cannot say: an invalid example the schemas accept is in
    it, with its reason, and each one in it is accepted by them (a schema that learns a rule empties its row)."""
    text = (DOC_EXAMPLES.parent / "contributing.md").read_text()
    section = text[text.index('<a id="schema-limitations">') :]
    listed = {match["file"]: match["why"].strip() for match in _LIMITATION.finditer(section)}
    assert listed and all(len(why) > 20 for why in listed.values())
    accepted = {path.name for path in INVALID_EXAMPLES if _schema_errors(path) == []}
    assert accepted == set(listed), f"accepted by the schemas: {sorted(accepted)}; documented: {sorted(listed)}"
    for name in listed:
        assert "# schema: accepts it" in (DOC_EXAMPLES / "invalid" / name).read_text()


def test_the_invalid_examples_cover_each_refinement_once_at_least() -> None:
    reasons = " | ".join(_HEADER.search(p.read_text())["reason"] for p in INVALID_EXAMPLES)  # type: ignore[index]
    for refinement in (
        "a constant axis needs a value",
        "a derived axis needs an expression",
        "exactly one of tensor or scalar",
        "needs a median or a mean",
        "at most 2 items",
        "less than or equal to 1",
        "should match pattern",
        "not a whole number of nanoseconds",
        "outside 0..2^53-1 nanoseconds",
        "low exceeds high",
        "not an RFC 3339 UTC timestamp",
        "unknown field",
        "null is not allowed",
        "duplicate key",
    ):
        assert refinement in reasons


# Starters ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_a_starter_fails_only_at_its_placeholders(kind: str) -> None:
    starter = render_starter(kind_slug(kind), schema_ref=f"./{kind_slug(kind)}.schema.json")
    assert starter.text.splitlines()[0] == f"# yaml-language-server: $schema=./{kind_slug(kind)}.schema.json"
    document = load_document(starter.text.encode(), "new.yaml")
    assert document["apiVersion"] == "kernelindex.dev/v1alpha1" and document["kind"] == kind
    with pytest.raises(registry.InvalidManifest) as refused:
        registry.manifest_from_document(document, "new.yaml")
    assert sorted(p.path for p in refused.value.problems) == sorted(starter.placeholders)
    assert len(set(starter.placeholders)) == len(starter.placeholders) >= 2  # a name and a field of the spec


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_a_starter_filled_in_from_the_example_is_valid(kind: str, examples: dict[str, registry.Manifest]) -> None:
    """The placeholders are where the kind's fields go: the example's values, put there, make a manifest."""
    starter = render_starter(kind, schema_ref="x.json")
    document = load_document(starter.text.encode(), "new.yaml")
    example = load_document((DOC_EXAMPLES / "kinds" / f"{kind_slug(kind)}.yaml").read_bytes(), "example")
    for placeholder in starter.placeholders:
        _set(document, placeholder, _get(example, placeholder))
    for key in ("axes", "tensors"):  # the maps a starter leaves empty, with their entries' shape in a comment
        if document["spec"].get(key) == {}:
            document["spec"][key] = copy.deepcopy(example["spec"][key])
    assert registry.manifest_from_document(document, "filled.yaml").kind == kind


def test_a_starter_says_what_goes_in_each_field() -> None:
    text = render_starter("BenchmarkRun", schema_ref="x.json").text
    assert "  implementationDigest:  # The digest of the ImplementationRevision this BenchmarkRun names" in text
    assert "  status:  # one of: passed, incorrect_shape," in text
    assert "      median:  # A duration: whole nanoseconds (8120), or a number and a unit" in text
    assert "    # samples:  # an integer > 0\n" in text  # optional: a line to uncomment, not an empty field
    with pytest.raises(registry.RegistryError, match="unknown kind: 'Run'"):
        render_starter("Run", schema_ref="x.json")


_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    return [key if key else int(index) for key, index in _STEP.findall(path.removeprefix("$"))]


def _get(document: Any, path: str) -> Any:
    for step in _steps(path):
        document = document[step]
    return copy.deepcopy(document)


def _set(document: Any, path: str, value: Any) -> None:
    *parents, last = _steps(path)
    for step in parents:
        document = document[step]
    document[last] = value
